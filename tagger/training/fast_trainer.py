"""The fast trainer's network in JAX (``trainer: fast``): the Keras network's weights as a parameter tree,
the forward pass, the loss and the optimizer; the training loop is ``tagger.training.fast_loop``.

The Keras network (``tagger.network.model.build_model``) stays the one definition of the
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
epochs keeping the best dev proportional F1.  After each dev evaluation every
model writes a checkpoint (``tagger.training.fast_checkpoint``); a run killed
part-way resumes from it and, seeded throughout, ends with the weights the
uninterrupted run would have.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from tagger.config import TaggerConfig
from tagger.errors import TaggerError


def load_jax():
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
def params_from_model(model, config: TaggerConfig) -> tuple[dict, dict]:
    """The trainable weights of a Keras tagger as a tree of arrays, and the constants the network reads.
    ``emb``: the embedding rows that train (those not frozen); layer k: ``W`` [2, in, H], ``U`` [2, H, H],
    ``b`` [2, H] (forward, backward); heads: ``W`` [2H, 3], ``b`` [3].  Constants: ``table`` (the frozen
    rows, others zero), ``row`` (a word's row in ``emb``), ``train`` (1 where a word's row trains)."""
    emb = model.get_layer("embedding")
    table, frozen = np.asarray(emb.table), np.asarray(emb.frozen)
    rows = np.flatnonzero(frozen == 0)
    row = np.zeros(len(table), dtype="int32")
    row[rows] = np.arange(len(rows))
    layers = []
    for k in range(1, config.depth + 1):
        bi = model.get_layer(f"birnn_{k}")
        cells = (bi.forward_layer.cell, bi.backward_layer.cell)
        layers.append(
            {
                name: np.stack([np.asarray(getattr(c, attr)) for c in cells])
                for name, attr in (("W", "kernel"), ("U", "recurrent_kernel"), ("b", "bias"))
            }
        )
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
def _birnn(layer, x, mask, cell: str = "elman"):
    """One bidirectional recurrent layer: x [B, T, D], mask [B, T] -> [B, T, 2H], as Keras computes it:
    ReLU Elman (``SimpleRNN``), ``LSTM`` (gates i, f, c, o) or ``GRU`` (z, r, h; ``reset_after``: the input
    bias ``b[:, 0]`` and the recurrent bias ``b[:, 1]``).  Both directions run in one scan.  Sequences are
    right-padded; the backward direction runs on the time-reversed batch, where padding comes first; a
    padded step keeps the state (zero before the sentence starts) and outputs zeros."""
    import jax
    import jax.numpy as jnp

    b_in = layer["b"][:, 0] if cell == "gru" else layer["b"]
    proj = jnp.einsum("btd,kdh->kbth", x, layer["W"]) + b_in[:, None, None, :]
    xs = jnp.moveaxis(jnp.stack([proj[0], proj[1, :, ::-1]]), 2, 0)  # [T, 2, B, G*H]
    ms = jnp.moveaxis(jnp.stack([mask, mask[:, ::-1]]), 2, 0)[..., None]  # [T, 2, B, 1]
    U = layer["U"]
    n_hidden = U.shape[1]

    def recur(h):
        return jnp.einsum("kbh,khj->kbj", h, U)

    if cell == "elman":

        def step(h, inputs):
            xt, mt = inputs
            h = jax.nn.relu(xt + recur(h)) * mt
            return h, h

        state = jnp.zeros(xs.shape[1:-1] + (n_hidden,), xs.dtype)
    elif cell == "lstm":

        def step(carry, inputs):
            h, c = carry
            xt, mt = inputs
            i, f, g, o = jnp.split(xt + recur(h), 4, axis=-1)
            c_new = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
            h_new = jax.nn.sigmoid(o) * jnp.tanh(c_new)
            return (mt * h_new + (1 - mt) * h, mt * c_new + (1 - mt) * c), h_new * mt

        zeros = jnp.zeros(xs.shape[1:-1] + (n_hidden,), xs.dtype)
        state = (zeros, zeros)
    else:  # gru, reset_after
        b_rec = layer["b"][:, 1][:, None, :]

        def step(h, inputs):
            xt, mt = inputs
            xz, xr, xh = jnp.split(xt, 3, axis=-1)
            rz, rr, rh = jnp.split(recur(h) + b_rec, 3, axis=-1)
            z = jax.nn.sigmoid(xz + rz)
            hh = jnp.tanh(xh + jax.nn.sigmoid(xr + rr) * rh)
            h_new = z * h + (1 - z) * hh
            return mt * h_new + (1 - mt) * h, h_new * mt

        state = jnp.zeros(xs.shape[1:-1] + (n_hidden,), xs.dtype)
    _, ys = jax.lax.scan(step, state, (xs, ms))
    return jnp.concatenate([jnp.moveaxis(ys[:, 0], 0, 1), jnp.moveaxis(ys[:, 1], 0, 1)[:, ::-1]], axis=-1)


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
    keys = jax.random.split(key, config.depth + 1) if key is not None else [None] * (config.depth + 1)
    x = _dropout(x, config.input_dropout, keys[0])
    hidden = []
    for k, layer in enumerate(params["layers"]):
        x = _birnn(layer, x, mask, config.cell)
        hidden.append(x)
        x = _dropout(x, config.dropout, keys[k + 1])
    logits = {t: x @ h["W"] + h["b"] for t, h in params["heads"].items()}
    return logits, hidden, mask


def loss_fn(params, consts, ids, tags, config: TaggerConfig, key=None):
    """The training loss of a batch: per type, token cross-entropy (weight ``o_weight`` on gold-O tokens),
    summed (``loss_sum``) or averaged over the real tokens (as Keras's masked loss), summed over types;
    plus ``l2``/2 ||w||^2 over recurrent and output weights and ``activation_l2``/2 ||h||^2 over hidden
    activations."""
    import jax
    import jax.numpy as jnp

    logits, hidden, mask = forward(params, consts, ids, config, key)
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
        return lambda step: config.learning_rate * scale * config.lr_decay**step

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

    labels = lambda params: {  # noqa: E731
        k: jax.tree_util.tree_map(lambda _: "out" if k == "heads" else "net", v)  # noqa: B023 (called at once)
        for k, v in params.items()
    }
    opt = optax.multi_transform({"net": make(1.0), "out": make(config.output_lr_scale)}, labels)
    return optax.chain(optax.stateless(clip), opt) if config.clipnorm else opt


def fast_device() -> str:
    jax = load_jax()
    d = jax.devices()[0]
    where = f"GPU ({d.device_kind})" if d.platform == "gpu" else "CPU"
    return f"{where}, fast JAX trainer"
