"""The fast trainer's network in JAX (``trainer: fast``): the Keras network's weights as a parameter tree,
the forward pass, the loss and the optimizer; the training loop is ``opinion_tagger.training.fast_trainer``.

The Keras network (``opinion_tagger.model.network.build_model``) stays the one definition of the
model: training starts from a freshly built Keras model, reads its weights into
a JAX parameter tree, trains them here and writes them back into the Keras
model, which is saved as an ordinary bundle (so tagging in ONNX Runtime and
the Keras path both read what was trained).  ``tests/training/test_fast_training.py``
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
epochs keeping the best dev proportional F1.  After each dev evaluation every
model writes a checkpoint (``opinion_tagger.training.fast_checkpoint``); a run killed
part-way resumes from it and, seeded throughout, ends with the weights the
uninterrupted run would have.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from opinion_tagger.cells import CELLS, activation_fn
from opinion_tagger.config import TaggerConfig
from opinion_tagger.errors import TaggerError


def jax_ops():
    """The array namespace of the fast trainer."""
    from types import SimpleNamespace

    import jax
    import jax.numpy as jnp

    return SimpleNamespace(matmul=jnp.matmul, tanh=jnp.tanh, sigmoid=jax.nn.sigmoid, relu=jax.nn.relu)


def load_jax():
    try:
        import jax
        import optax  # noqa: F401
    except ImportError:
        raise TaggerError(
            "trainer fast needs the fast extra (JAX and optax): pip install 'opinion-tagger[fast]'"
        ) from None
    cache = os.environ.get("OPINION_TAGGER_JAX_CACHE", str(Path.home() / ".cache" / "opinion-tagger" / "jax"))
    if cache and not jax.config.jax_compilation_cache_dir:  # runs with the same shapes compile once
        jax.config.update("jax_compilation_cache_dir", cache)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 1.0)
    return jax


# --------------------------------------------------------------------------- parameters <-> Keras model
def _cells(bi) -> tuple:
    """The forward and backward Keras cells of a ``Bidirectional`` layer."""
    return bi.forward_layer.cell, bi.backward_layer.cell


def params_from_model(model, config: TaggerConfig) -> tuple[dict, dict]:
    """The trainable weights of a Keras tagger as a tree of arrays, and the constants the network reads.
    ``emb``: the embedding rows that train (those not frozen); layer k: the cell's parameters
    (``opinion_tagger.cells``; Elman: ``W`` [2, in, H], ``U`` [2, H, H], ``b`` [2, H]), each stacked over the
    directions (forward, backward); heads: ``W`` [2H, 3], ``b`` [3].  Constants: ``table`` (the frozen
    rows, others zero), ``row`` (a word's row in ``emb``), ``train`` (1 where a word's row trains)."""
    emb = model.get_layer("embedding")
    table, frozen = np.asarray(emb.table), np.asarray(emb.frozen)
    rows = np.flatnonzero(frozen == 0)
    row = np.zeros(len(table), dtype="int32")
    row[rows] = np.arange(len(rows))
    spec = CELLS[config.model.recurrent.cell]
    layers = []
    for k in range(1, config.model.recurrent.depth + 1):
        cells = _cells(model.get_layer(f"birnn_{k}"))
        layers.append({p.name: np.stack([np.asarray(getattr(c, p.keras)) for c in cells]) for p in spec.params})
    heads = {
        t: {"W": np.asarray(model.get_layer(t).kernel), "b": np.asarray(model.get_layer(t).bias)} for t in config.types
    }
    consts = {"table": table * frozen[:, None], "row": row, "train": (frozen == 0).astype(table.dtype)}
    return {"emb": table[rows], "layers": layers, "heads": heads}, consts


def params_to_model(params: dict, model, config: TaggerConfig) -> None:
    """Write a parameter tree back into the Keras model it came from (``params_from_model``'s layout;
    ``emb`` may carry padding rows at the end)."""
    emb = model.get_layer("embedding")
    table, frozen = np.array(emb.table), np.asarray(emb.frozen)
    rows = np.flatnonzero(frozen == 0)
    table[rows] = np.asarray(params["emb"])[: len(rows)]
    emb.table.assign(table)
    spec = CELLS[config.model.recurrent.cell]
    for k, layer in enumerate(params["layers"], start=1):
        for d, cell in enumerate(_cells(model.get_layer(f"birnn_{k}"))):
            for p in spec.params:
                getattr(cell, p.keras).assign(np.asarray(layer[p.name][d]))
    for t, head in params["heads"].items():
        model.get_layer(t).kernel.assign(np.asarray(head["W"]))
        model.get_layer(t).bias.assign(np.asarray(head["b"]))


# --------------------------------------------------------------------------- the network in JAX
def _birnn(layer, x, mask, config: TaggerConfig, parallel: bool | None = None):
    """One bidirectional recurrent layer: x [B, T, D], mask [B, T] -> [B, T, 2H] (forward, backward), as Keras
    computes it (``opinion_tagger.cells``: the same projection and step; ``layer``: the cell's parameters
    stacked over the two directions).  The input terms of all steps are one matrix product before the
    recurrence, and both directions run in one scan.  Sequences are right-padded; the backward direction
    reads the time-reversed batch, where padding comes first; a padded step keeps the state (zero before the
    sentence starts) and outputs zeros.  A linear cell (irlm) runs as ``jax.lax.associative_scan``
    (logarithmic depth) when ``parallel``, else step by step; by default in parallel on an accelerator, step
    by step on a CPU, where that is faster."""
    import jax
    import jax.numpy as jnp

    if parallel is None:
        parallel = jax.default_backend() != "cpu"

    xp = jax_ops()
    spec = CELLS[config.model.recurrent.cell]
    act = activation_fn(config.cell_activation or "linear", xp)  # lstm and gru have theirs
    terms = jax.vmap(lambda p: spec.project(p, x, xp))(layer)  # [2, B, T, .]: forward, backward
    terms = jax.tree_util.tree_map(lambda t: jnp.stack([t[0], t[1][:, ::-1]]), terms)  # the backward one reversed
    ms = jnp.stack([mask, mask[:, ::-1]])[..., None]
    if spec.linear is not None and parallel:
        a, u = jax.vmap(lambda p, t: spec.linear(p, t, xp))(layer, terms)
        a = jnp.where(ms > 0, a[:, None, None, :], 1.0)  # padding: h_t = h_{t-1}

        def combine(earlier, later):  # (a1, u1) then (a2, u2): h -> a2 (a1 h + u1) + u2
            return later[0] * earlier[0], later[0] * earlier[1] + later[1]

        _, h = jax.lax.associative_scan(combine, (a, u * ms), axis=2)
        ys = act(h) * ms
    else:
        step = jax.vmap(lambda p, t, s: spec.step(p, t, s, xp, act))  # both directions at once
        state = tuple(jnp.zeros((2, x.shape[0], config.hidden_size), x.dtype) for _ in range(spec.states))

        def scan_step(state, inputs):
            term, mt = inputs
            out, new = step(layer, term, state)
            return tuple(mt * n + (1 - mt) * o for n, o in zip(new, state)), out * mt

        time_major = jax.tree_util.tree_map(lambda t: jnp.moveaxis(t, 2, 0), (terms, ms))  # [T, 2, B, .]
        _, ys = jax.lax.scan(scan_step, state, time_major)
        ys = jnp.moveaxis(ys, 0, 2)
    return jnp.concatenate([ys[0], ys[1][:, ::-1]], axis=-1)


def _dropout(x, rate, key):
    import jax
    import jax.numpy as jnp

    if not rate or key is None:
        return x
    keep = jax.random.bernoulli(key, 1.0 - rate, x.shape)
    return jnp.where(keep, x / (1.0 - rate), 0.0)


def forward(params, consts, ids, config: TaggerConfig, key=None):
    """Logits per type ({type: [B, T, 3]}) and the hidden activations of each layer.  ``key``: dropout
    (training); None: inference."""
    import jax
    import jax.numpy as jnp

    mask = (ids != 0).astype(consts["table"].dtype)
    trains = jnp.take(consts["train"], ids, axis=0)[..., None]
    x = trains * jnp.take(params["emb"], jnp.take(consts["row"], ids, axis=0), axis=0) + (1.0 - trains) * jnp.take(
        consts["table"], ids, axis=0
    )
    keys = (
        jax.random.split(key, config.model.recurrent.depth + 1)
        if key is not None
        else [None] * (config.model.recurrent.depth + 1)
    )
    x = _dropout(x, config.model.recurrent.input_dropout, keys[0])
    hidden = []
    for k, layer in enumerate(params["layers"]):
        x = _birnn(layer, x, mask, config)
        hidden.append(x)
        x = _dropout(x, config.model.recurrent.dropout, keys[k + 1])
    logits = {t: x @ h["W"] + h["b"] for t, h in params["heads"].items()}
    return logits, hidden, mask


def loss_fn(params, consts, ids, tags, config: TaggerConfig, key=None):
    """The training loss of a batch: per type, token cross-entropy (weight ``o_weight`` on gold-O tokens; with
    ``training.distillation.weight``, that share of it against the teacher's probabilities ``tags["TYPE/soft"]``),
    summed (``loss_sum``) or averaged over the real tokens (as Keras's masked loss), summed over types;
    plus ``l2``/2 ||w||^2 over recurrent and output weights and ``activation_l2``/2 ||h||^2 over hidden
    activations."""
    import jax
    import jax.numpy as jnp

    logits, hidden, mask = forward(params, consts, ids, config, key)
    total = 0.0
    n = jnp.maximum(mask.sum(), 1.0)
    for t, z in logits.items():
        logp = jax.nn.log_softmax(z)
        nll = -jnp.take_along_axis(logp, tags[t][..., None], axis=-1)[..., 0]
        if config.training.distillation.weight:  # cross-entropy with the teacher's probabilities, its share of the loss
            soft = -(tags[f"{t}/soft"] * logp).sum(-1)
            nll = (1.0 - config.training.distillation.weight) * nll + config.training.distillation.weight * soft
        w = jnp.where(tags[t] == 0, config.training.o_weight, 1.0) * mask
        s = (nll * w).sum()
        total = total + (s if config.training.fast.loss_sum else s / n)
    if config.training.fast.l2:
        weights = [params["layers"], params["heads"]]
        total = total + 0.5 * config.training.fast.l2 * sum(jnp.sum(w * w) for w in jax.tree_util.tree_leaves(weights))
    if config.training.fast.activation_l2:
        total = total + 0.5 * config.training.fast.activation_l2 * sum(jnp.sum(h * h * mask[..., None]) for h in hidden)
    return total


def optimizer(config: TaggerConfig):
    """optax: Keras-style per-weight gradient-norm clipping (``clipnorm``), then Adam or SGD with momentum
    (velocity as in the authors' code), the learning rate decayed by ``lr_decay`` per update and scaled by
    ``output_lr_scale`` on the output layer."""
    import jax
    import jax.numpy as jnp
    import optax

    def schedule(scale):
        return lambda step: config.training.optimizer.learning_rate * scale * config.training.fast.lr_decay**step

    def make(scale):
        if config.training.optimizer.name == "adam":
            return optax.adam(schedule(scale), b1=0.9, b2=0.999, eps=1e-7)
        # the authors' momentum: v = lr_k g_k + momentum v; w -= v (each gradient keeps its step's rate)
        return optax.chain(
            optax.scale_by_learning_rate(schedule(scale)), optax.trace(decay=config.training.optimizer.momentum)
        )

    def clip(grads, _params=None):
        c = config.training.optimizer.clipnorm

        def one(g):
            norm = jnp.sqrt(jnp.sum(g * g))
            return g * jnp.minimum(1.0, c / jnp.maximum(norm, 1e-12))

        return jax.tree_util.tree_map(one, grads)

    labels = lambda params: {  # noqa: E731
        k: jax.tree_util.tree_map(lambda _: "out" if k == "heads" else "net", v)  # noqa: B023 (called at once)
        for k, v in params.items()
    }
    opt = optax.multi_transform({"net": make(1.0), "out": make(config.training.fast.output_lr_scale)}, labels)
    return optax.chain(optax.stateless(clip), opt) if config.training.optimizer.clipnorm else opt


def fast_device() -> str:
    jax = load_jax()
    d = jax.devices()[0]
    where = f"GPU ({d.device_kind})" if d.platform == "gpu" else "CPU"
    return f"{where}, fast JAX trainer"
