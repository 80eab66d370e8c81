"""Batch tagging on Ray Data: ``opinion-tagger tag --engine ray``.

The run's partitions (``opinion_tagger.engines.partitions``) become a Ray dataset of
one row per partition; ``map_batches`` hands them, one at a time, to a pool of
actors (``PartitionTagger``) that each load the model once (ONNX Runtime, one
thread: one actor per CPU) and tag a partition straight into its output file, so
the driver carries only counts.  Ray Data's streaming executor keeps every actor
busy; an actor may reserve a fraction of a GPU (``gpus_per_worker``; ONNX Runtime
computes on it where the onnxruntime-gpu package is installed).

The same code runs on a laptop (a local Ray instance started here, with as many
CPUs as the machine has) and on a cluster (``address="auto"`` on a node of a
cluster started with ``ray start`` or KubeRay, or ``ray://HOST:10001``).  On a
cluster, opinion-tagger must be installed on every node and the input and output
paths must name the same storage on every node (a shared file system).
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import warnings
from pathlib import Path

from opinion_tagger.engines.partitions import OUTPUT_FORMATS, finished, prepare, tag_partition
from opinion_tagger.errors import TaggerError
from opinion_tagger.extras import require
from opinion_tagger.tagging.inputs import MAX_CHARS
from opinion_tagger.wording import counted


class PartitionTagger:
    """A Ray Data actor: loads the model once, tags the partitions it is given."""

    def __init__(
        self,
        out_dir: str,
        model: str,
        backend: str,
        fmt: str,
        max_chars: int,
        chunk: int,
        batch_size: int | None,
        precision: str = "fp32",
        lang_check: bool = True,
    ):
        # actors sharing a GPU (--gpus-per-worker below 1) must not each take all its memory
        os.environ.setdefault("TF_FORCE_GPU_ALLOW_GROWTH", "true")
        os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
        from opinion_tagger.tagging.tagger import OpinionTagger

        self.ot = OpinionTagger.load(
            model, backend=backend, threads=1, batch_size=batch_size, precision=precision, lang_check=lang_check
        )
        self.out_dir, self.fmt, self.max_chars, self.chunk = Path(out_dir), fmt, max_chars, chunk

    def __call__(self, batch: dict) -> dict:
        out = [
            json.dumps(tag_partition(self.ot, json.loads(spec), self.out_dir, self.fmt, self.max_chars, self.chunk))
            for spec in batch["partition"]
        ]
        return {"summary": out}


def _package_root() -> str:
    import opinion_tagger

    return str(Path(opinion_tagger.__file__).resolve().parent.parent)


def connect(address: str | None, num_cpus: int | None = None) -> bool:
    """Join the cluster at ``address``, or start a local Ray instance (its workers
    import this very ``tagger`` package); True if this call started Ray."""
    verbose = logging.getLogger().getEffectiveLevel() <= logging.WARNING  # opinion-tagger -v: the actors' output too
    import ray

    if ray.is_initialized():
        return False
    kwargs = dict(logging_level=logging.ERROR, include_dashboard=False, configure_logging=True, log_to_driver=verbose)
    try:
        if address:
            ray.init(address=address, **kwargs)
        else:
            path = os.pathsep.join(p for p in (_package_root(), os.environ.get("PYTHONPATH")) if p)
            ray.init(num_cpus=num_cpus, runtime_env={"env_vars": {"PYTHONPATH": path}}, **kwargs)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise TaggerError(
            f"ray: cannot {'connect to ' + address if address else 'start'}: "
            f"{str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__}"
        ) from None
    return True


def _root_cause(exc: BaseException) -> str:
    """One line for the failure a Ray error reports: the worker's own exception,
    which Ray Data carries only as text ("... was the direct cause of ...")."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(exc)).split("The above exception was the direct cause")[0]
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1] if lines else type(exc).__name__


def default_workers(gpus_per_worker: float) -> int:
    """One actor per CPU of the cluster, or as many as its GPUs allow."""
    import ray

    res = ray.cluster_resources()
    if gpus_per_worker:
        return max(1, int(res.get("GPU", 0) / gpus_per_worker))
    return max(1, int(res.get("CPU", 1)))


def _add_languages(totals: dict, part: dict) -> None:
    """Add a partition's records by language to the run's (a partition done before the count existed has none)."""
    for code, n in part.get("languages", {}).items():
        totals["languages"][code] = totals["languages"].get(code, 0) + n


def tag_with_ray(
    inputs: list[str],
    out_dir: str | Path,
    *,
    model: str | Path | None = None,
    backend: str = "onnx",
    precision: str = "fp32",
    fmt: str = "jsonl",
    max_chars: int = MAX_CHARS,
    chunk: int = 256,
    batch_size: int | None = None,
    partition_size: int = 1000,
    address: str | None = None,
    workers: int | None = None,
    gpus_per_worker: float = 0.0,
    progress: bool = True,
    lang_check: bool = True,
) -> dict:
    """Tag ``inputs`` (files, directories, globs) into partitions in ``out_dir``.
    Finished partitions of an earlier run over the same inputs are skipped.  ``batch_size``: sentences a
    batch of the network, ``lang_check``: the language check (see ``OpinionTagger``).
    Returns totals: partitions, skipped (finished before), records, errors,
    tokens, ``languages`` (records by the language they look like when it is not English); and of the
    partitions tagged now: ``error_records`` ([id, reason]),
    ``tokens_now``, ``worker_seconds`` and ``worker_cpu_seconds`` (the actors' wall and CPU time on them)."""
    from tqdm.auto import tqdm

    from opinion_tagger.paths import resolve_model
    from opinion_tagger.runtime.bundle import load_bundle_files

    require("ray", "--engine ray")
    if fmt not in OUTPUT_FORMATS:
        raise TaggerError(f"--engine ray writes {', '.join(OUTPUT_FORMATS)}, not {fmt}")
    if workers is not None and workers < 1:
        raise TaggerError("--workers must be at least 1")
    if gpus_per_worker < 0:
        raise TaggerError("--gpus-per-worker must not be negative")
    out_dir = Path(out_dir)
    model = str(resolve_model(model).resolve())  # a bundle directory or a bundled model's name
    load_bundle_files(model)  # a missing or damaged bundle is reported here, not by every actor
    options = {
        "model": model,
        "backend": backend,
        "format": fmt,
        "max_chars": max_chars,
        "partition_size": partition_size,
        **({"precision": precision} if precision != "fp32" else {}),  # fp32: as the runs before the option
        **({} if lang_check else {"lang_check": "off"}),  # on: as the runs before the option
    }
    parts = prepare(out_dir, list(inputs), options)
    done = {p["index"]: d for p in parts if (d := finished(out_dir, p, fmt)) is not None}
    todo = [p for p in parts if p["index"] not in done]
    totals = {
        "partitions": len(parts),
        "skipped": len(done),
        "records": 0,
        "errors": 0,
        "tokens": 0,
        "languages": {},
        "error_records": [],
        "tokens_now": 0,
        "worker_seconds": 0.0,
        "worker_cpu_seconds": 0.0,
    }
    for d in done.values():
        for k in ("records", "errors", "tokens"):
            totals[k] += d[k]
        _add_languages(totals, d)
    if not todo:
        return totals

    import ray

    started = connect(address, num_cpus=workers if not address else None)
    bar = tqdm(
        total=len(parts),
        initial=len(done),
        unit="partition",
        desc="tagging",
        disable=not progress or not sys.stderr.isatty(),
    )
    try:
        ctx = ray.data.DataContext.get_current()
        ctx.enable_progress_bars = False
        ctx.print_on_execution_start = False
        logging.getLogger("ray.data").setLevel(logging.CRITICAL)  # our own progress lines and errors instead
        n = min(workers or default_workers(gpus_per_worker), len(todo))
        ds = ray.data.from_items(
            [{"partition": json.dumps(p)} for p in todo], override_num_blocks=min(len(todo), 10_000)
        )
        # max_restarts 0: a lost actor fails the run, which, run again, skips the partitions already done (and
        # Ray logs no error line about restartable actors' constructor arguments)
        with warnings.catch_warnings():  # max_restarts goes through Ray's deprecated ray_remote_args
            warnings.filterwarnings("ignore", message=".*ray_remote_args.*")
            ds = ds.map_batches(
                PartitionTagger,
                batch_size=1,
                compute=ray.data.ActorPoolStrategy(size=n),
                num_cpus=1,
                max_restarts=0,
                **({"num_gpus": gpus_per_worker} if gpus_per_worker else {}),
                fn_constructor_kwargs=dict(
                    out_dir=str(out_dir.resolve()),
                    model=model,
                    backend=backend,
                    precision=precision,
                    fmt=fmt,
                    max_chars=max_chars,
                    chunk=chunk,
                    batch_size=batch_size,
                    lang_check=lang_check,
                ),
            )
        n_done = len(done)
        errors: list[tuple[int, int, list[str]]] = []  # (partition, position, [id, reason])
        for row in ds.iter_rows():
            n_done += 1
            s = json.loads(row["summary"])
            for k in ("records", "errors", "tokens"):
                totals[k] += s[k]
            _add_languages(totals, s)
            totals["tokens_now"] += s["tokens"]
            totals["worker_seconds"] += s["seconds"]
            totals["worker_cpu_seconds"] += s["cpu_seconds"]
            errors.extend((s["index"], k, e) for k, e in enumerate(s["error_records"]))
            bar.update(1)
            bar.set_postfix(records=totals["records"], errors=totals["errors"])
            if progress and bar.disable:
                print(
                    f"partition {s['index']} done ({n_done} of {len(parts)}): {counted(s['records'], 'record')}, "
                    f"{counted(s['errors'], 'error')}, {counted(s['tokens'], 'token')} in {s['seconds']:.1f}s",
                    file=sys.stderr,
                )
    except ray.exceptions.RayError as exc:
        raise TaggerError(
            f"ray: the run failed ({_root_cause(exc)}); finished partitions are kept in "
            f"{out_dir}, run the same command again to go on"
        ) from None
    finally:
        bar.close()
        if started:
            ray.shutdown()
    totals["error_records"] = [e for _, _, e in sorted(errors)]  # in input order
    return totals
