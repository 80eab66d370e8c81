"""Tagging speed of a bundled model (``--model fast|accurate|PATH``) on this machine.

1. Throughput: tokens per second for batch tagging of many documents, sentence
   splitting and tokenisation included (OpinionTagger.tag_many), over the raw
   MPQA documents in ../shared (real news text; nothing is written out).
   Median of --repeats runs, NumPy back end and Keras back end in the same run (a model with a
   MiniLM encoder runs on the Keras back end only).
2. Start-up: wall time from starting `opinion-tagger tag TEXT` to its first
   output line, median of --starts runs, for both back ends.

    python experiments/benchmarks/bench_tagging.py [--model fast] [--docs 535] [--repeats 3] [--starts 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

from tagger.corpus.mpqa import MPQACorpus
from tagger.network.bundle import load_bundle_files
from tagger.paths import default_mpqa, resolve_model
from tagger.tagging.annotate import OpinionTagger


def throughput(model, backend: str, texts: list[str], repeats: int) -> tuple[float, int]:
    ot = OpinionTagger.load(model, backend=backend)
    list(ot.tag_many(texts[:5]))  # warm-up (graph tracing for keras)
    times, n_tokens = [], 0
    for _ in range(repeats):
        t0 = time.perf_counter()
        docs = list(ot.tag_many(texts, chunk=128))
        times.append(time.perf_counter() - t0)
        n_tokens = sum(len(s.tokens) for d in docs for s in d.sentences)
    return statistics.median(times), n_tokens


def first_output(model, backend: str) -> float:
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "tagger", "tag", "--model", str(model), "--backend", backend,
                             "--quiet",
                             "Officials said the plan was daylight robbery."],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    proc.stdout.readline()
    elapsed = time.perf_counter() - t0
    proc.wait()
    return elapsed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="fast", help="bundled model name or bundle directory (default: fast)")
    ap.add_argument("--mpqa", default=str(default_mpqa()))
    ap.add_argument("--docs", type=int, default=535)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--starts", type=int, default=5)
    args = ap.parse_args()

    texts = [d.text for d in MPQACorpus(args.mpqa)][: args.docs]
    model = resolve_model(args.model)
    backends = ("keras",) if load_bundle_files(model)[1].contextual else ("numpy", "keras")
    print(f"model: {model}; {len(texts)} documents, {sum(map(len, texts))} characters")
    results = {}
    for backend in backends:
        secs, n = throughput(model, backend, texts, args.repeats)
        results[backend] = n / secs
        print(f"{backend:6} throughput: {n} tokens in {secs:.2f}s (median of {args.repeats}) = {n / secs:,.0f} tokens/s")
    if len(results) == 2:
        print(f"numpy/keras throughput ratio: {results['numpy'] / results['keras']:.2f}x")
    for backend in backends:
        starts = [first_output(model, backend) for _ in range(args.starts)]
        print(f"{backend:6} start to first tagged output: median {statistics.median(starts):.2f}s "
              f"(min {min(starts):.2f}, max {max(starts):.2f}, {args.starts} runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
