"""Training: length-bucketed batches, dev-set model selection on proportional
F1 (the paper's), early stopping, a checkpoint after every epoch and resume.

    out_dir/                 the model bundle (written when training ends)
    out_dir/checkpoint/epoch-NNNN/
                             last.keras, optimizer.npz, best.weights.h5, vocab.txt,
                             state.json (epoch, best score, history) and, written
                             last, manifest.json (size and sha256 of each file)

Every file is written atomically (``opinion_tagger.storage``); a checkpoint directory
whose manifest is missing or does not verify is incomplete, and resume falls
back to the newest complete one (the two newest are kept).  The random state is
a function of (seed, epoch): the data order and every layer's (dropout) seed
generator are set from it at the start of each epoch, so a resumed run repeats
the uninterrupted one exactly.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from opinion_tagger.config import TaggerConfig
from opinion_tagger.errors import TaggerError, TrainingDiverged
from opinion_tagger.evaluation.scoring import evaluate_tagger
from opinion_tagger.runtime.batching import batches, encode_tags, encode_words, network_inputs
from opinion_tagger.runtime.vocabulary import Vocabulary
from opinion_tagger.sentences import Sentence
from opinion_tagger.storage import atomic_copy, atomic_path, atomic_write_text, remove_tree
from opinion_tagger.training.checkpoints import (
    KEEP_CHECKPOINTS,
    announce,
    check_same_run,
    checkpoint_dirs,
    checkpoint_problem,
    has_checkpoint,
    new_checkpoint_dir,
    refuse_existing,
    seal_checkpoint,
)
from opinion_tagger.training.distillation import with_teacher
from opinion_tagger.training.models import bundle_start, fresh_model, save_trained, set_seeds
from opinion_tagger.training.progress import EpochProgress, epoch_line, say
from opinion_tagger.training.stopping import dev_score, judge, out_of_patience

log = logging.getLogger("opinion_tagger")


CHECKPOINT_FILES = ("last.keras", "optimizer.npz", "best.weights.h5", "vocab.txt", "state.json")
# A LoRA-tuned encoder's weights are kept by path (opinion_tagger.model.weights.write_weights): Keras's files
# merge the adapters into the kernels and zero them on loading, which would stop their training after a resume.
LORA_CHECKPOINT_FILES = ("last.weights.npz", "optimizer.npz", "best.weights.npz", "vocab.txt", "state.json")


def reseed_epoch(model, seed: int, epoch: int) -> None:
    """Random state as a function of (seed, epoch) alone: each layer's own (dropout) seed
    generator is set, so a resumed run repeats the uninterrupted one.  (The global seed is
    left alone: ``tf.random.set_seed`` makes every later training step re-instantiate its
    graph; the training step draws only from these generators.)"""
    generators = [v for v in model.variables if v.path.endswith("seed_generator_state")]
    starts = np.random.default_rng([seed, epoch]).integers(1, 2**30, size=len(generators))
    for var, start in zip(generators, starts):
        var.assign(np.array([start, 0], dtype=var.dtype))


def device_name() -> str:
    """Where Keras computes: "CPU" or "GPU (<device>)"; a backend other than TensorFlow is named, and so are
    length buckets other than the default ones (``OPINION_TAGGER_LENGTH_BUCKETS``)."""
    import keras

    from opinion_tagger.runtime.batching import LENGTH_BUCKETS, length_buckets

    backend = keras.backend.backend()
    buckets = length_buckets()
    padding = "" if buckets == LENGTH_BUCKETS else f", length buckets {','.join(map(str, buckets))}"
    if backend == "tensorflow":
        import tensorflow as tf

        gpus = tf.config.list_physical_devices("GPU")
        return (f"GPU ({gpus[0].name})" if gpus else "CPU") + padding
    if backend == "jax":
        import jax

        gpus = [d for d in jax.devices() if d.platform == "gpu"]
        where = f"GPU ({gpus[0].device_kind})" if gpus else "CPU"
    else:
        where = "CPU"
    return f"{where}, Keras {backend} backend{padding}"


def batch_arrays(vocab, config, sentences, idx, pad_to, context=None, pieces=None, soft=None):
    """Inputs and targets of one batch, padded to ``pad_to`` rows (full-size batches keep one compiled graph per
    length bucket), and the gold tag ids per type (the targets are ``[B, T, 4]`` with ``soft``, a teacher's
    probabilities per type and sentence: those, then the gold tag id)."""
    words = [sentences[i].words for i in idx]
    x = encode_words(vocab, words)
    rows, length = pad_to, x.shape[1]
    x = np.concatenate([x, np.zeros((rows - len(idx), length), dtype=x.dtype)]) if rows > len(idx) else x
    y, gold = {}, {}
    for t in config.trained_types:
        tags = np.zeros((max(rows, len(idx)), length), dtype="int32")
        tags[: len(idx)] = encode_tags([sentences[i].tags[t] for i in idx], length)
        gold[t] = y[t] = tags
        if soft is not None and t in soft:
            q = np.zeros((*tags.shape, 4), dtype="float32")
            for row, i in enumerate(idx):
                n = min(len(soft[t][i]), length)
                q[row, :n, :3] = soft[t][i][:n]
            q[..., 3] = tags
            y[t] = q
    inputs = network_inputs(x, words, [context[i] for i in idx] if context is not None else None, pieces)
    if config.model.frames.enabled:  # the gold spans, and their frames as the frame heads' targets
        from opinion_tagger.training.frame_data import frame_batch

        spans, targets = frame_batch(config, sentences, idx, x.shape[0], x.shape[1])
        inputs = {**(inputs if isinstance(inputs, dict) else {"words": inputs}), **spans}
        y.update(targets)
    return inputs, y, gold


def o_weights(y: dict[str, np.ndarray], o_weight: float, tagged=None) -> dict[str, np.ndarray] | None:
    """Per-token loss weights for a batch's targets: ``o_weight`` where the gold tag is O (id 0), 1
    elsewhere (padding is masked by the network); None when every weight would be 1.  ``tagged``: the
    targets that are tags (default: all); the others (the frame heads') weigh 1."""
    if o_weight == 1.0:
        return None
    return {
        t: np.where(tags == 0, o_weight, 1.0).astype("float32")
        if tagged is None or t in tagged
        else np.ones(tags.shape, "float32")
        for t, tags in y.items()
    }


def freeze_features(model, config: TaggerConfig) -> None:
    """Stop the word vectors and the sub-word encoder (its LoRA adapters included) learning: each variable is
    marked, since a Keras model gathers its trainable variables past a frozen sub-model's flag."""
    names = ["embedding", *([config.model.encoder.name] if config.model.encoder.fine_tune else [])]
    for name in names:
        for variable in model.get_layer(name).weights:
            variable.trainable = False


class Trainer:
    """Trains one tagger; ``run`` returns the trained ``SentenceTagger`` and a record."""

    def __init__(
        self,
        config: TaggerConfig,
        out_dir: str | Path,
        progress: bool = True,
        on_epoch: Callable[[dict], None] | None = None,
        context_cache: str | Path | None = None,
        init: str | Path | None = None,
        teacher: str | Path | None = None,
        freeze_encoder: bool = False,
    ):
        self.config, self.out_dir = config, Path(out_dir)
        self.freeze_encoder = freeze_encoder  # with init: only the recurrent layers and the heads learn
        self.init = init  # a bundle whose network and vocabulary training continues from
        self.teacher = teacher  # distillation's teacher bundle (default: the configuration's)
        self.context_cache = context_cache
        self.ckpt = self.out_dir / "checkpoint"
        self.progress, self.on_epoch = progress, on_epoch
        self._last: Path | None = None  # the newest complete checkpoint directory
        self._lora = bool(config.model.encoder.lora_rank)
        self._files = LORA_CHECKPOINT_FILES if self._lora else CHECKPOINT_FILES
        self._last_file, self._best_file = self._files[0], self._files[2]

    # -- set-up -----------------------------------------------------------------
    def _steps(self, train: Sequence[Sentence]) -> int:
        return -(-len(train) // self.config.training.batch_size)  # batches per epoch

    def _fresh(self, train: Sequence[Sentence], extra_words: Iterable[str]):
        from opinion_tagger.model.network import compile_model

        cfg = self.config
        set_seeds(cfg.training.seed)
        if self.init is not None:
            return self._from_bundle(train)
        vocab, model = fresh_model(cfg, train, extra_words)
        compile_model(model, cfg, self._steps(train))
        state: dict[str, Any] = {
            "epoch": 0,
            "best_score": None,
            "best_epoch": 0,
            "bad_epochs": 0,
            "history": [],
            "train_seconds": 0.0,
        }
        return model, vocab, state

    def _from_bundle(self, train: Sequence[Sentence]):
        """Start from a trained bundle's network and vocabulary (words it lacks read as unknown)."""
        from opinion_tagger.model.network import compile_model

        assert self.init is not None  # _fresh's branch
        vocab, model = bundle_start(self.init, self.config)
        if self.freeze_encoder:
            freeze_features(model, self.config)
        compile_model(model, self.config, self._steps(train))
        state: dict[str, Any] = {
            "epoch": 0,
            "best_score": None,
            "best_epoch": 0,
            "bad_epochs": 0,
            "history": [],
            "train_seconds": 0.0,
            "init": str(self.init),
        }
        return model, vocab, state

    def _complete_checkpoint(self) -> Path | None:
        """The newest checkpoint whose manifest verifies; incomplete ones are reported and skipped.
        A checkpoint of the older format (no manifest) is taken as it is."""
        for epoch, d in checkpoint_dirs(self.out_dir):
            problem = checkpoint_problem(d, self._files)
            if problem is None:
                return d
            announce(f"skipping incomplete checkpoint of epoch {epoch}: {problem}")
        if (self.ckpt / "state.json").is_file():
            announce(f"{self.ckpt}: checkpoint of an older format (no manifest): its files are not verified")
            return self.ckpt
        return None

    def _resume(self, train: Sequence[Sentence], where: Path):
        import keras

        from opinion_tagger.model.network import compile_model

        try:
            state = json.loads((where / "state.json").read_text())
            saved = TaggerConfig.from_dict(state["config"])
        except (OSError, ValueError, TypeError, KeyError) as exc:
            raise TaggerError(f"{where / 'state.json'}: unreadable checkpoint state: {exc}") from None
        check_same_run(saved, self.config, self.ckpt)
        vocab = Vocabulary.load(where / "vocab.txt")
        if self.config.model.encoder.fine_tune:
            import keras_hub  # noqa: F401  (registers the encoder's layers for loading)
        try:
            if self._lora:  # rebuild the network (the encoder's LoRA set-up), then read the weights by path
                from opinion_tagger.model.network import build_training_model
                from opinion_tagger.model.weights import read_weights

                dim = self.config.word_dim
                model = build_training_model(self.config, len(vocab), dim, pretrained=False)
                read_weights(model, where / self._last_file)
            else:
                model = keras.models.load_model(where / self._last_file, compile=False, safe_mode=True)
        except Exception as exc:  # keras raises many types for a damaged file
            raise TaggerError(f"{where / self._last_file}: cannot load: {str(exc).splitlines()[0]}") from None
        compile_model(model, self.config, self._steps(train))
        model.optimizer.build(model.trainable_variables)
        with np.load(where / "optimizer.npz", allow_pickle=False) as saved_opt:
            values = [saved_opt[f"v{i}"] for i in range(len(saved_opt.files))]
        if [v.shape for v in values] != [tuple(v.shape) for v in model.optimizer.variables]:
            raise TaggerError(f"{where / 'optimizer.npz'}: optimizer state does not match the model")
        for var, val in zip(model.optimizer.variables, values):
            var.assign(val)
        return model, vocab, state

    def _write(self, model, file: Path, whole: bool) -> None:
        """The network (``whole``: a .keras model) or its weights; by path for a LoRA-tuned encoder."""
        if self._lora:
            from opinion_tagger.model.weights import write_weights

            write_weights(model, file)
        elif whole:
            model.save(file)
        else:
            model.save_weights(file)

    def _save_checkpoint(self, model, vocab, state, improved: bool) -> None:
        """``checkpoint/epoch-N/``: every file written atomically, the manifest last; then
        all but the ``KEEP_CHECKPOINTS`` newest complete checkpoints are removed."""
        d = new_checkpoint_dir(self.out_dir, state["epoch"])
        with atomic_path(d / self._last_file) as tmp:
            self._write(model, tmp, whole=True)
        with atomic_path(d / "optimizer.npz") as tmp:
            arrays: dict[str, Any] = {f"v{i}": np.asarray(v) for i, v in enumerate(model.optimizer.variables)}
            np.savez(tmp, **arrays)
        if improved or self._last is None:
            with atomic_path(d / self._best_file) as tmp:
                self._write(model, tmp, whole=False)
        else:
            atomic_copy(self._last / self._best_file, d / self._best_file)
        vocab.save(d / "vocab.txt")
        atomic_write_text(d / "state.json", json.dumps({**state, "config": self.config.to_dict()}, indent=1))
        seal_checkpoint(d, self._files)
        kept = [d]
        for _, old in checkpoint_dirs(self.out_dir):
            if old != d and len(kept) < KEEP_CHECKPOINTS and old == self._last:
                kept.append(old)
            elif old != d:
                remove_tree(old)
        for name in CHECKPOINT_FILES:  # the older single-directory format
            (self.ckpt / name).unlink(missing_ok=True)
        self._last = d

    # -- the loop ---------------------------------------------------------------
    def run(
        self,
        train: Sequence[Sentence],
        dev: Sequence[Sentence],
        extra_words: Iterable[str] = (),
        resume: bool = False,
        record: dict | None = None,
    ):
        from opinion_tagger.model.keras_backend import sentence_tagger

        cfg = self.config
        if not train:
            raise TaggerError("no training sentences")
        record = dict(record or {})
        if cfg.model.frames.enabled and cfg.training.distillation.copies:
            raise TaggerError(
                "frame heads learn from gold frames, which noisy copies have not: training.distillation.copies 0 with "
                "frames (or fit the heads afterwards: --heads-only)"
            )
        soft = None
        if cfg.training.distillation.teacher is not None:  # the teacher's noisy copies join the training text
            bundle = self.teacher or cfg.training.distillation.teacher
            train, soft, record["teacher"] = with_teacher(train, bundle, cfg, record, self.progress)
        self._last = self._complete_checkpoint() if resume else None
        if self._last is not None:
            model, vocab, state = self._resume(train, self._last)
            announce(f"resuming from epoch {state['epoch']} ({self._last})")
        else:
            if resume and has_checkpoint(self.out_dir):
                announce(f"{self.ckpt}: no complete checkpoint: starting afresh")
                remove_tree(self.ckpt)
            elif has_checkpoint(self.out_dir):
                refuse_existing(self.ckpt)
            model, vocab, state = self._fresh(train, extra_words)
        lengths = [len(s) for s in train]
        view = model
        if cfg.model.frames.enabled:  # the dev tags come from the network without the heads' span inputs
            from opinion_tagger.model.frame_heads import tagging_view
            from opinion_tagger.training.frame_data import check_frames

            check_frames(train)
            view = tagging_view(model, cfg)
        dev_tagger = sentence_tagger(view, vocab, cfg)
        context: Any = None
        pieces: Any = None
        if cfg.model.encoder.fine_tune:
            from opinion_tagger.runtime.wordpieces import word_pieces

            pieces = dev_tagger.pieces = word_pieces(cfg.encoder)
        elif cfg.model.encoder.name:
            from opinion_tagger.model.minilm import MiniLMEncoder

            encoder = dev_tagger.network.context_encoder = MiniLMEncoder(  # type: ignore[attr-defined]
                cfg.model.encoder.pooling, self.context_cache
            )
            context = encoder.encode([s.words for s in train], progress=self.progress)
            encoder.encode([s.words for s in dev], progress=self.progress)
        stopped = out_of_patience(cfg.training.stopping.patience, state["bad_epochs"])
        while state["epoch"] < cfg.training.stopping.max_epochs and not stopped:
            epoch = state["epoch"] + 1
            reseed_epoch(model, cfg.training.seed, epoch)
            rng = np.random.default_rng([cfg.training.seed, epoch])
            t0 = time.perf_counter()
            losses = []
            bar = EpochProgress(batches(lengths, cfg.training.batch_size, rng), epoch, self.progress)
            for idx in bar:
                x, y, gold = batch_arrays(vocab, cfg, train, idx, cfg.training.batch_size, context, pieces, soft)
                weights = o_weights(gold, cfg.training.o_weight, cfg.trained_types)
                loss = model.train_on_batch(x, y, sample_weight=weights, return_dict=True)["loss"]
                losses.append(float(loss))
                bar.set_postfix(loss=f"{np.mean(losses[-50:]):.4f}")
            seconds = time.perf_counter() - t0
            if not np.isfinite(np.mean(losses)):
                raise TrainingDiverged(
                    f"training diverged at epoch {epoch} (loss {np.mean(losses)}); lower --lr or use another cell",
                    epoch,
                )
            report = evaluate_tagger(dev_tagger, dev) if dev else {}
            score = dev_score(report) if dev else -float(np.mean(losses))
            entry = {
                "epoch": epoch,
                "loss": float(np.mean(losses)),
                "seconds": seconds,
                "dev_score": score,
                "dev": report,
            }
            state["history"].append(entry)
            state["epoch"] = epoch
            state["train_seconds"] += seconds
            improved, state["bad_epochs"] = judge(state["best_score"], state["bad_epochs"], score, bool(dev))
            if improved:
                state.update(best_score=score, best_epoch=epoch)
            stopped = out_of_patience(cfg.training.stopping.patience, state["bad_epochs"])
            self._save_checkpoint(model, vocab, state, improved)
            say(epoch_line(epoch, entry["loss"], seconds, score if dev else None), self.progress)
            if self.on_epoch:
                self.on_epoch(entry)
        return self._finish(model, vocab, state, record, dev)

    def _finish(self, model, vocab, state, record, dev=()):
        cfg = self.config
        if self._lora:
            from opinion_tagger.model.weights import read_weights

            read_weights(model, self._last / self._best_file)
        else:
            model.load_weights(self._last / self._best_file)
        return save_trained(
            cfg,
            model,
            vocab,
            self.out_dir,
            record,
            state["history"],
            state["best_epoch"],
            state["train_seconds"],
            device_name(),
            dev,
        )
