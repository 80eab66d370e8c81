"""Exact decoding for linear-chain CRF scores in NumPy: Viterbi and tag marginals."""

from __future__ import annotations

import numpy as np


def viterbi(emissions: np.ndarray, transitions: np.ndarray, start: np.ndarray, end: np.ndarray) -> list[int]:
    """Best tag sequence for one sentence: emissions [T, K] (no padding)."""
    t_len = emissions.shape[0]
    if t_len == 0:
        return []
    score = start + emissions[0]
    back = np.zeros((t_len, emissions.shape[1]), dtype=np.int64)
    for t in range(1, t_len):
        cand = score[:, None] + transitions
        back[t] = cand.argmax(0)
        score = cand.max(0) + emissions[t]
    best = [int((score + end).argmax())]
    for t in range(t_len - 1, 0, -1):
        best.append(int(back[t, best[-1]]))
    return best[::-1]


def marginals(emissions: np.ndarray, transitions: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Per-token tag marginals p(y_t = k | x) for one sentence, by forward-backward."""
    from scipy.special import logsumexp

    t_len, k = emissions.shape
    alpha = np.zeros((t_len, k))
    beta = np.zeros((t_len, k))
    alpha[0] = start + emissions[0]
    for t in range(1, t_len):
        alpha[t] = logsumexp(alpha[t - 1][:, None] + transitions, axis=0) + emissions[t]
    beta[-1] = end
    for t in range(t_len - 2, -1, -1):
        beta[t] = logsumexp(transitions + emissions[t + 1] + beta[t + 1], axis=1)
    log_z = logsumexp(alpha[-1] + end)
    return np.exp(alpha + beta - log_z)
