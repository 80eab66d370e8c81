"""A linear-chain CRF output layer for Keras 3, with exact NumPy decoding.

No maintained CRF layer supports Keras 3 (tensorflow-addons is retired, the
keras-crf packages target tf.keras 2), so it is written here with
``keras.ops`` and tested against brute-force enumeration on tiny cases
(tests/test_crf.py).

The layer takes per-token emission scores ``[B, T, K]`` and outputs them with
the sequence mask appended as channel ``K`` (``[B, T, K+1]``), so that its
loss, the negative log-likelihood of the gold tag sequence, sees which steps
are padding.  Transition, start and end scores are the layer's weights.
"""

from __future__ import annotations

import keras
from keras import layers, ops

from opinion_tagger.runtime.decoding import marginals, viterbi  # noqa: F401  (the layer's decoders)


@keras.saving.register_keras_serializable(package="opinion_tagger")
class CRF(layers.Layer):
    def __init__(self, n_tags: int, **kwargs):
        super().__init__(**kwargs)
        self.n_tags = n_tags
        self.supports_masking = True

    def build(self, input_shape):
        k = self.n_tags
        self.transitions = self.add_weight(shape=(k, k), initializer="zeros", name="transitions")
        self.start = self.add_weight(shape=(k,), initializer="zeros", name="start")
        self.end = self.add_weight(shape=(k,), initializer="zeros", name="end")

    def call(self, emissions, mask=None):
        if mask is None:
            m = ops.ones(ops.shape(emissions)[:2], dtype=emissions.dtype)
        else:
            m = ops.cast(mask, emissions.dtype)
        return ops.concatenate([emissions, ops.expand_dims(m, -1)], axis=-1)

    def compute_mask(self, inputs, mask=None):
        return None  # the mask travels inside the output

    def compute_output_shape(self, input_shape):
        return (*input_shape[:-1], self.n_tags + 1)

    def get_config(self):
        return {**super().get_config(), "n_tags": self.n_tags}

    # -- training ---------------------------------------------------------------
    def log_likelihood(self, tags, outputs):
        """log p(tags | emissions) per sequence; ``tags`` int [B, T]."""
        emissions, mask = outputs[..., : self.n_tags], outputs[..., self.n_tags]
        tags = ops.cast(tags, "int32")
        k = self.n_tags
        onehot = ops.one_hot(tags, k, dtype=emissions.dtype)  # [B, T, K]
        emit = ops.sum(ops.sum(onehot * emissions, -1) * mask, -1)
        # transitions y_{t-1} -> y_t for t >= 1 where step t is real
        pair = ops.einsum("bti,ij,btj->bt", onehot[:, :-1], self.transitions, onehot[:, 1:])
        trans = ops.sum(pair * mask[:, 1:], -1)
        start = ops.sum(onehot[:, 0] * self.start, -1)
        lengths = ops.cast(ops.sum(mask, -1), "int32")
        last = ops.take_along_axis(tags, ops.expand_dims(ops.maximum(lengths - 1, 0), -1), axis=1)[:, 0]
        end = ops.sum(ops.one_hot(last, k, dtype=emissions.dtype) * self.end, -1)
        return emit + trans + start + end - self.log_partition(emissions, mask)

    def log_partition(self, emissions, mask):
        alpha0 = self.start + emissions[:, 0]  # [B, K]

        k = self.n_tags

        def step(alpha, inputs):
            e_t, m_t = inputs[:, :k], inputs[:, k:]  # [B, K], [B, 1]
            nxt = ops.logsumexp(ops.expand_dims(alpha, 2) + self.transitions, axis=1) + e_t
            return m_t * nxt + (1.0 - m_t) * alpha, None

        # one time-major sequence of [emissions | mask] per step
        xs = ops.transpose(ops.concatenate([emissions[:, 1:], ops.expand_dims(mask[:, 1:], -1)], -1), (1, 0, 2))
        alpha, _ = ops.scan(step, alpha0, xs)
        return ops.logsumexp(alpha + self.end, axis=-1)

    @property
    def loss(self):
        def crf_nll(y_true, y_pred):
            # rows without tokens (batch padding) do not count
            real = ops.cast(ops.sum(y_pred[..., self.n_tags], -1) > 0, y_pred.dtype)
            nll = -self.log_likelihood(y_true, y_pred) * real
            return ops.sum(nll) / ops.maximum(ops.sum(real), 1.0)

        return crf_nll
