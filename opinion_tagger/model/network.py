"""The network: deep bidirectional recurrent taggers (Keras 3 functional API).

Irsoy & Cardie (2014): every layer is bidirectional and, from the second layer
up, each direction reads both directions of the layer below (here: the
concatenated output of a ``Bidirectional`` layer); a softmax over B/I/O per
token on top.  Cells (``opinion_tagger.cells``): ReLU Elman (the paper), LSTM, GRU
(Keras's layers, cuDNN-compatible settings), the multiplicative RNN and IRLM units
(``RecurrentCell`` in Keras's ``RNN`` layer).  Outputs: one head per opinion type, a per-token softmax or a
linear-chain CRF.  Contextual features (MiniLM-L6) come either as frozen,
precomputed vectors (input ``context``) or from the encoder inside the network,
trained with it (``model.encoder.fine_tune``; inputs: wordpieces and each word's
first wordpiece); MPNet-base (``model.encoder.name: mpnet``, ``opinion_tagger.model.mpnet``) only the latter way.
"""

from __future__ import annotations

import importlib
from contextlib import contextmanager

import keras
import numpy as np
from keras import layers, ops

from opinion_tagger.cells import CELLS, Sizes, activation_fn
from opinion_tagger.config import TaggerConfig
from opinion_tagger.encoders import Encoder
from opinion_tagger.model.crf import CRF
from opinion_tagger.model.frame_heads import STATES, add_frame_heads  # (and registers the heads' layers for loading)
from opinion_tagger.model.mpnet import MPNetEncoder  # noqa: F401  (registers the encoder's layers for loading)

N_TAGS = 3  # O, B, I


@keras.saving.register_keras_serializable(package="opinion_tagger")
class WordEmbedding(layers.Layer):
    """Embedding whose pretrained rows can stay frozen while others train.

    ``frozen`` (non-trainable, 1 = frozen) selects rows whose gradient is
    stopped: GloVe vectors when not fine-tuning; the unknown-word vector and
    words without a pretrained vector always train.  Id 0 is padding and
    produces the mask.
    """

    def __init__(self, vocab_size: int, dim: int, **kwargs):
        super().__init__(**kwargs)
        self.vocab_size, self.dim = vocab_size, dim
        self.supports_masking = True

    def build(self, input_shape):
        self.table = self.add_weight(shape=(self.vocab_size, self.dim), initializer="zeros", name="table")
        self.frozen = self.add_weight(shape=(self.vocab_size,), initializer="zeros", trainable=False, name="frozen")

    def call(self, ids):
        vectors = ops.take(self.table, ids, axis=0)
        frozen = ops.expand_dims(ops.take(self.frozen, ids, axis=0), -1)
        return frozen * ops.stop_gradient(vectors) + (1.0 - frozen) * vectors

    def compute_mask(self, ids, mask=None):
        return ops.not_equal(ids, 0)

    def compute_output_shape(self, input_shape):
        return (*input_shape, self.dim)

    def get_config(self):
        return {**super().get_config(), "vocab_size": self.vocab_size, "dim": self.dim}


@keras.saving.register_keras_serializable(package="opinion_tagger")
class WordGather(layers.Layer):
    """Per-word vectors from per-wordpiece ones: ``sequence`` [B, P, D] at
    ``starts`` [B, T] (each word's first wordpiece) -> [B, T, D]."""

    def call(self, sequence, starts):
        return ops.take_along_axis(sequence, ops.expand_dims(starts, -1), axis=1)

    def compute_output_shape(self, sequence_shape, starts_shape):
        return (*starts_shape, sequence_shape[-1])


@keras.saving.register_keras_serializable(package="opinion_tagger")
class WordMask(layers.Layer):
    """True for real words, False for padding (id 0): the mask the recurrent layers are given.

    A ``Concatenate`` of the word vectors (masked) with contextual vectors (unmasked) keeps a position
    if any input keeps it, so without this the recurrent layers would read the padding words too, and a
    sentence's tags would depend on the longest sentence of its batch."""

    def call(self, ids):
        return ops.not_equal(ids, 0)

    def compute_output_shape(self, input_shape):
        return input_shape


def _seed(config: TaggerConfig, name: str) -> int:
    """The base of a layer's initialiser seeds, from the configuration's seed and the layer's name."""
    import zlib

    return config.training.seed * 1000 + zlib.crc32(name.encode()) % 1000


def _initializers(config: TaggerConfig, name: str, *kinds: str) -> dict:
    """``init: uniform``: U(-init_scale, init_scale) for every weight of a layer (the authors' code);
    each weight gets its own seed, derived from the configuration's seed and the layer's name."""
    if config.training.init == "keras":
        return {}
    base = _seed(config, name)
    return {
        f"{k}_initializer": keras.initializers.RandomUniform(
            -config.training.init_scale, config.training.init_scale, seed=base * 7 + i
        )
        for i, k in enumerate(kinds)
    }


KERAS_INIT = {"kernel": "glorot_uniform", "recurrent": "orthogonal", "bias": "zeros", "decay": "zeros"}


@keras.saving.register_keras_serializable(package="opinion_tagger")
class RecurrentCell(layers.Layer):
    """A cell of ``opinion_tagger.cells`` that Keras has no layer for (mrnn, irlm), for ``layers.RNN``: its
    weights are the registry's parameters (named as there), its step the registry's step in ``keras.ops``.
    ``initializers``: per parameter name (default: Glorot uniform kernels, orthogonal recurrent weights,
    zero biases and decays)."""

    def __init__(
        self,
        kind: str,
        units: int,
        factors: int | None = None,
        activation: str | None = None,
        initializers: dict | None = None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.kind, self.units, self.factors = kind, units, factors
        self.spec = CELLS[kind]
        self.activation = activation or self.spec.activation
        self.initializers = {
            p.name: keras.initializers.get((initializers or {}).get(p.name, KERAS_INIT[p.init]))
            for p in self.spec.params
        }
        self.state_size = [units] * self.spec.states
        self.output_size = units

    def build(self, input_shape):
        sizes = Sizes(input_shape[-1], self.units, self.factors or self.units)
        for p in self.spec.params:
            setattr(
                self, p.keras, self.add_weight(shape=p.shape(sizes), initializer=self.initializers[p.name], name=p.name)
            )

    def call(self, inputs, states, training=False):
        p = {q.name: getattr(self, q.keras) for q in self.spec.params}
        state = tuple(states) if isinstance(states, (list, tuple)) else (states,)
        out, new = self.spec.step(p, self.spec.project(p, inputs, ops), state, ops, activation_fn(self.activation, ops))
        return out, list(new) if isinstance(states, (list, tuple)) else new[0]

    def get_config(self):
        return {
            **super().get_config(),
            "kind": self.kind,
            "units": self.units,
            "factors": self.factors,
            "activation": self.activation,
            "initializers": {k: keras.initializers.serialize(v) for k, v in self.initializers.items()},
        }


def _cell_initializers(config: TaggerConfig, name: str) -> dict:
    """Per parameter of a ``RecurrentCell``: U(-init_scale, init_scale) under ``init: uniform`` (seeded as
    ``_initializers`` seeds), the decay at ``decay_init`` where given (raw value atanh d), else Keras's."""
    spec = CELLS[config.model.recurrent.cell]
    out = {}
    if config.training.init == "uniform":
        base = _seed(config, name)
        out = {
            p.name: keras.initializers.RandomUniform(
                -config.training.init_scale, config.training.init_scale, seed=base * 7 + i
            )
            for i, p in enumerate(spec.params)
        }
    if config.model.recurrent.decay_init is not None:
        out["decay_raw"] = keras.initializers.Constant(float(np.arctanh(config.model.recurrent.decay_init)))
    return out


def _recurrent(config: TaggerConfig, name: str) -> layers.Layer:
    h = config.hidden_size
    spec = CELLS[config.model.recurrent.cell]
    if spec.keras_layer is None:
        cell = RecurrentCell(
            config.model.recurrent.cell,
            h,
            factors=config.model.recurrent.factors,
            activation=config.cell_activation,
            initializers=_cell_initializers(config, name),
            name=f"{name}_cell",
        )
        return layers.RNN(cell, return_sequences=True, name=name)
    init = _initializers(config, name, "kernel", "recurrent", "bias")
    if config.model.recurrent.cell == "elman":
        return layers.SimpleRNN(h, activation=config.cell_activation, return_sequences=True, name=name, **init)
    if config.model.recurrent.cell == "lstm":  # defaults keep the cuDNN kernel usable on a GPU
        return layers.LSTM(h, return_sequences=True, name=name, **init)
    return layers.GRU(h, return_sequences=True, name=name, **init)


def keras_encoder(enc: Encoder, pretrained: bool = True):
    """The Keras layer of a registry encoder (its ``keras_builder``), named as the registry names it; its
    base weights loaded (``pretrained``) or not (to be filled from a trained network)."""
    module, function = enc.keras_builder.split(":")
    return getattr(importlib.import_module(module), function)(weights=pretrained, name=enc.name)


def build_model(
    config: TaggerConfig, vocab_size: int, dim: int, pretrained: bool = True, auxiliary: bool = False
) -> keras.Model:
    """The uncompiled network: input ``words`` (int ids, 0 = padding), one output per type (``auxiliary``:
    and per auxiliary type of the configuration, the network training fits; bundles keep the types' heads).
    With frame heads (``frames``: ``opinion_tagger.model.frame_heads``) the network training fits also takes
    each type's gold spans and outputs their frames; the bundle's outputs the recurrent states (``states``).
    With frozen contextual features the input is a dict ``{"words", "context"}`` (context:
    [B, T, 384]); with a fine-tuned encoder ``{"words", "token_ids", "segment_ids",
    "padding_mask", "word_starts"}`` (``opinion_tagger.runtime.wordpieces.word_pieces``; MPNet: no
    ``segment_ids``), and the encoder starts from the pinned MiniLM or MPNet weights
    (``pretrained=False``: uninitialised, for copying trained weights into).

    Softmax heads output per-token probabilities over O/B/I; CRF heads output
    per-token emission scores (the CRF layer holds the transitions).
    """
    ids = keras.Input(shape=(None,), dtype="int32", name="words")
    x = WordEmbedding(vocab_size, dim, name="embedding")(ids)
    inputs = ids
    if config.model.encoder.fine_tune:
        enc = config.encoder
        names = ("token_ids", "segment_ids", "padding_mask") if enc.segments else ("token_ids", "padding_mask")
        pieces = {k: keras.Input(shape=(None,), dtype="int32", name=k) for k in (*names, "word_starts")}
        backbone = keras_encoder(enc, pretrained)
        if config.model.encoder.lora_rank:  # freezes the encoder, adds trainable adapters to query and value
            backbone.enable_lora(config.model.encoder.lora_rank)
        sequence = backbone({k: pieces[k] for k in names})
        sequence = sequence["sequence_output"] if isinstance(sequence, dict) else sequence
        x = layers.Concatenate(name="features")([x, WordGather(name="word_pieces")(sequence, pieces["word_starts"])])
        inputs = {"words": ids, **pieces}
    elif config.model.encoder.name:
        ctx = keras.Input(shape=(None, config.encoder.width), dtype="float32", name="context")
        x = layers.Concatenate(name="features")([x, ctx])
        inputs = {"words": ids, "context": ctx}
    x = layers.Dropout(config.model.recurrent.input_dropout, name="input_dropout")(x)
    mask = WordMask(name="word_mask")(ids) if config.model.encoder.name else None  # see WordMask
    for k in range(1, config.model.recurrent.depth + 1):
        birnn = layers.Bidirectional(_recurrent(config, f"rnn_{k}"), merge_mode="concat", name=f"birnn_{k}")
        x = birnn(x, mask=mask) if mask is not None else birnn(x)
        x = layers.Dropout(config.model.recurrent.dropout, name=f"dropout_{k}")(x)
    outputs = {}
    # under a mixed policy (build_training_model) the heads still compute in float32: a CRF's log-partition
    # and a softmax want float32's precision
    head = {"dtype": "float32"} if keras.config.dtype_policy().name != "float32" else {}
    for t in config.trained_types if auxiliary else config.types:
        if config.model.head.output == "crf":
            outputs[t] = CRF(N_TAGS, name=t, **head)(layers.Dense(N_TAGS, name=f"{t}_emissions", **head)(x))
        else:
            outputs[t] = layers.Dense(
                N_TAGS, activation="softmax", name=t, **head, **_initializers(config, t, "kernel", "bias")
            )(x)
    if config.model.frames.enabled:  # the frame heads train on the states; the bundle's network outputs them
        if auxiliary:
            spans, frames = add_frame_heads(config, x, ids, head)
            inputs = {**(inputs if isinstance(inputs, dict) else {"words": ids}), **spans}
            outputs.update(frames)
        else:
            outputs[STATES] = x
    return keras.Model(
        inputs, outputs, name=f"{config.task}_{config.model.recurrent.cell}{config.model.recurrent.depth}"
    )


@contextmanager
def _dtype_policy(name: str):
    before = keras.config.dtype_policy()
    keras.config.set_dtype_policy(name)
    try:
        yield
    finally:
        keras.config.set_dtype_policy(before)


def build_training_model(config: TaggerConfig, vocab_size: int, dim: int, pretrained: bool = True) -> keras.Model:
    """The network a run trains: ``build_model`` with the auxiliary heads, under the dtype policy
    ``config.training.precision`` (``mixed_bfloat16``: bfloat16 products, float32 weights, float32 heads).  Networks
    built by ``build_model`` itself (the bundle written at the end, the exported one) compute in float32."""
    with _dtype_policy(config.training.precision):
        return build_model(config, vocab_size, dim, pretrained=pretrained, auxiliary=True)


def set_embeddings(model: keras.Model, matrix: np.ndarray, frozen: np.ndarray) -> None:
    model.get_layer("embedding").set_weights([matrix, frozen])


def learning_rate(config: TaggerConfig, steps_per_epoch: int):
    """A constant rate, or (``training.schedule.name: cosine``) a linear warm-up over the first
    tenth of ``max_epochs`` then cosine decay to zero at ``max_epochs``."""
    if config.training.schedule.name == "constant":
        return config.training.optimizer.learning_rate
    total = max(1, config.training.stopping.max_epochs * steps_per_epoch)
    warm = max(1, total // 10)
    return keras.optimizers.schedules.CosineDecay(
        0.0, max(1, total - warm), warmup_target=config.training.optimizer.learning_rate, warmup_steps=warm
    )


def compile_model(model: keras.Model, config: TaggerConfig, steps_per_epoch: int = 1) -> None:
    """``steps_per_epoch``: batches per epoch, for a learning-rate schedule.  A network with auxiliary heads
    (``build_model(auxiliary=True)``) weighs each of their losses by ``model.auxiliary.weight``."""
    if config.model.encoder.fine_tune:  # keras-hub's [CLS] pooler is unused, and rebuilt trainable on loading
        backbone = model.get_layer(config.model.encoder.name)
        if any(layer.name == "pooled_dense" for layer in getattr(backbone, "layers", ())):
            backbone.get_layer("pooled_dense").trainable = False
    lr = learning_rate(config, steps_per_epoch)
    if config.training.optimizer.name == "adam":
        opt = keras.optimizers.Adam(lr, clipnorm=config.training.optimizer.clipnorm or None)
    else:
        opt = keras.optimizers.SGD(
            lr, momentum=config.training.optimizer.momentum, clipnorm=config.training.optimizer.clipnorm or None
        )
    w = config.training.distillation.weight  # the tagged types learn from a teacher too
    if config.model.head.output == "crf":
        losses = {
            t: model.get_layer(t).distill_loss(w) if w and t in config.types else model.get_layer(t).loss
            for t in config.trained_types
        }
    else:
        losses = {
            t: softmax_distill_loss(w) if w and t in config.types else keras.losses.SparseCategoricalCrossentropy()
            for t in config.trained_types
        }
    weights = {t: config.model.auxiliary.weight if t in config.auxiliary_types else 1.0 for t in losses}
    if isinstance(model.input, dict) and any(k.endswith("_spans") for k in model.input):  # frame heads
        from opinion_tagger.model.frame_heads import frame_losses

        losses.update(frame_losses(config))
        weights.update({name: config.model.frames.weight for name in frame_losses(config)})
    # jit_compile is TensorFlow's XLA switch; on the JAX backend "off" would mean op-by-op eager
    # execution, where each step traces and compiles the recurrent layers' and the CRF's scans again
    # (seconds a batch), so JAX always compiles.  TensorFlow's XLA cannot differentiate the CRF's scan
    # loop: there CRF models train without it.
    jax = keras.backend.backend() == "jax"
    model.compile(
        optimizer=opt,
        loss=losses,
        loss_weights=weights if config.auxiliary_types or config.model.frames.enabled else None,
        jit_compile=jax or (config.training.jit_compile and config.model.head.output != "crf"),
    )


def softmax_distill_loss(weight: float):
    """A softmax head's distillation loss per word: targets [B, T, N_TAGS + 1], a teacher's tag probabilities
    then the gold tag id; ``weight`` of the cross-entropy with the teacher's probabilities, the rest with gold."""

    def softmax_distill(y_true, y_pred):
        gold = ops.cast(y_true[..., N_TAGS], "int32")
        probs = ops.clip(y_pred, 1e-7, 1.0)
        soft = -ops.sum(y_true[..., :N_TAGS] * ops.log(probs), -1)
        return (1.0 - weight) * keras.losses.sparse_categorical_crossentropy(gold, y_pred) + weight * soft

    return softmax_distill


def count_parameters(model: keras.Model) -> dict:
    trainable = int(sum(np.prod(w.shape) for w in model.trainable_weights))
    emb = model.get_layer("embedding")
    emb_n = int(np.prod(emb.table.shape))
    return {"total_trainable": trainable, "embedding": emb_n, "network": trainable - emb_n}
