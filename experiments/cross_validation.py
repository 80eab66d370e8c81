"""Cross-validation experiments: configurations, the resumable runner, results.

A configuration file (YAML) in ``experiments/configs/``::

    name: paper-elman              # results go to RESULTS/<name>[-<grid values>]/
    kind: rnn                      # rnn | crf (the paper's CRF baseline) | heads (see below)
    data: {source: reference}      # reference | mpqa | conll; optional path
    folds: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    model: {cell: elman, ...}      # TaggerConfig fields (rnn) or c1/c2/max_iterations (crf)
    grid: {task: [dse, ese], depth: [1, 3], budget: [24k, 200k]}   # optional: one run per combination
    # or a list of such grids: the runs of each (e.g. fields that only some cells have)
    overrides:                     # optional: fields that differ for the grid cells that match
      - {when: {depth: [4, 5]}, model: {activation_l2: 1.0e-5}}
    choices: "how each value was chosen (dev set only)"

``kind: heads`` fits frame heads (``opinion_tagger.training.frame_fit``) on the fold networks of another
experiment, ``network: NAME`` (its bundles RUNS/NAME/fold<k>/, which stay as they are); ``model`` then holds
the heads' fields (``frames: true``, frame options, learning_rate, max_epochs, patience, batch_size, seed).

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
from opinion_tagger.config import TaggerConfig
from opinion_tagger.errors import TaggerError, TrainingDiverged
from opinion_tagger.paths import default_datasplit, default_mpqa, default_reference
from opinion_tagger.storage import atomic_write_text

log = logging.getLogger("opinion_tagger")
DIVERGED_RETRIES = 2  # a fold whose training diverges is run again with seed + 1000, + 2000


@dataclass
class Experiment:
    name: str
    kind: str = "rnn"
    data: dict = field(default_factory=lambda: {"source": "reference"})
    folds: list[int] = field(default_factory=lambda: list(range(10)))
    model: dict = field(default_factory=dict)
    choices: str = ""
    network: str | None = None  # kind heads: the experiment whose fold networks get the heads

    def config(self) -> TaggerConfig:
        return TaggerConfig.from_dict(self.model)

    @property
    def types(self) -> tuple[str, ...]:
        from opinion_tagger.config import TASKS

        return TASKS[self.model.get("task", "dse")]


def _grid_suffix(values: dict) -> str:
    parts = []
    for k, v in values.items():
        if k == "task":
            parts.append(str(v))
        elif k == "depth":
            parts.append(f"d{v}")
        else:
            parts.append(str(v) if k in ("budget", "cell", "output") else f"{k}{v}")
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
    known = {"name", "kind", "data", "folds", "model", "grid", "overrides", "choices", "network"}
    if set(spec) - known:
        raise TaggerError(f"{path}: unknown keys {', '.join(sorted(set(spec) - known))}")
    if "name" not in spec:
        raise TaggerError(f"{path}: a configuration needs a name")
    if spec.get("kind", "rnn") not in ("rnn", "crf", "heads"):
        raise TaggerError(f"{path}: kind must be rnn, crf or heads")
    if (spec.get("kind") == "heads") != ("network" in spec) or (
        spec.get("kind") == "heads" and not (spec.get("model") or {}).get("frames")
    ):
        raise TaggerError(f"{path}: kind heads, and only it, takes network: NAME (and model: frames: true)")
    grids = spec.get("grid") or {}
    grids = grids if isinstance(grids, list) else [grids]
    if not all(isinstance(g, dict) and all(isinstance(v, list) for v in g.values()) for g in grids):
        raise TaggerError(f"{path}: grid must be {{field: [values]}} or a list of those")
    overrides = _overrides(path, spec.get("overrides") or [])
    combos = [dict(zip(g, combo)) for g in grids for combo in itertools.product(*g.values())]
    out = []
    for values in combos or [{}]:
        model = {**(spec.get("model") or {}), **values}
        for when, fields in overrides:
            if all(model.get(k) in allowed for k, allowed in when.items()):
                model.update(fields)
        if "hidden" in values:
            model["budget"] = None
        name = spec["name"] + (f"-{_grid_suffix(values)}" if values else "")
        exp = Experiment(
            name,
            spec.get("kind", "rnn"),
            dict(spec.get("data") or {"source": "reference"}),
            list(spec.get("folds", range(10))),
            model,
            spec.get("choices", ""),
            spec.get("network"),
        )
        if exp.kind in ("rnn", "heads"):
            try:
                exp.config()
            except (ValueError, TypeError) as exc:
                raise TaggerError(f"{path}: {name}: {exc}") from None
        out.append(exp)
    names = [e.name for e in out]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise TaggerError(f"{path}: the grids give {twice[0]} twice")
    return out


def _overrides(path: Path, items) -> list[tuple[dict, dict]]:
    """A configuration's ``overrides``: model fields that differ for some grid cells, e.g.
    ``[{when: {depth: [4, 5]}, model: {activation_l2: 1.0e-5}}]``; returns [(when, fields)] with each
    ``when`` value a list of the values it matches."""
    if not isinstance(items, list):
        raise TaggerError(f"{path}: overrides must be a list of {{when: ..., model: ...}}")
    out = []
    for k, item in enumerate(items):
        if (
            not isinstance(item, dict)
            or set(item) != {"when", "model"}
            or not isinstance(item["when"], dict)
            or not isinstance(item["model"], dict)
        ):
            raise TaggerError(f"{path}: overrides[{k}] must be {{when: {{field: values}}, model: {{field: value}}}}")
        when = {f: v if isinstance(v, list) else [v] for f, v in item["when"].items()}
        out.append((when, item["model"]))
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
        model = CRFBaseline(exp.types, **exp.model.get("crf", {})).fit(train_s)
        dev = score_predictions(dev_s, model.predict_tags(dev_s))
        test = score_predictions(test_s, model.predict_tags(test_s))
        training = {"train_seconds": model.train_seconds, "epochs": None, "best_epoch": None, "device": "CPU"}
        config = {"task": exp.model.get("task", "dse"), **exp.model}
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
        config = load_bundle_files(init)[1].replace(**exp.model)
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
            (trained[k],) = attempt(cfg.replace(seed=seeds[k]), [k])
        if isinstance(trained[k], TrainingDiverged):  # recorded, not scored; the folds that trained are
            diverged[k].append({"seed": seeds[k], "epoch": trained[k].epoch})
            _write_diverged(run, k, cfg, diverged[k])
    configs = {k: cfg.replace(seed=seeds[k]).to_dict() for k in folds}
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
