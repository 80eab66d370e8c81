"""Batch tagging throughput: the local engine against Ray with 1 and 2 workers,
in the same run, on the raw MPQA documents in ../shared (real news text; written
to a temporary JSONL file, removed afterwards; nothing from it is kept).

- local: ``opinion-tagger tag --input FILE --out FILE`` in this process
  (model and spaCy loading included).
- ray N: ``tag_with_ray`` into a fresh output directory with N actors, on a
  local Ray instance started once beforehand (its start-up is printed
  separately); actor start-up and model loading are included.

Tokens per second are medians of --repeats runs; ratios are against the local
engine of the same run.  The last line works out, from the 2-worker rate per
worker, how many workers a billion tokens an hour would take.

    python experiments/benchmarks/bench_ray_tagging.py [--copies 2] [--repeats 3] [--partition-size 50]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from tagger.cli import main as cli_main
from tagger.corpus.mpqa import MPQACorpus
from tagger.paths import default_model, default_mpqa


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mpqa", default=str(default_mpqa()))
    ap.add_argument("--copies", type=int, default=2, help="the corpus repeated this many times")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--partition-size", type=int, default=50)
    ap.add_argument("--workers", default="1,2")
    args = ap.parse_args()

    import ray

    from tagger.engines.ray_engine import _package_root, tag_with_ray

    tmp = Path(tempfile.mkdtemp(prefix="bench_ray_"))
    try:
        src = tmp / "docs.jsonl"
        texts = [d.text for d in MPQACorpus(args.mpqa)]
        with open(src, "w", encoding="utf-8") as fh:
            for c in range(args.copies):
                for k, t in enumerate(texts):
                    fh.write(json.dumps({"id": f"{c}-{k}", "text": t}) + "\n")
        print(f"model {default_model()}, numpy backend; {len(texts)} MPQA documents x {args.copies} copies, "
              f"partitions of {args.partition_size}; {os.cpu_count()} CPUs, load average "
              f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")

        def local():
            out = tmp / "local.jsonl"
            assert cli_main(["tag", "--quiet", "--input", str(src), "--out", str(out)]) in (0, 1)
            return out

        n_tokens = 0
        for line in local().read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            n_tokens += sum(len(s["tokens"]) for s in rec.get("sentences", []))
        print(f"{n_tokens} tokens")
        results = {"local": statistics.median(timed(local) for _ in range(args.repeats))}
        steady: dict[str, float] = {}  # seconds the actors spent in partitions, per worker
        start = timed(lambda: ray.init(num_cpus=os.cpu_count(), include_dashboard=False, logging_level="ERROR",
                                       runtime_env={"env_vars": {"PYTHONPATH": _package_root()}}))
        print(f"ray local instance start: {start:.1f}s (once, not counted below)")
        for n in (int(w) for w in args.workers.split(",")):
            def run(n=n):
                out = tmp / f"ray{n}"
                shutil.rmtree(out, ignore_errors=True)
                totals = tag_with_ray([str(src)], out, workers=n, partition_size=args.partition_size, progress=False)
                assert totals["tokens"] == n_tokens, totals["tokens"]
                busy.append(totals["worker_seconds"] / n)

            busy: list[float] = []
            name = f"ray {n} worker{'s' if n > 1 else ''}"
            results[name] = statistics.median(timed(run) for _ in range(args.repeats))
            steady[name] = statistics.median(busy)
        ray.shutdown()
        base = n_tokens / results["local"]
        print(f"{'engine':14} {'seconds':>8} {'tokens/s':>10} {'vs local':>9} {'in actors':>10}"
              f"   (median of {args.repeats}; in actors: tokens/s over the actors' time in partitions)")
        for name, secs in results.items():
            inside = f"{n_tokens / steady[name]:10,.0f}" if name in steady else f"{'':10}"
            print(f"{name:14} {secs:8.1f} {n_tokens / secs:10,.0f} {n_tokens / secs / base:8.2f}x {inside}")
        best = max(steady, key=lambda k: int(k.split()[1]))
        n_best = int(best.split()[1])
        wall, inside = n_tokens / results[best] / n_best, n_tokens / steady[best] / n_best
        print(f"a billion tokens an hour = {1e9 / 3600:,.0f} tokens/s: at the {best} rate per worker, "
              f"{1e9 / 3600 / inside:,.0f} workers (one CPU core each) from the actors' steady rate "
              f"({inside:,.0f} tokens/s per worker), {1e9 / 3600 / wall:,.0f} from the end-to-end rate "
              f"({wall:,.0f} tokens/s per worker, start-up included)")
        print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
