"""Ten folds of a DSE's role heads on the attitude documents (docs/frames.md, *Holders, targets and attitudes*):
the paper's folds restricted to MPQA's attitude subset (``doclist.attitudeSubset``; each fold's train, dev and test
sets keep their documents), the heads (holder, targets, attitude type) trained per fold on the train and dev
documents and scored on the test documents with the gold DSEs given, as Marasović & Frank (2018) and the later
work score them.

The heads read *pretrained* features: the word vectors (GloVe) and the contextual vectors of MiniLM-L6 as they come
pretrained (``accurate``'s configuration with no recurrent layer, its encoder's adapters at their start, where
they change nothing), which never saw MPQA; so every fold is scored on documents that nothing it runs was trained
on.  (The bundled ``accurate``'s network trained on fold 0's train and dev documents, so its states serve fold 0
alone: ``opinion-tagger evaluate --model accurate --fold 0 --doclist doclist.attitudeSubset``.)  The features are
computed once per sentence; each fold's heads train on them with the recipe of ``experiments.role_heads_study``
(Adam at 2e-3, batches of 32, the last of ``--epochs`` epochs).  Prints a row per fold and the mean; ``--out``
writes the JSON result.

    python -m experiments.role_folds --out experiments/results/role-folds/pretrained.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np

from experiments.role_heads_study import RECIPE, ULA, VARIANTS
from experiments.train_bundled_model import CONFIGS
from opinion_tagger.config import TaggerConfig
from opinion_tagger.corpus.split import load_split
from opinion_tagger.paths import default_datasplit, default_mpqa
from opinion_tagger.provenance import git_commit
from opinion_tagger.sentences import Sentence
from opinion_tagger.training.run_data import load_data

# The pretrained features each ``--features`` names: the bundled configuration they come from, and in words.
FEATURES = {
    "minilm": ("accurate", "pretrained: GloVe and MiniLM-L6 (accurate's configuration, no recurrent layer, untrained)"),
    "mpnet": (
        "accurate-mpnet",
        "pretrained: GloVe and MPNet-base (accurate-mpnet's configuration, no recurrent layer, untrained)",
    ),
}


def pretrained_config(variant: str, features: str = "minilm") -> TaggerConfig:
    """The configuration of the bundle ``features`` names (``FEATURES``) without a recurrent layer, with the role
    heads of ``variant``."""
    frames = {"model.frames.enabled": True, "model.frames.detach": True, "model.frames.roles": True}
    return CONFIGS[FEATURES[features][0]].replace({"model.recurrent.depth": 0, **frames, **VARIANTS[variant]})


def sentence_states(config: TaggerConfig, sentences: list[Sentence]) -> list[np.ndarray]:
    """Each sentence's features [n_words, D]: the states of the network of ``config`` as it starts (pretrained word
    and encoder vectors), with no dropout."""
    from opinion_tagger.model.network import build_model
    from opinion_tagger.runtime.batching import batches
    from opinion_tagger.runtime.frame_heads import STATES
    from opinion_tagger.runtime.wordpieces import word_pieces
    from opinion_tagger.training.frame_fit import _network_inputs
    from opinion_tagger.training.models import fresh_model, set_seeds
    from opinion_tagger.training.trainer import batch_arrays

    set_seeds(RECIPE["seed"])
    vocab, training = fresh_model(config, sentences, ())
    network = build_model(config, len(vocab), training.get_layer("embedding").dim, pretrained=False)
    names = {layer.name for layer in network.layers}
    for layer in training.layers:  # the network's layers (the training network's heads are not in it)
        if layer.weights and layer.name in names:
            network.get_layer(layer.name).set_weights(layer.get_weights())
    pieces = word_pieces(config.encoder)
    out: list[np.ndarray] = [np.zeros(0)] * len(sentences)
    for idx in batches([len(s) for s in sentences], 32):
        inputs, _, _ = batch_arrays(vocab, config, sentences, idx, len(idx), None, pieces)
        states = np.asarray(network.predict_on_batch(_network_inputs(inputs))[STATES], dtype="float32")
        for row, i in enumerate(idx):
            out[i] = states[row, : len(sentences[i])]
    return out


def state_batches(config: TaggerConfig, sentences: list[Sentence], states: list[np.ndarray], size: int) -> list:
    """(inputs, targets) of the heads per batch of ``size`` sentences of about one length."""
    from opinion_tagger.runtime.batching import batches
    from opinion_tagger.training.frame_data import frame_batch

    out = []
    for idx in batches([len(s) for s in sentences], size):
        n = max(len(sentences[i]) for i in idx)
        x = np.zeros((len(idx), n, states[idx[0]].shape[-1]), "float32")
        words = np.zeros((len(idx), n), "int32")
        for row, i in enumerate(idx):
            x[row, : len(sentences[i])], words[row, : len(sentences[i])] = states[i], 1
        spans, targets = frame_batch(config, sentences, idx, len(idx), n)
        targets = {k: v for k, v in targets.items() if k not in config.trained_types}
        out.append(({"states": x, "words": words, **spans}, targets))
    return out


def given_scores(config: TaggerConfig, heads, sentences: list[Sentence], states: list[np.ndarray]) -> dict:
    """The role scores with the gold DSEs given (``opinion_tagger.evaluation.roles``): the heads (as frames.onnx,
    in ONNX Runtime) on each sentence's gold DSE spans."""
    from opinion_tagger.evaluation.roles import role_report
    from opinion_tagger.export.frames_export import frame_heads
    from opinion_tagger.model.frame_heads import head_arrays

    runtime = frame_heads(head_arrays(heads, config), config)
    gold = [s.frames or [] for s in sentences]
    given = []
    for s, st, frames in zip(sentences, states, gold):
        requests = [(0, "DSE", f.start, f.end) for f in frames if f.type == "DSE"]
        given.append([p.frame for p in runtime.predict(st[None], [len(s)], requests)] if requests else [])
    report = role_report(gold, given, given, ("holder", "target"), attitude=True, documents=[s.doc for s in sentences])
    return {
        "holder": report["holder"]["gold_dse_given"],
        "target": report["target"]["gold_dse_given"],
        "attitude": report["attitude"]["gold_dse_given"],
    }


def attitude_names(mpqa: Path) -> set[str]:
    """The documents of the attitude subset (``doclist.attitudeSubset`` of the corpus directory)."""
    return {n.strip() for n in (Path(mpqa) / "doclist.attitudeSubset").read_text().splitlines() if n.strip()}


def training_documents(args) -> dict[str, list[Sentence]]:
    """The documents the heads may learn from (``--train-on``), with their frames."""
    doclist = "doclist.attitudeSubset" if args.train_on == "attitude" else None
    return load_data("mpqa", args.mpqa, frames=True, doclist=doclist)


def dev_parts(args, docs: dict[str, list[Sentence]]) -> tuple[list[Sentence], list[Sentence], dict]:
    """``--dev-on``'s (training sentences, dev sentences, the dev set in words): fold 0's train and dev documents
    against the ULA documents, or fold 0's train documents against its dev documents (those of the attitude
    subset: the news the folds test)."""
    split = load_split(args.datasplit, 0)
    if args.dev_on == "news":
        tested = attitude_names(args.mpqa)
        dev_names = [n for n in split.dev if n in docs and n in tested]
        train = [s for n in split.train if n in docs for s in docs[n]]
        dev = [s for n in dev_names for s in docs[n]]
        return train, dev, {"data": "news", "fold": 0, "part": "dev", "documents": len(dev_names)}
    train = [s for n in split.train + split.dev if n in docs for s in docs[n]]
    ula_docs = load_data("mpqa", args.ula, doclist="doclist.ulaSubset", frames=True)
    dev = [s for sents in ula_docs.values() for s in sents]
    return train, dev, {"data": "ULA", "documents": len(ula_docs)}


def dev_study(args) -> int:
    """``--dev``: each variant's heads on pretrained features, trained on fold 0's documents of the attitude
    subset and scored with the gold DSEs given on ``--dev-on``'s dev set (``dev_parts``), at each of ``--epochs``;
    a row each, the JSON to ``--out``."""
    from experiments.role_heads_study import fit

    t0 = time.perf_counter()
    docs = training_documents(args)
    train, dev, dev_set = dev_parts(args, docs)
    states = sentence_states(pretrained_config(args.dev[0], args.features), train + dev)  # one vocabulary for both
    train_states, dev_states = states[: len(train)], states[len(train) :]
    print("| variant | epochs | holder bin / prop | target bin / prop | attitude (majority) |")
    print("|---|---|---|---|---|")
    variants = {}
    for name in args.dev:
        config = pretrained_config(name, args.features)
        data = state_batches(config, train, train_states, RECIPE["batch_size"])
        found = fit(
            config, data, args.epochs, lambda heads, c=config: given_scores(c, heads, dev, dev_states), args.ema
        )
        for epoch, s in found.items():
            print(
                f"| {name} | {epoch} | {100 * s['holder']['binary']['f1']:.2f} / "
                f"{100 * s['holder']['proportional']['f1']:.2f} | {100 * s['target']['binary']['f1']:.2f} / "
                f"{100 * s['target']['proportional']['f1']:.2f} | {100 * s['attitude']['accuracy']:.2f} "
                f"({100 * s['attitude']['majority']:.2f}) |",
                flush=True,
            )
        last = found[max(args.epochs)]
        variants[name] = {"config": config.to_dict(), **last, "by_epoch": {str(e): s for e, s in found.items()}}
    parts = ["train"] if args.dev_on == "news" else ["train", "dev"]
    result = {
        "features": FEATURES[args.features][1],
        "train": {"fold": 0, "parts": parts, "documents": args.train_on, "sentences": len(train)},
        "dev": {**dev_set, "sentences": len(dev)},
        "epochs": max(args.epochs),
        "recipe": {**RECIPE, "ema": args.ema},
        "commit": git_commit(),
        "seconds": round(time.perf_counter() - t0, 1),
        "variants": variants,
    }
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, sort_keys=True) + "\n")
    return 0


def fold_mean(folds: list[dict]) -> dict:
    """The mean and spread over ``folds`` of the holder's and the targets' F1, and the attitude's accuracy beside
    the majority type's share."""

    def summary(role: str, metric: str) -> dict:
        values = [f[role][metric]["f1"] for f in folds]
        return {"mean": round(statistics.mean(values), 4), "sd": round(statistics.pstdev(values), 4)}

    mean = {r: {m: summary(r, m) for m in ("binary", "proportional")} for r in ("holder", "target")}
    gain = [f["attitude"]["accuracy"] - f["attitude"]["majority"] for f in folds]
    mean["attitude"] = {
        "accuracy": round(statistics.mean(f["attitude"]["accuracy"] for f in folds), 4),
        "majority": round(statistics.mean(f["attitude"]["majority"] for f in folds), 4),
        "gain": round(statistics.mean(gain), 4),
    }
    return mean


def mean_row(mean: dict) -> str:
    """The table's row of ``fold_mean``."""
    return (
        f"| mean | | {100 * mean['holder']['binary']['mean']:.2f} / {100 * mean['holder']['proportional']['mean']:.2f}"
        f" | {100 * mean['target']['binary']['mean']:.2f} / {100 * mean['target']['proportional']['mean']:.2f}"
        f" | {100 * mean['attitude']['accuracy']:.2f} ({100 * mean['attitude']['majority']:.2f}) |"
    )


def merge(paths: list[Path]) -> dict:
    """One result of the folds of several runs of one setting (``--folds`` split between processes): their folds
    in order, the mean over all of them, the runs' seconds added up.  A run of another setting, or a fold given
    twice, is a one-line error."""
    runs = [json.loads(Path(p).read_text()) for p in paths]
    setting = ("features", "documents", "train_on", "variant", "epochs", "recipe", "config", "commit")
    for path, run in zip(paths[1:], runs[1:]):
        differ = [k for k in setting if run.get(k) != runs[0].get(k)]
        if differ:
            raise SystemExit(f"{path}: not the setting of {paths[0]} ({', '.join(differ)} differ)")
    folds = sorted((f for run in runs for f in run["folds"]), key=lambda f: f["fold"])
    if len({f["fold"] for f in folds}) != len(folds):
        raise SystemExit(f"{', '.join(map(str, paths))}: a fold given twice")
    seconds = round(sum(run["seconds"] for run in runs), 1)
    return {**runs[0], "folds": folds, "mean": fold_mean(folds), "seconds": seconds, "processes": len(runs)}


def main(argv: list[str] | None = None) -> int:
    from experiments.role_heads_study import fit

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variant", default="context-64", choices=list(VARIANTS))
    ap.add_argument(
        "--epochs",
        nargs="+",
        type=int,
        default=[10],
        help="epochs the heads train (the folds: one number; --dev: scored after each, the last kept)",
    )
    ap.add_argument(
        "--features",
        choices=sorted(FEATURES),
        default="minilm",
        help="the pretrained encoder the heads read, with GloVe: MiniLM-L6 (accurate's) or MPNet-base "
        "(accurate-mpnet's; opinion-tagger download --encoder mpnet)",
    )
    ap.add_argument("--folds", nargs="+", type=int, default=list(range(10)))
    ap.add_argument("--mpqa", type=Path, default=default_mpqa())
    ap.add_argument("--datasplit", type=Path, default=default_datasplit())
    ap.add_argument(
        "--dev",
        nargs="+",
        choices=list(VARIANTS),
        help="instead of the folds: these variants trained on fold 0's train and dev documents of the attitude "
        "subset and scored on the ULA documents (the dev set), to choose the variant",
    )
    ap.add_argument(
        "--train-on",
        choices=("attitude", "all"),
        default="attitude",
        help="the heads learn from the train and dev documents of the attitude subset, or from all of them (the "
        "holder from every DSE; the attitude and targets only where the documents carry them); tests stay the "
        "attitude documents",
    )
    ap.add_argument(
        "--dev-on",
        choices=("ula", "news"),
        default="ula",
        help="--dev's dev set: the ULA documents (trained on fold 0's train and dev documents) or fold 0's dev "
        "documents of the attitude subset (trained on its train documents)",
    )
    ap.add_argument(
        "--ema",
        type=float,
        default=0.0,
        help="score the moving average of the heads' weights over the updates, of this momentum (0: the weights)",
    )
    ap.add_argument("--ula", type=Path, default=ULA)
    ap.add_argument("--out", type=Path, help="write the JSON result here")
    ap.add_argument(
        "--merge",
        nargs="+",
        type=Path,
        metavar="RESULT",
        help="instead of running: one result (to --out) of these results of one setting, each of some --folds",
    )
    args = ap.parse_args(argv)

    if args.merge:
        if not args.out:
            ap.error("--merge writes to --out")
        merged = merge(args.merge)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(merged, sort_keys=True) + "\n")
        print(mean_row(merged["mean"]))
        return 0

    if args.dev:
        return dev_study(args)
    if len(args.epochs) != 1:
        ap.error("the folds train for one number of --epochs")
    epochs = args.epochs[0]
    t0 = time.perf_counter()
    config = pretrained_config(args.variant, args.features)
    docs = training_documents(args)
    tested = attitude_names(args.mpqa)
    names = sorted(docs)
    sentences = [s for n in names for s in docs[n]]
    where = {n: k for k, n in enumerate(names)}
    first = np.cumsum([0] + [len(docs[n]) for n in names])
    print(f"pretrained features of {len(sentences)} sentences of {len(names)} documents", file=sys.stderr)
    states = sentence_states(config, sentences)
    print(f"  {time.perf_counter() - t0:.0f}s", file=sys.stderr)

    def part(doc_names: list[str]) -> list[int]:
        return [i for n in doc_names if n in where for i in range(first[where[n]], first[where[n] + 1])]

    folds = []
    print("| fold | test documents | holder bin / prop | target bin / prop | attitude (majority) |")
    print("|---|---|---|---|---|")
    for k in args.folds:
        split = load_split(args.datasplit, k)
        train_idx, test_idx = part(split.train + split.dev), part([n for n in split.test if n in tested])
        train = [sentences[i] for i in train_idx]
        test, test_states = [sentences[i] for i in test_idx], [states[i] for i in test_idx]
        data = state_batches(config, train, [states[i] for i in train_idx], RECIPE["batch_size"])
        t1 = time.perf_counter()
        scored = partial(given_scores, config, sentences=test, states=test_states)
        found = fit(config, data, [epochs], scored, args.ema)
        s = found[epochs]
        n_test = len({x.doc for x in test})
        folds.append({"fold": k, "test_documents": n_test, "seconds": round(time.perf_counter() - t1, 1), **s})
        holder, target, att = s["holder"], s["target"], s["attitude"]
        print(
            f"| {k} | {n_test} | {100 * holder['binary']['f1']:.2f} / {100 * holder['proportional']['f1']:.2f}"
            f" | {100 * target['binary']['f1']:.2f} / {100 * target['proportional']['f1']:.2f}"
            f" | {100 * att['accuracy']:.2f} ({100 * att['majority']:.2f}) |",
            flush=True,
        )

    mean = fold_mean(folds)
    print(mean_row(mean))
    result = {
        "features": FEATURES[args.features][1],
        "documents": "doclist.attitudeSubset",
        "train_on": args.train_on,
        "variant": args.variant,
        "epochs": epochs,
        "recipe": {**RECIPE, "ema": args.ema},
        "config": config.to_dict(),
        "commit": git_commit(),
        "seconds": round(time.perf_counter() - t0, 1),
        "folds": folds,
        "mean": mean,
    }
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
