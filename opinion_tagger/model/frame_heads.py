"""The frame heads in Keras (configuration block ``frames``; docs/frames.md): on the recurrent stack's states,
per tagged type a span's polarity and intensity, and a DSE's holder.

- ``SpanPool``: the mean of a span's states (spans given as token ranges [start, end), an input per type:
  ``{type}_spans`` [B, S, 2]; an empty pair (0, 0) pads a sentence's spans);
- ``{type}_polarity`` and ``{type}_intensity``: a softmax layer on that mean;
- ``DSE_holder``: a pointer: each token k scores ``v . tanh(h_k U + s V + b)`` against the span's mean s,
  beside three class scores ``s W + c`` (writer, implicit, none); ``DSE_holder_start`` is the softmax over the
  three classes and the tokens (the holder's first token), ``DSE_holder_end`` a softmax over the tokens (its
  last token), scored alike with weights of its own.  Padding tokens score ``MASKED``.  With
  ``model.frames.positions`` each token's tanh adds ``P[r]``, a learnt vector of its place r relative to the span
  (``SpanPlaces``);
- with ``model.frames.roles``, ``DSE_attitude`` (a softmax over the attitude types on the span's mean) and
  ``DSE_targets`` (``TargetTagger``: per token a softmax over the tags O, B, I of the DSE's targets; with
  ``model.frames.context``, on ``DSEContext``'s view of the sentence instead of the states).

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
    ATTITUDE,
    CONTEXT,
    DISTANCE_BUCKETS,
    HOLDER,
    HOLDER_CONTEXT,
    MASKED,
    PLACES,
    SIDE,
    STATES,
    TARGET_TAGS,
    TARGETS,
    context_layers,
    context_readers,
    frame_outputs,
    has_roles,
    holder_context,
    intensity_classes,
    polarity_classes,
)
from opinion_tagger.sentences import ATTITUDE_TYPES, HOLDER_CLASSES

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
class SpanPlaces(layers.Layer):
    """Each token's place relative to each span of ``spans`` [B, S, 2] in a sentence of ``states`` [B, T, D] ->
    [B, S, T] int32 (``opinion_tagger.runtime.frame_heads.relative_places``)."""

    def call(self, states, spans):
        k = ops.arange(ops.shape(states)[1], dtype="int32")[None, None, :]
        start, end = spans[..., 0:1], spans[..., 1:2]
        table = ops.convert_to_tensor(DISTANCE_BUCKETS.astype("int32"))
        top = len(DISTANCE_BUCKETS) - 1
        before = 1 + ops.take(table, ops.clip(start - k, 0, top))
        after = 1 + SIDE + ops.take(table, ops.clip(k - end + 1, 0, top))
        return ops.where(k < start, before, ops.where(k >= end, after, 0))

    def compute_mask(self, inputs, previous_mask=None):
        return None

    def compute_output_shape(self, states_shape, spans_shape):
        return (*spans_shape[:-1], states_shape[1])


class _TokenScorer(layers.Layer):
    """What the holder pointer and the target tagger share: for each span and token, the hidden layer
    ``tanh(h_k U + s V + P[r] + b)`` [B, S, T, A] of a scorer's weights ``tokens``, ``span``, ``bias`` and, with
    ``places``, ``places`` (named with the scorer's prefix: ``start_tokens``)."""

    def __init__(self, units: int, places: bool = False, **kwargs):
        super().__init__(**kwargs)
        self.units, self.places = units, places
        self.scorers: dict[str, dict] = {}

    def _add_scorer(self, prefix: str, d: int, d_span: int) -> None:
        """The weights of a scorer on tokens of ``d`` features and span means of ``d_span``."""
        a, named = self.units, (lambda w: f"{prefix}_{w}" if prefix else w)
        scorer = {
            "tokens": self.add_weight(shape=(d, a), name=named("tokens")),
            "span": self.add_weight(shape=(d_span, a), name=named("span")),
            "bias": self.add_weight(shape=(a,), initializer="zeros", name=named("bias")),
        }
        if self.places:
            scorer["places"] = self.add_weight(shape=(PLACES, a), name=named("places"))
        self.scorers[prefix] = scorer

    def _hidden(self, states, pooled, places, prefix: str):
        """[B, S, T, A] from the states [B, T, D], or a DSE's own states per span [B, S, T, D]."""
        w = self.scorers[prefix]
        tokens = ops.matmul(states, w["tokens"])
        tokens = tokens if len(states.shape) == 4 else ops.expand_dims(tokens, 1)  # [B, S or 1, T, A]
        span = ops.expand_dims(ops.matmul(pooled, w["span"]), 2)  # [B, S, 1, A]
        total = tokens + span + w["bias"]
        if self.places:
            total = total + ops.take(w["places"], places, axis=0)  # [B, S, T, A]
        return ops.tanh(total)

    def compute_mask(self, inputs, previous_mask=None):
        return None

    def get_config(self):
        return {**super().get_config(), "units": self.units, "places": self.places}


@keras.saving.register_keras_serializable(package="opinion_tagger")
class DSEContext(_TokenScorer):
    """A DSE's own view of its sentence (``model.frames.context``): per span, a bidirectional LSTM of ``context``
    units a direction over ``tanh(h_k U + s V + P[r] + b)`` [B, S, T, A], padding masked -> [B, S, T, 2 context],
    which the target tagger (and, with ``model.frames.context_holder``, the holder pointer) reads instead of the
    states; with ``model.frames.holder_context``, the holder pointer has one of its own (``DSE_holder_context``)."""

    def __init__(self, units: int, context: int, places: bool = False, **kwargs):
        super().__init__(units, places, **kwargs)
        self.context = context
        lstm = layers.LSTM(context, return_sequences=True, name="lstm")  # named: its weights' names are fixed
        self.lstm = layers.Bidirectional(lstm, name="lstm")

    def build(self, states_shape, pooled_shape, words_shape, places_shape=None):
        self._add_scorer("", states_shape[-1], pooled_shape[-1])
        self.lstm.build((None, None, self.units))

    def call(self, states, pooled, words, places=None):
        hidden = self._hidden(states, pooled, places, "")  # [B, S, T, A]
        b, s, t = ops.shape(hidden)[0], ops.shape(hidden)[1], ops.shape(hidden)[2]
        real = ops.repeat(ops.expand_dims(ops.not_equal(words, 0), 1), s, axis=1)  # [B, S, T]
        out = self.lstm(ops.reshape(hidden, (-1, t, self.units)), mask=ops.reshape(real, (-1, t)))
        return ops.reshape(out, (b, s, t, 2 * self.context))

    def compute_output_shape(self, states_shape, pooled_shape, words_shape, places_shape=None):
        return (*pooled_shape[:-1], states_shape[1], 2 * self.context)

    def get_config(self):
        return {**super().get_config(), "context": self.context}


@keras.saving.register_keras_serializable(package="opinion_tagger")
class HolderPointer(_TokenScorer):
    """A DSE's holder: (start [B, S, 3 + T], end [B, S, T]) probabilities from the states [B, T, D] (or a DSE's own
    states per span [B, S, T, D']), the spans' means [B, S, D], the word ids [B, T] (0: padding) and, with
    ``places``, the tokens' places [B, S, T]."""

    def build(self, states_shape, pooled_shape, words_shape, places_shape=None):
        d, a = states_shape[-1], self.units
        for end in ("start", "end"):
            self._add_scorer(end, d, pooled_shape[-1])
            self.scorers[end]["v"] = self.add_weight(shape=(a,), name=f"{end}_v")
        n = len(HOLDER_CLASSES)
        self.classes = self.add_weight(shape=(pooled_shape[-1], n), name="classes")
        self.classes_bias = self.add_weight(shape=(n,), initializer="zeros", name="classes_bias")

    def _scores(self, states, pooled, places, padding, end: str):
        hidden = self._hidden(states, pooled, places, end)
        return ops.einsum("bsta,a->bst", hidden, self.scorers[end]["v"]) + padding

    def call(self, states, pooled, words, places=None):
        padding = ops.expand_dims(ops.where(ops.equal(words, 0), MASKED, 0.0), 1)  # [B, 1, T]
        padding = ops.cast(padding, states.dtype)
        classes = ops.matmul(pooled, self.classes) + self.classes_bias
        start = ops.concatenate([classes, self._scores(states, pooled, places, padding, "start")], axis=-1)
        end = self._scores(states, pooled, places, padding, "end")
        return ops.softmax(start, axis=-1), ops.softmax(end, axis=-1)

    def compute_output_shape(self, states_shape, pooled_shape, words_shape, places_shape=None):
        s, t = pooled_shape[:-1], states_shape[1]
        return (*s, len(HOLDER_CLASSES) + t if t is not None else None), (*s, t)


@keras.saving.register_keras_serializable(package="opinion_tagger")
class TargetTagger(_TokenScorer):
    """A DSE's targets: per span and token the probabilities of the tags O, B, I [B, S, T, 3], from the states
    [B, T, D], the spans' means [B, S, D] and, with ``places``, the tokens' places [B, S, T]."""

    def build(self, states_shape, pooled_shape, places_shape=None):
        self._add_scorer("", states_shape[-1], pooled_shape[-1])
        self.out = self.add_weight(shape=(self.units, len(TARGET_TAGS)), name="out")
        self.out_bias = self.add_weight(shape=(len(TARGET_TAGS),), initializer="zeros", name="out_bias")

    def call(self, states, pooled, places=None):
        hidden = self._hidden(states, pooled, places, "")
        return ops.softmax(ops.matmul(hidden, self.out) + self.out_bias, axis=-1)

    def compute_output_shape(self, states_shape, pooled_shape, places_shape=None):
        return (*pooled_shape[:-1], states_shape[1], len(TARGET_TAGS))


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
            frames = config.model.frames
            places = [SpanPlaces(name="DSE_places")(states, spans)] if frames.positions else []
            readers = context_readers(config)
            view = states  # what the heads of ``readers`` read: a DSE's own view of its sentence, or the states
            if readers:
                view = DSEContext(frames.units, frames.context, frames.positions, name=CONTEXT, **head)(
                    states, pooled, words, *places
                )
            pointer = HolderPointer(frames.units, frames.positions, name=HOLDER, **head)
            on = view if "holder" in readers else states
            if holder_context(config):
                own = DSEContext(frames.units, frames.holder_context, frames.positions, name=HOLDER_CONTEXT, **head)
                on = own(states, pooled, words, *places)
            outputs[f"{HOLDER}_start"], outputs[f"{HOLDER}_end"] = pointer(on, pooled, words, *places)
            if has_roles(config):
                n = len(ATTITUDE_TYPES)
                outputs[ATTITUDE] = layers.Dense(n, activation="softmax", name=ATTITUDE, **head)(pooled)
                tagger = TargetTagger(frames.units, frames.positions, name=TARGETS, **head)
                outputs[TARGETS] = tagger(view, pooled, *places)
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
    names += [HOLDER] if "DSE" in config.types else []
    return names + ([ATTITUDE, TARGETS] if has_roles(config) else []) + list(context_layers(config))


def head_arrays(model, config: TaggerConfig) -> dict[str, np.ndarray]:
    """The frame heads' weights of a training network, by ``layer/weight`` name (``frames.onnx``'s initializers)."""
    out = {}
    for name in _head_layers(config):
        for w in model.get_layer(name).weights:
            out[w.path] = np.asarray(w, dtype=np.float32)
    return out


def set_head_arrays(model, config: TaggerConfig, arrays: dict[str, np.ndarray]) -> None:
    """Put ``head_arrays``' weights (a bundle's ``frames.onnx``) into a training network's frame heads."""
    for name in _head_layers(config):
        layer = model.get_layer(name)
        layer.set_weights([arrays[w.path] for w in layer.weights])
