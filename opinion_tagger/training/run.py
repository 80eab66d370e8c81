"""The one way into training: the place that chooses the trainer (the Keras loop, the fast JAX loop, the
Keras loop over several devices), for one model (``train``), for the folds of a cross-validation
(``train_folds``), and from data to bundle (``train_bundle``, what ``opinion-tagger train`` runs)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from opinion_tagger.config import TaggerConfig
from opinion_tagger.errors import TaggerError, TrainingDiverged
from opinion_tagger.provenance import git_commit
from opinion_tagger.sentences import Sentence
from opinion_tagger.training.checkpoints import has_checkpoint, remove_checkpoint
from opinion_tagger.training.run_data import TrainingData


def trains_together(config: TaggerConfig) -> bool:
    """Whether several models of ``config`` (folds) train at once in one program (the fast trainer)."""
    return config.training.trainer == "fast"


def train(
    config: TaggerConfig,
    train: Sequence[Sentence],
    dev: Sequence[Sentence],
    out_dir: str | Path,
    extra_words: Iterable[str] = (),
    resume: bool = False,
    progress: bool = True,
    record: dict | None = None,
    context_cache: str | Path | None = None,
    init: str | Path | None = None,
    devices: str | None = None,
    teacher: str | Path | None = None,
):
    """Train a tagger and write its bundle to ``out_dir``; returns (SentenceTagger, meta).  ``teacher``: distillation's
    teacher bundle (default: the configuration's).  ``context_cache``: a file
    that keeps contextual vectors between runs; ``init``: a bundle to continue training from (same network;
    the configuration's training fields may differ); ``devices`` (``all`` or a number): data-parallel over
    several devices (``opinion_tagger.training.data_parallel``).  ``trainer: fast`` configurations train with the JAX
    loop of ``opinion_tagger.training.fast_trainer``, others with ``opinion_tagger.training.trainer``'s Keras loop."""
    if devices:
        from opinion_tagger.training.data_parallel import train_data_parallel

        return train_data_parallel(
            config, train, dev, out_dir, devices, extra_words, resume, progress, record, context_cache, init
        )
    if config.training.trainer == "fast":
        from opinion_tagger.training.fast_trainer import train_fast

        return train_fast(config, train, dev, out_dir, extra_words, progress, record, init, resume)
    from opinion_tagger.training.trainer import Trainer

    return Trainer(config, out_dir, progress, context_cache=context_cache, init=init, teacher=teacher).run(
        train, dev, extra_words, resume, record
    )


def train_folds(
    config: TaggerConfig,
    runs: Sequence[tuple[Sequence[Sentence], Sequence[Sentence], Path]],
    extra_words: Iterable[str] = (),
    progress: bool = True,
    resume: bool = False,
    context_cache: str | Path | None = None,
    teachers: Sequence[str | Path] | None = None,
    records: Sequence[dict] | None = None,
) -> list:
    """One model per (train, dev, out_dir), e.g. the folds of a cross-validation; [(SentenceTagger, meta)] in that
    order, a ``TrainingDiverged`` in place of a model whose loss became infinite (its checkpoint removed, so a
    rerun with another seed starts afresh).  With the fast trainer they train together in one program, from
    the newest epoch every one has checkpointed; else one after the other, each from its own checkpoint.
    ``teachers``: each run's teacher bundle, for a configuration that distils one; ``records``:
    what each bundle's meta.json records of its training (e.g. its data split)."""
    if trains_together(config):
        from opinion_tagger.training.fast_trainer import train_fast_together

        return train_fast_together(config, runs, extra_words, progress, records, resume, teachers)
    out: list = []
    for k, (train_s, dev_s, out_dir) in enumerate(runs):
        try:
            out.append(
                train(
                    config,
                    train_s,
                    dev_s,
                    out_dir,
                    extra_words=extra_words,
                    resume=resume and has_checkpoint(out_dir),
                    progress=progress,
                    context_cache=context_cache,
                    record=records[k] if records else None,
                    teacher=teachers[k] if teachers else None,
                )
            )
        except TrainingDiverged as exc:
            remove_checkpoint(out_dir)
            out.append(exc)
    return out


def train_bundle(
    config: TaggerConfig,
    data: TrainingData,
    out_dir: str | Path,
    init: str | Path | None = None,
    devices: str | None = None,
    resume: bool = False,
    progress: bool = True,
    heads_only: bool = False,
    keep_checkpoints: bool = False,
):
    """Configuration and data in, bundle out: train on ``data`` and write the bundle to ``out_dir``, its
    training record naming the data, seed, code and the bundle it continued (``init``); returns (SentenceTagger, meta).
    ``heads_only``: train only frame heads on the network of ``init``
    (``opinion_tagger.training.frame_fit``).  The epochs' checkpoints (what a resume needs) are removed once the
    bundle is written, unless ``keep_checkpoints``."""
    record = {"data": data.record, "seed": config.training.seed, "git_commit": git_commit()}
    if init is not None:
        record["init"] = str(init)
    if heads_only:
        from opinion_tagger.training.frame_fit import fit_frame_heads

        if init is None:
            raise TaggerError("--heads-only trains frame heads on a bundle's network: give --init-from")
        return fit_frame_heads(config, data.train, data.dev, out_dir, init, record, progress)
    result = train(
        config,
        data.train,
        data.dev,
        out_dir,
        extra_words=data.extra_words,
        resume=resume,
        progress=progress,
        record=record,
        init=init,
        devices=devices,
    )
    if not keep_checkpoints:
        remove_checkpoint(out_dir)
    return result
