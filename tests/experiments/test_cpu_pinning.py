"""Pinning a training job to cores (run_cv.py / bench_training.py --cpus): the parsing by hand, the
pinning and XLA's thread pool in a child process (the test process keeps its own cores)."""

import os
import subprocess
import sys

import pytest

from experiments.cpu_pinning import parse_cpus

# the repository root: ``import experiments``
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_parse_cpus_by_hand():
    assert parse_cpus("0") == [0]
    assert parse_cpus("1,0") == [0, 1]
    assert parse_cpus("0-2,5") == [0, 1, 2, 5]
    assert parse_cpus("1, 1") == [1]
    for bad in ("", "a", "0-", "-1", "0,,1", "1.5", "3-1"):
        with pytest.raises(ValueError, match="core numbers"):
            parse_cpus(bad)


def child(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={k: v for k, v in os.environ.items() if k != "OPINION_TAGGER_CPU_THREADS"} | {"PYTHONPATH": ROOT},
    )


ALLOWED = sorted(os.sched_getaffinity(0))  # the cores this test may use (a CI runner may be pinned itself)


@pytest.mark.integration
def test_pinning_sets_the_affinity_and_the_thread_limit():
    out = child(
        "import os\nfrom experiments.cpu_pinning import limit_cpu_threads, cpu_threads, machine\n"
        f"limit_cpu_threads([{ALLOWED[-1]}])\n"
        "print(sorted(os.sched_getaffinity(0)), cpu_threads(), os.environ['TF_NUM_INTRAOP_THREADS'])\n"
        "print(machine())"
    )
    assert out.returncode == 0, out.stderr
    first, record = out.stdout.splitlines()
    assert first.split() == [f"[{ALLOWED[-1]}]", "1", "1"]
    assert record.endswith(", 1 CPU thread for kernels")  # the machine line a result records
    out = child(f"from experiments.cpu_pinning import limit_cpu_threads\nlimit_cpu_threads([{os.cpu_count() + 7}])")
    assert out.returncode != 0 and f"cores [{os.cpu_count() + 7}] are not available here" in out.stderr


@pytest.mark.integration
@pytest.mark.skipif(len(ALLOWED) < 2, reason="needs two cores to tell one thread from two")
def test_a_pinned_job_gets_one_xla_compute_thread():
    pytest.importorskip("jax", reason="fast extra not installed")
    code = (
        "import os, sys\nfrom experiments.cpu_pinning import limit_cpu_threads\n"
        f"limit_cpu_threads([{ALLOWED[0]}] if sys.argv[1] == 'pin' else None)\n"
        "import jax, jax.numpy as jnp\n"
        "x = jnp.ones((64, 64)); jax.jit(lambda a: jnp.tanh(a @ a))(x).block_until_ready()\n"
        "print(sum(open(f'/proc/self/task/{t}/comm').read().strip() == 'tf_XLAEigen'"
        " for t in os.listdir('/proc/self/task')))\n"
    )

    def pool(mode):
        out = subprocess.run(
            [sys.executable, "-c", code, mode],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "JAX_PLATFORMS": "cpu", "PYTHONPATH": ROOT},
        )
        assert out.returncode == 0, out.stderr
        return int(out.stdout.split()[-1])

    assert pool("pin") == 1 and pool("all") == len(ALLOWED)
