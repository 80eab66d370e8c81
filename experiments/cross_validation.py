"""Cross-validation experiments: configurations, the resumable runner, results.

A configuration file (YAML) in ``experiments/configs/``::

    name: paper-elman              # results go to RESULTS/<name>[-<grid values>]/
    kind: rnn                      # rnn | crf (the paper's CRF baseline) | heads (see below)
    data: {source: reference}      # reference | mpqa | conll; optional path
    folds: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    task: dse                      # the tagger's configuration (TaggerConfig): task, model and training,
    model:                         # nested blocks or fields by path (model.recurrent.cell: elman);
                                   # what is not given keeps its default
      recurrent: {cell: elman}
    training:
      optimizer: {name: sgd, learning_rate: 0.001}
    grid: {task: [dse, ese], model.recurrent.depth: [1, 3]}   # optional: one run per combination, fields by path
    # or a list of such grids: the runs of each (e.g. fields that only some cells have)
    overrides:                     # optional: fields that differ for the grid cells that match
      - {when: {model.recurrent.depth: [4, 5]}, set: {training.fast.activation_l2: 1.0e-5}}
    choices: "how each value was chosen (dev set only)"

``kind: crf`` takes ``task`` and ``crf: {c1, c2, max_iterations}`` (``opinion_tagger.training.crf_baseline``)
instead of a tagger's configuration.  ``kind: heads`` fits frame heads (``opinion_tagger.training.frame_fit``)
on the fold networks of another experiment, ``network: NAME`` (its bundles RUNS/NAME/fold<k>/, which stay as
they are); its configuration then gives the heads' fields (``model.frames.enabled: true``, frame options) and
their training (learning rate, epochs, patience, batch size, seed).

A run's name is the configuration's name and its grid values: the task and the cell, budget and output as
they are, the depth as ``d<depth>``, any other field as its name and value (``RUN_LABELS``: the names that
fields had when the first runs were named, kept so that those runs keep theirs).

One JSON result per (configuration, fold) holds the full configuration, seed,
git commit, data source and split, dev and test scores (binary, proportional,
exact), epochs, training seconds and device.  Finished runs are skipped; an
interrupted run resumes from its checkpoint under RUNS/<name>/fold<k>/.  RESULTS and RUNS are the
caller's directories (``experiments/run_cv.py``: ``experiments/results/`` and ``experiments/runs/``).
"""

from __future__ import annotations

import itertools
import json
import logging
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from experiments.fold_locks import claim_fold
from experiments.summaries import DIVERGED_FILE
from opinion_tagger.config import FIELDS, TASKS, TaggerConfig, given_fields
from opinion_tagger.errors import TaggerError, TrainingDiverged
from opinion_tagger.paths import default_datasplit, default_mpqa, default_reference
from opinion_tagger.storage import atomic_write_text

log = logging.getLogger("opinion_tagger")
DIVERGED_RETRIES = 2  # a fold whose training diverges is run again with seed + 1000, + 2000
CONFIG_KEYS = ("task", "model", "training")  # a configuration file's keys that hold the tagger's configuration
# The label of a grid field in run names where it is not the field's own name: the names these fields had when
# the first runs of their grids were named (experiments/results/<name>/).
RUN_LABELS = {
    "model.encoder.lora_rank": "context_lora_rank",
    "model.auxiliary.weight": "auxiliary_weight",
    "model.frames.enabled": "frames",
    "model.frames.weight": "frame_weight",
    "model.frames.detach": "frame_detach",
    "training.distillation.weight": "distill_weight",
    "training.distillation.copies": "distill_copies",
    "training.distillation.noise": "distill_noise",
}


@dataclass
class Experiment:
    name: str
    kind: str = "rnn"
    data: dict = field(default_factory=lambda: {"source": "reference"})
    folds: list[int] = field(default_factory=lambda: list(range(10)))
    fields: dict = field(default_factory=dict)  # the configuration's fields given, by path (rnn, heads; crf: task)
    choices: str = ""
    network: str | None = None  # kind heads: the experiment whose fold networks get the heads
    crf: dict = field(default_factory=dict)  # kind crf: the CRF baseline's options

    def config(self) -> TaggerConfig:
        return TaggerConfig.from_dict(self.fields)

    @property
    def types(self) -> tuple[str, ...]:
        return TASKS[self.fields.get("task", "dse")]


def _grid_suffix(values: dict) -> str:
    parts = []
    for path, v in values.items():
        label = RUN_LABELS.get(path, path.rsplit(".", 1)[-1])
        if label == "depth":
            parts.append(f"d{v}")
        else:
            parts.append(str(v) if label in ("task", "budget", "cell", "output") else f"{label}{v}")
    return "-".join(parts)


def load_experiments(path: str | Path) -> list[Experiment]:
    """The experiments of a configuration file (one per grid combination)."""
    path = Path(path)
    if not path.is_file():
        raise TaggerError(f"{path}: experiment configuration not found")
    try:
        spec = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:  # one line: the problem and where
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise TaggerError(f"{path}: invalid YAML{where}: {getattr(exc, 'problem', None) or exc}") from None
    kind, given = _kind_and_fields(path, spec)
    grids = spec.get("grid") or {}
    grids = grids if isinstance(grids, list) else [grids]
    if not all(isinstance(g, dict) and all(isinstance(v, list) for v in g.values()) for g in grids):
        raise TaggerError(f"{path}: grid must be {{field: [values]}} or a list of those")
    _check_paths(path, "grid", [f for g in grids for f in g])
    overrides = _overrides(path, spec.get("overrides") or [])
    combos = [dict(zip(g, combo)) for g in grids for combo in itertools.product(*g.values())]
    out = []
    for values in combos or [{}]:
        fields = {**given, **values}
        for when, changes in overrides:
            if all(fields.get(k) in allowed for k, allowed in when.items()):
                fields.update(changes)
        if "model.recurrent.hidden" in values:
            fields["model.recurrent.budget"] = None
        name = spec["name"] + (f"-{_grid_suffix(values)}" if values else "")
        data = dict(spec.get("data") or {"source": "reference"})
        folds = list(spec.get("folds", range(10)))
        exp = Experiment(
            name, kind, data, folds, fields, spec.get("choices", ""), spec.get("network"), spec.get("crf", {})
        )
        if exp.kind in ("rnn", "heads"):
            try:
                exp.config()
            except TaggerError as exc:
                raise TaggerError(f"{path}: {name}: {exc}") from None
        out.append(exp)
    names = [e.name for e in out]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise TaggerError(f"{path}: the grids give {twice[0]} twice")
    return out


def _kind_and_fields(path: Path, spec: dict) -> tuple[str, dict]:
    """A configuration file's kind and the tagger's fields it gives, by path, after checking its keys."""
    known = {"name", "kind", "data", "folds", "crf", "grid", "overrides", "choices", "network"}
    mine = [k for k in spec if _configures(k)]
    if set(spec) - known - set(mine):
        raise TaggerError(f"{path}: unknown keys {', '.join(sorted(set(spec) - known - set(mine)))}")
    if "name" not in spec:
        raise TaggerError(f"{path}: a configuration needs a name")
    kind = spec.get("kind", "rnn")
    if kind not in ("rnn", "crf", "heads"):
        raise TaggerError(f"{path}: kind must be rnn, crf or heads")
    if (kind == "crf") != ("crf" in spec) or (kind == "crf" and set(mine) - {"task"}):
        raise TaggerError(f"{path}: kind crf, and only it, takes crf: {{...}} (and task, no model or training)")
    try:
        given = given_fields({k: spec[k] for k in mine})
    except TaggerError as exc:
        raise TaggerError(f"{path}: {exc}") from None
    if (kind == "heads") != ("network" in spec) or (kind == "heads" and given.get("model.frames.enabled") is not True):
        raise TaggerError(f"{path}: kind heads, and only it, takes network: NAME (and model.frames.enabled: true)")
    return kind, given


def _configures(key: str) -> bool:
    """Whether a configuration file's key is part of the tagger's configuration (``model``, or a path below it)."""
    return key in CONFIG_KEYS or key.split(".")[0] in CONFIG_KEYS


def _check_paths(path: Path, where: str, paths) -> None:
    """TaggerError naming a key of ``where`` that is not a field's path."""
    unknown = [p for p in paths if p not in FIELDS]
    if unknown:
        raise TaggerError(f"{path}: {where}: {unknown[0]} is not a field (fields by path: model.recurrent.depth, ...)")


def _overrides(path: Path, items) -> list[tuple[dict, dict]]:
    """A configuration's ``overrides``: fields that differ for some grid cells, e.g.
    ``[{when: {model.recurrent.depth: [4, 5]}, set: {training.fast.activation_l2: 1.0e-5}}]``; returns
    [(when, fields)] by path, with each ``when`` value a list of the values it matches."""
    if not isinstance(items, list):
        raise TaggerError(f"{path}: overrides must be a list of {{when: ..., set: ...}}")
    out = []
    for k, item in enumerate(items):
        if (
            not isinstance(item, dict)
            or set(item) != {"when", "set"}
            or not isinstance(item["when"], dict)
            or not isinstance(item["set"], dict)
        ):
            raise TaggerError(f"{path}: overrides[{k}] must be {{when: {{field: values}}, set: {{field: value}}}}")
        when = {f: v if isinstance(v, list) else [v] for f, v in item["when"].items()}
        changes = given_fields(item["set"])
        _check_paths(path, f"overrides[{k}]", [*when, *changes])
        out.append((when, changes))
    return out


def data_path(data: dict) -> str:
    """The corpus path of an experiment's data: its own ``path``, else the default for its source."""
    if data.get("path"):
        return str(data["path"])
    return str({"reference": default_reference(), "mpqa": default_mpqa()}.get(data["source"], ""))


def context_cache_path(runs: Path, cfg, source: str) -> Path:
    """Where contextual vectors for ``source`` are cached (shared by all folds and experiments)."""
    return runs.parent / "cache" / f"{cfg.model.encoder.name}-{cfg.model.encoder.pooling}-{source}.npz"


def result_path(results: Path, name: str, fold: int) -> Path:
    return results / name / f"fold{fold}.json"


def run_experiment(
    exp: Experiment,
    folds: list[int] | None,
    results: Path,
    runs: Path,
    datasplit: str | Path | None = None,
    progress: bool = True,
    docs=None,
    together: int = 10,
) -> list[Path]:
    """Train and score ``exp`` on each fold that has no result yet; returns the result files written.
    Configurations with ``trainer: fast`` train up to ``together`` folds at once in one program
    (``opinion_tagger.training.fast_trainer``); others one fold at a time, resuming from checkpoints."""
    from opinion_tagger.corpus.sources import corpus_words, load_documents, select
    from opinion_tagger.corpus.split import load_split
    from opinion_tagger.provenance import git_commit
    from opinion_tagger.training.run import trains_together

    datasplit = Path(datasplit or default_datasplit())
    todo = [k for k in (folds if folds is not None else exp.folds) if not result_path(results, exp.name, k).exists()]
    if not todo:
        return []
    path = data_path(exp.data)
    if docs is None:
        docs = load_documents(exp.data["source"], path)
    if exp.kind in ("rnn", "heads"):  # the auxiliary types' tags and the spans' frames, where the configuration asks
        from opinion_tagger.training.run_data import add_training_labels

        cfg = exp.config()
        if labels := add_training_labels(docs, exp.data["source"], path, cfg.auxiliary_types, cfg.model.frames.enabled):
            log.warning("%s: %s", exp.name, labels)
    extra = corpus_words(docs)
    group = together if exp.kind == "rnn" and trains_together(exp.config()) else 1
    written = []
    for start in range(0, len(todo), max(1, group)):
        with ExitStack() as stack:
            mine = []
            for fold in todo[start : start + max(1, group)]:
                owner = stack.enter_context(claim_fold(runs / exp.name / f"fold{fold}.lock"))
                if owner is not None:
                    log.warning("%s fold %d: another job (process %d) is running it; skipped", exp.name, fold, owner)
                elif not result_path(results, exp.name, fold).exists():  # not finished by another job meanwhile
                    mine.append(fold)
            if mine:
                splits = {k: load_split(datasplit, k) for k in mine}
                parts = {k: tuple(select(docs, splits[k].part(p)) for p in ("train", "dev", "test")) for k in mine}
                t0 = time.perf_counter()
                run = FoldRun(exp, mine, splits, parts, path, datasplit, results, runs, git_commit(), t0)
                written += _run_folds(run, extra, progress)
    return written


@dataclass
class FoldRun:
    """The folds of ``exp`` that train together (one, or several with the fast trainer) and what they share: each
    fold's split and its train, dev and test sentences, the corpus path and datasplit they came from, the results
    and runs directories, the commit the folds started with (a fold can outlast a commit) and when the fold
    being timed started."""

    exp: Experiment
    folds: list[int]
    splits: dict[int, Any]  # fold -> its Split (documents)
    parts: dict[int, tuple]  # fold -> its train, dev and test sentences
    path: str
    datasplit: Path
    results: Path
    runs: Path
    commit: str
    started: float

    def fold_dir(self, fold: int) -> Path:
        """Where the fold's checkpoints and bundle go."""
        return self.runs / self.exp.name / f"fold{fold}"

    def bundle_record(self, fold: int) -> dict:
        """What the fold's bundle records in its meta.json: its data and split, by document."""
        documents = {p: list(self.splits[fold].part(p)) for p in ("train", "dev", "test")}
        return {"data": {"source": self.exp.data["source"], "fold": fold, "documents": documents}}


@dataclass
class FoldOutcome:
    """What a fold's result records of its training: its scores (dev, test and, with frame heads, the frames'),
    the training record (seconds, epochs, device, ...), the configuration and the seed it trained with."""

    scores: dict
    training: dict
    config: dict
    seed: int | None


def _run_folds(run: FoldRun, extra, progress: bool) -> list[Path]:
    """Train and score the folds of ``run`` and write their results; ``extra``: the corpus's words."""
    if run.exp.kind == "crf":
        return _run_crf_folds(run)
    if run.exp.kind == "heads":  # the heads on another experiment's fold networks
        return _fit_heads(run, progress)
    return _train_rnn_folds(run, extra, progress)


def _run_crf_folds(run: FoldRun) -> list[Path]:
    """The paper's CRF baseline on each fold, one after another."""
    from opinion_tagger.evaluation.scoring import score_predictions
    from opinion_tagger.training.crf_baseline import CRFBaseline

    exp, out = run.exp, []
    for k in run.folds:
        train_s, dev_s, test_s = run.parts[k]
        model = CRFBaseline(exp.types, **exp.crf).fit(train_s)
        dev = score_predictions(dev_s, model.predict_tags(dev_s))
        test = score_predictions(test_s, model.predict_tags(test_s))
        training = {"train_seconds": model.train_seconds, "epochs": None, "best_epoch": None, "device": "CPU"}
        config = {"task": exp.fields.get("task", "dse"), "crf": exp.crf}
        out.append(_write_result(run, k, FoldOutcome({"dev": dev, "test": test}, training, config, None)))
        run.started = time.perf_counter()
    return out


def _fit_heads(run: FoldRun, progress: bool) -> list[Path]:
    """Frame heads fitted on the fold networks of the experiment ``run.exp.network``."""
    from opinion_tagger.runtime.bundle import load_bundle_files
    from opinion_tagger.training.frame_fit import fit_frame_heads

    exp, folds, trained = run.exp, run.folds, {}
    for k in folds:
        init = run.runs / str(exp.network) / f"fold{k}"
        config = load_bundle_files(init)[1].replace(exp.fields)
        train_s, dev_s, _ = run.parts[k]
        trained[k] = fit_frame_heads(config, train_s, dev_s, run.fold_dir(k), init, run.bundle_record(k), progress)
    configs = {k: trained[k][0].config.to_dict() for k in folds}
    seeds = {k: exp.config().training.seed for k in folds}
    return _score_folds(run, trained, {k: [] for k in folds}, configs, seeds)


def _train_rnn_folds(run: FoldRun, extra, progress: bool) -> list[Path]:
    """Train the network on the folds of ``run`` (together with the fast trainer), a fold whose training
    diverges again with another seed, and score them.  Raises TaggerError, after scoring the others, when a
    fold diverged with every seed."""
    from opinion_tagger.training.checkpoints import remove_checkpoint
    from opinion_tagger.training.run import train_folds

    exp, folds, cfg = run.exp, run.folds, run.exp.config()
    seeds = {k: cfg.training.seed for k in folds}
    diverged: dict[int, list[dict]] = {k: [] for k in folds}

    def attempt(config, ks):  # [(SentenceTagger, meta) or TrainingDiverged] for folds ks
        resume = config.training.seed == cfg.training.seed  # another seed (after a divergence) starts afresh
        cache = context_cache_path(run.runs, cfg, exp.data["source"]) if cfg.model.encoder.name else None
        teacher = config.training.distillation.teacher  # {fold}: the run's
        teachers = [teacher.format(fold=k) for k in ks] if teacher else None
        runs_k = [(run.parts[k][0], run.parts[k][1], run.fold_dir(k)) for k in ks]
        records = [run.bundle_record(k) for k in ks]
        return train_folds(config, runs_k, extra, progress, resume, cache, teachers, records)

    trained = dict(zip(folds, attempt(cfg, folds)))
    for k in folds:  # a run whose loss became infinite is run again with another seed, and recorded
        for retry in range(1, DIVERGED_RETRIES + 1):
            if not isinstance(trained[k], TrainingDiverged):
                break
            diverged[k].append({"seed": seeds[k], "epoch": trained[k].epoch})
            seeds[k] = cfg.training.seed + 1000 * retry
            log.warning(
                "%s fold %d: training diverged at epoch %d; again with seed %d", exp.name, k, trained[k].epoch, seeds[k]
            )
            (trained[k],) = attempt(cfg.replace({"training.seed": seeds[k]}), [k])
        if isinstance(trained[k], TrainingDiverged):  # recorded, not scored; the folds that trained are
            diverged[k].append({"seed": seeds[k], "epoch": trained[k].epoch})
            _write_diverged(run, k, cfg, diverged[k])
    configs = {k: cfg.replace({"training.seed": seeds[k]}).to_dict() for k in folds}
    out = _score_folds(run, trained, diverged, configs, seeds)
    for k in folds:
        if not isinstance(trained[k], TrainingDiverged):
            remove_checkpoint(run.fold_dir(k))
    failed = [k for k in folds if isinstance(trained[k], TrainingDiverged)]
    if failed:
        k = failed[0]
        raise TaggerError(
            f"{exp.name} fold {k}: training diverged with seeds "
            f"{', '.join(str(d['seed']) for d in diverged[k][:-1])} and {diverged[k][-1]['seed']}"
            + (f" (and folds {', '.join(map(str, failed[1:]))})" if failed[1:] else "")
        )
    return out


def _score_folds(run: FoldRun, trained: dict, diverged: dict, configs: dict, seeds: dict) -> list[Path]:
    """Score each trained fold on its test documents (and its frames, for a model with frame heads) and write
    its result; ``trained``: (SentenceTagger, meta) or TrainingDiverged per fold, ``diverged``: the seeds that diverged
    before, ``configs`` and ``seeds``: the configuration and seed each result records."""
    from opinion_tagger.evaluation.scoring import evaluate_tagger, evaluate_with_frames

    out = []
    for k in (k for k, v in trained.items() if not isinstance(v, TrainingDiverged)):
        tagger, meta = trained[k]
        frames = {"dev_frames": meta["scores"]["dev_frames"]} if "dev_frames" in meta["scores"] else {}
        if frames:  # frame heads: their scores on the test fold too, from the same pass of the network
            test, frames["test_frames"] = evaluate_with_frames(tagger, run.parts[k][2])
        else:
            test = evaluate_tagger(tagger, run.parts[k][2])
        t = meta["training"]
        keep = ("train_seconds", "epochs", "best_epoch", "device", "parameters", "history", "teacher", "heads_only")
        training = {key: t[key] for key in keep if key in t}
        if t.get("trained_together", 1) > 1:
            training["trained_together"] = t["trained_together"]  # train_seconds: this fold's share
        if diverged[k]:
            training["diverged"] = diverged[k]  # the seeds whose runs diverged before this one
        scores = {"dev": meta["scores"]["dev"], "test": test, **frames}
        out.append(_write_result(run, k, FoldOutcome(scores, training, configs[k], seeds[k])))
    return out


def _write_diverged(run: FoldRun, fold: int, cfg: TaggerConfig, attempts: list[dict]) -> Path:
    """``results/<name>/diverged-fold<k>.json``: a fold whose every seed diverged (``attempts``: each seed and
    the epoch its loss became infinite), so that studies show it; a later result of the fold replaces it."""
    from experiments.cpu_pinning import machine

    record = {
        "name": run.exp.name,
        "fold": fold,
        "config": cfg.to_dict(),
        "diverged": attempts,
        "git_commit": run.commit,
        "machine": machine(),
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    out = run.results / run.exp.name / DIVERGED_FILE.format(fold=fold)
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out, json.dumps(record, indent=1) + "\n")
    return out


def _write_result(run: FoldRun, fold: int, outcome: FoldOutcome) -> Path:
    """``results/<name>/fold<k>.json``: the fold's result (an earlier run's record of its divergence goes)."""
    from experiments.cpu_pinning import machine

    exp, split = run.exp, run.splits[fold]
    train_s, dev_s, test_s = run.parts[fold]
    record = {
        "name": exp.name,
        "kind": exp.kind,
        "fold": fold,
        "config": outcome.config,
        "seed": outcome.seed,
        "git_commit": run.commit,
        "choices": exp.choices,
        "data": {
            "source": exp.data["source"],
            "path": Path(run.path).name,
            "datasplit": run.datasplit.name,
            "documents": {"train": len(split.train), "dev": len(split.dev), "test": len(split.test)},
            "sentences": {"train": len(train_s), "dev": len(dev_s), "test": len(test_s)},
        },
        "scores": outcome.scores,
        **outcome.training,
        "wall_seconds": time.perf_counter() - run.started,
        "machine": machine(),
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    out = result_path(run.results, exp.name, fold)
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out, json.dumps(record, indent=1) + "\n")  # fsynced: a crash leaves the old file or none
    (out.parent / DIVERGED_FILE.format(fold=fold)).unlink(missing_ok=True)  # an earlier run's divergence
    test = {t: round(r["proportional"]["f1"], 4) for t, r in outcome.scores["test"].items()}
    log.warning("%s fold %d: test %s", exp.name, fold, test)
    return out
