"""The fast trainer: a JAX training loop for the paper's Elman taggers (``trainer: fast``).

The Keras network (``tagger.model.build_model``) stays the one definition of the
model: training starts from a freshly built Keras model, reads its weights into
a JAX parameter tree, trains them here and writes them back into the Keras
model, which is saved as an ordinary bundle (so tagging, the NumPy runtime and
the Keras path all read what was trained).  ``tests/test_fast_training.py``
checks that the loss and gradients computed here equal the Keras model's for
the same weights.

Why it is faster than the Keras loop on a CPU: both directions of a layer run
in one ``lax.scan`` (one batched matrix product a time step instead of two
loops), the input projections of all time steps are one matrix product before
the scan, and every batch shape (``batch_size`` x a length bucket) is compiled
once.

It implements the recipe options of the authors' released trainer
(oir/deep-recurrent): O-class loss weight, summed token losses, SGD with
momentum and per-update learning-rate decay, a smaller learning rate for the
output layer, L2 on weights and on hidden activations, dev evaluation every N
epochs keeping the best dev proportional F1.  There is no checkpoint inside a
run (a run takes minutes): an interrupted run starts again, and being seeded
throughout, it ends with the same weights.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from tagger.config import TaggerConfig
from tagger.data import Sentence
from tagger.errors import TaggerError
from tagger.features import (Vocabulary, batches, bucket_length, build_vocabulary, decode_tags, encode_tags,
                             initial_embeddings)

log = logging.getLogger("tagger")
EVAL_BATCH = 256


def _jax():
    try:
        import jax
        import optax  # noqa: F401
    except ImportError:
        raise TaggerError("trainer fast needs JAX and optax: pip install -e '.[fast]'") from None
    cache = os.environ.get("OPINION_TAGGER_JAX_CACHE", str(Path.home() / ".cache" / "opinion-tagger" / "jax"))
    if cache and not jax.config.jax_compilation_cache_dir:  # runs with the same shapes compile once
        jax.config.update("jax_compilation_cache_dir", cache)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 1.0)
    return jax


# --------------------------------------------------------------------------- parameters <-> Keras model
def params_from_model(model, config: TaggerConfig) -> tuple[dict, np.ndarray]:
    """The trainable weights of a Keras tagger as a tree of arrays, and the embedding's frozen-row mask.
    Layer k: ``W`` [2, in, H], ``U`` [2, H, H], ``b`` [2, H] (forward, backward); heads: ``W`` [2H, 3], ``b`` [3]."""
    emb = model.get_layer("embedding")
    layers = []
    for k in range(1, config.depth + 1):
        bi = model.get_layer(f"birnn_{k}")
        cells = (bi.forward_layer.cell, bi.backward_layer.cell)
        layers.append({name: np.stack([np.asarray(getattr(c, attr)) for c in cells])
                       for name, attr in (("W", "kernel"), ("U", "recurrent_kernel"), ("b", "bias"))})
    heads = {t: {"W": np.asarray(model.get_layer(t).kernel), "b": np.asarray(model.get_layer(t).bias)}
             for t in config.types}
    return {"emb": np.asarray(emb.table), "layers": layers, "heads": heads}, np.asarray(emb.frozen)


def params_to_model(params: dict, model, config: TaggerConfig) -> None:
    """Write a parameter tree back into the Keras model it came from."""
    model.get_layer("embedding").table.assign(np.asarray(params["emb"]))
    for k, layer in enumerate(params["layers"], start=1):
        bi = model.get_layer(f"birnn_{k}")
        for d, cell in enumerate((bi.forward_layer.cell, bi.backward_layer.cell)):
            cell.kernel.assign(np.asarray(layer["W"][d]))
            cell.recurrent_kernel.assign(np.asarray(layer["U"][d]))
            cell.bias.assign(np.asarray(layer["b"][d]))
    for t, head in params["heads"].items():
        model.get_layer(t).kernel.assign(np.asarray(head["W"]))
        model.get_layer(t).bias.assign(np.asarray(head["b"]))


# --------------------------------------------------------------------------- the network in JAX
def _birnn(layer, x, mask):
    """One bidirectional ReLU Elman layer: x [B, T, D], mask [B, T] -> [B, T, 2H].  Sequences are
    right-padded; the backward direction runs on the time-reversed batch, where padding comes first and
    the state stays zero through it, as in Keras (a masked step keeps the initial state)."""
    import jax
    import jax.numpy as jnp

    proj = jnp.einsum("btd,kdh->kbth", x, layer["W"]) + layer["b"][:, None, None, :]
    xs = jnp.moveaxis(jnp.stack([proj[0], proj[1, :, ::-1]]), 2, 0)  # [T, 2, B, H]
    ms = jnp.moveaxis(jnp.stack([mask, mask[:, ::-1]]), 2, 0)[..., None]  # [T, 2, B, 1]

    def step(h, inputs):
        xt, mt = inputs
        h = jax.nn.relu(xt + jnp.einsum("kbh,khj->kbj", h, layer["U"])) * mt
        return h, h

    _, ys = jax.lax.scan(step, jnp.zeros(xs.shape[1:], xs.dtype), (xs, ms))
    return jnp.concatenate([jnp.moveaxis(ys[:, 0], 0, 1), jnp.moveaxis(ys[:, 1], 0, 1)[:, ::-1]], axis=-1)


def _dropout(x, rate, key):
    import jax
    import jax.numpy as jnp

    if not rate or key is None:
        return x
    keep = jax.random.bernoulli(key, 1.0 - rate, x.shape)
    return jnp.where(keep, x / (1.0 - rate), 0.0)


def forward(params, frozen, ids, config: TaggerConfig, key=None):
    """Logits per type ({type: [B, T, 3]}) and the hidden activations of each layer.  ``key``: dropout
    (training); None: inference."""
    import jax
    import jax.numpy as jnp

    mask = (ids != 0).astype(params["emb"].dtype)
    vectors = jnp.take(params["emb"], ids, axis=0)
    f = jnp.take(frozen, ids, axis=0)[..., None]
    x = f * jax.lax.stop_gradient(vectors) + (1.0 - f) * vectors
    keys = jax.random.split(key, config.depth + 1) if key is not None else [None] * (config.depth + 1)
    x = _dropout(x, config.input_dropout, keys[0])
    hidden = []
    for k, layer in enumerate(params["layers"]):
        x = _birnn(layer, x, mask)
        hidden.append(x)
        x = _dropout(x, config.dropout, keys[k + 1])
    logits = {t: x @ h["W"] + h["b"] for t, h in params["heads"].items()}
    return logits, hidden, mask


def loss_fn(params, frozen, ids, tags, config: TaggerConfig, key=None):
    """The training loss of a batch: per type, token cross-entropy (weight ``o_weight`` on gold-O tokens),
    summed (``loss_sum``) or averaged over the real tokens (as Keras's masked loss), summed over types;
    plus ``l2``/2 ||w||^2 over recurrent and output weights and ``activation_l2``/2 ||h||^2 over hidden
    activations."""
    import jax
    import jax.numpy as jnp

    logits, hidden, mask = forward(params, frozen, ids, config, key)
    total = 0.0
    n = jnp.maximum(mask.sum(), 1.0)
    for t, z in logits.items():
        nll = -jnp.take_along_axis(jax.nn.log_softmax(z), tags[t][..., None], axis=-1)[..., 0]
        w = jnp.where(tags[t] == 0, config.o_weight, 1.0) * mask
        s = (nll * w).sum()
        total = total + (s if config.loss_sum else s / n)
    if config.l2:
        weights = [params["layers"], params["heads"]]
        total = total + 0.5 * config.l2 * sum(jnp.sum(w * w) for w in jax.tree_util.tree_leaves(weights))
    if config.activation_l2:
        total = total + 0.5 * config.activation_l2 * sum(jnp.sum(h * h * mask[..., None]) for h in hidden)
    return total


def optimizer(config: TaggerConfig):
    """optax: Keras-style per-weight gradient-norm clipping (``clipnorm``), then Adam or SGD with momentum
    (velocity as in the authors' code), the learning rate decayed by ``lr_decay`` per update and scaled by
    ``output_lr_scale`` on the output layer."""
    import jax
    import jax.numpy as jnp
    import optax

    def schedule(scale):
        return lambda step: config.learning_rate * scale * config.lr_decay ** step

    def make(scale):
        if config.optimizer == "adam":
            return optax.adam(schedule(scale), b1=0.9, b2=0.999, eps=1e-7)
        # the authors' momentum: v = lr_k g_k + momentum v; w -= v (each gradient keeps its step's rate)
        return optax.chain(optax.scale_by_learning_rate(schedule(scale)), optax.trace(decay=config.momentum))

    def clip(grads, _params=None):
        c = config.clipnorm

        def one(g):
            norm = jnp.sqrt(jnp.sum(g * g))
            return g * jnp.minimum(1.0, c / jnp.maximum(norm, 1e-12))

        return jax.tree_util.tree_map(one, grads)

    labels = lambda params: {k: jax.tree_util.tree_map(lambda _: "out" if k == "heads" else "net", v)  # noqa: E731
                             for k, v in params.items()}
    opt = optax.multi_transform({"net": make(1.0), "out": make(config.output_lr_scale)}, labels)
    return optax.chain(optax.stateless(clip), opt) if config.clipnorm else opt


# --------------------------------------------------------------------------- batches
class Encoded:
    """Sentences as word ids and tag ids, cut into fixed-shape batches (rows padded to ``rows``,
    length padded to its bucket)."""

    def __init__(self, vocab: Vocabulary, sentences: Sequence[Sentence], types: Sequence[str]):
        self.ids = [np.asarray(vocab.ids(s.words), dtype="int32") for s in sentences]
        self.tags = {t: [encode_tags([s.tags[t]], len(s))[0] for s in sentences] for t in types} if (
            sentences and sentences[0].tags) else {}
        self.lengths = [len(s) for s in sentences]

    def batch(self, idx: Sequence[int], rows: int):
        length = bucket_length(max(self.lengths[i] for i in idx))
        ids = np.zeros((rows, length), dtype="int32")
        tags = {t: np.zeros((rows, length), dtype="int32") for t in self.tags}
        for r, i in enumerate(idx):
            n = self.lengths[i]
            ids[r, :n] = self.ids[i]
            for t in self.tags:
                tags[t][r, :n] = self.tags[t][i]
        return ids, tags


# --------------------------------------------------------------------------- the trainer
class FastTrainer:
    """Trains one tagger with the JAX loop; ``run`` returns the trained ``Tagger`` and its meta."""

    def __init__(self, config: TaggerConfig, out_dir: str | Path, progress: bool = True):
        self.config, self.out_dir, self.progress = config, Path(out_dir), progress
        self.jax = _jax()
        import jax

        cfg = config
        grad = jax.value_and_grad(lambda p, f, ids, tags, key: loss_fn(p, f, ids, tags, cfg, key))
        self.opt = optimizer(cfg)

        def train_step(params, opt_state, frozen, ids, tags, key):
            import optax

            loss, grads = grad(params, frozen, ids, tags, key)
            updates, opt_state = self.opt.update(grads, opt_state, params)
            return optax.apply_updates(params, updates), opt_state, loss

        def predict(params, frozen, ids):
            logits, _, _ = forward(params, frozen, ids, cfg)
            return {t: z.argmax(-1) for t, z in logits.items()}

        self._step = jax.jit(train_step, donate_argnums=(0, 1))
        self._predict = jax.jit(predict)

    def predict_ids(self, params, frozen, data: Encoded) -> list[dict[str, np.ndarray]]:
        """Per sentence, per type: predicted tag ids (0 O, 1 B, 2 I)."""
        order = sorted(range(len(data.lengths)), key=data.lengths.__getitem__)
        out: list = [None] * len(order)
        for s in range(0, len(order), EVAL_BATCH):
            idx = order[s:s + EVAL_BATCH]
            ids, _ = data.batch(idx, EVAL_BATCH)
            pred = {t: np.asarray(v) for t, v in self._predict(params, frozen, ids).items()}
            for r, i in enumerate(idx):
                out[i] = {t: v[r, :data.lengths[i]] for t, v in pred.items()}
        return out

    def evaluate(self, params, frozen, data: Encoded, sentences: Sequence[Sentence]) -> dict:
        from tagger.evaluation import score_predictions

        pred = self.predict_ids(params, frozen, data)
        return score_predictions(sentences, {t: [decode_tags(p[t], t) for p in pred] for t in self.config.types})

    def run(self, train: Sequence[Sentence], dev: Sequence[Sentence], extra_words: Iterable[str] = (),
            record: dict | None = None):
        from tqdm.auto import tqdm

        from tagger.model import build_model, set_embeddings
        from tagger.training import dev_score, set_seeds

        jax, cfg = self.jax, self.config
        if not train:
            raise TaggerError("no training sentences")
        set_seeds(cfg.seed)
        vocab = build_vocabulary(cfg, (w for s in train for w in s.words), extra_words)
        matrix, pretrained = initial_embeddings(cfg, vocab)
        model = build_model(cfg, len(vocab), matrix.shape[1])
        set_embeddings(model, matrix, np.zeros(len(vocab), "float32") if cfg.fine_tune else pretrained)
        params, frozen = params_from_model(model, cfg)
        params = jax.tree_util.tree_map(jax.numpy.asarray, params)
        frozen = jax.numpy.asarray(frozen)
        opt_state = self.opt.init(params)
        train_data, dev_data = Encoded(vocab, train, cfg.types), Encoded(vocab, dev, cfg.types)
        key = jax.random.PRNGKey(cfg.seed)
        history, best, best_epoch, bad, train_seconds = [], None, 0, 0, 0.0
        best_params = jax.tree_util.tree_map(np.asarray, params)
        tokens = sum(train_data.lengths)
        for epoch in range(1, cfg.max_epochs + 1):
            rng = np.random.default_rng([cfg.seed, epoch])
            t0 = time.perf_counter()
            losses = []
            order = batches(train_data.lengths, cfg.batch_size, rng)
            for b, idx in enumerate(tqdm(order, desc=f"epoch {epoch}", unit="batch", disable=not self.progress,
                                         leave=False)):
                ids, tags = train_data.batch(idx, cfg.batch_size)
                params, opt_state, loss = self._step(params, opt_state, frozen, ids, tags,
                                                     jax.random.fold_in(key, epoch * 100003 + b))
                losses.append(loss)
            losses = [float(v) for v in losses]  # waits for the last step
            seconds = time.perf_counter() - t0
            train_seconds += seconds
            mean_loss = float(np.mean(losses))
            if not np.isfinite(mean_loss):
                raise TaggerError(f"training diverged at epoch {epoch} (loss {mean_loss}); lower --lr")
            entry = {"epoch": epoch, "loss": mean_loss, "seconds": seconds, "tokens_per_s": tokens / seconds}
            if epoch % cfg.eval_every == 0 or epoch == cfg.max_epochs:
                report = self.evaluate(params, frozen, dev_data, dev) if dev else {}
                score = dev_score(report) if dev else -mean_loss
                entry.update(dev_score=score, dev=report)
                if best is None or score > best:
                    best, best_epoch, bad = score, epoch, 0
                    best_params = jax.tree_util.tree_map(np.asarray, params)
                else:
                    bad += 1
                msg = f"epoch {epoch}: loss {mean_loss:.4f}, dev prop F1 {score:.4f}, {seconds:.1f}s"
                if self.progress:
                    tqdm.write(msg)
                log.info(msg)
            history.append(entry)
            if cfg.patience and bad >= cfg.patience:
                break
        params_to_model(best_params, model, cfg)
        return self._finish(model, vocab, history, best_epoch, train_seconds, record or {})

    def _finish(self, model, vocab, history, best_epoch, train_seconds, record):
        from tagger.model import build_model, count_parameters
        from tagger.predict import Tagger

        cfg = self.config
        clean = build_model(cfg, len(vocab), model.get_layer("embedding").dim, pretrained=False)
        clean.set_weights(model.get_weights())
        best = next(h for h in history if h["epoch"] == best_epoch)
        meta = {
            "training": {**record, "epochs": len(history), "best_epoch": best_epoch, "train_seconds": train_seconds,
                         "device": fast_device(), "parameters": count_parameters(clean),
                         "history": [{k: v for k, v in h.items() if k != "dev"} for h in history]},
            "scores": {"dev": best["dev"]},
        }
        tagger = Tagger.from_model(clean, vocab, cfg, meta)
        tagger.save(self.out_dir)
        return tagger, meta


def fast_device() -> str:
    jax = _jax()
    d = jax.devices()[0]
    where = f"GPU ({d.device_kind})" if d.platform == "gpu" else "CPU"
    return f"{where}, fast JAX trainer"


def train_fast(config: TaggerConfig, train: Sequence[Sentence], dev: Sequence[Sentence], out_dir: str | Path,
               extra_words: Iterable[str] = (), progress: bool = True, record: dict | None = None):
    """Train with the JAX loop and write the bundle to ``out_dir``; returns (Tagger, meta)."""
    return FastTrainer(config, out_dir, progress).run(train, dev, extra_words, record)
