"""Training: length-bucketed batches, dev-set model selection on proportional
F1 (the paper's), early stopping, a checkpoint after every epoch and resume.

    out_dir/                 the model bundle (written when training ends)
    out_dir/checkpoint/epoch-NNNN/
                             last.keras, optimizer.npz, best.weights.h5, vocab.txt,
                             state.json (epoch, best score, history) and, written
                             last, manifest.json (size and sha256 of each file)

Every file is written atomically (``tagger.storage``); a checkpoint directory
whose manifest is missing or does not verify is incomplete, and resume falls
back to the newest complete one (the two newest are kept).  The random state is
a function of (seed, epoch): the data order and every layer's (dropout) seed
generator are set from it at the start of each epoch, so a resumed run repeats
the uninterrupted one exactly.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from tagger.config import TaggerConfig
from tagger.data import Sentence
from tagger.errors import TaggerError, TrainingDiverged
from tagger.evaluation.scoring import evaluate_tagger
from tagger.network.features import (
    GLOVE_DIM,
    Vocabulary,
    batches,
    build_vocabulary,
    encode_tags,
    encode_words,
    initial_embeddings,
    network_inputs,
)
from tagger.storage import (
    atomic_copy,
    atomic_path,
    atomic_write_text,
    fsync_dir,
    make_manifest,
    manifest_problem,
    remove_tree,
)

log = logging.getLogger("tagger")


def training_fields(config: TaggerConfig) -> dict:
    """The configuration fields that may change when training continues from a bundle."""
    return {f: getattr(config, f) for f in ("optimizer", "learning_rate", "lr_schedule", "momentum", "clipnorm",
                                            "batch_size", "max_epochs", "patience", "seed", "jit_compile",
                                            "input_dropout", "dropout", "trainer", "o_weight", "loss_sum",
                                            "output_lr_scale", "lr_decay", "l2", "activation_l2", "init",
                                            "init_scale", "eval_every")}


def bundle_start(init: str | Path, config: TaggerConfig):
    """(Vocabulary, Keras model) of a trained bundle that training continues from (either trainer); its
    network must be the one ``config`` describes (only the training fields may differ)."""
    from tagger.network.bundle import load_bundle_files, load_keras_model

    vocab, saved, _ = load_bundle_files(init)
    if saved.replace(**training_fields(config)) != config:
        raise TaggerError(f"{init}: training can continue only with the bundle's network "
                          "(its task, cell, depth, sizes and features)")
    return vocab, load_keras_model(init)


CHECKPOINT_FILES = ("last.keras", "optimizer.npz", "best.weights.h5", "vocab.txt", "state.json")
# A LoRA-tuned encoder's weights are kept by path (tagger.network.bundle.write_weights): Keras's files merge the
# adapters into the kernels and zero them on loading, which would stop their training after a resume.
LORA_CHECKPOINT_FILES = ("last.weights.npz", "optimizer.npz", "best.weights.npz", "vocab.txt", "state.json")
MANIFEST = "manifest.json"
KEEP_CHECKPOINTS = 2
_EPOCH_DIR = re.compile(r"epoch-(\d+)")


def set_seeds(seed: int) -> None:
    import keras

    keras.utils.set_random_seed(seed)


def reseed_epoch(model, seed: int, epoch: int) -> None:
    """Random state as a function of (seed, epoch) alone: each layer's own (dropout) seed
    generator is set, so a resumed run repeats the uninterrupted one.  (The global seed is
    left alone: ``tf.random.set_seed`` makes every later training step re-instantiate its
    graph, about a second each on a CPU; the training step draws only from these generators.)"""
    generators = [v for v in model.variables if v.path.endswith("seed_generator_state")]
    starts = np.random.default_rng([seed, epoch]).integers(1, 2**30, size=len(generators))
    for var, start in zip(generators, starts):
        var.assign(np.array([start, 0], dtype=var.dtype))


def checkpoint_dirs(out_dir: str | Path) -> list[tuple[int, Path]]:
    """(epoch, directory) of the checkpoints under ``out_dir``, newest first, complete or not."""
    root = Path(out_dir) / "checkpoint"
    found = [(int(m.group(1)), p) for p in root.glob("epoch-*") if (m := _EPOCH_DIR.fullmatch(p.name))]
    return sorted(found, reverse=True)


def checkpoint_problem(d: Path, files: Sequence[str]) -> str | None:
    """None when the checkpoint directory ``d`` is complete: its manifest lists ``files`` and every file
    it lists verifies; else one line saying what is wrong (both trainers' checkpoints)."""
    try:
        manifest = json.loads((d / MANIFEST).read_text())
    except FileNotFoundError:
        return f"{d / MANIFEST}: missing (the save was interrupted)"
    except (OSError, ValueError) as exc:
        return f"{d / MANIFEST}: unreadable ({exc})"
    problem = manifest_problem(d, manifest)
    if problem is None and not set(manifest) >= set(files):
        problem = "files missing from the manifest"
    return problem


def has_checkpoint(out_dir: str | Path) -> bool:
    """Whether an interrupted run left a checkpoint (of this or the older, single-directory format)."""
    return bool(checkpoint_dirs(out_dir)) or (Path(out_dir) / "checkpoint" / "state.json").is_file()


def announce(message: str) -> None:
    """Resume decisions are always shown (also with --quiet): they change what the run does."""
    print(message, file=sys.stderr, flush=True)
    log.info(message)


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced or closed
        return False


class EpochProgress:
    """Progress through one epoch's batches.  On a terminal, a tqdm bar that starts after the
    first batch (which includes compiling the step, so it does not inflate the estimate) and
    averages the speed over the epoch (``smoothing=0.1``).  Elsewhere (stderr redirected to a
    file or a pipe) no bar frames: a plain line every ``every`` seconds; the trainer prints a
    line per epoch."""

    def __init__(self, batches, epoch: int, enabled: bool = True, every: float = 60.0):
        self.batches, self.epoch, self.every = list(batches), epoch, every
        self.enabled = enabled
        self.bar, self.postfix = None, {}

    def set_postfix(self, **values) -> None:
        self.postfix = values
        if self.bar is not None:
            self.bar.set_postfix(**values)

    def __iter__(self):
        if not self.enabled or not self.batches:
            yield from self.batches
        elif _stderr_is_terminal():
            yield from self._bar()
        else:
            yield from self._lines()

    def _bar(self):
        from tqdm.auto import tqdm

        yield self.batches[0]
        self.bar = tqdm(self.batches[1:], desc=f"epoch {self.epoch}", unit="batch", leave=False, smoothing=0.1,
                        initial=1, total=len(self.batches), postfix=self.postfix or None)
        yield from self.bar

    def _lines(self):
        n = len(self.batches)
        start = last = time.perf_counter()
        for k, batch in enumerate(self.batches, 1):
            yield batch
            now = time.perf_counter()
            if now - last >= self.every and k < n:
                extra = "".join(f", {key} {value}" for key, value in self.postfix.items())
                print(f"epoch {self.epoch}: {k}/{n} batches, {now - start:.0f}s{extra}", file=sys.stderr, flush=True)
                last = now


def device_name() -> str:
    """Where Keras computes: "CPU" or "GPU (<device>)"; a backend other than TensorFlow is named."""
    import keras

    backend = keras.backend.backend()
    if backend == "tensorflow":
        import tensorflow as tf

        gpus = tf.config.list_physical_devices("GPU")
        return f"GPU ({gpus[0].name})" if gpus else "CPU"
    if backend == "jax":
        import jax

        gpus = [d for d in jax.devices() if d.platform == "gpu"]
        where = f"GPU ({gpus[0].device_kind})" if gpus else "CPU"
    else:
        where = "CPU"
    return f"{where}, Keras {backend} backend"


def dev_score(report: dict) -> float:
    """Model selection: mean proportional F1 over the tagged types."""
    return float(np.mean([r["proportional"]["f1"] for r in report.values()]))


def patience_counts(best_score: float | None, has_dev: bool) -> bool:
    """Whether an evaluation without a better score counts against the patience.  Not while the best dev
    F1 is still 0: a network that has not left its all-O start (deep ReLU stacks with small initial
    weights can sit there for tens of epochs) is not converged, and the authors' trainer, which never
    stops early, would go on training it; it then trains on to ``max_epochs``."""
    return not has_dev or (best_score is not None and best_score > 0)


def _batch_arrays(vocab, config, sentences, idx, pad_to, context=None, pieces=None):
    """Inputs and targets of one batch, padded to ``pad_to`` rows (full-size batches
    keep one compiled graph per length bucket)."""
    words = [sentences[i].words for i in idx]
    x = encode_words(vocab, words)
    pad = pad_to - len(idx)
    x = np.concatenate([x, np.zeros((pad, x.shape[1]), dtype=x.dtype)]) if pad > 0 else x
    y = {}
    for t in config.types:
        tags = encode_tags([sentences[i].tags[t] for i in idx], x.shape[1])
        y[t] = np.concatenate([tags, np.zeros((pad, x.shape[1]), dtype=tags.dtype)]) if pad > 0 else tags
    return network_inputs(x, words, [context[i] for i in idx] if context is not None else None, pieces), y


def o_weights(y: dict[str, np.ndarray], o_weight: float) -> dict[str, np.ndarray] | None:
    """Per-token loss weights for a batch's targets: ``o_weight`` where the gold tag is O (id 0), 1
    elsewhere (padding is masked by the network); None when every weight would be 1."""
    if o_weight == 1.0:
        return None
    return {t: np.where(tags == 0, o_weight, 1.0).astype("float32") for t, tags in y.items()}


class Trainer:
    """Trains one tagger; ``run`` returns the trained ``Tagger`` and a record."""

    def __init__(self, config: TaggerConfig, out_dir: str | Path, progress: bool = True,
                 on_epoch: Callable[[dict], None] | None = None, context_cache: str | Path | None = None,
                 init: str | Path | None = None):
        self.config, self.out_dir = config, Path(out_dir)
        self.init = init  # a bundle whose network and vocabulary training continues from
        self.context_cache = context_cache
        self.ckpt = self.out_dir / "checkpoint"
        self.progress, self.on_epoch = progress, on_epoch
        self._last: Path | None = None  # the newest complete checkpoint directory
        self._lora = bool(config.context_lora_rank)
        self._files = LORA_CHECKPOINT_FILES if self._lora else CHECKPOINT_FILES
        self._last_file, self._best_file = self._files[0], self._files[2]

    # -- set-up -----------------------------------------------------------------
    def _steps(self, train: Sequence[Sentence]) -> int:
        return -(-len(train) // self.config.batch_size)  # batches per epoch

    def _fresh(self, train: Sequence[Sentence], extra_words: Iterable[str]):
        from tagger.network.model import build_model, compile_model, set_embeddings

        cfg = self.config
        set_seeds(cfg.seed)
        if self.init is not None:
            return self._from_bundle(train)
        vocab = build_vocabulary(cfg, (w for s in train for w in s.words), extra_words)
        matrix, pretrained = initial_embeddings(cfg, vocab)
        model = build_model(cfg, len(vocab), matrix.shape[1])
        frozen = np.zeros(len(vocab), "float32") if cfg.fine_tune else pretrained
        set_embeddings(model, matrix, frozen)
        compile_model(model, cfg, self._steps(train))
        state = {"epoch": 0, "best_score": None, "best_epoch": 0, "bad_epochs": 0, "history": [],
                 "train_seconds": 0.0}
        return model, vocab, state

    def _from_bundle(self, train: Sequence[Sentence]):
        """Start from a trained bundle's network and vocabulary (words it lacks read as unknown)."""
        from tagger.network.model import compile_model

        vocab, model = bundle_start(self.init, self.config)
        compile_model(model, self.config, self._steps(train))
        state = {"epoch": 0, "best_score": None, "best_epoch": 0, "bad_epochs": 0, "history": [],
                 "train_seconds": 0.0, "init": str(self.init)}
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

        from tagger.network.model import compile_model

        try:
            state = json.loads((where / "state.json").read_text())
            saved = TaggerConfig.from_dict(state["config"])
        except (OSError, ValueError, TypeError, KeyError) as exc:
            raise TaggerError(f"{where / 'state.json'}: unreadable checkpoint state: {exc}") from None
        if saved.replace(max_epochs=1, patience=1) != self.config.replace(max_epochs=1, patience=1):
            raise TaggerError(f"{self.ckpt}: the checkpoint was made with another configuration; "
                              "resume with the same options or train into a new directory")
        vocab = Vocabulary.load(where / "vocab.txt")
        if self.config.context_fine_tune:
            import keras_hub  # noqa: F401  (registers the encoder's layers for loading)
        try:
            if self._lora:  # rebuild the network (the encoder's LoRA set-up), then read the weights by path
                from tagger.network.bundle import read_weights
                from tagger.network.model import build_model

                dim = GLOVE_DIM if self.config.features == "glove" else self.config.embedding_dim
                model = build_model(self.config, len(vocab), dim, pretrained=False)
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
            from tagger.network.bundle import write_weights

            write_weights(model, file)
        elif whole:
            model.save(file)
        else:
            model.save_weights(file)

    def _save_checkpoint(self, model, vocab, state, improved: bool) -> None:
        """``checkpoint/epoch-N/``: every file written atomically, the manifest last; then
        all but the ``KEEP_CHECKPOINTS`` newest complete checkpoints are removed."""
        d = self.ckpt / f"epoch-{state['epoch']:04d}"
        remove_tree(d)  # what an interrupted save of this epoch left
        d.mkdir(parents=True)
        fsync_dir(self.ckpt)
        with atomic_path(d / self._last_file) as tmp:
            self._write(model, tmp, whole=True)
        with atomic_path(d / "optimizer.npz") as tmp:
            np.savez(tmp, **{f"v{i}": np.asarray(v) for i, v in enumerate(model.optimizer.variables)})
        if improved or self._last is None:
            with atomic_path(d / self._best_file) as tmp:
                self._write(model, tmp, whole=False)
        else:
            atomic_copy(self._last / self._best_file, d / self._best_file)
        vocab.save(d / "vocab.txt")
        atomic_write_text(d / "state.json", json.dumps({**state, "config": self.config.to_dict()}, indent=1))
        atomic_write_text(d / MANIFEST, json.dumps(make_manifest(d, self._files), indent=1))
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
    def run(self, train: Sequence[Sentence], dev: Sequence[Sentence], extra_words: Iterable[str] = (),
            resume: bool = False, record: dict | None = None):
        from tqdm.auto import tqdm

        from tagger.network.predict import Tagger

        cfg = self.config
        if not train:
            raise TaggerError("no training sentences")
        self._last = self._complete_checkpoint() if resume else None
        if self._last is not None:
            model, vocab, state = self._resume(train, self._last)
            announce(f"resuming from epoch {state['epoch']} ({self._last})")
        else:
            if resume and has_checkpoint(self.out_dir):
                announce(f"{self.ckpt}: no complete checkpoint: starting afresh")
                remove_tree(self.ckpt)
            elif has_checkpoint(self.out_dir):
                raise TaggerError(f"{self.ckpt}: a checkpoint exists; pass --resume to continue it "
                                  "or choose another output directory")
            model, vocab, state = self._fresh(train, extra_words)
        lengths = [len(s) for s in train]
        dev_tagger = Tagger.from_model(model, vocab, cfg)
        context = pieces = None
        if cfg.context_fine_tune:
            from tagger.network.contextual import word_pieces

            pieces = dev_tagger.encoder = word_pieces(cfg.contextual)
        elif cfg.contextual:
            from tagger.network.contextual import MiniLMEncoder

            dev_tagger.encoder = MiniLMEncoder(cfg.context_pooling, self.context_cache)
            context = dev_tagger.encoder.encode([s.words for s in train], progress=self.progress)
            dev_tagger.encoder.encode([s.words for s in dev], progress=self.progress)
        stopped = bool(cfg.patience) and state["bad_epochs"] >= cfg.patience
        while state["epoch"] < cfg.max_epochs and not stopped:
            epoch = state["epoch"] + 1
            reseed_epoch(model, cfg.seed, epoch)
            rng = np.random.default_rng([cfg.seed, epoch])
            t0 = time.perf_counter()
            losses = []
            bar = EpochProgress(batches(lengths, cfg.batch_size, rng), epoch, self.progress)
            for idx in bar:
                x, y = _batch_arrays(vocab, cfg, train, idx, cfg.batch_size, context, pieces)
                loss = model.train_on_batch(x, y, sample_weight=o_weights(y, cfg.o_weight), return_dict=True)["loss"]
                losses.append(float(loss))
                bar.set_postfix(loss=f"{np.mean(losses[-50:]):.4f}")
            seconds = time.perf_counter() - t0
            if not np.isfinite(np.mean(losses)):
                raise TrainingDiverged(f"training diverged at epoch {epoch} (loss {np.mean(losses)}); "
                                       "lower --lr or use another cell", epoch)
            report = evaluate_tagger(dev_tagger, dev) if dev else {}
            score = dev_score(report) if dev else -float(np.mean(losses))
            entry = {"epoch": epoch, "loss": float(np.mean(losses)), "seconds": seconds, "dev_score": score,
                     "dev": report}
            state["history"].append(entry)
            state["epoch"] = epoch
            state["train_seconds"] += seconds
            improved = state["best_score"] is None or score > state["best_score"]
            if improved:
                state.update(best_score=score, best_epoch=epoch, bad_epochs=0)
            elif patience_counts(state["best_score"], bool(dev)):
                state["bad_epochs"] += 1
            stopped = bool(cfg.patience) and state["bad_epochs"] >= cfg.patience
            self._save_checkpoint(model, vocab, state, improved)
            msg = f"epoch {epoch}: loss {entry['loss']:.4f}, dev prop F1 {score:.4f}, {seconds:.1f}s"
            if self.progress:
                tqdm.write(msg)
            log.info(msg)
            if self.on_epoch:
                self.on_epoch(entry)
        return self._finish(model, vocab, state, record or {})

    def _finish(self, model, vocab, state, record):
        cfg = self.config
        if self._lora:
            from tagger.network.bundle import read_weights

            read_weights(model, self._last / self._best_file)
        else:
            model.load_weights(self._last / self._best_file)
        return save_trained(cfg, model, vocab, self.out_dir, record, state["history"], state["best_epoch"],
                            state["train_seconds"], device_name())


def save_trained(config: TaggerConfig, model, vocab, out_dir: str | Path, record: dict, history: list[dict],
                 best_epoch: int, train_seconds: float, device: str):
    """Write the bundle of a finished training run (the weights in ``model`` are the kept epoch's) and
    return (Tagger, meta); meta holds the run's record, history without dev reports, and its dev scores.
    Both trainers end here."""
    from tagger.network.model import build_model, count_parameters
    from tagger.network.predict import Tagger

    clean = build_model(config, len(vocab), model.get_layer("embedding").dim, pretrained=False)
    clean.set_weights(model.get_weights())  # a fresh model: no optimizer state in the bundle
    best = next(h for h in history if h["epoch"] == best_epoch)
    meta = {
        "training": {**record, "epochs": history[-1]["epoch"] if history else 0, "best_epoch": best_epoch,
                     "train_seconds": train_seconds, "device": device, "parameters": count_parameters(clean),
                     "history": [{k: v for k, v in h.items() if k != "dev"} for h in history]},
        "scores": {"dev": best["dev"]},
    }
    tagger = Tagger.from_model(clean, vocab, config, meta)
    tagger.save(out_dir)
    return tagger, meta


def train(config: TaggerConfig, train: Sequence[Sentence], dev: Sequence[Sentence], out_dir: str | Path,
          extra_words: Iterable[str] = (), resume: bool = False, progress: bool = True,
          record: dict | None = None, context_cache: str | Path | None = None, init: str | Path | None = None):
    """Train a tagger and write its bundle to ``out_dir``; returns (Tagger, meta).
    ``context_cache``: a file that keeps contextual vectors between runs; ``init``: a bundle
    to continue training from (same network; the configuration's training fields may differ).
    ``trainer: fast`` configurations train with the JAX loop of ``tagger.training.fast_trainer`` (which
    checkpoints after each dev evaluation, ``tagger.training.fast_checkpoint``)."""
    if config.trainer == "fast":
        from tagger.training.fast_trainer import train_fast

        return train_fast(config, train, dev, out_dir, extra_words, progress, record, init, resume)
    return Trainer(config, out_dir, progress, context_cache=context_cache, init=init).run(
        train, dev, extra_words, resume, record)


def remove_checkpoint(out_dir: str | Path) -> None:
    shutil.rmtree(Path(out_dir) / "checkpoint", ignore_errors=True)
