"""The adaptation learning curve: how much ``opinion-tagger adapt`` buys on a new genre for how many annotated
documents, and what it costs on the news the model first learnt.

For each size N and draw, N documents of the new genre are drawn to adapt on (``adapt_documents``: replay of the
model's own training data, the epoch chosen on held-out documents among the N) and the model is scored on the
others, beside the unadapted model (zero-shot) on the same documents, and on the paper's fold-0 test news.  At
the sizes of ``--uncertainty-sizes`` the N documents are also taken in the annotator's uncertainty order (the
document whose least confident span is least confident first; documents without a span last) instead of drawn.

    python -m experiments.benchmarks.adaptation_curve --data mpqa ../shared/mpqa-2.0-ula/database.mpqa.2.0 \\
        --doclist doclist.ulaSubset --sizes 5 10 20 30 --draws 3 --json

Each run's result is kept in ``--runs`` (``<size>-<draw>.json``) and a run already there is not redone, so the
runs can be shared out: ``--part 1/2`` and ``--part 2/2`` in two processes, one a core; the process that finds
every run done prints the summary (the last line, JSON with ``--json``) and writes it to ``--results``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path

from opinion_tagger.corpus.split import load_split
from opinion_tagger.evaluation.metrics import span_report
from opinion_tagger.paths import default_datasplit, default_mpqa, resolve_model
from opinion_tagger.provenance import git_commit
from opinion_tagger.runtime.sentence_tagger import SentenceTagger
from opinion_tagger.training.adapt import AdaptSettings, new_documents
from opinion_tagger.training.run_data import load_data

HERE = Path(__file__).resolve().parents[1]


def runs_planned(sizes, draws, uncertainty_sizes, n_docs) -> list[tuple[int, str]]:
    """(size, draw) of every run: ``r0``.. for random draws, ``unc`` for the uncertainty order."""
    plan = [(n, f"r{d}") for n in sizes for d in range(draws) if n < n_docs]
    return plan + [(n, "unc") for n in uncertainty_sizes if n < n_docs]


def uncertainty_order(tagger: SentenceTagger, docs: dict) -> list[str]:
    """Documents in the annotator's uncertainty order: lowest span score first (a span's score is the mean of
    its tokens' tag probabilities), documents without a span last, ties in document order."""
    from opinion_tagger.runtime.bio import spans_from_bio

    key = {}
    for name, sents in docs.items():
        preds = tagger.predict([s.words for s in sents])
        scores = [
            sum(conf[a:b]) / (b - a) for p in preds for tags, conf in p.values() for a, b, _ in spans_from_bio(tags)
        ]
        key[name] = (not scores, min(scores) if scores else 0.0)
    return sorted(docs, key=lambda n: key[n])


def chosen(plan_item, names: list[str], order: list[str], seed: int) -> list[str]:
    size, draw = plan_item
    if draw == "unc":
        return order[:size]
    return random.Random(seed * 1000 + size * 10 + int(draw[1:])).sample(names, size)


def scores(tags_by_type: dict, sentences) -> dict:
    """Binary and proportional F1 per type of predicted tags against the sentences' gold tags, and the
    proportional precision and recall (``proportional_pr``)."""
    out = {}
    for t, tags in tags_by_type.items():
        r = span_report([s.tags[t] for s in sentences], tags, [t])[t]
        out[t] = {m: round(r[m]["f1"], 4) for m in ("binary", "proportional")}
        out[t]["proportional_pr"] = [round(r["proportional"][k], 4) for k in ("precision", "recall")]
    return out


def run_one(args, item, docs, pool, news_test, zero_shot, order) -> dict:
    from opinion_tagger.training.adapt import adapt_documents

    names = list(docs)
    adapt_names = chosen(item, names, order, args.seed)
    test_names = [n for n in names if n not in set(adapt_names)]
    test = [s for n in test_names for s in docs[n]]
    out_dir = Path(args.runs) / f"model-{item[0]}-{item[1]}"
    settings = AdaptSettings.from_namespace(args)
    t0 = time.perf_counter()
    adapt_documents(
        resolve_model(args.model),
        {n: docs[n] for n in adapt_names},
        pool,
        out_dir,
        {"source": args.data[0], "path": str(Path(args.data[1]).resolve())},
        settings,
        progress=False,
        say=lambda line: print(line, file=sys.stderr),
    )
    wall = time.perf_counter() - t0
    adapted = SentenceTagger.load(out_dir)
    meta = json.loads((out_dir / "meta.json").read_text())
    result = {
        "size": item[0],
        "draw": item[1],
        "adapted_on": adapt_names,
        "test_documents": len(test_names),
        "test_sentences": len(test),
        "zero_shot": scores({t: [zero_shot[id(s)][t] for s in test] for t in adapted.types}, test),
        "adapted": scores(adapted.predict_tags([s.words for s in test]), test),
        "news_fold0_test": scores(adapted.predict_tags([s.words for s in news_test]), news_test),
        "best_epoch": meta["training"]["best_epoch"],
        "wall_seconds": round(wall, 1),
        "train_seconds": round(meta["training"]["train_seconds"], 1),
    }
    if not args.keep_models:
        from opinion_tagger.storage import remove_tree

        remove_tree(out_dir)
    return result


def summary(args, results: list[dict], news_zero: dict) -> dict:
    def mean_sd(values):
        sd = statistics.stdev(values) if len(values) > 1 else 0.0
        return {"mean": round(statistics.mean(values), 4), "sd": round(sd, 4)}

    def prop(r, what, t):
        return r[what][t]["proportional"]

    rows = []
    for key in sorted({(r["size"], r["draw"] == "unc") for r in results}):
        group = [r for r in results if (r["size"], r["draw"] == "unc") == key]
        row = {"size": key[0], "order": "uncertainty" if key[1] else "random", "runs": len(group)}
        for what in ("zero_shot", "adapted", "news_fold0_test"):
            row[what] = {t: mean_sd([prop(r, what, t) for r in group]) for t in group[0][what]}
        types = group[0]["adapted"]
        row["gain"] = {t: mean_sd([prop(r, "adapted", t) - prop(r, "zero_shot", t) for r in group]) for t in types}
        row["wall_seconds"] = mean_sd([r["wall_seconds"] for r in group])
        rows.append(row)
    return {
        "model": args.model,
        "data": {
            "source": args.data[0],
            "path": Path(args.data[1]).name,
            "doclist": str(args.doclist),
            **({"genre": args.genre} if args.genre else {}),
        },
        "settings": {
            k: getattr(args, k)
            for k in (
                "replay",
                "learning_rate",
                "epochs",
                "held_out_every",
                "seed",
                "optimizer",
                "schedule",
                "freeze_encoder",
            )
        },
        "news_fold0_test_zero_shot": news_zero,
        "curve": rows,
        "runs": results,
        "machine": {"cpu": cpu_name(), "cores": os.cpu_count(), "python": platform.python_version()},
        "git_commit": git_commit(),
    }


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="accurate")
    p.add_argument("--data", nargs=2, metavar=("SOURCE", "PATH"), required=True)
    p.add_argument("--doclist", type=Path)
    p.add_argument(
        "--genre",
        help="only the documents of this ULA genre (experiments/genre_study.py: letters, telephone, ...)",
    )
    p.add_argument("--sizes", type=int, nargs="+", default=[5, 10, 20, 30])
    p.add_argument("--draws", type=int, default=3)
    p.add_argument("--uncertainty-sizes", type=int, nargs="*", default=[10, 20])
    d = AdaptSettings()  # opinion-tagger adapt's defaults
    p.add_argument("--replay", type=float, default=d.replay)
    p.add_argument("--learning-rate", type=float, default=d.learning_rate)
    p.add_argument("--epochs", type=int, default=d.epochs)
    p.add_argument("--held-out-every", type=int, default=d.held_out_every)
    p.add_argument("--seed", type=int, default=d.seed)
    p.add_argument("--optimizer", default=d.optimizer)
    p.add_argument("--schedule", default=d.schedule)
    p.add_argument("--freeze-encoder", action="store_true", help="adapt's --freeze-encoder")
    p.add_argument("--part", default="1/1", help="K/N: this process does every N-th run from the K-th")
    p.add_argument("--runs", type=Path, default=HERE / "runs" / "adaptation-curve")
    p.add_argument("--results", type=Path, default=HERE / "results" / "adaptation-curve.json")
    p.add_argument("--keep-models", action="store_true")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    k, n = (int(x) for x in args.part.split("/"))

    from opinion_tagger.model.keras_backend import import_keras

    import_keras(False)
    zero = SentenceTagger.load(resolve_model(args.model))
    frames = zero.heads is not None
    docs = new_documents(*args.data, frames, args.doclist)
    if args.genre:
        from experiments.genre_study import genre

        docs = {n: d for n, d in docs.items() if genre(n) == args.genre}
    sentences = [s for sents in docs.values() for s in sents]
    zero_tags = zero.predict_tags([s.words for s in sentences])
    zero_shot = {id(s): {t: zero_tags[t][i] for t in zero.types} for i, s in enumerate(sentences)}
    news = load_data("mpqa", default_mpqa())
    news_test = [s for n in load_split(default_datasplit(), 0).test for s in news[n]]
    news_zero = scores(zero.predict_tags([s.words for s in news_test]), news_test)
    plan = runs_planned(args.sizes, args.draws, args.uncertainty_sizes, len(docs))
    order = uncertainty_order(zero, docs) if any(d == "unc" for _, d in plan) else []
    args.runs.mkdir(parents=True, exist_ok=True)
    mine = [item for i, item in enumerate(plan) if i % n == k - 1]
    pool = None
    for item in mine:
        done = args.runs / f"{item[0]}-{item[1]}.json"
        if done.is_file():
            continue
        if pool is None and args.replay > 0:
            from opinion_tagger.runtime.bundle import load_bundle_files
            from opinion_tagger.training.adapt import replay_pool

            pool = replay_pool(load_bundle_files(resolve_model(args.model))[2], frames)
        result = run_one(args, item, docs, pool, news_test, zero_shot, order)
        done.write_text(json.dumps(result) + "\n")
        line = "; ".join(
            f"{what} " + " ".join(f"{t} {r['proportional']:.3f}" for t, r in result[what].items())
            for what in ("zero_shot", "adapted", "news_fold0_test")
        )
        print(f"size {item[0]} {item[1]}: {line}; {result['wall_seconds']:.0f}s", flush=True)
    results = [json.loads(f.read_text()) for item in plan if (f := args.runs / f"{item[0]}-{item[1]}.json").is_file()]
    if len(results) < len(plan):
        print(f"{len(results)} of {len(plan)} runs done; the summary comes when all are", file=sys.stderr)
        return 0
    out = summary(args, results, news_zero)
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text(json.dumps(out, indent=1) + "\n")
    if not args.json:
        for row in out["curve"]:
            print(
                f"{row['size']:3d} {row['order']:11} DSE {row['adapted']['DSE']['mean']:.3f} (zero-shot "
                f"{row['zero_shot']['DSE']['mean']:.3f}) ESE {row['adapted']['ESE']['mean']:.3f} (zero-shot "
                f"{row['zero_shot']['ESE']['mean']:.3f}) news DSE {row['news_fold0_test']['DSE']['mean']:.3f} "
                f"ESE {row['news_fold0_test']['ESE']['mean']:.3f} {row['wall_seconds']['mean']:.0f}s"
            )
    print(json.dumps({k: v for k, v in out.items() if k != "runs"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
