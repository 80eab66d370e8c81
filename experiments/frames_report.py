"""The report's cross-validation rows of the opinion frames (docs/frames.md): for each configuration whose
results hold test-fold frame scores (``scores.test_frames``, ``opinion_tagger.evaluation.frames``), per type the
mean ± standard deviation over its folds of polarity-aware proportional / binary F1, the polarity and intensity
accuracy on matched spans beside the majority class's share, and a DSE's holder accuracy and F1; then the
published figures nearest to them (``ANCHORS``) and whether they compare."""

from __future__ import annotations

from collections import Counter

from experiments.summaries import fmt_mean_std, mean_std

# The published work nearest to these rows: (work, what it scores, its protocol, whether the rows compare).  Their
# figures are not given here: the papers' result tables could not be read from the sources this project could
# reach (abstracts and released code only); the protocols below are those sources'.
ANCHORS = (
    (
        "Choi & Cardie (2010), hierarchical CRF",
        "expression boundaries jointly with polarity and intensity",
        "MPQA; split and folds not stated in the parts we could read",
        "not yet: the split is unknown, so neither it nor the figures' protocol can be rebuilt",
    ),
    (
        "Yang & Cardie (2013), CRF + ILP joint inference",
        "DSEs, holders, targets and the IS-FROM relation (binary and proportional overlap, exact)",
        "MPQA 2.0, the 482 documents with attitude and target annotations",
        "no: 133 of the 482 documents are not among the 535 this project reads, and an IS-FROM F1 needs the "
        "expression and the holder both found; the rows above score the holder of matched DSEs",
    ),
    (
        "Katiyar & Cardie (2016), joint BiLSTM",
        "DSEs, holders, targets, IS-FROM and IS-ABOUT",
        "Yang & Cardie's documents; 10 folds (the split in Marasović & Frank's released code, "
        "`datasplit/prior`: 315 train, 35 test documents a fold, one dev set of 132)",
        "no, as for Yang & Cardie: the split cannot be rebuilt from the 535 documents",
    ),
    (
        "Xia et al. (2021), span-based with syntactic constituents",
        "DSEs and their holders and targets (exact, binary and proportional F1; a holder scored only under "
        "an exactly matched DSE)",
        "MPQA 2.0, 5-fold cross-validation of Zhang et al. (2019)'s data (released code)",
        "no: another split, DSEs only, and holders under exact DSE matches (the rows above: any overlap)",
    ),
)


def anchor_lines() -> list[str]:
    lines = [
        "Published work on these attributes, and why its figures do not sit in the table above (their result "
        "tables could not be read from the sources this project reached, abstracts and released code; the "
        "protocols are those sources'):",
        "",
        "| work | scores | protocol | compares with the rows above |",
        "|---|---|---|---|",
    ]
    return [*lines, *(f"| {w} | {what} | {how} | {cmp} |" for w, what, how, cmp in ANCHORS), ""]


def _points(values: list[float]) -> tuple[float, float]:
    return mean_std([100 * v for v in values])


def _accuracy(frames: list[dict], what: str) -> str:
    """Mean accuracy over the folds (± std), the majority class's mean share and its commonest name."""
    got = [f[what] for f in frames if what in f]
    if not got:
        return "–"
    n = len(got)
    acc, major = _points([a["accuracy"] for a in got]), _points([a["majority"] for a in got])
    (name, _), *_ = Counter(a["majority_class"] for a in got).most_common(1)
    return f"{fmt_mean_std(acc, n)} ({major[0]:.2f} {name})"


def frame_rows(summaries: dict) -> list[str]:
    """A table row per (configuration, type) with test-fold frame scores."""
    rows = []
    for (name, t), s in sorted(summaries.items()):
        frames = [r["scores"]["test_frames"][t] for r in s["records"] if t in r["scores"].get("test_frames", {})]
        if not frames:
            continue
        n, m = len(frames), s["metric"]
        span = f"{fmt_mean_std(m[('proportional', 'f1')], n)} / {fmt_mean_std(m[('binary', 'f1')], n)}"
        if n != len(s["records"]):
            span = "–"  # folds without frame scores: the span scores of these folds alone are not summarised
        aware = " / ".join(
            fmt_mean_std(_points([f[f"polarity_{k}"]["f1"] for f in frames]), n) for k in ("proportional", "binary")
        )
        holders = [f["holder"] for f in frames if "holder" in f]
        holder_f1 = fmt_mean_std(_points([h["f1"] for h in holders]), n) if holders else "–"
        rows.append(
            f"| `{name}` | {t} | {n} | {span} | {aware} | {_accuracy(frames, 'polarity')} | "
            f"{_accuracy(frames, 'intensity')} | {_accuracy(frames, 'holder')} | {holder_f1} |"
        )
    return rows


def frames_cv_section(summaries: dict) -> list[str]:
    """The section: the table of ``frame_rows`` and the published figures beside it."""
    rows = frame_rows(summaries)
    if not rows:
        return []
    return [
        "## Opinion frames: cross-validation",
        "",
        "Test-fold scores on the paper's split (reference tokens), mean ± standard deviation over the folds "
        "that have results (column *folds*): span F1 (proportional / binary, as in the tables above); "
        "polarity-aware F1 (a predicted span counts only where its polarity is right); the accuracy on the "
        "predicted spans that overlap a gold span, beside the majority class's share (its mean over the folds, "
        "and its name); for DSEs the holder's accuracy (writer, implicit, none, or a span overlapping the gold "
        "holder's) and the F1 of naming one. Scored by `opinion_tagger/evaluation/frames.py`; reproduce with "
        "`python -m experiments.run_cv experiments/configs/accurate-frames.yaml` (heads trained beside the "
        "network) and then `experiments/configs/accurate-frames-heads.yaml` (heads fitted afterwards on those "
        "folds' networks, as the bundled models' are; the frame scores of results written before results "
        "recorded them: `python -m experiments.score_frames NAME`).",
        "",
        "| configuration | type | folds | span prop / bin F1 | polarity-aware prop / bin F1 "
        "| polarity acc (majority) | intensity acc (majority) | holder acc (majority) | holder F1 |",
        "|---|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        *anchor_lines(),
    ]
