"""Pinning a study's job to CPU cores, which sets the threads of TensorFlow's and XLA's kernels (before either
library is imported), and the machine line each result records.

Training on the 2-core machine runs two jobs side by side, each on a core of its own
(``run_cv.py --cpus 0`` and ``--cpus 1``).  Left to their defaults, each job's XLA runtime keeps a
pool of as many threads as the process may use cores, and the two jobs contend for both cores.
XLA sizes that pool from the process's CPU affinity, which is why pinning, not an environment
variable, is what limits it.
"""

from __future__ import annotations

import os
import platform

ENV = "OPINION_TAGGER_CPU_THREADS"  # what was asked for, recorded with each result


def parse_cpus(text: str) -> list[int]:
    """``"0"``, ``"0,1"`` or ``"0-3"`` -> the core numbers (``ValueError`` with the reason otherwise)."""
    cpus: list[int] = []
    for part in text.split(","):
        lo, dash, hi = part.strip().partition("-")
        if not lo.isdigit() or (dash and not hi.isdigit()) or (dash and int(hi) < int(lo)):
            raise ValueError(f"{text!r}: give core numbers such as 0 or 0,1 or 0-3")
        cpus.extend(range(int(lo), int(hi if dash else lo) + 1))
    return sorted(set(cpus))


def limit_cpu_threads(cpus: list[int] | None) -> None:
    """Pin this process to the cores ``cpus`` (None or empty: leave it be), before TensorFlow or JAX is
    imported (later it has no effect): XLA's pool then has one thread a core, and TensorFlow is given
    as many."""
    if not cpus:
        return
    allowed = os.sched_getaffinity(0)
    if not set(cpus) <= allowed:
        raise ValueError(
            f"cores {sorted(set(cpus) - allowed)} are not available here (this process may use {sorted(allowed)})"
        )
    os.sched_setaffinity(0, cpus)
    os.environ[ENV] = str(len(cpus))
    os.environ.setdefault("TF_NUM_INTRAOP_THREADS", str(len(cpus)))
    os.environ.setdefault("TF_NUM_INTEROP_THREADS", "1")


def add_cpus_option(parser, help: str) -> None:
    """The scripts' ``--cpus`` option (``pin_cpus`` applies it)."""
    parser.add_argument("--cpus", help=help)


def pin_cpus(parser, args) -> None:
    """Apply ``--cpus`` (before TensorFlow or JAX loads); a bad value is the parser's one-line error."""
    try:
        limit_cpu_threads(parse_cpus(args.cpus) if args.cpus else None)
    except ValueError as exc:
        parser.error(f"--cpus {exc}")


def cpu_threads() -> int:
    """The cores ``limit_cpu_threads`` pinned this process or its parent to (0: not pinned)."""
    try:
        return int(os.environ.get(ENV, "0"))
    except ValueError:
        return 0


def machine() -> str:
    """The machine a result was computed on, as the result records it, with the cores the job was pinned to."""
    n = cpu_threads()
    return f"{platform.machine()} {platform.system()}, Python {platform.python_version()}" + (
        f", {n} CPU thread{'s' if n > 1 else ''} for kernels" if n else ""
    )
