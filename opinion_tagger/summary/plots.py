"""The summary report's plots, as SVG to inline in its page (matplotlib: the ``report`` extra).

Figures are made with ``matplotlib.figure.Figure`` (no pyplot, no global back end).  Text is written as SVG
text, which matplotlib escapes; a ``$`` in a holder's or target's text is escaped too, so it is never read as
mathematics.  Each figure's element ids get a prefix of their own, so that several figures on one page never
share an id."""

from __future__ import annotations

import io
import re
from typing import Any

from opinion_tagger.summary.records import INTENSITY_LEVELS

POLARITY_COLORS = {"negative": "#c8414b", "neutral": "#9aa5b1", "positive": "#2e8b57", "both": "#8e6cc4"}
OTHER_COLOR = "#e0a030"
INTENSITY_COLORS = ("#e8eef6", "#b9cde5", "#7ea6d3", "#3f74b5", "#17427a")  # neutral .. extreme
LABEL_WIDTH = 32
SVG_START = re.compile(r"^.*?(?=<svg\b)", re.S)
SVG_IDS = re.compile(r'(\bid="|href="#|url\(#)')


def label(text: str) -> str:
    """A holder's or target's text as a plot label: cut to ``LABEL_WIDTH`` characters, ``$`` escaped."""
    text = text if len(text) <= LABEL_WIDTH else text[: LABEL_WIDTH - 1] + "…"
    return text.replace("$", r"\$")


def _svg(fig: Any, prefix: str) -> str:
    """The figure as an ``<svg>`` element to inline: no XML prolog, ids prefixed, the same bytes every run."""
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "opinion-tagger"}):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    svg = SVG_START.sub("", buf.getvalue(), count=1)
    return SVG_IDS.sub(lambda m: m.group(1) + prefix + "-", svg)


def _figure(width: float, height: float) -> Any:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def stacked_bars(names: list[str], counts: list[dict[str, int]], order: list[str], xlabel: str, prefix: str) -> str:
    """Horizontal bars, one a name (the first at the top), each split by polarity (``order``; a polarity none of
    them has is left out of the legend too)."""
    from matplotlib.ticker import MaxNLocator

    fig = _figure(7.5, 1.2 + 0.32 * len(names))
    ax = fig.add_subplot()
    ys = list(range(len(names)))[::-1]
    left = [0] * len(names)
    for pol in order:
        widths = [c.get(pol, 0) for c in counts]
        if not any(widths):
            continue
        ax.barh(ys, widths, left=left, color=POLARITY_COLORS.get(pol, OTHER_COLOR), label=label(pol), height=0.7)
        left = [a + b for a, b in zip(left, widths)]
    ax.set_yticks(ys, [label(n) for n in names])
    ax.set_xlabel(xlabel)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(frameon=False, fontsize="small", loc="upper left", bbox_to_anchor=(1, 1))
    ax.spines[["top", "right"]].set_visible(False)
    return _svg(fig, prefix)


def polarity_intensity(counts: dict[tuple[str, str, str], int], types: list[str], order: list[str], prefix: str) -> str:
    """A panel a span type: its expressions by polarity, each bar split by intensity (neutral .. extreme)."""
    from matplotlib.ticker import MaxNLocator

    fig = _figure(3.4 * max(len(types), 1) + 1.2, 3.6)
    axes = fig.subplots(1, max(len(types), 1), sharey=True, squeeze=False)[0]
    axes[0].yaxis.set_major_locator(MaxNLocator(integer=True))
    for ax, typ in zip(axes, types):
        bottom = [0] * len(order)
        for level, color in zip(INTENSITY_LEVELS, INTENSITY_COLORS):
            heights = [counts.get((typ, pol, level), 0) for pol in order]
            ax.bar(
                [label(p) for p in order],
                heights,
                bottom=bottom,
                color=color,
                label=level,
                edgecolor="#555",
                linewidth=0.4,
            )
            bottom = [a + b for a, b in zip(bottom, heights)]
        ax.set_title(typ, loc="left")
        if any(len(p) > 9 for p in order):  # long names (an unusual polarity) slanted, so that they do not overlap
            ax.tick_params(axis="x", labelrotation=30)
        ax.spines[["top", "right"]].set_visible(False)
    axes[0].set_ylabel("expressions")
    axes[-1].legend(title="intensity", frameon=False, fontsize="small", loc="upper left", bbox_to_anchor=(1, 1))
    return _svg(fig, prefix)


def heat_map(rows: list[str], columns: list[str], cells: list[list[int]], ylabel: str, xlabel: str, prefix: str) -> str:
    """Counts in a grid (rows x columns), each cell's number written in it."""
    fig = _figure(3.2 + 0.75 * len(columns), 1.6 + 0.38 * len(rows))
    ax = fig.add_subplot()
    top = max((v for row in cells for v in row), default=0) or 1
    image = ax.imshow(cells, cmap="Blues", vmin=0, vmax=top, aspect="auto")
    ax.set_xticks(range(len(columns)), [label(c) for c in columns], rotation=40, ha="right", rotation_mode="anchor")
    ax.set_yticks(range(len(rows)), [label(r) for r in rows])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    for i, row in enumerate(cells):
        for j, v in enumerate(row):
            if v:
                ax.text(
                    j, i, str(v), ha="center", va="center", fontsize="small", color="white" if v > 0.6 * top else "#222"
                )
    from matplotlib.ticker import MaxNLocator

    fig.colorbar(image, ax=ax, label="expressions", shrink=0.8, ticks=MaxNLocator(integer=True))
    return _svg(fig, prefix)
