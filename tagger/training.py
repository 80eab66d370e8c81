"""Training: length-bucketed batches, dev-set model selection on proportional
F1 (the paper's), early stopping, a checkpoint after every epoch and resume.

    out_dir/                 the model bundle (written when training ends)
    out_dir/checkpoint/      last.keras, optimizer.npz, best.weights.h5,
                             vocab.txt, state.json (epoch, best score, history)
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from tagger.config import TaggerConfig
from tagger.data import Sentence
from tagger.errors import TaggerError
from tagger.features import (Vocabulary, batches, build_vocabulary, encode_tags, encode_words, initial_embeddings,
                             network_inputs)
from tagger.evaluation import evaluate_tagger

log = logging.getLogger("tagger")


def training_fields(config: TaggerConfig) -> dict:
    """The configuration fields that may change when training continues from a bundle."""
    return {f: getattr(config, f) for f in ("optimizer", "learning_rate", "lr_schedule", "momentum", "clipnorm",
                                            "batch_size", "max_epochs", "patience", "seed", "jit_compile",
                                            "input_dropout", "dropout")}


def set_seeds(seed: int) -> None:
    import keras

    keras.utils.set_random_seed(seed)


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

    # -- set-up -----------------------------------------------------------------
    def _steps(self, train: Sequence[Sentence]) -> int:
        return -(-len(train) // self.config.batch_size)  # batches per epoch

    def _fresh(self, train: Sequence[Sentence], extra_words: Iterable[str]):
        from tagger.model import build_model, compile_model, set_embeddings

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
        from tagger.bundle import load_bundle_files, load_keras_model
        from tagger.model import compile_model

        vocab, saved, _ = load_bundle_files(self.init)
        if saved.replace(**training_fields(self.config)) != self.config:
            raise TaggerError(f"{self.init}: training can continue only with the bundle's network "
                              "(its task, cell, depth, sizes and features)")
        model = load_keras_model(self.init, len(vocab))
        compile_model(model, self.config, self._steps(train))
        state = {"epoch": 0, "best_score": None, "best_epoch": 0, "bad_epochs": 0, "history": [],
                 "train_seconds": 0.0, "init": str(self.init)}
        return model, vocab, state

    def _resume(self, train: Sequence[Sentence]):
        import keras

        from tagger.model import compile_model

        state = json.loads((self.ckpt / "state.json").read_text())
        saved = TaggerConfig.from_dict(state["config"])
        if saved.replace(max_epochs=1, patience=1) != self.config.replace(max_epochs=1, patience=1):
            raise TaggerError(f"{self.ckpt}: the checkpoint was made with another configuration; "
                              "resume with the same options or train into a new directory")
        vocab = Vocabulary.load(self.ckpt / "vocab.txt")
        if self.config.context_fine_tune:
            import keras_hub  # noqa: F401  (registers the encoder's layers for loading)
        model = keras.models.load_model(self.ckpt / "last.keras", compile=False, safe_mode=True)
        compile_model(model, self.config, self._steps(train))
        model.optimizer.build(model.trainable_variables)
        with np.load(self.ckpt / "optimizer.npz", allow_pickle=False) as saved_opt:
            values = [saved_opt[f"v{i}"] for i in range(len(saved_opt.files))]
        if [v.shape for v in values] != [tuple(v.shape) for v in model.optimizer.variables]:
            raise TaggerError(f"{self.ckpt / 'optimizer.npz'}: optimizer state does not match the model")
        for var, val in zip(model.optimizer.variables, values):
            var.assign(val)
        set_seeds(self.config.seed + state["epoch"])
        return model, vocab, state

    def _save_checkpoint(self, model, vocab, state):
        self.ckpt.mkdir(parents=True, exist_ok=True)
        tmp = self.ckpt / "last.tmp.keras"
        model.save(tmp)
        tmp.replace(self.ckpt / "last.keras")
        np.savez(self.ckpt / "optimizer.tmp.npz",
                 **{f"v{i}": np.asarray(v) for i, v in enumerate(model.optimizer.variables)})
        (self.ckpt / "optimizer.tmp.npz").replace(self.ckpt / "optimizer.npz")
        vocab.save(self.ckpt / "vocab.txt")
        (self.ckpt / "state.tmp.json").write_text(json.dumps({**state, "config": self.config.to_dict()}, indent=1))
        (self.ckpt / "state.tmp.json").replace(self.ckpt / "state.json")

    # -- the loop ---------------------------------------------------------------
    def run(self, train: Sequence[Sentence], dev: Sequence[Sentence], extra_words: Iterable[str] = (),
            resume: bool = False, record: dict | None = None):
        from tqdm.auto import tqdm

        from tagger.predict import Tagger

        cfg = self.config
        if not train:
            raise TaggerError("no training sentences")
        if resume and (self.ckpt / "state.json").is_file():
            model, vocab, state = self._resume(train)
            log.warning("resuming from %s after epoch %d", self.ckpt, state["epoch"])
        else:
            if (self.ckpt / "state.json").is_file():
                raise TaggerError(f"{self.ckpt}: a checkpoint exists; pass --resume to continue it "
                                  "or choose another output directory")
            model, vocab, state = self._fresh(train, extra_words)
        lengths = [len(s) for s in train]
        dev_tagger = Tagger.from_model(model, vocab, cfg)
        context = pieces = None
        if cfg.context_fine_tune:
            from tagger.contextual import WordPieces

            pieces = dev_tagger.encoder = WordPieces()
        elif cfg.contextual:
            from tagger.contextual import MiniLMEncoder

            dev_tagger.encoder = MiniLMEncoder(cfg.context_pooling, self.context_cache)
            context = dev_tagger.encoder.encode([s.words for s in train], progress=self.progress)
            dev_tagger.encoder.encode([s.words for s in dev], progress=self.progress)
        stopped = bool(cfg.patience) and state["bad_epochs"] >= cfg.patience
        while state["epoch"] < cfg.max_epochs and not stopped:
            epoch = state["epoch"] + 1
            rng = np.random.default_rng([cfg.seed, epoch])
            t0 = time.perf_counter()
            losses = []
            bar = tqdm(batches(lengths, cfg.batch_size, rng), desc=f"epoch {epoch}", unit="batch",
                       disable=not self.progress, leave=False)
            for idx in bar:
                x, y = _batch_arrays(vocab, cfg, train, idx, cfg.batch_size, context, pieces)
                loss = model.train_on_batch(x, y, return_dict=True)["loss"]
                losses.append(float(loss))
                bar.set_postfix(loss=f"{np.mean(losses[-50:]):.4f}")
            seconds = time.perf_counter() - t0
            if not np.isfinite(np.mean(losses)):
                raise TaggerError(f"training diverged at epoch {epoch} (loss {np.mean(losses)}); "
                                  "lower --lr or use another cell")
            report = evaluate_tagger(dev_tagger, dev) if dev else {}
            score = dev_score(report) if dev else -float(np.mean(losses))
            entry = {"epoch": epoch, "loss": float(np.mean(losses)), "seconds": seconds, "dev_score": score,
                     "dev": report}
            state["history"].append(entry)
            state["epoch"] = epoch
            state["train_seconds"] += seconds
            if state["best_score"] is None or score > state["best_score"]:
                state.update(best_score=score, best_epoch=epoch, bad_epochs=0)
                self.ckpt.mkdir(parents=True, exist_ok=True)
                model.save_weights(self.ckpt / "best.weights.h5")
            else:
                state["bad_epochs"] += 1
            stopped = bool(cfg.patience) and state["bad_epochs"] >= cfg.patience
            self._save_checkpoint(model, vocab, state)
            msg = f"epoch {epoch}: loss {entry['loss']:.4f}, dev prop F1 {score:.4f}, {seconds:.1f}s"
            if self.progress:
                tqdm.write(msg)
            log.info(msg)
            if self.on_epoch:
                self.on_epoch(entry)
        return self._finish(model, vocab, state, record or {})

    def _finish(self, model, vocab, state, record):
        from tagger.model import build_model, count_parameters
        from tagger.predict import Tagger

        cfg = self.config
        model.load_weights(self.ckpt / "best.weights.h5")
        dim = model.get_layer("embedding").dim
        clean = build_model(cfg, len(vocab), dim, pretrained=False)  # no optimizer state in the bundle
        clean.set_weights(model.get_weights())
        best = state["history"][state["best_epoch"] - 1]
        meta = {
            "training": {**record, "epochs": state["epoch"], "best_epoch": state["best_epoch"],
                         "train_seconds": state["train_seconds"], "device": device_name(),
                         "parameters": count_parameters(clean), "history": [
                             {k: v for k, v in h.items() if k != "dev"} for h in state["history"]]},
            "scores": {"dev": best["dev"]},
        }
        tagger = Tagger.from_model(clean, vocab, cfg, meta)
        tagger.save(self.out_dir)
        return tagger, meta


def train(config: TaggerConfig, train: Sequence[Sentence], dev: Sequence[Sentence], out_dir: str | Path,
          extra_words: Iterable[str] = (), resume: bool = False, progress: bool = True,
          record: dict | None = None, context_cache: str | Path | None = None, init: str | Path | None = None):
    """Train a tagger and write its bundle to ``out_dir``; returns (Tagger, meta).
    ``context_cache``: a file that keeps contextual vectors between runs; ``init``: a bundle
    to continue training from (same network; the configuration's training fields may differ).
    ``trainer: fast`` configurations train with the JAX loop of ``tagger.fast_training`` (which
    has no checkpoints: an interrupted run starts again; it cannot start from a bundle)."""
    if config.trainer == "fast":
        if init is not None:
            raise TaggerError("--init-from works with the Keras trainer only (trainer: keras)")
        from tagger.fast_training import train_fast

        return train_fast(config, train, dev, out_dir, extra_words, progress, record)
    return Trainer(config, out_dir, progress, context_cache=context_cache, init=init).run(
        train, dev, extra_words, resume, record)


def remove_checkpoint(out_dir: str | Path) -> None:
    shutil.rmtree(Path(out_dir) / "checkpoint", ignore_errors=True)
