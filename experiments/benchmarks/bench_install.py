"""The core install's time and size: a fresh virtual environment per checkout, pip upgraded first (not timed),
then ``pip install -e CHECKOUT`` (the README's set-up line without the model download; pip's cache as it is, so
warm after a first run), timed; the environment's size on disk.  Several checkouts (e.g. a worktree of an
older commit) are measured in turn, ``--repeats`` times each, interleaved; medians.

    python -m experiments.benchmarks.bench_install [CHECKOUT ...] [--extras train] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def size_mb(path: Path) -> float:
    total = 0
    for folder, _, files in os.walk(path):
        for f in files:
            p = Path(folder) / f
            if not p.is_symlink():
                total += p.stat().st_size
    return total / 2**20


def install(checkout: Path, extras: str) -> tuple[float, float]:
    """Seconds of ``pip install -e`` into a fresh environment, and the environment's MB."""
    with tempfile.TemporaryDirectory() as tmp:
        env = Path(tmp) / "venv"
        venv.create(env, with_pip=True)
        pip = [str(env / "bin" / "python"), "-m", "pip", "install", "-q"]
        subprocess.run([*pip, "--upgrade", "pip"], check=True, capture_output=True)
        target = f"{checkout}[{extras}]" if extras else str(checkout)
        t0 = time.perf_counter()
        subprocess.run([*pip, "-e", target], check=True, capture_output=True)
        seconds = time.perf_counter() - t0
        return seconds, size_mb(env)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("checkouts", nargs="*", type=Path, default=[ROOT])
    ap.add_argument("--extras", default="", help="extras to install too, e.g. train (default: the core only)")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    if shutil.which("git"):
        for c in args.checkouts:
            rev = subprocess.run(["git", "-C", str(c), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
            print(f"{c}: commit {rev.stdout.strip() or '?'}")
    runs: dict[Path, list[tuple[float, float]]] = {c: [] for c in args.checkouts}
    for _ in range(args.repeats):
        for c in args.checkouts:
            runs[c].append(install(c, args.extras))
    for c, rs in runs.items():
        seconds = statistics.median(s for s, _ in rs)
        print(
            f"{c}: install {seconds:.1f} s (median of {len(rs)}: {', '.join(f'{s:.1f}' for s, _ in rs)}), "
            f"{statistics.median(m for _, m in rs):,.0f} MB; load {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
