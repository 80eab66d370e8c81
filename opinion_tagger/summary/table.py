"""The summary's table: the opinions of a corpus grouped by holder, target and attitude or polarity, with how
many, in how many records, how strong on average and a few examples; written as CSV, Parquet or a short text
table.  ``Summary`` counts as the records stream in, keeping only counts and a few examples a group, so memory
does not grow with the corpus, only with its groups."""

from __future__ import annotations

import csv
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opinion_tagger.summary.records import (
    HOLDER_KINDS,
    INTENSITY_LEVELS,
    INTENSITY_SCALE,
    Line,
    Opinion,
    holder_label,
    one_line,
    opinion_label,
)
from opinion_tagger.wording import counted

EXAMPLES = 3  # example expressions kept a group
POLARITY_ORDER = ("negative", "neutral", "positive", "both")  # then any other polarity, in the order first seen
COLUMNS = (
    "holder",
    "holder_kind",
    "target",
    "opinion",
    "opinion_kind",
    "count",
    "dse",
    "ese",
    "records",
    "mean_intensity",
    *(f"example_{k}{part}" for k in range(1, EXAMPLES + 1) for part in ("", "_doc")),
)
# (holder kind, holder, target, opinion kind, opinion)
GroupKey = tuple[str, "str | None", "str | None", str, str]


@dataclass
class Tally:
    """Expressions counted by polarity, with the sum of their intensities (``INTENSITY_LEVELS``)."""

    polarities: Counter[str] = field(default_factory=Counter)
    intensity_sum: int = 0

    @property
    def count(self) -> int:
        return sum(self.polarities.values())

    @property
    def mean_intensity(self) -> float | None:
        return round(self.intensity_sum / self.count, 3) if self.count else None

    def add(self, op: Opinion) -> None:
        self.polarities[op.polarity] += 1
        self.intensity_sum += INTENSITY_LEVELS[op.intensity]


@dataclass
class Group:
    """One row's counts: expressions, by type, the records they are in, the sum of their intensities, and the
    first ``EXAMPLES`` distinct expression texts with their documents' ids."""

    count: int = 0
    types: Counter[str] = field(default_factory=Counter)
    records: int = 0
    last_record: int = -1
    intensity_sum: int = 0
    examples: dict[str, str] = field(default_factory=dict)  # text -> document id


@dataclass
class Summary:
    """What ``opinion-tagger summarize`` counts, record by record (``add``): the records, tag's error records,
    the bad lines (``FILE:LINE: what``), the spans summarised and those without a frame; the groups of the table;
    and for the report each holder's and target's expressions by polarity, holder x target pairs, and each
    type's expressions by polarity and intensity."""

    records: int = 0
    error_records: int = 0
    spans: int = 0
    unframed: int = 0
    bad: list[str] = field(default_factory=list)
    groups: dict[GroupKey, Group] = field(default_factory=dict)
    holders: dict[tuple[str, str | None], Tally] = field(default_factory=dict)
    targets: dict[str, Tally] = field(default_factory=dict)
    pairs: Counter[tuple[tuple[str, str | None], str]] = field(default_factory=Counter)
    by_type: Counter[tuple[str, str, str]] = field(default_factory=Counter)  # (type, polarity, intensity)
    has_targets: bool = False  # some span gives targets (a record with a targets field)
    has_attitudes: bool = False

    def add(self, line: Line) -> None:
        """Count one line: a bad line is noted, tag's error record counted, a record's opinions summarised."""
        self.records += 1
        if line.record is None:
            self.bad.append(f"{line.where}: {line.problem}")
            return
        rec = line.record
        if rec.error is not None:
            self.error_records += 1
            return
        self.unframed += rec.unframed
        for op in rec.opinions:
            self._opinion(op)

    def _opinion(self, op: Opinion) -> None:
        self.spans += 1
        holder = (op.holder_kind, op.holder)
        self.holders.setdefault(holder, Tally()).add(op)
        self.by_type[(op.type, op.polarity, op.intensity)] += 1
        self.has_targets |= op.targets is not None
        self.has_attitudes |= op.attitude is not None
        label = opinion_label(op)
        for target in op.targets or (None,):  # a span with two targets counts in the group of each
            if target is not None:
                self.targets.setdefault(target, Tally()).add(op)
                self.pairs[(holder, target)] += 1
            group = self.groups.setdefault((op.holder_kind, op.holder, target, *label), Group())
            group.count += 1
            group.types[op.type] += 1
            group.intensity_sum += INTENSITY_LEVELS[op.intensity]
            if group.last_record != self.records:
                group.records += 1
                group.last_record = self.records
            if len(group.examples) < EXAMPLES:
                group.examples.setdefault(one_line(op.text), op.doc)

    def polarities(self) -> list[str]:
        """The polarities seen, in ``POLARITY_ORDER`` and then as first seen."""
        seen = dict.fromkeys(p for _, p, _ in self.by_type)
        return [p for p in POLARITY_ORDER if p in seen] + [p for p in seen if p not in POLARITY_ORDER]

    def rows(self) -> list[dict[str, Any]]:
        """The table: a row a group (``COLUMNS``), the largest groups first."""
        out = []
        for (kind, holder, target, opinion_kind, opinion), g in self.groups.items():
            row: dict[str, Any] = {
                "holder": holder,
                "holder_kind": kind,
                "target": target,
                "opinion": opinion,
                "opinion_kind": opinion_kind,
                "count": g.count,
                "dse": g.types["DSE"],
                "ese": g.types["ESE"],
                "records": g.records,
                "mean_intensity": round(g.intensity_sum / g.count, 3),
            }
            examples = list(g.examples.items())
            for k in range(EXAMPLES):
                text, doc = examples[k] if k < len(examples) else (None, None)
                row[f"example_{k + 1}"], row[f"example_{k + 1}_doc"] = text, doc
            out.append(row)
        out.sort(key=_order)
        return out

    def summary_line(self) -> str:
        """``120 records, 340 spans summarised, 1 error``, and what was counted but not summarised."""
        line = f"{counted(self.records, 'record')}, {counted(self.spans, 'span')} summarised, "
        line += counted(len(self.bad), "error")
        left = []
        if self.error_records:
            left.append(f"{counted(self.error_records, 'error record')} of tag (documents not tagged)")
        if self.unframed:
            left.append(f"{counted(self.unframed, 'span')} without a frame")
        return line + (f"; not summarised: {', '.join(left)}" if left else "")


def _order(row: dict[str, Any]) -> tuple[Any, ...]:
    """The table's order: the largest groups first; then named holders (by name) before the others, named targets
    before none, and by opinion."""
    holder, target = row["holder"], row["target"]
    kind = HOLDER_KINDS.index(row["holder_kind"]) if row["holder_kind"] in HOLDER_KINDS else len(HOLDER_KINDS)
    return (-row["count"], holder is None, holder or "", kind, target is None, target or "", row["opinion"])


def write_csv(rows: list[dict[str, Any]], path: Path) -> None:
    """The table as CSV (UTF-8, a header line; an empty field for a missing value)."""
    with open(path, "w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)


def write_parquet(rows: list[dict[str, Any]], path: Path) -> None:
    """The table as Parquet, with the same columns (counts as int64, the mean as float64, the rest strings)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    ints = {"count", "dse", "ese", "records"}
    schema = pa.schema(
        [(c, pa.int64() if c in ints else pa.float64() if c == "mean_intensity" else pa.string()) for c in COLUMNS]
    )
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)


def _cell(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def text_table(summary: Summary, top: int) -> str:
    """The ``top`` largest groups as a short text table (the target column only where the records give
    targets), and how many more there are."""
    rows = summary.rows()
    if not rows:
        return ""
    header = ["count", "holder", *(["target"] if summary.has_targets else []), "opinion", "intensity", "example"]
    table = [header]
    for r in rows[:top]:
        example = f"{r['example_1']} ({r['example_1_doc']})"
        target = [_cell(r["target"] or "(none)", 24)] if summary.has_targets else []
        holder = _cell(holder_label(r["holder_kind"], r["holder"]), 26)
        table.append([str(r["count"]), holder, *target, r["opinion"], f"{r['mean_intensity']:.2f}", example])
    widths = [max(len(row[k]) for row in table) for k in range(len(header) - 1)]
    lines = []
    for row in table:
        cells = [c.rjust(w) if k == 0 else c.ljust(w) for k, (c, w) in enumerate(zip(row, widths))]
        lines.append("  ".join([*cells, _cell(row[-1], 48)]).rstrip())
    if len(rows) > top:
        lines.append(f"... {counted(len(rows) - top, 'more group')} (--out DIR writes them all)")
    lines.append(f"intensity: the mean of {INTENSITY_SCALE}")
    return "\n".join(lines) + "\n"
