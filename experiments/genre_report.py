"""The report's section on genres: the bundled models zero-shot on MPQA's ULA documents by genre
(``experiments/genre_study.py``), the adaptation's dev runs (``results/adaptation-dev/``) and its learning curve
(``experiments/benchmarks/adaptation_curve.py``, ``results/adaptation-curve.json``), with the curve's plot."""

from __future__ import annotations

import json
from pathlib import Path

from experiments.genre_study import GENRES

DOCS = Path(__file__).resolve().parents[1] / "docs"


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def zero_shot_lines(study: dict) -> list[str]:
    """Proportional F1 (precision / recall) per model and genre, the decoder unbiased; then the O bias."""
    rows = [r for r in study["results"] if r["o_bias"] == 0.0]
    models = list(dict.fromkeys(r["model"] for r in rows))
    parts = ["all ULA", *GENRES, "news fold-0 test"]
    docs = study["documents"]
    lines = [
        "Proportional overlap F1 (precision / recall) over each genre's sentences, spaCy tokens; ULA documents by "
        "genre (documents): " + ", ".join(f"{g} ({docs[g]})" for g in GENRES) + ".  No model trained on any of them; "
        "the news row is the paper's fold-0 test, which none trained on either.",
        "",
        "| part | " + " | ".join(f"{m} DSE | {m} ESE" for m in models) + " |",
        "|---|" + "---|---|" * len(models),
    ]
    for part in parts:
        cells = []
        for m in models:
            r = next(x for x in rows if x["model"] == m and x["part"] == part)["scores"]
            for t in ("DSE", "ESE"):
                p = r[t]["proportional"]
                cells.append(f"{_pct(p['f1'])} ({_pct(p['precision'])} / {_pct(p['recall'])})")
        lines.append(f"| {part} | " + " | ".join(cells) + " |")
    biased = [r for r in study["results"] if r["part"] in ("all ULA", "news fold-0 test")]
    lines += [
        "",
        "A decoder bias towards O (the CRF's O emission raised by *b* before Viterbi: fewer, surer spans), "
        "proportional F1 on all ULA documents / the news fold-0 test:",
        "",
        "| model | b | DSE ULA | DSE news | ESE ULA | ESE news |",
        "|---|---|---|---|---|---|",
    ]
    for m in models:
        for b in sorted({r["o_bias"] for r in biased if r["model"] == m}):
            got = {r["part"]: r["scores"] for r in biased if r["model"] == m and r["o_bias"] == b}
            cells = [
                _pct(got[p][t]["proportional"]["f1"]) for t in ("DSE", "ESE") for p in ("all ULA", "news fold-0 test")
            ]
            lines.append(f"| {m} | {b:.1f} | " + " | ".join(cells) + " |")
    return lines


def distillation_lines(studies: list[dict]) -> list[str]:
    """The dev study that chose ``accurate``'s teacher weight: each network's proportional F1 (precision / recall) on
    all ULA documents and on the news fold-0 test, a row per weight (``results/genre-distillation/``)."""
    lines = [
        "`accurate`'s configuration trained on the 495 training and dev documents of fold 0 (seed 1, 5 epochs), with "
        "`accurate-mpnet`'s tag probabilities as a teacher for that share of each token's loss (the expected "
        "negative log-likelihood of the teacher's CRF marginals under the student's CRF) and the gold tags for the "
        "rest; weight 0 is the network before, without a teacher; *copies*: noisy copies of the training sentences "
        "(a share of their words replaced by words of the training text, or rewritten as other genres write: lower "
        "case without punctuation as speech is transcribed, fillers of speech, first and second person for third) "
        "that the teacher alone tags; other changes to the configuration are named (`model.recurrent.dropout`: "
        "dropout).  Chosen on "
        "the 48 ULA documents; the news row is "
        "only scored (the bar: no more than 0.5 below the network before).  Proportional F1 (precision / "
        "recall); `python -m experiments.genre_study --models DIR --distillation HOW` on each bundle.",
        "",
        "| teacher weight, copies | DSE all ULA | ESE all ULA | DSE news fold-0 test | ESE news fold-0 test "
        "| bundle, commit |",
        "|---|---|---|---|---|---|",
    ]

    ordered = sorted(
        studies,
        key=lambda s: (s["weight"], s.get("copies", 0), s.get("style", "words"), sorted(s.get("changes") or {})),
    )
    for study in ordered:
        got = {r["part"]: r["scores"] for r in study["results"] if r["o_bias"] == 0.0}
        prop = [got[part][t]["proportional"] for part in ("all ULA", "news fold-0 test") for t in ("DSE", "ESE")]
        cells = [f"{_pct(p['f1'])} ({_pct(p['precision'])} / {_pct(p['recall'])})" for p in prop]
        lines.append(
            f"| {_student(study)} | " + " | ".join(cells) + f" | {study['bundle']}, {study['git_commit'][:10]} |"
        )
    lines += [
        "",
        "The same networks by genre, proportional F1 DSE / ESE:",
        "",
        "| teacher weight, copies | " + " | ".join(GENRES) + " |",
        "|---|" + "---|" * len(GENRES),
    ]
    for study in ordered:
        got = {r["part"]: r["scores"] for r in study["results"] if r["o_bias"] == 0.0}
        cells = [" / ".join(_pct(got[g][t]["proportional"]["f1"]) for t in ("DSE", "ESE")) for g in GENRES]
        lines.append(f"| {_student(study)} | " + " | ".join(cells) + " |")
    return lines


def _student(study: dict) -> str:
    """A student's row label: its teacher weight, its copies (how many, their style and rate), other changes."""
    how = f"{study['weight']:.1f}"
    if copies := study.get("copies", 0):
        if study.get("style", "words") == "genres":
            how += f", {copies} in other genres' style (fillers before {_pct(study['noise'])}% of words)"
        else:
            how += f", {copies} ({_pct(study['noise'])}% of words)"
    return how + "".join(f", {k.rsplit('.', 1)[-1]} {v}" for k, v in (study.get("changes") or {}).items())


def char_level_lines(study: dict) -> list[str]:
    """Character-level proportional F1 (precision / recall) per model and part (``experiments/char_level.py``)."""
    rows = study["results"]
    models = list(dict.fromkeys(r["model"] for r in rows))
    lines = [
        "The same at the level of characters, as a new user meets it: each MPQA sentence tagged as one text by "
        "`OpinionTagger` (what `opinion-tagger tag` runs, spaCy's tokens), its spans' characters scored against the "
        "annotations' (`experiments/char_level.py`).  Proportional F1 (precision / recall):",
        "",
        "| part | " + " | ".join(f"{m} DSE | {m} ESE" for m in models) + " |",
        "|---|" + "---|---|" * len(models),
    ]
    for part in dict.fromkeys(r["part"] for r in rows):
        cells = []
        for m in models:
            got = next(r["scores"] for r in rows if r["model"] == m and r["part"] == part)
            for t in ("DSE", "ESE"):
                p = got[t]["proportional"]
                cells.append(f"{_pct(p['f1'])} ({_pct(p['precision'])} / {_pct(p['recall'])})")
        lines.append(f"| {part} | " + " | ".join(cells) + " |")
    return lines


def density_lines(study: dict) -> list[str]:
    """Gold spans a sentence (and a hundred words, where recorded) and the share of low-intensity ones, per part."""
    if "density" not in study:
        return []
    words = all("per_100_words" in d["DSE"] for d in study["density"].values())
    columns = ["a sentence", *(["a 100 words"] if words else []), "low"]
    lines = [
        "How densely each part is annotated: gold spans a sentence"
        + (" and a hundred words (the parts' sentences differ in length)" if words else "")
        + ", and the share of them whose intensity is `low` (of those the corpus gives an intensity):",
        "",
        "| part | " + " | ".join(f"{t} {c}" for t in ("DSE", "ESE") for c in columns) + " |",
        "|---|" + "---|" * (2 * len(columns)),
    ]
    for part, d in study["density"].items():
        cells = []
        for t in ("DSE", "ESE"):
            cells += [f"{d[t]['per_sentence']:.2f}", *([f"{d[t]['per_100_words']:.2f}"] if words else [])]
            cells.append(f"{_pct(d[t]['low_intensity'])}%")
        lines.append(f"| {part} | " + " | ".join(cells) + " |")
    return lines


def filter_lines(study: dict) -> list[str]:
    """Proportional F1 (precision / recall) with the least sure spans dropped, all ULA and the news."""
    rows = study.get("filters") or []
    if not rows:
        return []
    lines = [
        "Dropping the spans a model is least sure of: those its frame heads give a `low` intensity, or whose mean "
        "tag confidence is under a threshold; and, the most that teaching it the fillers of conversation are not "
        "opinions could buy, the spans of fillers alone (*yeah*, *you know*, *uh - huh*: `genre_study.FILLERS`).  "
        "Proportional F1 (precision / recall):",
        "",
        "| model | dropped | DSE ULA | DSE news | ESE ULA | ESE news |",
        "|---|---|---|---|---|---|",
    ]
    for m in dict.fromkeys(r["model"] for r in rows):
        got = {r["part"]: r["scores"] for r in rows if r["model"] == m}
        for rule in got["all ULA"]:
            cells = []
            for t in ("DSE", "ESE"):
                for part in ("all ULA", "news fold-0 test"):
                    p = got[part][rule][t]["proportional"]
                    cells.append(f"{_pct(p['f1'])} ({_pct(p['precision'])} / {_pct(p['recall'])})")
            lines.append(f"| {m} | {rule} | " + " | ".join(cells) + " |")
    return lines


def dev_run_lines(runs: list[dict]) -> list[str]:
    """A row per dev setting: one draw's scores (with precision / recall where recorded), or several draws' mean
    and spread."""
    lines = [
        "| model | optimizer, learning rate, schedule | trained | replay | epochs (kept) | draws | ULA DSE | ULA ESE "
        "| news DSE | news ESE | wall s |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]

    def cell(scores: dict) -> str:  # proportional F1, with precision / recall where the run recorded them
        pr = scores.get("proportional_pr")
        return _pct(scores["proportional"]) + (f" ({_pct(pr[0])} / {_pct(pr[1])})" if pr else "")

    def spread(stat: dict) -> str:
        return f"{_pct(stat['mean'])} ± {_pct(stat['sd'])}"

    for r in runs:
        s, run = r["settings"], r["runs"][0]
        if len(r["runs"]) == 1:
            ula = " | ".join(f"{cell(run['zero_shot'][t])} → {cell(run['adapted'][t])}" for t in ("DSE", "ESE"))
            news = " | ".join(cell(run["news_fold0_test"][t]) for t in ("DSE", "ESE"))
            wall = run["wall_seconds"]
        else:
            row = r["curve"][0]
            ula = " | ".join(
                f"{_pct(row['zero_shot'][t]['mean'])} → {spread(row['adapted'][t])}" for t in ("DSE", "ESE")
            )
            news = " | ".join(spread(row["news_fold0_test"][t]) for t in ("DSE", "ESE"))
            wall = row["wall_seconds"]["mean"]
        trained = "heads and recurrent layers" if s.get("freeze_encoder") else "all"
        how = f"{s.get('optimizer', 'adam')} {s['learning_rate']:g} {s.get('schedule', 'constant')}"
        kept = f"{s['epochs']} ({', '.join(str(x['best_epoch']) for x in r['runs'])})"
        lines.append(
            f"| {r.get('model', 'accurate')} | {how} | {trained} | {s['replay']:g} | {kept} | {len(r['runs'])} | {ula} "
            f"| {news} | {wall:.0f} |"
        )
    return lines


def curve_lines(curve: dict, plot: Path | None) -> list[str]:
    z = curve["news_fold0_test_zero_shot"]
    lines = [
        f"Settings: {curve['settings']}; machine: {curve['machine']['cpu']}, {curve['machine']['cores']} cores; "
        f"commit {curve['git_commit'][:12]}.  Zero-shot on the news fold-0 test: DSE {_pct(z['DSE']['proportional'])}, "
        f"ESE {_pct(z['ESE']['proportional'])}.",
        "",
        "| documents | order | runs | ULA DSE zero-shot → adapted | ULA ESE zero-shot → adapted | news DSE | news ESE "
        "| wall s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in curve["curve"]:
        zero, adapted = row["zero_shot"], row["adapted"]
        cell = {
            t: f"{_pct(zero[t]['mean'])} → {_pct(adapted[t]['mean'])} ± {_pct(adapted[t]['sd'])}"
            for t in ("DSE", "ESE")
        }
        news = {
            t: f"{_pct(row['news_fold0_test'][t]['mean'])} ± {_pct(row['news_fold0_test'][t]['sd'])}"
            for t in ("DSE", "ESE")
        }
        lines.append(
            f"| {row['size']} | {row['order']} | {row['runs']} | {cell['DSE']} | {cell['ESE']} | {news['DSE']} | "
            f"{news['ESE']} | {row['wall_seconds']['mean']:.0f} |"
        )
    if plot is not None:
        lines += ["", f"![adaptation curve](report/{plot.name})"]
    return lines


def plot_curve(curve: dict, out: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in curve["curve"] if r["order"] == "random"]
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.5), sharey=True)
    for ax, t in zip(axes, ("DSE", "ESE")):
        sizes = [r["size"] for r in rows]
        for what, label in (("adapted", "adapted (test documents)"), ("zero_shot", "zero-shot (same documents)")):
            ax.errorbar(
                sizes,
                [100 * r[what][t]["mean"] for r in rows],
                yerr=[100 * r[what][t]["sd"] for r in rows],
                marker="o",
                capsize=3,
                label=label,
            )
        ax.plot(
            sizes,
            [100 * r["news_fold0_test"][t]["mean"] for r in rows],
            marker="s",
            ls="--",
            label="news fold-0 test, adapted",
        )
        ax.axhline(
            100 * curve["news_fold0_test_zero_shot"][t]["proportional"], color="grey", ls=":", label="news, zero-shot"
        )
        ax.set_title(t)
        ax.set_xlabel("ULA documents adapted on")
    axes[0].set_ylabel("proportional F1 (%)")
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def _study_section(folder: Path, heading: str, intro: list[str], table) -> list[str]:
    """A subsection of the results in ``folder`` (``table`` of them all, in their files' order), none if there are
    none."""
    paths = sorted(folder.glob("*.json"))
    if not paths:
        return []
    return ["", f"### {heading}", "", *intro, *table([json.loads(p.read_text()) for p in paths])]


def genre_section(results: Path, plot_dir: Path) -> list[str]:
    """The section's lines (empty when none of its results exist)."""
    lines: list[str] = []
    study = results / "genre-zero-shot.json"
    if study.is_file():
        lines += [
            "## Genres beyond news",
            "",
            "### Zero-shot, by genre",
            "",
            *zero_shot_lines(data := json.loads(study.read_text())),
        ]
        chars = results / "genre-char-level.json"
        char_part = char_level_lines(json.loads(chars.read_text())) if chars.is_file() else []
        for part in (char_part, density_lines(data), filter_lines(data)):
            lines += ["", *part] if part else []
    lines += _study_section(
        results / "genre-distillation",
        "Zero-shot: a teacher for `accurate` (dev study on the ULA documents)",
        [],
        distillation_lines,
    )
    lines += _study_section(
        results / "adaptation-dev",
        "Adaptation: dev runs",
        [
            "A bundled model adapted (`opinion_tagger.training.adapt`) on draws of 20 ULA documents (16 to learn from, "
            "4 held out to choose the epoch), scored on the other 28 ULA documents and on the news fold-0 test "
            "(proportional F1, with precision / recall where one draw recorded them; the mean ± spread of several).  "
            "The settings `opinion-tagger adapt` takes by default were chosen here, on the network `accurate` had "
            "before it learnt from its teacher; `accurate` rows with another zero-shot figure on the same draw adapt "
            "today's.  "
            "*Trained: heads and recurrent layers* is `--freeze-encoder` (the encoder and word vectors stay); replay 0 "
            "trains on the new documents alone.",
            "",
        ],
        dev_run_lines,
    )
    for path in sorted(results.glob("adaptation-curve*.json")):
        data = json.loads(path.read_text())
        genre = data["data"].get("genre")
        plot = plot_curve(data, plot_dir / f"{path.stem.replace('-', '_')}.png")
        if not genre and "title" not in data:  # the docs page on adapting shows the bundled model's curve too
            plot_curve(data, DOCS / "adaptation-curve.png")
        # a curve of an earlier model carries its own title
        title = data.get("title") or (f"within one genre, {genre}" if genre else "all ULA genres")
        lines += ["", f"### Adaptation: the learning curve, {title}", "", *curve_lines(data, plot)]
    return lines + ([""] if lines else [])
