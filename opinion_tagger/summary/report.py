"""The summary's HTML report: one self-contained page (inline CSS, the plots as inline SVG, no script and
nothing fetched), readable from the file: who holds opinions, about what, with which polarity and how strongly,
a heat map of holders by target (by polarity where the records give no targets), and the groups' table.  Every
text that comes from the records or the command line is escaped."""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import Any

from opinion_tagger.summary.records import INTENSITY_LEVELS, INTENSITY_SCALE, holder_label
from opinion_tagger.summary.table import Summary, Tally

GROUP_ROWS = 200  # groups the page lists (the CSV and Parquet files have them all)
BAD_SHOWN = 20  # bad lines the page names

STYLE = """
body { font-family: system-ui, sans-serif; max-width: 72em; margin: 2em auto; padding: 0 1em; color: #222;
       line-height: 1.5; }
h1 { font-size: 1.6em; } h2 { margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.92em; }
th, td { border-bottom: 1px solid #e2e2e2; padding: 0.25em 0.7em; text-align: left; vertical-align: top; }
th { background: #f3f4f6; } td.n { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 1em 0; } figure svg { max-width: 100%; height: auto; }
figcaption, .note { color: #555; font-size: 0.92em; }
.bad { color: #a00; } .ex { color: #444; } .doc { color: #777; font-size: 0.9em; }
"""


def _table(header: list[str], rows: list[list[Any]], numeric: set[int], cls: str) -> str:
    """An HTML table; cells are escaped unless they are ``Raw``."""
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = []
    for row in rows:
        cells = []
        for k, v in enumerate(row):
            text = v if isinstance(v, Raw) else escape("" if v is None else str(v))
            cells.append(f'<td class="n">{text}</td>' if k in numeric else f"<td>{text}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'


class Raw(str):
    """Markup already escaped, put in a table cell as it is."""


def _mean(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


def _tally_rows(items: list[tuple[str, Tally]], polarities: list[str]) -> list[list[Any]]:
    return [[name, t.count, *(t.polarities[p] for p in polarities), _mean(t.mean_intensity)] for name, t in items]


def _figure(svg: str | None, caption: str) -> str:
    if svg is None:
        return ""
    return f'<figure class="plot">{svg}<figcaption>{escape(caption)}</figcaption></figure>'


class Page:
    """The report's sections, built from a ``Summary``; ``plot`` is None without matplotlib."""

    def __init__(self, summary: Summary, top: int, plots: bool):
        self.s, self.top = summary, top
        self.polarities = summary.polarities()
        self.plots: Any = None
        if plots:
            from opinion_tagger.summary import plots as plots_module

            self.plots = plots_module

    def plot(self, make: Callable[[Any], str]) -> str | None:
        return None if self.plots is None else make(self.plots)

    def holders(self) -> list[tuple[tuple[str, str | None], Tally]]:
        """The ``top`` holders with the most expressions (spans with a holder field: the DSEs), by count and
        then by name."""
        tallies = [(k, t) for k, t in self.s.holders.items() if k[0] != "untagged"]
        return sorted(tallies, key=lambda kt: (-kt[1].count, holder_label(*kt[0])))[: self.top]

    def holders_section(self) -> str:
        top = [(holder_label(*k), t) for k, t in self.holders()]
        if not top:
            return "<h2>Who holds opinions</h2><p class='note'>No span has a holder field (the DSEs have one).</p>"
        names, counts = [n for n, _ in top], [dict(t.polarities) for _, t in top]
        svg = self.plot(lambda p: p.stacked_bars(names, counts, self.polarities, "expressions", "holders"))
        header = ["holder", "expressions", *self.polarities, "mean intensity"]
        return (
            "<h2>Who holds opinions</h2>"
            + _figure(svg, f"The {len(top)} holders with the most expressions, split by polarity.")
            + _table(header, _tally_rows(top, self.polarities), set(range(1, len(header))), "holders")
            + "<p class='note'>Holders are the DSEs' (the models tag no holder for an ESE): <b>writer</b> is the "
            "writer, <b>implicit</b> an implicit holder, <b>(none)</b> a DSE whose holder the model did not find in "
            "its sentence.</p>"
        )

    def targets_section(self) -> str:
        if not self.s.has_targets:
            return ""
        top = sorted(self.s.targets.items(), key=lambda kt: (-kt[1].count, kt[0]))[: self.top]
        if not top:
            return "<h2>About what</h2><p class='note'>The records give targets, but no span has one.</p>"
        names, counts = [n for n, _ in top], [dict(t.polarities) for _, t in top]
        svg = self.plot(lambda p: p.stacked_bars(names, counts, self.polarities, "expressions", "targets"))
        header = ["target", "expressions", *self.polarities, "mean intensity"]
        return (
            "<h2>About what</h2>"
            + _figure(svg, f"The {len(top)} targets with the most expressions, split by polarity.")
            + _table(header, _tally_rows(top, self.polarities), set(range(1, len(header))), "targets")
        )

    def polarity_section(self) -> str:
        types = sorted({t for t, _, _ in self.s.by_type})
        if not types:
            return ""
        counts = dict(self.s.by_type)
        svg = self.plot(lambda p: p.polarity_intensity(counts, types, self.polarities, "polarity"))
        rows = []
        for typ in types:
            for pol in self.polarities:
                n = sum(counts.get((typ, pol, level), 0) for level in INTENSITY_LEVELS)
                if n:
                    total = sum(counts.get((typ, pol, lv), 0) * v for lv, v in INTENSITY_LEVELS.items())
                    rows.append(
                        [typ, pol, n, *(counts.get((typ, pol, lv), 0) for lv in INTENSITY_LEVELS), f"{total / n:.2f}"]
                    )
        header = ["type", "polarity", "expressions", *INTENSITY_LEVELS, "mean intensity"]
        return (
            "<h2>With which polarity, how strongly</h2>"
            + _figure(svg, "Each type's expressions by polarity, split by intensity.")
            + _table(header, rows, set(range(2, len(header))), "polarity")
        )

    def heat_map_section(self) -> str:
        holders = [k for k, _ in self.holders()]
        if not holders:
            return ""
        if self.s.has_targets:
            targets = sorted(self.s.targets.items(), key=lambda kt: (-kt[1].count, kt[0]))
            columns = [t for t, _ in targets[: self.top]]
            cells = [[self.s.pairs.get((h, t), 0) for t in columns] for h in holders]
            what, xlabel = "target", "target"
        else:
            columns = self.polarities
            cells = [[self.s.holders[h].polarities[p] for p in columns] for h in holders]
            what, xlabel = "polarity (the records give no targets)", "polarity"
        if not columns:
            return ""
        names = [holder_label(*h) for h in holders]
        svg = self.plot(lambda p: p.heat_map(names, columns, cells, "holder", xlabel, "heat"))
        header = ["holder", *columns]
        table = _table(header, [[n, *row] for n, row in zip(names, cells)], set(range(1, len(header))), "heat")
        return (
            f"<h2>Holders by {escape(xlabel)}</h2>"
            + _figure(svg, f"Expressions of the top holders by {what}.")
            + (table if svg is None else f"<details><summary>the numbers</summary>{table}</details>")
        )

    def groups_section(self) -> str:
        rows = self.s.rows()
        targets, attitudes = self.s.has_targets, self.s.has_attitudes
        header = ["holder", *(["target"] if targets else []), "attitude or polarity" if attitudes else "polarity"]
        header += ["count", "DSE", "ESE", "records", "mean intensity", "examples"]
        out = []
        for r in rows[:GROUP_ROWS]:
            examples = "<br>".join(
                f'<span class="ex">{escape(r[f"example_{k}"])}</span> '
                f'<span class="doc">({escape(r[f"example_{k}_doc"])})</span>'
                for k in range(1, 4)
                if r[f"example_{k}"] is not None
            )
            opinion = r["opinion"] + (f" ({r['opinion_kind']})" if attitudes else "")
            target = [r["target"] if r["target"] is not None else "(none)"] if targets else []
            holder = holder_label(r["holder_kind"], r["holder"])
            out.append(
                [
                    holder,
                    *target,
                    opinion,
                    r["count"],
                    r["dse"],
                    r["ese"],
                    r["records"],
                    f"{r['mean_intensity']:.2f}",
                    Raw(examples),
                ]
            )
        first = len(header) - 6
        more = f" (the first {GROUP_ROWS} of {len(rows)}: summary.csv has them all)" if len(rows) > GROUP_ROWS else ""
        return (
            f"<h2>Groups{escape(more)}</h2>"
            + "<p class='note'>One row a holder, target and attitude or polarity; a span with two targets counts "
            "in both.</p>" + _table(header, out, set(range(first, first + 5)), "groups")
        )


def report_html(summary: Summary, sources: list[str], top: int = 20, plots: bool = True, note: str = "") -> str:
    """The report's page (``sources``: the files summarised; ``plots``: False without matplotlib, and ``note``
    then says what to install)."""
    page = Page(summary, top, plots)
    names = ", ".join(sources)
    bad = "".join(f"<li>{escape(b)}</li>" for b in summary.bad[:BAD_SHOWN])
    if len(summary.bad) > BAD_SHOWN:
        bad += f"<li>... and {len(summary.bad) - BAD_SHOWN} more (on standard error)</li>"
    parts = [
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>Opinions in {escape(names)}</title><style>{STYLE}</style></head><body>",
        f"<h1>Opinions in {escape(names)}</h1>",
        f'<p class="counts">{escape(summary.summary_line())}.</p>',
        f'<ul class="bad">{bad}</ul>' if bad else "",
        f"<p class='note'>Mean intensity: the mean of {escape(INTENSITY_SCALE)}.</p>",
        f"<p class='note'>{escape(note)}</p>" if note else "",
        page.holders_section(),
        page.targets_section(),
        page.polarity_section(),
        page.heat_map_section(),
        page.groups_section() if summary.groups else "<h2>Groups</h2><p class='note'>No span with a frame.</p>",
        "</body></html>\n",
    ]
    return "\n".join(p for p in parts if p)
