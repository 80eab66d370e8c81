"""The MPNet-base encoder (sentence-transformers/all-mpnet-base-v2) in Keras 3.

keras-hub has no MPNet backbone, and MPNet's weights in a BERT backbone compute something else: MPNet has
no token-type embeddings; its position ids count the real tokens from 2 (cumsum of the padding mask plus
the padding id 1; padding keeps id 1); its LayerNorms use epsilon 1e-5; and one relative-position attention
bias (32 buckets, T5's bidirectional bucketing up to distance 128, one value per head) is computed once from
the sequence length and added to the attention scores of every layer.  Otherwise each of the 12 layers is
BERT's post-LayerNorm block (hidden 768, 12 heads, GELU (erf) feed-forward of 3,072).  As Hugging Face's
``MPNetModel`` (transformers/models/mpnet/modeling_mpnet.py), without the pooler, which sentence embeddings
and the tagger do not use.

Only ``keras.ops`` and ``keras.layers``: it trains on any Keras back end and traces to ONNX
(``opinion_tagger.export.onnx_export``).  The query and value projections are ``Dense`` layers, so
``MPNetEncoder.enable_lora(rank)`` freezes the encoder and adds Keras's LoRA adapters to them, as
keras-hub's backbones do.  The weights come from the assembled package (``opinion_tagger.runtime.base_weights``).
"""

from __future__ import annotations

import math

import keras
import numpy as np
from keras import layers, ops

from opinion_tagger.encoders import MPNET
from opinion_tagger.errors import TaggerError

PAD_ID = MPNET.pad_id  # <pad>; also the position id of padding (positions of real tokens start at 2)
MASKED = -1e9  # added to the attention scores of padding keys


def gelu(x):
    """GELU with erf, as PyTorch's (Hugging Face's "gelu"); written out because TensorFlow's exact GELU uses
    Erfc, which ONNX lacks."""
    return 0.5 * x * (1.0 + ops.erf(x * (1.0 / math.sqrt(2.0))))


def relative_position_bucket(relative_position, num_buckets: int = 32, max_distance: int = 128) -> np.ndarray:
    """MPNet's (T5's bidirectional) bucket of each relative position ``key - query``, as Hugging Face computes
    it: half the buckets for keys after the query; in each half distances below 8 exactly, then
    logarithmically up to ``max_distance``, beyond it the last bucket."""
    n = -np.asarray(relative_position, dtype=np.int64)
    half = num_buckets // 2
    ret = (n < 0).astype(np.int64) * half
    n = np.abs(n)
    exact = half // 2
    scale = np.float32(math.log(max_distance / exact))  # float32 throughout, as PyTorch computes it
    large = exact + (
        np.log(np.maximum(n, 1).astype(np.float32) / np.float32(exact)) / scale * np.float32(half - exact)
    ).astype(np.int64)
    large = np.minimum(large, half - 1)
    return ret + np.where(n < exact, n, large)


@keras.saving.register_keras_serializable(package="opinion_tagger")
class RelativePositionBias(layers.Layer):
    """The attention bias [1, heads, P, P] for a sequence of length P: one learned value per head and bucket
    of ``key position - query position``."""

    def __init__(
        self, num_buckets: int = 32, heads: int = 12, max_distance: int = 128, max_length: int = 514, **kwargs
    ):
        super().__init__(**kwargs)
        self.num_buckets, self.heads, self.max_distance, self.max_length = num_buckets, heads, max_distance, max_length
        # the bucket of every relative position -(max_length - 1) .. max_length - 1: a constant lookup table
        self._table = relative_position_bucket(
            np.arange(-(max_length - 1), max_length), num_buckets, max_distance
        ).astype("int32")

    def build(self, input_shape=None):
        self.embeddings = self.add_weight(shape=(self.num_buckets, self.heads), initializer="zeros", name="embeddings")

    def call(self, sequence):
        pos = ops.arange(ops.shape(sequence)[1], dtype="int32")
        rel = ops.expand_dims(pos, 0) - ops.expand_dims(pos, 1) + (self.max_length - 1)  # [query, key]
        buckets = ops.take(ops.convert_to_tensor(self._table), rel, axis=0)
        values = ops.take(self.embeddings, buckets, axis=0)  # [P, P, heads]
        return ops.expand_dims(ops.transpose(values, (2, 0, 1)), 0)

    def get_config(self):
        return {
            **super().get_config(),
            "num_buckets": self.num_buckets,
            "heads": self.heads,
            "max_distance": self.max_distance,
            "max_length": self.max_length,
        }


@keras.saving.register_keras_serializable(package="opinion_tagger")
class MPNetLayer(layers.Layer):
    """One transformer layer: self-attention (scores + the shared bias and padding mask), residual and
    LayerNorm, GELU feed-forward, residual and LayerNorm."""

    def __init__(
        self,
        hidden: int = 768,
        heads: int = 12,
        intermediate: int = 3072,
        epsilon: float = 1e-5,
        dropout: float = 0.1,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.hidden, self.heads, self.intermediate_size = hidden, heads, intermediate
        self.epsilon, self.dropout_rate = epsilon, dropout
        self.query = layers.Dense(hidden, name="query")
        self.key = layers.Dense(hidden, name="key")
        self.value = layers.Dense(hidden, name="value")
        self.attention_output = layers.Dense(hidden, name="attention_output")
        self.attention_layer_norm = layers.LayerNormalization(epsilon=epsilon, name="attention_layer_norm")
        self.intermediate = layers.Dense(intermediate, name="intermediate")  # then gelu()
        self.output_dense = layers.Dense(hidden, name="output")
        self.output_layer_norm = layers.LayerNormalization(epsilon=epsilon, name="output_layer_norm")
        self.attention_dropout = layers.Dropout(dropout)
        self.hidden_dropout = layers.Dropout(dropout)
        self.output_dropout = layers.Dropout(dropout)

    def build(self, input_shape):
        shape = (None, None, self.hidden)
        for layer in (self.query, self.key, self.value, self.attention_output, self.intermediate):
            layer.build(shape)
        self.output_dense.build((None, None, self.intermediate_size))
        self.attention_layer_norm.build(shape)
        self.output_layer_norm.build(shape)

    def _heads(self, x, batch):
        return ops.transpose(ops.reshape(x, (batch, -1, self.heads, self.hidden // self.heads)), (0, 2, 1, 3))

    def call(self, x, bias, training=None):
        """``x`` [B, P, hidden]; ``bias`` [B or 1, heads, P, P]: relative-position bias plus padding mask."""
        batch = ops.shape(x)[0]
        q, k, v = (self._heads(dense(x), batch) for dense in (self.query, self.key, self.value))
        scores = ops.matmul(q, ops.transpose(k, (0, 1, 3, 2))) / math.sqrt(self.hidden // self.heads) + bias
        probs = self.attention_dropout(ops.softmax(scores, axis=-1), training=training)
        context = ops.reshape(ops.transpose(ops.matmul(probs, v), (0, 2, 1, 3)), (batch, -1, self.hidden))
        attended = self.attention_layer_norm(self.hidden_dropout(self.attention_output(context), training=training) + x)
        out = self.output_dropout(self.output_dense(gelu(self.intermediate(attended))), training=training)
        return self.output_layer_norm(out + attended)

    def compute_output_shape(self, input_shape, bias_shape=None):
        return input_shape

    def get_config(self):
        return {
            **super().get_config(),
            "hidden": self.hidden,
            "heads": self.heads,
            "intermediate": self.intermediate_size,
            "epsilon": self.epsilon,
            "dropout": self.dropout_rate,
        }


@keras.saving.register_keras_serializable(package="opinion_tagger")
class MPNetEncoder(layers.Layer):
    """MPNet: ``{"token_ids", "padding_mask"}`` ([B, P] int; padding: id 1, mask 0) -> [B, P, hidden]."""

    def __init__(
        self,
        vocab_size: int = 30527,
        hidden: int = 768,
        num_layers: int = 12,
        heads: int = 12,
        intermediate: int = 3072,
        max_positions: int = 514,
        num_buckets: int = 32,
        max_distance: int = 128,
        epsilon: float = 1e-5,
        dropout: float = 0.1,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.vocab_size, self.hidden, self.num_layers, self.heads = vocab_size, hidden, num_layers, heads
        self.intermediate, self.max_positions, self.num_buckets = intermediate, max_positions, num_buckets
        self.max_distance, self.epsilon, self.dropout_rate = max_distance, epsilon, dropout
        self.word_embeddings = layers.Embedding(vocab_size, hidden, name="word_embeddings")
        self.position_embeddings = layers.Embedding(max_positions, hidden, name="position_embeddings")
        self.embeddings_layer_norm = layers.LayerNormalization(epsilon=epsilon, name="embeddings_layer_norm")
        self.embeddings_dropout = layers.Dropout(dropout)
        self.relative_attention_bias = RelativePositionBias(
            num_buckets, heads, max_distance, max_positions, name="relative_attention_bias"
        )
        self.blocks = [
            MPNetLayer(hidden, heads, intermediate, epsilon, dropout, name=f"layer_{i}") for i in range(num_layers)
        ]

    def build(self, input_shape=None):
        self.word_embeddings.build((None, None))
        self.position_embeddings.build((None, None))
        self.embeddings_layer_norm.build((None, None, self.hidden))
        self.relative_attention_bias.build()
        for block in self.blocks:
            block.build((None, None, self.hidden))

    def embed(self, token_ids, padding_mask, training=None):
        """The embedding output [B, P, hidden]: word + position embeddings, LayerNorm."""
        mask = ops.cast(padding_mask, "int32")
        positions = ops.cumsum(mask, axis=1) * mask + PAD_ID
        x = self.word_embeddings(token_ids) + self.position_embeddings(positions)
        return self.embeddings_dropout(self.embeddings_layer_norm(x), training=training)

    def attention_bias(self, sequence, padding_mask):
        """The bias every layer adds to its attention scores: relative positions plus the padding mask."""
        masked = (1.0 - ops.cast(padding_mask, sequence.dtype)) * MASKED
        return self.relative_attention_bias(sequence) + masked[:, None, None, :]

    def call(self, inputs, training=None):
        x = self.embed(inputs["token_ids"], inputs["padding_mask"], training=training)
        bias = self.attention_bias(x, inputs["padding_mask"])
        for block in self.blocks:
            x = block(x, bias, training=training)
        return x

    def compute_output_shape(self, input_shape):
        shape = input_shape["token_ids"] if isinstance(input_shape, dict) else input_shape
        return (*shape, self.hidden)

    def enable_lora(self, rank: int, target_layer_names=("query", "value")) -> None:
        """Freeze the encoder and add LoRA adapters of ``rank`` to the query and value projections of every
        layer (their biases train too), as keras-hub's ``Backbone.enable_lora`` does."""
        self.trainable = True
        for layer in self._flatten_layers(include_self=False):
            layer.trainable = False
        for block in self.blocks:
            for name in target_layer_names:
                dense = getattr(block, name)
                dense.trainable = True
                dense.enable_lora(rank)

    def get_config(self):
        return {
            **super().get_config(),
            "vocab_size": self.vocab_size,
            "hidden": self.hidden,
            "num_layers": self.num_layers,
            "heads": self.heads,
            "intermediate": self.intermediate,
            "max_positions": self.max_positions,
            "num_buckets": self.num_buckets,
            "max_distance": self.max_distance,
            "epsilon": self.epsilon,
            "dropout": self.dropout_rate,
        }

    # --- the package's weights (Hugging Face names, PyTorch layout: Linear weights are [out, in])
    def weight_map(self) -> dict[str, tuple]:
        """Package tensor name -> (Keras variable, transpose)."""
        out = {
            "embeddings.word_embeddings.weight": (self.word_embeddings.embeddings, False),
            "embeddings.position_embeddings.weight": (self.position_embeddings.embeddings, False),
            "embeddings.LayerNorm.weight": (self.embeddings_layer_norm.gamma, False),
            "embeddings.LayerNorm.bias": (self.embeddings_layer_norm.beta, False),
            "encoder.relative_attention_bias.weight": (self.relative_attention_bias.embeddings, False),
        }
        for i, b in enumerate(self.blocks):
            hf = f"encoder.layer.{i}"
            dense = {
                "attention.attn.q": b.query,
                "attention.attn.k": b.key,
                "attention.attn.v": b.value,
                "attention.attn.o": b.attention_output,
                "intermediate.dense": b.intermediate,
                "output.dense": b.output_dense,
            }
            for name, layer in dense.items():
                out[f"{hf}.{name}.weight"] = (
                    layer._kernel if getattr(layer, "lora_enabled", False) else layer.kernel,
                    True,
                )
                out[f"{hf}.{name}.bias"] = (layer.bias, False)
            for name, layer in (
                ("attention.LayerNorm", b.attention_layer_norm),
                ("output.LayerNorm", b.output_layer_norm),
            ):
                out[f"{hf}.{name}.weight"] = (layer.gamma, False)
                out[f"{hf}.{name}.bias"] = (layer.beta, False)
        return out

    def load_tensors(self, tensors: dict[str, np.ndarray], source: str = "model.safetensors") -> None:
        """Assign the package's tensors (every one the encoder has; TaggerError naming one missing or
        of another shape)."""
        for name, (variable, transpose) in self.weight_map().items():
            if name not in tensors:
                raise TaggerError(f"{source}: no tensor {name}; reassemble the MPNet-base weights")
            t = tensors[name].T if transpose else tensors[name]
            if tuple(t.shape) != tuple(variable.shape):
                raise TaggerError(f"{source}: tensor {name} has shape {t.shape}, the encoder {tuple(variable.shape)}")
            variable.assign(t)


def read_config(path) -> dict:
    """MPNetEncoder's arguments from the package's config.json (the architecture it must be)."""
    import json

    c = json.loads((path / "config.json").read_text())
    if c.get("model_type") != MPNET.name:
        raise TaggerError(f"{path / 'config.json'}: model_type {c.get('model_type')!r}, not {MPNET.name}")
    return {
        "vocab_size": c["vocab_size"],
        "hidden": c["hidden_size"],
        "num_layers": c["num_hidden_layers"],
        "heads": c["num_attention_heads"],
        "intermediate": c["intermediate_size"],
        "max_positions": c["max_position_embeddings"],
        "num_buckets": c.get("relative_attention_num_buckets", 32),
        "epsilon": c["layer_norm_eps"],
        "dropout": c["hidden_dropout_prob"],
    }


def build_encoder(weights: bool = True, name: str = MPNET.name) -> MPNetEncoder:
    """The built MPNet-base encoder; ``weights``: the pinned weights of the assembled package (sha256-checked),
    else uninitialised (to be filled from a trained model; needs no package)."""
    if not weights:
        encoder = MPNetEncoder(name=name)
        encoder.build()
        return encoder
    from safetensors.numpy import load_file

    from opinion_tagger.runtime.base_weights import locate

    path = locate(MPNET)
    encoder = MPNetEncoder(**read_config(path), name=name)
    encoder.build()
    encoder.load_tensors(load_file(str(path / "model.safetensors")), str(path / "model.safetensors"))
    return encoder
