"""The frame heads in Keras (configuration block ``frames``; docs/frames.md): on the recurrent stack's states,
per tagged type a span's polarity and intensity, and a DSE's holder.

- ``SpanPool``: the mean of a span's states (spans given as token ranges [start, end), an input per type:
  ``{type}_spans`` [B, S, 2]; an empty pair (0, 0) pads a sentence's spans);
- ``{type}_polarity`` and ``{type}_intensity``: a softmax layer on that mean;
- ``DSE_holder``: a pointer: each token k scores ``v . tanh(h_k U + s V + b)`` against the span's mean s,
  beside three class scores ``s W + c`` (writer, implicit, none); ``DSE_holder_start`` is the softmax over the
  three classes and the tokens (the holder's first token), ``DSE_holder_end`` a softmax over the tokens (its
  last token), scored alike with weights of its own.  Padding tokens score ``MASKED``.

They are trained from the gold spans (teacher forcing) and are not in the bundle's network: that outputs its
states (``states``), and the runtime runs the heads in ONNX Runtime (``opinion_tagger.runtime.frame_heads``, the
same functions) from the bundle's ``frames.onnx``, written from the weights ``head_arrays`` collects
(``opinion_tagger.export.frames_export``).
"""

from __future__ import annotations

import keras
import numpy as np
from keras import layers, ops

from opinion_tagger.config import TaggerConfig
from opinion_tagger.runtime.frame_heads import (
    HOLDER,
    MASKED,
    STATES,
    frame_outputs,
    intensity_classes,
    polarity_classes,
)
from opinion_tagger.sentences import HOLDER_CLASSES

SPANS = "{}_spans"  # the input of a type's spans


@keras.saving.register_keras_serializable(package="opinion_tagger")
class SpanPool(layers.Layer):
    """The mean of ``states`` [B, T, D] over each span of ``spans`` [B, S, 2] (start, end) -> [B, S, D]; an empty
    span gives zeros."""

    def call(self, states, spans):
        t = ops.arange(ops.shape(states)[1])
        inside = ops.cast((t >= spans[..., 0:1]) & (t < spans[..., 1:2]), states.dtype)  # [B, S, T]
        total = ops.einsum("bst,btd->bsd", inside, states)
        return total / ops.maximum(ops.sum(inside, -1, keepdims=True), 1.0)

    def compute_mask(self, inputs, previous_mask=None):
        return None  # the output has a row per span, not per word

    def compute_output_shape(self, states_shape, spans_shape):
        return (*spans_shape[:-1], states_shape[-1])


@keras.saving.register_keras_serializable(package="opinion_tagger")
class HolderPointer(layers.Layer):
    """A DSE's holder: (start [B, S, 3 + T], end [B, S, T]) probabilities from the states [B, T, D], the spans'
    means [B, S, D] and the word ids [B, T] (0: padding)."""

    def __init__(self, units: int, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def build(self, states_shape, pooled_shape, words_shape):
        d, a = states_shape[-1], self.units
        for end in ("start", "end"):
            setattr(self, f"{end}_tokens", self.add_weight(shape=(d, a), name=f"{end}_tokens"))
            setattr(self, f"{end}_span", self.add_weight(shape=(d, a), name=f"{end}_span"))
            setattr(self, f"{end}_bias", self.add_weight(shape=(a,), initializer="zeros", name=f"{end}_bias"))
            setattr(self, f"{end}_v", self.add_weight(shape=(a,), name=f"{end}_v"))
        n = len(HOLDER_CLASSES)
        self.classes = self.add_weight(shape=(d, n), name="classes")
        self.classes_bias = self.add_weight(shape=(n,), initializer="zeros", name="classes_bias")

    def _scores(self, states, pooled, padding, end: str):
        tokens = ops.expand_dims(ops.matmul(states, getattr(self, f"{end}_tokens")), 1)  # [B, 1, T, A]
        span = ops.expand_dims(ops.matmul(pooled, getattr(self, f"{end}_span")), 2)  # [B, S, 1, A]
        hidden = ops.tanh(tokens + span + getattr(self, f"{end}_bias"))
        return ops.einsum("bsta,a->bst", hidden, getattr(self, f"{end}_v")) + padding

    def call(self, states, pooled, words):
        padding = ops.expand_dims(ops.where(ops.equal(words, 0), MASKED, 0.0), 1)  # [B, 1, T]
        padding = ops.cast(padding, states.dtype)
        classes = ops.matmul(pooled, self.classes) + self.classes_bias
        start = ops.concatenate([classes, self._scores(states, pooled, padding, "start")], axis=-1)
        return ops.softmax(start, axis=-1), ops.softmax(self._scores(states, pooled, padding, "end"), axis=-1)

    def compute_mask(self, inputs, previous_mask=None):
        return None

    def compute_output_shape(self, states_shape, pooled_shape, words_shape):
        s, t = pooled_shape[:-1], states_shape[1]
        return (*s, len(HOLDER_CLASSES) + t if t is not None else None), (*s, t)

    def get_config(self):
        return {**super().get_config(), "units": self.units}


@keras.saving.register_keras_serializable(package="opinion_tagger")
class MaskedCrossEntropy(keras.losses.Loss):
    """Cross-entropy of class ids [B, S] against probabilities [B, S, C], averaged over the targets >= 0 (-1:
    a padding span, or a value the corpus does not give)."""

    def call(self, y_true, y_pred):
        y_true = ops.cast(y_true, "int32")
        known = ops.cast(y_true >= 0, y_pred.dtype)
        p = ops.take_along_axis(y_pred, ops.expand_dims(ops.maximum(y_true, 0), -1), axis=-1)[..., 0]
        loss = -ops.log(ops.clip(p, 1e-7, 1.0)) * known
        # the reduction averages over every element: scaled so that it averages over the known ones
        return loss * ops.cast(ops.size(known), loss.dtype) / ops.maximum(ops.sum(known), 1.0)


@keras.saving.register_keras_serializable(package="opinion_tagger")
class StopGradient(layers.Layer):
    """Its input, through which no gradient flows back (``model.frames.detach``: the heads' losses do not train the
    states they read)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    def call(self, x):
        return ops.stop_gradient(x)


def add_frame_heads(config: TaggerConfig, states, words, head: dict) -> tuple[dict, dict]:
    """(span inputs, frame outputs) of the training network: the heads on ``states`` [B, T, D] for each tagged
    type (``head``: the heads' dtype policy, float32 under a mixed one); with ``model.frames.detach``, on the states
    with their gradient stopped."""
    if config.model.frames.detach:
        states = StopGradient(name="frame_states")(states)
    inputs, outputs = {}, {}
    n_pol, n_int = len(polarity_classes(config)), len(intensity_classes())
    for t in config.types:
        spans = inputs[SPANS.format(t)] = keras.Input(shape=(None, 2), dtype="int32", name=SPANS.format(t))
        pooled = SpanPool(name=f"{t}_span_pool", **head)(states, spans)
        outputs[f"{t}_polarity"] = layers.Dense(n_pol, activation="softmax", name=f"{t}_polarity", **head)(pooled)
        outputs[f"{t}_intensity"] = layers.Dense(n_int, activation="softmax", name=f"{t}_intensity", **head)(pooled)
        if t == "DSE":
            start, end = HolderPointer(config.model.frames.units, name=HOLDER, **head)(states, pooled, words)
            outputs[f"{HOLDER}_start"], outputs[f"{HOLDER}_end"] = start, end
    return inputs, outputs


def frame_losses(config: TaggerConfig) -> dict:
    """The loss of each frame output."""
    return {name: MaskedCrossEntropy() for name in frame_outputs(config)}


def states_layer(config: TaggerConfig) -> str:
    """The layer whose output the frame heads read: the last dropout before the tag heads."""
    depth = config.model.recurrent.depth
    return f"dropout_{depth}" if depth else "input_dropout"


def tagging_view(model, config: TaggerConfig):
    """The training network without its span inputs: its tag outputs and its states (the same layers and
    weights), what a dev evaluation runs."""
    inputs = {k: v for k, v in model.input.items() if not k.endswith("_spans")}
    inputs = inputs["words"] if list(inputs) == ["words"] else inputs
    outputs = {t: model.get_layer(t).output for t in config.types}
    outputs[STATES] = model.get_layer(states_layer(config)).output
    return keras.Model(inputs, outputs, name=f"{model.name}_tagging")


def _head_layers(config: TaggerConfig) -> list[str]:
    names = [f"{t}_{head}" for t in config.types for head in ("polarity", "intensity")]
    return names + ([HOLDER] if "DSE" in config.types else [])


def head_arrays(model, config: TaggerConfig) -> dict[str, np.ndarray]:
    """The frame heads' weights of a training network, by ``layer/weight`` name (``frames.onnx``'s initializers)."""
    out = {}
    for name in _head_layers(config):
        for w in model.get_layer(name).weights:
            out[f"{name}/{w.name}"] = np.asarray(w, dtype=np.float32)
    return out


def set_head_arrays(model, config: TaggerConfig, arrays: dict[str, np.ndarray]) -> None:
    """Put ``head_arrays``' weights (a bundle's ``frames.onnx``) into a training network's frame heads."""
    for name in _head_layers(config):
        layer = model.get_layer(name)
        layer.set_weights([arrays[f"{name}/{w.name}"] for w in layer.weights])
