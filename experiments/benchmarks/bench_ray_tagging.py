"""Batch tagging throughput: the local engine against Ray with 1 and 2 workers,
in the same run, on the raw MPQA documents in ../shared (real news text; written
to a temporary JSONL file, removed afterwards; nothing from it is kept).

- local: ``opinion-tagger tag --input FILE --out FILE`` in this process
  (model and spaCy loading included).
- ray N: ``tag_with_ray`` into a fresh output directory with N actors, on a
  local Ray instance started once beforehand (its start-up is printed
  separately); actor start-up and model loading are included.

Columns: wall seconds and tokens/s end to end (medians of --repeats runs, ratio
against the local engine of the same run); "in actors": tokens over the actors'
wall time inside partitions, per worker averaged (the steady rate a long run
approaches); "per CPU s": tokens per CPU-second of the tagging process (local:
this process, start-up included; ray: the actors inside partitions), the rate
per core that a shared, busy machine does not hide.  The last lines work out how
many single-core workers a billion tokens an hour would take.

    python -m experiments.benchmarks.bench_ray_tagging [--copies 2] [--repeats 3] [--partition-size 50]
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

from opinion_tagger.cli import main as cli_main
from opinion_tagger.corpus.mpqa import MPQACorpus
from opinion_tagger.paths import default_model, default_mpqa

PER_HOUR = 1e9 / 3600  # a billion tokens an hour, in tokens per second


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mpqa", default=str(default_mpqa()))
    ap.add_argument("--copies", type=int, default=2, help="the corpus repeated this many times")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--partition-size", type=int, default=50)
    ap.add_argument("--workers", default="1,2")
    args = ap.parse_args()

    import ray

    from opinion_tagger.engines.ray_engine import ClusterOptions, OutputOptions, _package_root, tag_with_ray

    tmp = Path(tempfile.mkdtemp(prefix="bench_ray_"))
    try:
        src = tmp / "docs.jsonl"
        texts = [d.text for d in MPQACorpus(args.mpqa)]
        with open(src, "w", encoding="utf-8") as fh:
            for c in range(args.copies):
                for k, t in enumerate(texts):
                    fh.write(json.dumps({"id": f"{c}-{k}", "text": t}) + "\n")
        print(
            f"model {default_model()}, numpy backend; {len(texts)} MPQA documents x {args.copies} copies, "
            f"partitions of {args.partition_size}; {os.cpu_count()} CPUs, load average {load()}"
        )

        def local() -> tuple[float, float]:
            out = tmp / "local.jsonl"
            t0, c0 = time.perf_counter(), time.process_time()
            assert cli_main(["tag", "--quiet", "--input", str(src), "--out", str(out)]) in (0, 1)
            return time.perf_counter() - t0, time.process_time() - c0

        local()
        n_tokens = sum(
            sum(len(s["tokens"]) for s in json.loads(line).get("sentences", []))
            for line in (tmp / "local.jsonl").read_text(encoding="utf-8").splitlines()
        )
        print(f"{n_tokens} tokens")
        runs = [local() for _ in range(args.repeats)]
        wall = {"local": statistics.median(r[0] for r in runs)}
        cpu = {"local": statistics.median(r[1] for r in runs)}
        inside: dict[str, float] = {}
        t0 = time.perf_counter()
        ray.init(
            num_cpus=os.cpu_count(),
            include_dashboard=False,
            logging_level="ERROR",
            runtime_env={"env_vars": {"PYTHONPATH": _package_root()}},
        )
        print(f"ray local instance start: {time.perf_counter() - t0:.1f}s (once, not counted below)")
        for n in (int(w) for w in args.workers.split(",")):
            name = f"ray {n} worker{'s' if n > 1 else ''}"
            runs = []
            for _ in range(args.repeats):
                out = tmp / f"ray{n}"
                shutil.rmtree(out, ignore_errors=True)
                t0 = time.perf_counter()
                totals = tag_with_ray(
                    [str(src)],
                    out,
                    output=OutputOptions(partition_size=args.partition_size),
                    cluster=ClusterOptions(workers=n),
                    progress=False,
                )
                runs.append((time.perf_counter() - t0, totals["worker_seconds"] / n, totals["worker_cpu_seconds"]))
                assert totals["tokens"] == n_tokens, totals["tokens"]
            wall[name], inside[name], cpu[name] = (statistics.median(r[k] for r in runs) for k in range(3))
        ray.shutdown()
        base = n_tokens / wall["local"]
        print(
            f"{'engine':14} {'seconds':>8} {'tokens/s':>10} {'vs local':>9} {'in actors':>10} {'per CPU s':>10}"
            f"   (medians of {args.repeats})"
        )
        for name, secs in wall.items():
            steady = f"{n_tokens / inside[name]:10,.0f}" if name in inside else f"{'':10}"
            print(
                f"{name:14} {secs:8.1f} {n_tokens / secs:10,.0f} {n_tokens / secs / base:8.2f}x {steady} "
                f"{n_tokens / cpu[name]:10,.0f}"
            )
        best = max(inside, key=lambda k: int(k.split()[1]))
        n_best = int(best.split()[1])
        per_cpu = n_tokens / cpu[best]
        per_wall = n_tokens / wall[best] / n_best
        print(
            f"a billion tokens an hour = {PER_HOUR:,.0f} tokens/s: {PER_HOUR / per_cpu:,.0f} single-core workers "
            f"at the {best} rate per CPU-second ({per_cpu:,.0f}), i.e. on cores of their own; "
            f"{PER_HOUR / per_wall:,.0f} at this run's end-to-end rate per worker ({per_wall:,.0f} tokens/s)"
        )
        print(f"load average at the end: {load()}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
