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
from dataclasses import dataclass, replace
from pathlib import Path

from opinion_tagger.engines.partitions import OUTPUT_FORMATS, finished, prepare, tag_partition
from opinion_tagger.errors import TaggerError
from opinion_tagger.extras import require
from opinion_tagger.tagging.inputs import MAX_CHARS
from opinion_tagger.wording import counted


@dataclass(frozen=True)
class ModelOptions:
    """The model each actor loads, and how (``OpinionTagger.load``'s options; one ONNX Runtime thread an actor).
    ``batch_size``: sentences a batch of the network; ``lang_check``: the language check."""

    model: str | Path | None = None  # a bundle directory or a bundled model's name; None: the default model
    backend: str = "onnx"
    precision: str = "fp32"
    batch_size: int | None = None
    lang_check: bool = True


@dataclass(frozen=True)
class OutputOptions:
    """What the partitions hold: ``fmt`` (jsonl, conll, parquet), records cut at ``max_chars``, tagged
    ``chunk`` records at a time, ``partition_size`` records a partition."""

    fmt: str = "jsonl"
    max_chars: int = MAX_CHARS
    chunk: int = 256
    partition_size: int = 1000


@dataclass(frozen=True)
class ClusterOptions:
    """Where the actors run: the cluster at ``address`` (None: a local Ray instance started here), ``workers``
    actors (None: one per CPU of the cluster, or as many as its GPUs allow), each reserving ``gpus_per_worker``
    of a GPU."""

    address: str | None = None
    workers: int | None = None
    gpus_per_worker: float = 0.0


class PartitionTagger:
    """A Ray Data actor: loads the model once, tags the partitions it is given."""

    def __init__(self, out_dir: str, model: ModelOptions, output: OutputOptions):
        # actors sharing a GPU (--gpus-per-worker below 1) must not each take all its memory
        os.environ.setdefault("TF_FORCE_GPU_ALLOW_GROWTH", "true")
        os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
        from opinion_tagger.tagging.tagger import OpinionTagger

        self.ot = OpinionTagger.load(
            model.model,
            backend=model.backend,
            threads=1,
            batch_size=model.batch_size,
            precision=model.precision,
            lang_check=model.lang_check,
        )
        self.out_dir, self.output = Path(out_dir), output

    def __call__(self, batch: dict) -> dict:
        o = self.output
        out = [
            json.dumps(tag_partition(self.ot, json.loads(spec), self.out_dir, o.fmt, o.max_chars, o.chunk))
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


COUNTS = ("records", "errors", "tokens")  # the counts of a partition's done record, added into the run's


def _add_counts(totals: dict, part: dict) -> None:
    """Add a partition's counts and records by language to the run's (a partition done before the count by
    language existed has none)."""
    for k in COUNTS:
        totals[k] += part[k]
    for code, n in part.get("languages", {}).items():
        totals["languages"][code] = totals["languages"].get(code, 0) + n


def _check(output: OutputOptions, cluster: ClusterOptions) -> None:
    if output.fmt not in OUTPUT_FORMATS:
        raise TaggerError(f"--engine ray writes {', '.join(OUTPUT_FORMATS)}, not {output.fmt}")
    if cluster.workers is not None and cluster.workers < 1:
        raise TaggerError("--workers must be at least 1")
    if cluster.gpus_per_worker < 0:
        raise TaggerError("--gpus-per-worker must not be negative")


def _plan_options(model: ModelOptions, output: OutputOptions) -> dict:
    """The options a run's plan records (a later run over the same inputs must give the same)."""
    return {
        "model": model.model,
        "backend": model.backend,
        "format": output.fmt,
        "max_chars": output.max_chars,
        "partition_size": output.partition_size,
        **({"precision": model.precision} if model.precision != "fp32" else {}),  # fp32: as the runs before it
        **({} if model.lang_check else {"lang_check": "off"}),  # on: as the runs before the option
    }


class _Progress:
    """The run's progress: a bar on a terminal, else (unless quiet) a line a partition on standard error."""

    def __init__(self, partitions: int, done: int, shown: bool):
        from tqdm.auto import tqdm

        self.partitions, self.done, self.shown = partitions, done, shown
        self.bar = tqdm(
            total=partitions,
            initial=done,
            unit="partition",
            desc="tagging",
            disable=not shown or not sys.stderr.isatty(),
        )

    def partition_done(self, s: dict, totals: dict) -> None:
        self.done += 1
        self.bar.update(1)
        self.bar.set_postfix(records=totals["records"], errors=totals["errors"])
        if self.shown and self.bar.disable:
            print(
                f"partition {s['index']} done ({self.done} of {self.partitions}): {counted(s['records'], 'record')}, "
                f"{counted(s['errors'], 'error')}, {counted(s['tokens'], 'token')} in {s['seconds']:.1f}s",
                file=sys.stderr,
            )

    def close(self) -> None:
        self.bar.close()


def _actor_pool(todo: list[dict], out_dir: Path, model: ModelOptions, output: OutputOptions, cluster: ClusterOptions):
    """The Ray dataset of the partitions ``todo``, mapped by a pool of ``PartitionTagger`` actors."""
    import ray

    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    ctx.print_on_execution_start = False
    logging.getLogger("ray.data").setLevel(logging.CRITICAL)  # our own progress lines and errors instead
    n = min(cluster.workers or default_workers(cluster.gpus_per_worker), len(todo))
    ds = ray.data.from_items([{"partition": json.dumps(p)} for p in todo], override_num_blocks=min(len(todo), 10_000))
    # max_restarts 0: a lost actor fails the run, which, run again, skips the partitions already done (and
    # Ray logs no error line about restartable actors' constructor arguments)
    with warnings.catch_warnings():  # max_restarts goes through Ray's deprecated ray_remote_args
        warnings.filterwarnings("ignore", message=".*ray_remote_args.*")
        return ds.map_batches(
            PartitionTagger,
            batch_size=1,
            compute=ray.data.ActorPoolStrategy(size=n),
            num_cpus=1,
            max_restarts=0,
            **({"num_gpus": cluster.gpus_per_worker} if cluster.gpus_per_worker else {}),
            fn_constructor_kwargs=dict(out_dir=str(out_dir.resolve()), model=model, output=output),
        )


def _tag_on_ray(todo: list[dict], out_dir: Path, options: tuple, progress: _Progress, totals: dict) -> None:
    """Tag the partitions ``todo`` on Ray, which this process has joined (``options``: the run's
    ``ModelOptions``, ``OutputOptions`` and ``ClusterOptions``), adding each one's counts to ``totals`` as it
    finishes."""
    import ray

    model, output, cluster = options
    errors: list[tuple[int, int, list[str]]] = []  # (partition, position, [id, reason])
    try:
        for row in _actor_pool(todo, out_dir, model, output, cluster).iter_rows():
            s = json.loads(row["summary"])
            _add_counts(totals, s)
            totals["tokens_now"] += s["tokens"]
            totals["worker_seconds"] += s["seconds"]
            totals["worker_cpu_seconds"] += s["cpu_seconds"]
            errors.extend((s["index"], k, e) for k, e in enumerate(s["error_records"]))
            progress.partition_done(s, totals)
    except ray.exceptions.RayError as exc:
        raise TaggerError(
            f"ray: the run failed ({_root_cause(exc)}); finished partitions are kept in "
            f"{out_dir}, run the same command again to go on"
        ) from None
    finally:
        progress.close()
    totals["error_records"] = [e for _, _, e in sorted(errors)]  # in input order


def tag_with_ray(
    inputs: list[str],
    out_dir: str | Path,
    *,
    model: ModelOptions = ModelOptions(),
    output: OutputOptions = OutputOptions(),
    cluster: ClusterOptions = ClusterOptions(),
    progress: bool = True,
) -> dict:
    """Tag ``inputs`` (files, directories, globs) into partitions in ``out_dir``.
    Finished partitions of an earlier run over the same inputs are skipped.
    Returns totals: partitions, skipped (finished before), records, errors,
    tokens, ``languages`` (records by the language they look like when it is not English); and of the
    partitions tagged now: ``error_records`` ([id, reason]),
    ``tokens_now``, ``worker_seconds`` and ``worker_cpu_seconds`` (the actors' wall and CPU time on them)."""
    from opinion_tagger.paths import resolve_model
    from opinion_tagger.runtime.bundle import load_bundle_files

    require("ray", "--engine ray")
    _check(output, cluster)
    out_dir = Path(out_dir)
    bundle = str(resolve_model(model.model).resolve())  # a bundle directory or a bundled model's name
    load_bundle_files(bundle)  # a missing or damaged bundle is reported here, not by every actor
    model = replace(model, model=bundle)
    parts = prepare(out_dir, list(inputs), _plan_options(model, output))
    done = {p["index"]: d for p in parts if (d := finished(out_dir, p, output.fmt)) is not None}
    todo = [p for p in parts if p["index"] not in done]
    totals: dict = {"partitions": len(parts), "skipped": len(done), **dict.fromkeys(COUNTS, 0), "languages": {}}
    totals |= {"error_records": [], "tokens_now": 0, "worker_seconds": 0.0, "worker_cpu_seconds": 0.0}
    for d in done.values():
        _add_counts(totals, d)
    if not todo:
        return totals
    started = connect(cluster.address, num_cpus=cluster.workers if not cluster.address else None)
    try:
        _tag_on_ray(todo, out_dir, (model, output, cluster), _Progress(len(parts), len(done), progress), totals)
    finally:
        if started:
            import ray

            ray.shutdown()
    return totals
