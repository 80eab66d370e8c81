"""Tagging speed of the bundled model on this machine.

1. Throughput: tokens per second for batch tagging of many documents, sentence
   splitting and tokenisation included (OpinionTagger.tag_many), over the raw
   MPQA documents in ../shared (real news text; nothing is written out).
   Median of --repeats runs, NumPy back end and Keras back end in the same run.
2. Start-up: wall time from starting `opinion-tagger tag TEXT` to its first
   output line, median of --starts runs, for both back ends.

    python experiments/benchmarks/bench_tagging.py [--docs 535] [--repeats 3] [--starts 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

from tagger.annotate import OpinionTagger
from tagger.corpus.mpqa import MPQACorpus
from tagger.paths import default_model, default_mpqa


def throughput(backend: str, texts: list[str], repeats: int) -> tuple[float, int]:
    ot = OpinionTagger.load(default_model(), backend=backend)
    list(ot.tag_many(texts[:5]))  # warm-up (graph tracing for keras)
    times, n_tokens = [], 0
    for _ in range(repeats):
        t0 = time.perf_counter()
        docs = list(ot.tag_many(texts, chunk=128))
        times.append(time.perf_counter() - t0)
        n_tokens = sum(len(s.tokens) for d in docs for s in d.sentences)
    return statistics.median(times), n_tokens


def first_output(backend: str) -> float:
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "tagger", "tag", "--backend", backend, "--quiet",
                             "Officials said the plan was daylight robbery."],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    proc.stdout.readline()
    elapsed = time.perf_counter() - t0
    proc.wait()
    return elapsed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mpqa", default=str(default_mpqa()))
    ap.add_argument("--docs", type=int, default=535)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--starts", type=int, default=5)
    args = ap.parse_args()

    texts = [d.text for d in MPQACorpus(args.mpqa)][: args.docs]
    print(f"model: {default_model()}; {len(texts)} documents, {sum(map(len, texts))} characters")
    results = {}
    for backend in ("numpy", "keras"):
        secs, n = throughput(backend, texts, args.repeats)
        results[backend] = n / secs
        print(f"{backend:6} throughput: {n} tokens in {secs:.2f}s (median of {args.repeats}) = {n / secs:,.0f} tokens/s")
    print(f"numpy/keras throughput ratio: {results['numpy'] / results['keras']:.2f}x")
    for backend in ("numpy", "keras"):
        starts = [first_output(backend) for _ in range(args.starts)]
        print(f"{backend:6} start to first tagged output: median {statistics.median(starts):.2f}s "
              f"(min {min(starts):.2f}, max {max(starts):.2f}, {args.starts} runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
