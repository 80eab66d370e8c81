"""CPU threads for TensorFlow's and XLA's kernels: set before either library is imported.

Training on the 2-core machine runs two jobs side by side with one thread each; left to their
defaults, each job's XLA runtime spreads over both cores and the two jobs contend for them.
"""

from __future__ import annotations

import os

ENV = "OPINION_TAGGER_CPU_THREADS"  # what was asked for, recorded with each result


def limit_cpu_threads(n: int) -> None:
    """``n`` > 0: at most ``n`` threads for TensorFlow's and XLA's CPU kernels (0: the libraries'
    defaults).  Call it before TensorFlow or JAX is imported; later it has no effect."""
    if n <= 0:
        return
    os.environ[ENV] = str(n)
    os.environ.setdefault("TF_NUM_INTRAOP_THREADS", str(n))
    os.environ.setdefault("TF_NUM_INTEROP_THREADS", "1")
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen=false "
                               f"intra_op_parallelism_threads={n}").strip()


def cpu_threads() -> int:
    """The thread limit set by ``limit_cpu_threads`` in this process or its parent (0: none)."""
    try:
        return int(os.environ.get(ENV, "0"))
    except ValueError:
        return 0
