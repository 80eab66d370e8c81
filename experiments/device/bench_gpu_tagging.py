"""Batched tagging speed of a bundle on Keras's JAX backend (the GPU where JAX has one), its tags checked.

    KERAS_BACKEND=jax python -m experiments.device.bench_gpu_tagging [--model accurate] [--rows 256 512]
        [--repeats 3] [--precision default|highest] [--expect FILE.json.gz] [--sentences N]
    python -m experiments.device.bench_gpu_tagging --write-expect FILE.json.gz [--model accurate] [--sentences N]

The sentences are the reference corpus's, every document of the 10 folds, in the paper's tokens (no spaCy, so
sentence splitting and tokenisation are not in the figure; `bench_tagging.py --stages` times them alone).  Each
figure is ``SentenceTagger.predict`` over all of them, as the library tags: wordpieces, the network, the CRF's Viterbi
decoding and marginals in NumPy.  Batches hold ``--rows`` sentences of similar wordpiece length (the wordpiece
budget is lifted), padded to the library's length buckets, so XLA compiles one function per (words, wordpieces)
bucket pair; the first pass compiles them and is not timed.  Tokens per second: words / median of ``--repeats``
timed passes.

``--precision``: JAX's matrix-product precision for float32 (``default`` lets the GPU use TF32; ``highest`` is
full float32, as on the CPU).  ``--write-expect`` stores the tags and confidences of the bundle's ONNX Runtime
path where it runs; ``--expect`` compares the JAX run with them: the share of sentences whose tags are all
equal, and the largest confidence difference.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import sys
import time

from opinion_tagger.corpus.sources import load_documents
from opinion_tagger.paths import default_reference, resolve_model
from opinion_tagger.runtime.sentence_tagger import SentenceTagger


def sentences(n: int | None) -> list[list[str]]:
    docs = load_documents("reference", default_reference())
    sents = [s.words for d in docs.values() for s in d]
    return sents[:n] if n else sents


def write_expect(model, sents: list[list[str]], path: str) -> None:
    preds = SentenceTagger.load(model, backend="onnx").predict(sents)
    rows = [{t: [" ".join(tags), [round(c, 6) for c in conf]] for t, (tags, conf) in p.items()} for p in preds]
    with gzip.open(path, "wt") as f:
        json.dump(rows, f)
    print(f"wrote the ONNX Runtime tags of {len(sents)} sentences to {path}")


def compare(preds, path: str) -> tuple[float, float]:
    with gzip.open(path, "rt") as f:
        expect = json.load(f)
    same, diff = 0, 0.0
    for p, e in zip(preds, expect, strict=True):
        same += all(" ".join(p[t][0]) == e[t][0] for t in e)
        diff = max([diff] + [abs(a - b) for t in e for a, b in zip(p[t][1], e[t][1])])
    return same / len(expect), diff


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="accurate")
    ap.add_argument("--rows", type=int, nargs="+", default=[256], help="sentences a batch (one figure each)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sentences", type=int, help="the first N sentences only")
    ap.add_argument("--precision", choices=("default", "highest"), default="default")
    ap.add_argument("--expect", help="tags to compare with (written by --write-expect)")
    ap.add_argument("--write-expect", help="write the ONNX Runtime tags here and stop")
    args = ap.parse_args()
    model, sents = resolve_model(args.model), sentences(args.sentences)
    if args.write_expect:
        write_expect(model, sents, args.write_expect)
        return 0
    import jax
    import keras

    jax.config.update("jax_default_matmul_precision", args.precision if args.precision != "default" else None)
    t0 = time.perf_counter()
    tagger = SentenceTagger.load(model, backend="keras")
    n_tokens = sum(len(s) for s in sents)
    print(
        f"{args.model}: {len(sents)} sentences, {n_tokens} tokens; Keras {keras.backend.backend()} backend on "
        f"{jax.devices()[0].device_kind}; precision {args.precision}; loaded in {time.perf_counter() - t0:.1f} s",
        flush=True,
    )
    ok = True
    for rows in args.rows:
        tagger.piece_budget = rows * 4096  # batches of `rows` sentences, whatever their length
        t0 = time.perf_counter()
        preds = tagger.predict(sents, batch_size=rows)
        first = time.perf_counter() - t0
        times = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            tagger.predict(sents, batch_size=rows)
            times.append(time.perf_counter() - t0)
        med = statistics.median(times)
        line = (
            f"  {rows} sentences a batch: {n_tokens / med:,.0f} tokens/s (median of {args.repeats}: "
            f"{', '.join(f'{t:.2f}' for t in times)} s; first pass with compiling {first:.1f} s)"
        )
        if args.expect:
            share, diff = compare(preds, args.expect)
            line += f"; tags equal to ONNX Runtime's in {share:.2%} of sentences, confidences within {diff:.1e}"
            ok = ok and share > 0.99
        print(line, flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
