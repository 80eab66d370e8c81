"""Dev study of a DSE's role heads (docs/frames.md, *Holders, targets and attitudes*): variants of the frame heads
(``model.frames.positions``, ``model.frames.context``, ``model.frames.units``, epochs; roles on) fitted on a bundled
network's states as ``train --init-from MODEL --heads-only`` fits them, scored on the ULA documents (the dev set
for roles: the bundled networks trained on fold 0's train and dev documents, so the paper's dev documents cannot
choose).

The network's states are computed once for the training sentences (fold 0's train + dev documents, all 495;
the role heads learn from the DSEs of those that carry attitudes) and every variant trains on them with the
bundled recipe (``experiments.train_bundled_model.HEADS``: Adam at 2e-3, batches of 32, dropout on the states at
the network's rate, the last epoch kept); each is scored after ``--epochs`` epochs (several: scored at each) on the
ULA documents, gold DSEs given and end to end, by the runtime's code (``predict_with_roles``: frames.onnx in
ONNX Runtime on the bundle's states).  Prints a table; ``--json`` adds the result as one JSON line, which
``--out`` writes too.

    python -m experiments.role_heads_study --model accurate --variants base positions \
        --epochs 10 20 --out experiments/results/role-heads-dev/accurate.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from opinion_tagger.config import TaggerConfig
from opinion_tagger.corpus.sources import select
from opinion_tagger.corpus.split import load_split
from opinion_tagger.paths import default_datasplit, default_mpqa, resolve_model
from opinion_tagger.provenance import git_commit
from opinion_tagger.runtime.sentence_tagger import SentenceTagger
from opinion_tagger.training.run_data import load_data

ULA = default_mpqa().parents[1] / "mpqa-2.0-ula" / "database.mpqa.2.0"
# the variants: the frame fields each sets on the bundle's configuration (roles on in all)
VARIANTS = {
    "base": {},
    "positions": {"model.frames.positions": True},
    "positions-128": {"model.frames.positions": True, "model.frames.units": 128},
    "context-64": {"model.frames.positions": True, "model.frames.context": 64},
    "context-128": {"model.frames.positions": True, "model.frames.units": 128, "model.frames.context": 128},
    "context-64-holder": {
        "model.frames.positions": True,
        "model.frames.context": 64,
        "model.frames.context_holder": True,
    },
    "context-64-own-holder": {
        "model.frames.positions": True,
        "model.frames.context": 64,
        "model.frames.holder_context": 64,
    },
}
RECIPE = {"learning_rate": 2e-3, "batch_size": 32, "seed": 1}


def state_batches(tagger: SentenceTagger, config: TaggerConfig, sentences, size: int) -> list[tuple[dict, dict]]:
    """(inputs, targets) of the heads per batch of ``size`` sentences of about one length: the network's states
    (ONNX Runtime, as the runtime computes them) and the frames' targets (``frame_batch``)."""
    from opinion_tagger.runtime.batching import batches, encode_words
    from opinion_tagger.runtime.frame_heads import STATES
    from opinion_tagger.training.frame_data import frame_batch

    pieces = tagger._wordpieces()
    words = [s.words for s in sentences]
    if pieces is not None:
        pieces.prepare(words)
    out = []
    for idx in batches([len(s) for s in sentences], size):
        batch = [words[i] for i in idx]
        n = max(len(w) for w in batch)
        ids = encode_words(tagger.vocab, batch, length=n)
        states = np.asarray(tagger.network.forward(tagger._inputs(ids, batch, pieces))[STATES], dtype="float32")
        spans, targets = frame_batch(config, sentences, idx, len(idx), n)
        targets = {k: v for k, v in targets.items() if k not in config.trained_types}
        out.append(({"states": states[:, :n], "words": ids.astype("int32"), **spans}, targets))
    return out


def fit(config: TaggerConfig, data: list[tuple[dict, dict]], epochs: list[int], report, ema: float = 0.0) -> dict:
    """Train the heads of ``config`` on ``data`` and call ``report(heads)`` after each epoch of ``epochs``; the
    reports by epoch.  With ``ema`` (a momentum, e.g. 0.999), each report scores the exponential moving average of
    the weights over the updates so far (Keras's ``use_ema``), and training goes on from the weights themselves."""
    import keras

    from opinion_tagger.model.frame_heads import frame_losses
    from opinion_tagger.training.frame_fit import head_network
    from opinion_tagger.training.models import set_seeds

    set_seeds(RECIPE["seed"])
    heads = head_network(config, data[0][0]["states"].shape[-1], RECIPE["learning_rate"])
    if ema:
        optimizer = keras.optimizers.Adam(RECIPE["learning_rate"], use_ema=True, ema_momentum=ema)
        heads.compile(optimizer=optimizer, loss=frame_losses(config))
    out = {}
    for epoch in range(1, max(epochs) + 1):
        t0 = time.perf_counter()
        order = np.random.default_rng([RECIPE["seed"], epoch]).permutation(len(data))
        losses = [float(heads.train_on_batch(*data[k], return_dict=True)["loss"]) for k in order]
        print(f"  epoch {epoch}: loss {np.mean(losses):.4f} ({time.perf_counter() - t0:.0f}s)", file=sys.stderr)
        if epoch in epochs:
            out[epoch] = _averaged(heads, report) if ema else report(heads)
    return out


def _averaged(heads, report):
    """``report(heads)`` with the heads' weights replaced by their moving averages for its while (Keras's
    ``finalize_variable_values``, the weights themselves put back after)."""
    weights = heads.trainable_variables
    kept = [np.asarray(w) for w in weights]
    heads.optimizer.finalize_variable_values(weights)
    try:
        return report(heads)
    finally:
        for w, k in zip(weights, kept, strict=True):
            w.assign(k)


def scores(tagger: SentenceTagger, config: TaggerConfig, heads, sentences) -> dict:
    """The frame and role scores of ``tagger`` with the heads ``heads`` (a Keras head network) on ``sentences``."""
    from opinion_tagger.evaluation.scoring import predict_with_roles
    from opinion_tagger.export.frames_export import frame_heads
    from opinion_tagger.model.frame_heads import head_arrays

    tagger.config, tagger.heads = config, frame_heads(head_arrays(heads, config), config)
    _, frames, roles = predict_with_roles(tagger, sentences)
    return {"frames": frames, "roles": roles}


def row(name: str, epoch: int, s: dict) -> str:
    r = s["roles"]

    def f1(role: str, setting: str) -> str:
        x = r[role][setting]
        return f"{100 * x['binary']['f1']:.2f} / {100 * x['proportional']['f1']:.2f}"

    att = r["attitude"]["gold_dse_given"]
    return (
        f"| {name} | {epoch} | {f1('holder', 'gold_dse_given')} | {f1('holder', 'end_to_end')} | "
        f"{f1('target', 'gold_dse_given')} | {f1('target', 'end_to_end')} | "
        f"{100 * att['accuracy']:.2f} ({100 * att['majority']:.2f}) |"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="accurate")
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    ap.add_argument("--epochs", nargs="+", type=int, default=[10])
    ap.add_argument("--mpqa", type=Path, default=default_mpqa())
    ap.add_argument("--datasplit", type=Path, default=default_datasplit())
    ap.add_argument("--ula", type=Path, default=ULA)
    ap.add_argument("--limit", type=int, help="only this many training and ULA documents (a quick try)")
    ap.add_argument("--json", action="store_true", help="end with the result as one JSON line")
    ap.add_argument("--out", type=Path, help="also write the JSON result here")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    tagger = SentenceTagger.load(resolve_model(args.model))
    saved = tagger.config
    split = load_split(args.datasplit, 0)
    docs = load_data("mpqa", args.mpqa, frames=True)
    names = (split.train + split.dev)[: args.limit]
    train = select(docs, names)
    ula_docs = load_data("mpqa", args.ula, doclist="doclist.ulaSubset", frames=True)
    ula_docs = dict(list(ula_docs.items())[: args.limit])
    ula = [s for sents in ula_docs.values() for s in sents]
    base = saved.replace({"model.frames.enabled": True, "model.frames.detach": True, "model.frames.roles": True})
    print(f"the network's states on {len(train)} sentences", file=sys.stderr)
    data = state_batches(tagger, base, train, RECIPE["batch_size"])
    states_seconds = time.perf_counter() - t0
    print(f"  {states_seconds:.0f}s", file=sys.stderr)
    results = {}
    print(
        "| variant | epochs | holder given bin / prop | holder e2e | target given | target e2e | attitude (majority) |"
    )
    print("|---|---|---|---|---|---|---|")
    for name in args.variants:
        config = base.replace(VARIANTS[name])
        t1 = time.perf_counter()
        found = fit(config, data, sorted(args.epochs), lambda heads, c=config: scores(tagger, c, heads, ula))
        results[name] = {"config": config.to_dict(), "seconds": round(time.perf_counter() - t1, 1), "by_epoch": found}
        for epoch, s in found.items():
            print(row(name, epoch, s), flush=True)
    result = {
        "model": args.model,
        "train": {"fold": 0, "parts": ["train", "dev"], "documents": len(names), "sentences": len(train)},
        "dev": {"data": "ULA", "documents": len(ula_docs), "sentences": len(ula)},
        "recipe": RECIPE,
        "commit": git_commit(),
        "states_seconds": round(states_seconds, 1),
        "variants": results,
    }
    text = json.dumps(result, sort_keys=True)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    if args.json:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
