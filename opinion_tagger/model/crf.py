"""A linear-chain CRF output layer for Keras 3, with exact NumPy decoding.

No maintained CRF layer supports Keras 3 (tensorflow-addons is retired, the
keras-crf packages target tf.keras 2), so it is written here with
``keras.ops`` and tested against brute-force enumeration on tiny cases
(tests/model/test_crf.py).

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
        onehot = ops.one_hot(ops.cast(tags, "int32"), self.n_tags, dtype=outputs.dtype)  # [B, T, K]
        return self.soft_log_likelihood(onehot, outputs)

    def soft_log_likelihood(self, probs, outputs):
        """The expected log-likelihood of the tag sequence when each word's tag is drawn from ``probs`` [B, T, K]
        (a teacher's marginals), the words independently: the gold sequence's formula with each one-hot row
        replaced by the word's distribution (a one-hot ``probs`` gives ``log_likelihood``)."""
        emissions, mask = outputs[..., : self.n_tags], outputs[..., self.n_tags]
        q = ops.cast(probs, emissions.dtype)
        emit = ops.sum(ops.sum(q * emissions, -1) * mask, -1)
        # transitions y_{t-1} -> y_t for t >= 1 where step t is real
        pair = ops.einsum("bti,ij,btj->bt", q[:, :-1], self.transitions, q[:, 1:])
        trans = ops.sum(pair * mask[:, 1:], -1)
        start = ops.sum(q[:, 0] * self.start, -1)
        lengths = ops.cast(ops.sum(mask, -1), "int32")
        last = ops.take_along_axis(q, ops.reshape(ops.maximum(lengths - 1, 0), (-1, 1, 1)), axis=1)[:, 0]
        end = ops.sum(last * self.end, -1)
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

    def distill_loss(self, weight: float):
        """Distillation's loss: targets [B, T, K + 1], a teacher's tag probabilities then the gold tag id;
        ``weight`` of the teacher's expected negative log-likelihood (``soft_log_likelihood``), the rest of the
        gold sequence's."""
        k = self.n_tags

        def crf_distill(y_true, y_pred):
            real = ops.cast(ops.sum(y_pred[..., k], -1) > 0, y_pred.dtype)
            gold = ops.cast(y_true[..., k], "int32")
            ll = (1.0 - weight) * self.log_likelihood(gold, y_pred) + weight * self.soft_log_likelihood(
                y_true[..., :k], y_pred
            )
            return ops.sum(-ll * real) / ops.maximum(ops.sum(real), 1.0)

        return crf_distill
