"""The fast trainer's loop (``trainer: fast``): one or several models of a configuration (the folds of a
cross-validation) trained together in one compiled JAX step over the network of
``opinion_tagger.training.fast_network``, with dev evaluation every ``eval_every`` epochs, early stopping,
checkpoints (``opinion_tagger.training.fast_checkpoint``) and resume."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from opinion_tagger.config import TaggerConfig
from opinion_tagger.errors import TaggerError, TrainingDiverged
from opinion_tagger.runtime.batching import bucket_length, decode_tags, encode_tags
from opinion_tagger.runtime.vocabulary import Vocabulary
from opinion_tagger.sentences import Sentence
from opinion_tagger.training import fast_checkpoint
from opinion_tagger.training.checkpoints import announce, has_checkpoint, refuse_existing, remove_checkpoint
from opinion_tagger.training.distillation import with_teacher
from opinion_tagger.training.fast_network import (
    fast_device,
    forward,
    load_jax,
    loss_fn,
    optimizer,
    params_from_model,
    params_to_model,
)
from opinion_tagger.training.models import bundle_start, fresh_model, save_trained, set_seeds
from opinion_tagger.training.progress import EpochProgress, epoch_line, say
from opinion_tagger.training.stopping import dev_score, judge, out_of_patience

log = logging.getLogger("opinion_tagger")
EVAL_BATCH = 256


# --------------------------------------------------------------------------- batches
class Encoded:
    """Sentences as word ids and tag ids."""

    def __init__(self, vocab: Vocabulary, sentences: Sequence[Sentence], types: Sequence[str]):
        self.ids = [np.asarray(vocab.ids(s.words), dtype="int32") for s in sentences]
        self.tags = (
            {t: [encode_tags([s.tags[t]], len(s))[0] for s in sentences] for t in types}
            if (sentences and sentences[0].tags)
            else {}
        )
        self.lengths = [len(s) for s in sentences]
        self.soft: dict[str, list[np.ndarray]] = {}  # per type, each sentence's [n, 3] teacher probabilities


def stacked_batch(data: Sequence[Encoded], picks: Sequence[Sequence[int] | None], rows: int, types: Sequence[str]):
    """One batch per model, stacked: ids [M, rows, T] and tags {type: [M, rows, T]}, T the length bucket of the
    longest sentence picked; a model with no pick (None) gets an all-padding batch.  With a teacher's
    probabilities (``Encoded.soft``), tags also has {"TYPE/soft": [M, rows, T, 3]}."""
    longest = max((data[m].lengths[i] for m, idx in enumerate(picks) if idx for i in idx), default=1)
    length = bucket_length(longest)
    ids = np.zeros((len(data), rows, length), dtype="int32")
    tags = {t: np.zeros((len(data), rows, length), dtype="int32") for t in types}
    soft = any(d.soft for d in data)
    if soft:
        tags.update({f"{t}/soft": np.zeros((len(data), rows, length, 3), dtype="float32") for t in types})
    for m, idx in enumerate(picks):
        for r, i in enumerate(idx or ()):
            n = data[m].lengths[i]
            ids[m, r, :n] = data[m].ids[i]
            for t in types:
                if data[m].tags:
                    tags[t][m, r, :n] = data[m].tags[t][i]
                if soft:
                    tags[f"{t}/soft"][m, r, :n] = data[m].soft[t][i]
    return ids, tags


def epoch_plan(lengths: Sequence[Sequence[int]], batch_size: int, seed: int, epoch: int) -> list[list]:
    """The steps of one epoch for several models trained together: per step, each model's batch (a list of
    sentence indices) or None.  Each model's sentences (shuffled, then sorted by length) are cut into
    batches; the batches of every model are laid on one common scale of length ranks, and the steps visit
    the ranks in a random order, so that models get sentences of similar length at the same step (one
    padded shape serves all).  Every sentence of every model is in exactly one step."""
    per_model = []
    for lens in lengths:
        rng = np.random.default_rng([seed, epoch])
        idx = sorted(rng.permutation(len(lens)), key=lambda i: lens[i])
        per_model.append([list(idx[i : i + batch_size]) for i in range(0, len(idx), batch_size)])
    slots = max(len(b) for b in per_model)
    table: list[list] = [[None] * len(per_model) for _ in range(slots)]
    for m, bs in enumerate(per_model):
        for j, b in enumerate(bs):
            table[j * slots // len(bs)][m] = b
    order = np.random.default_rng([seed, epoch, 1 << 20]).permutation(slots)
    return [table[k] for k in order]


# --------------------------------------------------------------------------- the trainer
class _Fold:
    """What one model of a joint run holds: data, vocabulary, Keras model, weights, progress."""

    def __init__(self, train, dev, out_dir):
        self.train, self.dev, self.out_dir = train, dev, Path(out_dir)
        self.history: list[dict] = []
        self.best, self.best_epoch, self.bad, self.best_params = None, 0, 0, None
        self.active = True
        self.diverged = 0  # the epoch whose loss became infinite

    STATE = ("history", "best", "best_epoch", "bad", "active", "diverged")

    def state(self, train_seconds: float) -> dict:
        """What a checkpoint keeps besides the arrays."""
        return {**{k: getattr(self, k) for k in self.STATE}, "train_seconds": train_seconds}

    def restore(self, state: dict) -> None:
        for k in self.STATE:
            setattr(self, k, state[k])


@dataclass(frozen=True)
class _EpochEnd:
    """What every model's end of an epoch reads: the epoch, its seconds, the dev reports and the weights on the
    host (an evaluated epoch; else None), how many models trained in it and how many train together."""

    epoch: int
    seconds: float
    reports: list[dict] | None
    host: Any
    live: int
    models: int


def _clear_checkpoints(folds: list[_Fold], resume: bool) -> None:
    """A fresh start: an existing checkpoint is an error without ``resume``; with it, none is complete."""
    stale = [f.out_dir / "checkpoint" for f in folds if has_checkpoint(f.out_dir)]
    if stale and not resume:
        refuse_existing(stale[0])
    for f in folds:
        remove_checkpoint(f.out_dir)


class FastTrainer:
    """Trains one or several taggers of the same configuration together (e.g. the folds of a cross-
    validation): their weights are stacked on a leading axis and one compiled step (``jax.vmap``) trains
    them all; each keeps its own data, vocabulary, batches, early stopping and best epoch.  Without
    dropout its result is the same as when trained alone if the models have the same number of batches
    (else the order of its batches within an epoch differs); with dropout the masks differ too, as a
    step's batches are padded to the longest of them."""

    def __init__(self, config: TaggerConfig, progress: bool = True):
        if config.model.frames.enabled:
            raise TaggerError(
                "the fast trainer trains no frame heads: train the network, then its heads with "
                "`opinion-tagger train --init-from BUNDLE --heads-only` (docs/frames.md)"
            )
        self.config, self.progress = config, progress
        jax = self.jax = load_jax()
        import jax.numpy as jnp
        import optax

        cfg = config
        grad = jax.value_and_grad(lambda p, c, ids, tags, key: loss_fn(p, c, ids, tags, cfg, key))
        self.opt = optimizer(cfg)

        def train_step(params, opt_state, consts, ids, tags, key, active):
            loss, grads = grad(params, consts, ids, tags, key)
            updates, new_state = self.opt.update(grads, opt_state, params)
            keep = lambda new, old: jnp.where(active, new, old)  # noqa: E731  (a model with no batch: unchanged)
            return (
                jax.tree_util.tree_map(keep, optax.apply_updates(params, updates), params),
                jax.tree_util.tree_map(keep, new_state, opt_state),
                loss * active,
            )

        def predict(params, consts, ids):
            logits, _, _ = forward(params, consts, ids, cfg)
            return {t: z.argmax(-1) for t, z in logits.items()}

        self._step = jax.jit(jax.vmap(train_step), donate_argnums=(0, 1))
        self._predict = jax.jit(jax.vmap(predict))

    # -- evaluation -------------------------------------------------------------
    def predict_ids(self, params, consts, data: Sequence[Encoded]) -> list[list[dict[str, np.ndarray]]]:
        """Per model, per sentence, per type: predicted tag ids (0 O, 1 B, 2 I)."""
        orders = [sorted(range(len(d.lengths)), key=d.lengths.__getitem__) for d in data]
        out: list[list[Any]] = [[None] * len(d.lengths) for d in data]
        for s in range(0, max(len(o) for o in orders), EVAL_BATCH):
            picks = [o[s : s + EVAL_BATCH] or None for o in orders]
            ids, _ = stacked_batch(data, picks, EVAL_BATCH, ())
            pred = {t: np.asarray(v) for t, v in self._predict(params, consts, ids).items()}
            for m, idx in enumerate(picks):
                for r, i in enumerate(idx or ()):
                    out[m][i] = {t: v[m, r, : data[m].lengths[i]] for t, v in pred.items()}
        return out

    def _reports(self, params, consts, data, folds) -> list[dict]:
        from opinion_tagger.evaluation.scoring import score_predictions

        preds = self.predict_ids(params, consts, data)
        return [
            score_predictions(f.dev, {t: [decode_tags(p[t].tolist(), t) for p in pred] for t in self.config.types})
            if f.dev
            else {}
            for f, pred in zip(folds, preds)
        ]

    # -- the loop ---------------------------------------------------------------
    def run(
        self,
        runs: Sequence[tuple[Sequence[Sentence], Sequence[Sentence], str | Path]],
        extra_words: Iterable[str] = (),
        records: Sequence[dict] | None = None,
        init: str | Path | None = None,
        resume: bool = False,
        teachers: Sequence[str | Path] | None = None,
    ):
        """Train one model per (train, dev, out_dir); returns [(SentenceTagger, meta)] in the same order, with a
        ``TrainingDiverged`` in place of a model whose loss became infinite (the others train on).  ``init``:
        a bundle whose network and vocabulary every model starts from (words it lacks read as unknown).
        ``resume``: continue from the newest epoch every model has a complete checkpoint of (if none,
        start afresh); without it, an existing checkpoint is an error.  ``teachers``: with ``teacher`` in the
        configuration, each model's teacher bundle (default: the configured path, which then may not name a
        {fold})."""
        cfg = self.config
        folds = [_Fold(*r) for r in runs]
        if not folds or not all(f.train for f in folds):
            raise TaggerError("no training sentences")
        models, vocabs, params, consts = self._start(folds, list(extra_words), init)
        opt_state = self.jax.jit(self.jax.vmap(self.opt.init))(params)
        first, train_seconds = 1, 0.0
        restored = self._restore(folds, params, opt_state) if resume else None
        if restored is not None:
            params, opt_state, first, train_seconds = restored
            announce(
                f"resuming from epoch {first - 1} ({folds[0].out_dir / 'checkpoint'}"
                f"{f' and {len(folds) - 1} more' if len(folds) > 1 else ''})"
            )
        else:
            _clear_checkpoints(folds, resume)
        records = [dict(r) for r in (records or [{}] * len(folds))]
        train_data = self._train_data(folds, vocabs, records, teachers)
        dev_data = [Encoded(v, f.dev, cfg.types) for v, f in zip(vocabs, folds)]
        for epoch in range(first, cfg.training.stopping.max_epochs + 1):
            live = [f.active for f in folds]
            if not any(live):
                break
            params, opt_state, losses, seconds = self._train_epoch(params, opt_state, consts, train_data, epoch, live)
            train_seconds += seconds
            evaluate = epoch % cfg.training.stopping.eval_every == 0 or epoch == cfg.training.stopping.max_epochs
            ended = _EpochEnd(
                epoch,
                seconds,
                self._reports(params, consts, dev_data, folds) if evaluate else None,
                self.jax.tree_util.tree_map(np.asarray, params) if evaluate else None,
                sum(live),
                len(folds),
            )
            for m, f in enumerate(folds):
                if live[m]:
                    self._end_epoch(m, f, ended, losses[m], sum(train_data[m].lengths))
            if evaluate:
                self._checkpoint(folds, epoch, ended.host, opt_state, train_seconds)
        together = {"trained_together": len(folds)}
        seconds_each = train_seconds / len(folds)
        return [
            self._outcome(f, models[m], vocabs[m], seconds_each, records[m] | together) for m, f in enumerate(folds)
        ]

    def _start(self, folds: list[_Fold], extra_words: list[str], init: str | Path | None):
        """Each model's Keras model and vocabulary (from ``init``, else fresh from its training sentences), and
        their weights and constants stacked."""
        cfg, per_model, models, vocabs = self.config, [], [], []
        for f in folds:
            set_seeds(cfg.training.seed)  # each model starts as it would alone
            vocab, model = bundle_start(init, cfg) if init is not None else fresh_model(cfg, f.train, extra_words)
            per_model.append(params_from_model(model, cfg))
            models.append(model)
            vocabs.append(vocab)
        return models, vocabs, _stack([p for p, _ in per_model]), _stack([c for _, c in per_model])

    def _train_data(self, folds: list[_Fold], vocabs, records: list[dict], teachers) -> list[Encoded]:
        """Each model's training sentences, encoded; with a teacher in the configuration, its noisy copies of
        them too and its probabilities, each model's record naming its teacher."""
        cfg = self.config
        train_sets = [list(f.train) for f in folds]
        softs: list[dict[str, list[np.ndarray]]] = [{} for _ in folds]
        teacher = cfg.training.distillation.teacher
        if teacher is not None:
            if teachers is None:
                if "{fold}" in teacher:
                    raise TaggerError(f"teacher {teacher} names a {{fold}}: give each run's teacher bundle")
                teachers = [teacher] * len(folds)
            for m, (f, bundle, record) in enumerate(zip(folds, teachers, records)):
                train_sets[m], softs[m], record["teacher"] = with_teacher(f.train, bundle, cfg, record, self.progress)
        train_data = [Encoded(v, s, cfg.types) for v, s in zip(vocabs, train_sets)]
        for data, soft in zip(train_data, softs):
            data.soft = soft
        return train_data

    def _train_epoch(self, params, opt_state, consts, train_data: list[Encoded], epoch: int, live: list[bool]):
        """One epoch's steps for the models still training (``live``): the weights and optimizer state after
        it, each model's mean loss and the epoch's seconds."""
        jax, cfg = self.jax, self.config
        t0 = time.perf_counter()
        losses = []
        key = jax.random.PRNGKey(cfg.training.seed)
        plan = epoch_plan([d.lengths for d in train_data], cfg.training.batch_size, cfg.training.seed, epoch)
        for b, picks in enumerate(EpochProgress(plan, epoch, self.progress)):
            picks = [p if a else None for p, a in zip(picks, live)]
            ids, tags = stacked_batch(train_data, picks, cfg.training.batch_size, cfg.types)
            active = np.array([p is not None for p in picks])
            step_key = jax.random.fold_in(key, epoch * 100003 + b)  # the same for every model, as if alone
            keys = jax.numpy.broadcast_to(step_key, (len(live), *step_key.shape))
            params, opt_state, loss = self._step(params, opt_state, consts, ids, tags, keys, active)
            losses.append((loss, active))
        sums = np.zeros(len(live))
        counts = np.zeros(len(live))
        for loss, active in losses:  # waits for the last step
            sums += np.asarray(loss)
            counts += active
        return params, opt_state, sums / np.maximum(counts, 1), time.perf_counter() - t0

    def _end_epoch(self, m: int, f: _Fold, ended: _EpochEnd, mean_loss: float, tokens: int) -> None:
        """Model ``m``'s epoch: its history entry and line, its dev score and best epoch (when evaluated), and
        whether it goes on (not when its loss became infinite or it ran out of patience)."""
        mean_loss = float(mean_loss)
        if not np.isfinite(mean_loss):  # this model stops; the others go on
            f.active, f.diverged = False, ended.epoch
            log.warning("model %d: training diverged at epoch %d (loss %s)", m + 1, ended.epoch, mean_loss)
            return
        entry: dict[str, Any] = {
            "epoch": ended.epoch,
            "loss": mean_loss,
            "seconds": ended.seconds / ended.models,
            "tokens_per_s": tokens / (ended.seconds / ended.live),
        }
        if ended.reports is not None:
            score = dev_score(ended.reports[m]) if f.dev else -mean_loss
            entry.update(dev_score=score, dev=ended.reports[m])
            improved, f.bad = judge(f.best, f.bad, score, bool(f.dev))
            if improved:
                f.best, f.best_epoch = score, ended.epoch
                f.best_params = self.jax.tree_util.tree_map(lambda x: x[m], ended.host)
        label = f" (model {m + 1}/{ended.models})" if ended.models > 1 else ""
        shown = entry["dev_score"] if ended.reports is not None and f.dev else None
        say(epoch_line(ended.epoch, mean_loss, ended.seconds, shown, label), self.progress)
        f.history.append(entry)
        if out_of_patience(self.config.training.stopping.patience, f.bad):
            f.active = False

    def _outcome(self, f: _Fold, model, vocab, train_seconds: float, record: dict):
        """The trained model's (SentenceTagger, meta), its bundle written; or its ``TrainingDiverged``."""
        if f.diverged:
            remove_checkpoint(f.out_dir)  # a rerun takes another seed
            return TrainingDiverged(f"training diverged at epoch {f.diverged}; lower --lr or change --seed", f.diverged)
        params_to_model(f.best_params, model, self.config)
        return self._finish(f, model, vocab, train_seconds, record)

    def _checkpoint(self, folds, epoch, host, opt_state, train_seconds) -> None:
        """Each model's slice of the stacked weights and optimizer state, with its best weights and
        progress, into its own checkpoint."""
        leaves = self.jax.tree_util.tree_leaves
        p_leaves = leaves(host)
        o_leaves = [np.asarray(x) for x in leaves(opt_state)]
        for m, f in enumerate(folds):
            fast_checkpoint.save(
                f.out_dir,
                epoch,
                {
                    "params": [x[m] for x in p_leaves],
                    "opt": [x[m] for x in o_leaves],
                    "best": None if f.best_params is None else leaves(f.best_params),
                },
                f.state(train_seconds),
                self.config,
            )

    def _restore(self, folds, params, opt_state):
        """(params, opt_state, first epoch, training seconds so far) from the models' checkpoints, stacked
        as ``params`` and ``opt_state`` are; None (the run starts afresh) when there is no epoch that all
        models have, or the checkpoints were stacked in another way (other models trained together)."""
        saved = fast_checkpoint.latest_common([f.out_dir for f in folds], self.config)
        if saved is None:
            return None
        tree = self.jax.tree_util
        stacked = {}
        for part, like in (("params", params), ("opt", opt_state)):
            template, treedef = tree.tree_flatten(like)
            per_model = [leaves[part] for _, leaves in saved]
            if any(
                x is None or [(a.shape, a.dtype) for a in x] != [(t.shape[1:], t.dtype) for t in template]
                for x in per_model
            ):
                announce(
                    f"{folds[0].out_dir / 'checkpoint'}: the checkpoint holds other shapes than this run "
                    "(other models trained together): starting afresh"
                )
                return None
            stacked[part] = tree.tree_unflatten(
                treedef, [self.jax.numpy.asarray(np.stack(xs)) for xs in zip(*per_model)]
            )
        p_def = tree.tree_structure(params)
        for f, (state, leaves) in zip(folds, saved):
            f.restore(state)
            f.best_params = None if leaves["best"] is None else tree.tree_unflatten(p_def, leaves["best"])
        state = saved[0][0]
        return stacked["params"], stacked["opt"], state["epoch"] + 1, float(state["train_seconds"])

    def _finish(self, fold: _Fold, model, vocab, train_seconds, record):
        return save_trained(
            self.config, model, vocab, fold.out_dir, record, fold.history, fold.best_epoch, train_seconds, fast_device()
        )


def _stack(trees: list) -> dict:
    """Stack per-model trees on a new leading axis, zero-padding arrays whose shapes differ (vocabulary
    sizes; padded rows are never read)."""
    import jax

    def stack(*leaves):
        shape = np.max([np.shape(x) for x in leaves], axis=0)
        out = np.zeros((len(leaves), *shape), dtype=np.asarray(leaves[0]).dtype)
        for m, x in enumerate(leaves):
            out[(m, *(slice(0, n) for n in np.shape(x)))] = x
        return jax.numpy.asarray(out)

    return jax.tree_util.tree_map(stack, *trees)


def train_fast(
    config: TaggerConfig,
    train: Sequence[Sentence],
    dev: Sequence[Sentence],
    out_dir: str | Path,
    extra_words: Iterable[str] = (),
    progress: bool = True,
    record: dict | None = None,
    init: str | Path | None = None,
    resume: bool = False,
):
    """Train with the JAX loop and write the bundle to ``out_dir``; returns (SentenceTagger, meta).  Raises
    ``TrainingDiverged`` when the loss becomes infinite.  ``init``: a bundle to continue training from;
    ``resume``: continue from the checkpoint in ``out_dir``."""
    (result,) = FastTrainer(config, progress).run([(train, dev, out_dir)], extra_words, [record or {}], init, resume)
    if isinstance(result, TrainingDiverged):
        raise result
    return result


def train_fast_together(
    config: TaggerConfig,
    runs,
    extra_words: Iterable[str] = (),
    progress: bool = True,
    records: Sequence[dict] | None = None,
    resume: bool = False,
    teachers: Sequence[str | Path] | None = None,
):
    """Train several models of one configuration together, one per (train, dev, out_dir) (e.g. the folds of
    a cross-validation); returns [(SentenceTagger, meta)], a ``TrainingDiverged`` for a model whose loss became
    infinite.  ``resume``: continue from their checkpoints; ``teachers``: each model's teacher bundle."""
    return FastTrainer(config, progress).run(runs, extra_words, records, resume=resume, teachers=teachers)
