"""Exact decoding for linear-chain CRF scores in NumPy: Viterbi and tag marginals.

Both work on a whole batch at once (emissions [B, T, K], each row's real length in ``lengths``; what
lies beyond a row's length is ignored), looping over the T positions only: a tagger decodes every
sentence of a network batch in one call.  The one-sentence forms are the same with B = 1.
"""

from __future__ import annotations

import numpy as np


def _logsumexp(x: np.ndarray, axis: int) -> np.ndarray:
    m = x.max(axis=axis, keepdims=True)
    return np.squeeze(m, axis) + np.log(np.exp(x - m).sum(axis=axis))


def viterbi_batch(
    emissions: np.ndarray, lengths, transitions: np.ndarray, start: np.ndarray, end: np.ndarray
) -> list[list[int]]:
    """Best tag sequence of each row of ``emissions`` [B, T, K], ``lengths[b]`` positions long."""
    em = np.asarray(emissions, dtype=np.float64)
    lengths = np.asarray(lengths, dtype=np.int64)
    b_size, t_len, _ = em.shape
    if b_size == 0 or t_len == 0:
        return [[] for _ in range(b_size)]
    rows = np.arange(b_size)
    score = start + em[:, 0]  # [B, K]
    back = np.zeros((t_len, b_size, em.shape[2]), dtype=np.int64)
    for t in range(1, t_len):
        cand = score[:, :, None] + transitions  # [B, from, to]
        back[t] = cand.argmax(1)
        new = cand.max(1) + em[:, t]
        score = np.where((t < lengths)[:, None], new, score)  # a row past its end keeps its last score
    cur = (score + end).argmax(1)
    tags = np.zeros((b_size, t_len), dtype=np.int64)
    for t in range(t_len - 1, 0, -1):
        active = t < lengths
        tags[active, t] = cur[active]
        cur = np.where(active, back[t, rows, cur], cur)
    tags[:, 0] = cur
    return [tags[b, : lengths[b]].tolist() for b in range(b_size)]


def marginals_batch(
    emissions: np.ndarray, lengths, transitions: np.ndarray, start: np.ndarray, end: np.ndarray
) -> np.ndarray:
    """Per-token tag marginals p(y_t = k | x) [B, T, K] by forward-backward (zero beyond a row's length)."""
    em = np.asarray(emissions, dtype=np.float64)
    lengths = np.asarray(lengths, dtype=np.int64)
    b_size, t_len, k = em.shape
    if b_size == 0 or t_len == 0:
        return np.zeros((b_size, t_len, k))
    alpha = np.zeros((t_len, b_size, k))
    beta = np.zeros((t_len, b_size, k))
    alpha[0] = start + em[:, 0]
    for t in range(1, t_len):
        alpha[t] = _logsumexp(alpha[t - 1][:, :, None] + transitions, axis=1) + em[:, t]
    for t in range(t_len - 1, -1, -1):
        if t + 1 < t_len:
            inner = _logsumexp(transitions + (em[:, t + 1] + beta[t + 1])[:, None, :], axis=2)
        else:
            inner = np.zeros((b_size, k))
        beta[t] = np.where((t == lengths - 1)[:, None], end, np.where((t < lengths - 1)[:, None], inner, 0.0))
    last = alpha[np.maximum(lengths - 1, 0), np.arange(b_size)]  # [B, K]
    log_z = _logsumexp(last + end, axis=1)
    out = np.exp(alpha + beta - log_z[None, :, None]).transpose(1, 0, 2)
    out[np.arange(t_len)[None, :] >= lengths[:, None]] = 0.0
    return out


# IOB2 over the tag ids 0 (O), 1 (B), 2 (I): an I may not follow O nor begin a sentence
_NEVER = -1e30
IOB2_TRANSITIONS = np.array([[0.0, 0.0, _NEVER], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
IOB2_START = np.array([0.0, 0.0, _NEVER])


def likeliest_valid_batch(probs: np.ndarray, lengths) -> list[list[int]]:
    """Per row of tag probabilities ``probs`` [B, T, 3] (e.g. averaged marginals): the valid IOB2 sequence
    with the largest product of its tags' probabilities (Viterbi over their logarithms, O -> I forbidden)."""
    logp = np.log(np.maximum(np.asarray(probs, dtype=np.float64), 1e-300))
    return viterbi_batch(logp, lengths, IOB2_TRANSITIONS, IOB2_START, np.zeros(3))


def viterbi(emissions: np.ndarray, transitions: np.ndarray, start: np.ndarray, end: np.ndarray) -> list[int]:
    """Best tag sequence for one sentence: emissions [T, K] (no padding)."""
    return viterbi_batch(emissions[None], [len(emissions)], transitions, start, end)[0]


def marginals(emissions: np.ndarray, transitions: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Per-token tag marginals p(y_t = k | x) for one sentence, by forward-backward."""
    return marginals_batch(emissions[None], [len(emissions)], transitions, start, end)[0]
