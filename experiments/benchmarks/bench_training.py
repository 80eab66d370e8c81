"""Training speed of the depth-3 200k Elman tagger (``--cell`` for the other cells, several for a row each): the
fast JAX trainer against the Keras loop.

Trains on the paper's fold 0 (the paper's tokens, DSE) with each trainer for ``--epochs`` epochs and
prints, per trainer, the median seconds of the epochs after the first (the first compiles each
batch shape) and training tokens a second; then the ratio fast / Keras measured in the same run.
Both use the same network and batch size (the authors' 80 sentences) and no dropout; the fast
trainer runs the authors' recipe, the Keras loop Adam (the optimiser barely changes the cost of a
step).  ``--cpus 0`` pins the run to one core, as each of the grid's two jobs runs on the 2-core machine
(``run_cv.py --cpus 0`` / ``--cpus 1``); by default it has the whole machine.  The last line of output
is one JSON object with ``train_tokens_per_s``, ``seconds_per_epoch`` and ``device`` (of the fast
trainer) and the Keras figures beside them.

``--together N`` (fast trainer only) trains folds 0..N-1 at once, as ``run_cv.py --together N`` does,
and reports the aggregate training tokens a second of all N models beside one model alone.

    python -m experiments.benchmarks.bench_training [--epochs 3] [--trainers fast keras] [--cpus 0]
    python -m experiments.benchmarks.bench_training --trainers fast --together 5
    python -m experiments.benchmarks.bench_training --jobs 2     # two pinned jobs, as the CPU grid runs
    python -m experiments.benchmarks.bench_training --cell elman lstm gru mrnn irlm --trainers fast

With several cells, each is measured in turn (hidden sizes of the budget, ``opinion_tagger.config``), a line per
cell and trainer, and the last line is ``{"cells": [one object per cell]}``.

``--experiment FILE`` measures instead the first configuration of an experiment file (``--name`` picks
another), e.g. the MiniLM tagger of issue 15 (``experiments/configs/accurate.yaml``), with the trainer
the configuration names, on the first ``--sentences N`` training sentences of fold 0 (a MiniLM epoch of
the whole fold takes several minutes); dev is scored on 20 sentences and not timed.  With ``--jobs 2``
it shows whether two pinned jobs beat one job on both cores for that network too:

    python -m experiments.benchmarks.bench_training --experiment experiments/configs/accurate.yaml \
        --sentences 640 --epochs 3 [--cpus 0 | --jobs 2]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile

from experiments.cpu_pinning import add_cpus_option, pin_cpus
from opinion_tagger.config import CELLS


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--epochs", type=int, default=3, help="epochs per trainer (at least 2; the first compiles)")
    ap.add_argument("--trainers", nargs="+", default=["fast", "keras"], choices=["fast", "keras"])
    add_cpus_option(
        ap,
        "pin the run to these cores, e.g. 0 (one core, as each of the grid's two jobs runs) or "
        "0,1; default: no pinning, the whole machine",
    )
    ap.add_argument("--task", default="dse", choices=["dse", "ese"])
    ap.add_argument("--cell", nargs="+", default=["elman"], choices=CELLS, help="one or more cells (default: elman)")
    ap.add_argument("--depth", type=int, default=3)
    ap.add_argument("--budget", default="200k")
    ap.add_argument(
        "--together",
        type=int,
        default=1,
        help="also train folds 0..N-1 at once with the fast trainer and report aggregate tokens/s",
    )
    ap.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="N > 1: N fast-trainer runs side by side, each pinned to a core of its own (cores 0..N-1), "
        "as the grid runs on the CPU; reports their aggregate training tokens/s",
    )
    ap.add_argument(
        "--experiment",
        metavar="FILE",
        help="measure this experiment file's configuration (its own trainer) instead of the Elman grid's",
    )
    ap.add_argument("--name", help="with --experiment: the configuration's name (default: the file's first)")
    ap.add_argument(
        "--sentences",
        type=int,
        help="with --experiment: train on the first N training sentences of fold 0 (default: all)",
    )
    args = ap.parse_args()
    if args.epochs < 2:
        ap.error("--epochs must be at least 2 (the first epoch compiles)")
    if (args.name or args.sentences) and not args.experiment:
        ap.error("--name and --sentences go with --experiment")
    if args.sentences is not None and args.sentences < 1:
        ap.error("--sentences must be at least 1")
    if (args.jobs > 1 or args.experiment) and len(args.cell) > 1:
        ap.error("--jobs and --experiment measure one cell")
    if args.jobs > 1:
        return side_by_side(args)
    pin_cpus(ap, args)
    if args.experiment:
        return bench_experiment(ap, args)

    from opinion_tagger.corpus.sources import corpus_words, load_documents, select
    from opinion_tagger.corpus.split import load_split
    from opinion_tagger.paths import default_datasplit, default_reference

    docs = load_documents("reference", str(default_reference()))
    split = load_split(default_datasplit(), 0)
    train_s, dev_s = select(docs, split.train), select(docs, split.dev)
    tokens = sum(len(s) for s in train_s)
    print(
        f"fold 0 (reference tokens): {len(train_s)} train sentences, {tokens} tokens; cores: {args.cpus or 'all'} "
        f"(pinned: {args.cpus is not None}); {platform.processor() or platform.machine()}, {os.cpu_count()} cores",
        flush=True,
    )
    extra = corpus_words(docs)  # the vocabulary run_cv.py gives
    summaries = [bench_cell(cell, args, docs, train_s, dev_s, extra) for cell in args.cell]
    print(json.dumps(summaries[0] if len(summaries) == 1 else {"cells": summaries}), flush=True)
    return 0


def bench_cell(cell: str, args, docs, train_s, dev_s, extra) -> dict:
    """One cell's rows (a line per trainer); returns its summary object."""
    from opinion_tagger.cells import recurrent_parameters
    from opinion_tagger.config import TaggerConfig
    from opinion_tagger.corpus.sources import select
    from opinion_tagger.corpus.split import load_split
    from opinion_tagger.paths import default_datasplit
    from opinion_tagger.training.run import train

    tokens = sum(len(s) for s in train_s)
    recurrent = {"cell": cell, "depth": args.depth, "budget": args.budget, "input_dropout": 0.0, "dropout": 0.0}
    common = {
        "task": args.task,
        "model": {"recurrent": recurrent},
        "training": {"batch_size": 80, "seed": 1, "stopping": {"max_epochs": args.epochs, "patience": 0}},
    }
    hidden = TaggerConfig.from_dict(common).hidden_size
    print(
        f"{cell}, depth {args.depth}, {args.budget}: {hidden} units per direction, "
        f"{recurrent_parameters(cell, args.depth, hidden)} recurrent parameters at the paper's 300-d inputs",
        flush=True,
    )
    configs = {
        "fast": TaggerConfig.from_dict(common).replace(
            {
                "training.trainer": "fast",
                "training.optimizer": {"name": "sgd", "momentum": 0.7, "learning_rate": 0.001, "clipnorm": 0},
                "training.fast": {"lr_decay": 0.999, "loss_sum": True, "output_lr_scale": 0.1},
                "training.fast.l2": 1e-4,
                "training.fast.activation_l2": 1e-4,
                "training.o_weight": 0.5,
                "training.init": "uniform",
                "training.stopping.eval_every": args.epochs,
            }
        ),
        "keras": TaggerConfig.from_dict(common).replace({"training.optimizer.name": "adam"}),
    }
    rows = {}
    for name in args.trainers:
        with tempfile.TemporaryDirectory() as tmp:
            _, meta = train(configs[name], train_s, dev_s, tmp, extra_words=extra, progress=False)
        secs = [h["seconds"] for h in meta["training"]["history"]]
        median = statistics.median(secs[1:])
        rows[name] = {
            "trainer": name,
            "seconds_per_epoch": median,
            "first_epoch_s": secs[0],
            "train_tokens_per_s": tokens / median,
            "device": meta["training"]["device"],
            "epochs": len(secs),
        }
        r = rows[name]
        print(
            f"{cell} {name:5s}: median epoch {median:6.2f} s (epochs 2..{len(secs)}), first epoch (compiling) "
            f"{secs[0]:6.1f} s, {r['train_tokens_per_s']:8.0f} training tokens/s  [{r['device']}]",
            flush=True,
        )
    if args.together > 1:
        from opinion_tagger.training.fast_trainer import train_fast_together

        runs, total = [], 0
        for fold in range(args.together):
            sp = load_split(default_datasplit(), fold)
            fold_train = select(docs, sp.train)
            total += sum(len(s) for s in fold_train)
            runs.append((fold_train, select(docs, sp.dev), None))
        with tempfile.TemporaryDirectory() as tmp:
            runs = [(tr, dv, os.path.join(tmp, str(i))) for i, (tr, dv, _) in enumerate(runs)]
            metas = [m for _, m in train_fast_together(configs["fast"], runs, extra_words=extra, progress=False)]
        secs = [h["seconds"] * args.together for h in metas[0]["training"]["history"]]  # wall time of an epoch
        median = statistics.median(secs[1:])
        rows["together"] = {
            "trainer": f"fast x{args.together}",
            "seconds_per_epoch": median,
            "train_tokens_per_s": total / median,
            "device": metas[0]["training"]["device"],
        }
        print(
            f"fast x{args.together} (folds 0..{args.together - 1} at once): median epoch {median:6.2f} s, "
            f"{total / median:8.0f} training tokens/s of all models together",
            flush=True,
        )
        if "fast" in rows:
            print(
                f"together / alone, same run: {rows['fast']['seconds_per_epoch'] * total / tokens / median:.2f}x "
                "the throughput",
                flush=True,
            )
    if "fast" in rows and "keras" in rows:
        ratio = rows["keras"]["seconds_per_epoch"] / rows["fast"]["seconds_per_epoch"]
        print(f"fast trainer / Keras loop speed, same run: {ratio:.1f}x", flush=True)
    main_row = rows.get("fast") or next(iter(rows.values()))
    summary = {k: main_row[k] for k in ("train_tokens_per_s", "seconds_per_epoch", "device")}
    summary.update(
        trainer=main_row["trainer"],
        cpus=args.cpus or "all",
        cell=cell,
        depth=args.depth,
        budget=args.budget,
        hidden=hidden,
        tokens_per_epoch=tokens,
        load_average=os.getloadavg()[0],
    )
    if "together" in rows:
        summary.update(
            together=args.together,
            together_train_tokens_per_s=rows["together"]["train_tokens_per_s"],
            together_seconds_per_epoch=rows["together"]["seconds_per_epoch"],
        )
    if "keras" in rows and main_row is not rows["keras"]:
        summary.update(
            keras_train_tokens_per_s=rows["keras"]["train_tokens_per_s"],
            keras_seconds_per_epoch=rows["keras"]["seconds_per_epoch"],
            speedup=rows["keras"]["seconds_per_epoch"] / main_row["seconds_per_epoch"],
        )
    return summary


def bench_experiment(ap, args) -> int:
    """``--experiment``: one configuration of an experiment file, trained for ``--epochs`` epochs."""
    from experiments.cross_validation import data_path, load_experiments
    from opinion_tagger.corpus.sources import corpus_words, load_documents, select
    from opinion_tagger.corpus.split import load_split
    from opinion_tagger.errors import TaggerError
    from opinion_tagger.paths import default_datasplit
    from opinion_tagger.training.run import train

    try:
        exps = [e for e in load_experiments(args.experiment) if e.kind == "rnn"]
    except TaggerError as exc:
        ap.error(str(exc))
    chosen = [e for e in exps if e.name == args.name] if args.name else exps[:1]
    if not chosen:
        ap.error(f"--name {args.name}: not in {args.experiment} (it has {', '.join(e.name for e in exps)})")
    exp = chosen[0]
    config = exp.config().replace({"training.stopping.max_epochs": args.epochs, "training.stopping.patience": 0})
    docs = load_documents(exp.data["source"], data_path(exp.data))
    split = load_split(default_datasplit(), 0)
    train_s, dev_s = select(docs, split.train), select(docs, split.dev)[:20]
    if args.sentences:
        train_s = train_s[: args.sentences]
    tokens = sum(len(s) for s in train_s)
    print(
        f"{exp.name} ({config.training.trainer} trainer), fold 0: {len(train_s)} train sentences, {tokens} tokens; "
        f"cores: {args.cpus or 'all'} (pinned: {args.cpus is not None}); {os.cpu_count()} cores",
        flush=True,
    )
    extra = corpus_words(docs)  # the vocabulary run_cv.py gives
    with tempfile.TemporaryDirectory() as tmp:
        _, meta = train(config, train_s, dev_s, tmp, extra_words=extra, progress=False)
    secs = [h["seconds"] for h in meta["training"]["history"]]
    median = statistics.median(secs[1:])
    print(
        f"{config.training.trainer}: median epoch {median:6.2f} s (epochs 2..{len(secs)}), "
        f"first epoch {secs[0]:6.1f} s, "
        f"{tokens / median:8.0f} training tokens/s  [{meta['training']['device']}]",
        flush=True,
    )
    print(
        json.dumps(
            {
                "train_tokens_per_s": tokens / median,
                "seconds_per_epoch": median,
                "device": meta["training"]["device"],
                "trainer": config.training.trainer,
                "experiment": exp.name,
                "cpus": args.cpus or "all",
                "sentences": len(train_s),
                "tokens_per_epoch": tokens,
                "load_average": os.getloadavg()[0],
            }
        ),
        flush=True,
    )
    return 0


def side_by_side(args) -> int:
    """``--jobs N``: this script N times at once, each run pinned to a core of its own (``--cpus K``),
    training the fast trainer's network or ``--experiment``'s configuration; the aggregate of their
    training tokens a second (each job's median epoch falls while the others train too)."""
    import subprocess

    cmd = [
        sys.executable,
        __file__,
        "--epochs",
        str(args.epochs),
        "--trainers",
        "fast",
        "--task",
        args.task,
        "--cell",
        args.cell[0],
        "--depth",
        str(args.depth),
        "--budget",
        args.budget,
    ]
    if args.experiment:
        cmd += (
            ["--experiment", args.experiment]
            + (["--name", args.name] if args.name else [])
            + (["--sentences", str(args.sentences)] if args.sentences else [])
        )
    procs = [
        subprocess.Popen(cmd + ["--cpus", str(k)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        for k in range(args.jobs)
    ]
    jobs = []
    for k, proc in enumerate(procs):
        out, _ = proc.communicate()
        if proc.returncode != 0:
            print(f"job {k} failed (exit {proc.returncode})", file=sys.stderr)
            return 1
        jobs.append(json.loads(out.strip().splitlines()[-1]))
        print(
            f"job {k} (core {k}): median epoch {jobs[-1]['seconds_per_epoch']:6.2f} s, "
            f"{jobs[-1]['train_tokens_per_s']:8.0f} training tokens/s",
            flush=True,
        )
    total = sum(j["train_tokens_per_s"] for j in jobs)
    print(f"{args.jobs} jobs side by side: {total:8.0f} training tokens/s together", flush=True)
    print(
        json.dumps(
            {
                "train_tokens_per_s": total,
                "seconds_per_epoch": statistics.median(j["seconds_per_epoch"] for j in jobs),
                "device": jobs[0]["device"],
                "trainer": jobs[0]["trainer"],
                "jobs": args.jobs,
                "cpus": "one each",
                **(
                    {"experiment": jobs[0]["experiment"], "sentences": jobs[0]["sentences"]}
                    if args.experiment
                    else {"cell": args.cell[0], "depth": args.depth, "budget": args.budget}
                ),
                "tokens_per_epoch": jobs[0]["tokens_per_epoch"],
                "per_job_train_tokens_per_s": [j["train_tokens_per_s"] for j in jobs],
                "load_average": os.getloadavg()[0],
            }
        ),
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
