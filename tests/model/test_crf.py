"""The CRF layer's log-likelihood and the NumPy Viterbi/marginals against brute force."""

import itertools

import numpy as np
import pytest
from scipy.special import logsumexp

from opinion_tagger.model.crf import CRF
from opinion_tagger.runtime.decoding import likeliest_valid_batch, marginals, marginals_batch, viterbi, viterbi_batch


def brute_scores(em, trans, start, end):
    t_len, k = em.shape
    seqs = list(itertools.product(range(k), repeat=t_len))
    scores = []
    for y in seqs:
        s = start[y[0]] + end[y[-1]] + sum(em[t, y[t]] for t in range(t_len))
        s += sum(trans[y[t - 1], y[t]] for t in range(1, t_len))
        scores.append(s)
    return seqs, np.array(scores)


@pytest.fixture
def params():
    rng = np.random.default_rng(0)
    k = 3
    return (
        rng.normal(size=(k, k)).astype("float32"),
        rng.normal(size=k).astype("float32"),
        rng.normal(size=k).astype("float32"),
    )


def test_viterbi_and_marginals_match_enumeration(params):
    trans, start, end = params
    rng = np.random.default_rng(1)
    for t_len in (1, 2, 4):
        em = rng.normal(size=(t_len, 3))
        seqs, scores = brute_scores(em, trans, start, end)
        assert viterbi(em, trans, start, end) == list(seqs[int(scores.argmax())])
        probs = np.exp(scores - logsumexp(scores))
        expect = np.zeros((t_len, 3))
        for y, p in zip(seqs, probs):
            for t, tag in enumerate(y):
                expect[t, tag] += p
        np.testing.assert_allclose(marginals(em, trans, start, end), expect, atol=1e-6)


def test_likeliest_valid_sequence_by_hand():
    # columns O, B, I.  Each word's likeliest tag is B, O, I: an I after O, two spans once repaired.  The valid
    # sequences' products: B I I .6 * .4 * .5 = .12 (best), B O O .081, B I O .072, B O B .054
    probs = np.array([[0.3, 0.6, 0.1], [0.45, 0.15, 0.4], [0.3, 0.2, 0.5]])
    assert probs.argmax(-1).tolist() == [1, 0, 2]
    assert likeliest_valid_batch(probs[None], [3]) == [[1, 2, 2]]
    # a sentence may not begin with I: .4 * .9 (B O) beats .6 * .9 (I O), which is not valid
    assert likeliest_valid_batch(np.array([[[0.0, 0.4, 0.6], [0.9, 0.05, 0.05]]]), [2]) == [[1, 0]]


def test_likeliest_valid_sequence_matches_enumeration_with_padding():
    rng = np.random.default_rng(3)
    probs = rng.dirichlet(np.ones(3), size=(3, 5))  # 3 rows, 5 positions, lengths 5, 2 and 1
    lengths = [5, 2, 1]
    got = likeliest_valid_batch(probs, lengths)
    for row, n, best in zip(probs, lengths, got):
        valid = [
            y for y in itertools.product(range(3), repeat=n) if all(y[t] != 2 or (t and y[t - 1]) for t in range(n))
        ]
        assert best == list(max(valid, key=lambda y: np.prod([row[t, y[t]] for t in range(n)])))


def test_batch_decoding_equals_each_sentence_alone(params):
    """A batch of rows of different lengths, padded with large scores that must be ignored, decodes as each
    row alone (which the test above checks against enumeration); a row of length 0 gives nothing."""
    trans, start, end = params
    rng = np.random.default_rng(3)
    lengths = [5, 1, 3, 0, 5]
    em = rng.normal(size=(len(lengths), 5, 3)) * 3
    for b, n in enumerate(lengths):
        em[b, n:] = 50.0 * rng.normal(size=(5 - n, 3))
    tags, probs = viterbi_batch(em, lengths, trans, start, end), marginals_batch(em, lengths, trans, start, end)
    assert [len(t) for t in tags] == lengths
    for b, n in enumerate(lengths):
        if n:
            assert tags[b] == viterbi(em[b, :n], trans, start, end)
            np.testing.assert_allclose(probs[b, :n], marginals(em[b, :n], trans, start, end), atol=1e-9)
            np.testing.assert_allclose(probs[b, :n].sum(-1), 1.0, atol=1e-9)
        assert not probs[b, n:].any()


def test_log_likelihood_matches_enumeration_with_padding(params):
    trans, start, end = params
    layer = CRF(3)
    layer.build((None, None, 3))
    layer.set_weights([trans, start, end])
    rng = np.random.default_rng(2)
    em = rng.normal(size=(2, 4, 3)).astype("float32")
    mask = np.array([[1, 1, 1, 1], [1, 1, 0, 0]], dtype="float32")
    tags = np.array([[0, 1, 2, 0], [1, 2, 0, 0]], dtype="int32")
    out = np.asarray(layer(em, mask=mask.astype(bool)))
    ll = np.asarray(layer.log_likelihood(tags, out))
    for b, n in enumerate((4, 2)):
        seqs, scores = brute_scores(em[b, :n], trans, start, end)
        gold = scores[seqs.index(tuple(tags[b, :n]))]
        assert ll[b] == pytest.approx(gold - logsumexp(scores), abs=1e-4)
    loss = float(layer.loss(tags, out))
    assert loss == pytest.approx(-ll.mean(), abs=1e-4)


def test_soft_log_likelihood_is_the_expectation_over_independent_tags(params):
    """Each word's tag drawn from its own distribution q_t: the expected log p(y) over every sequence,
    enumerated (the padding ignored), equals the layer's soft log-likelihood; a one-hot q gives log p(gold)."""
    trans, start, end = params
    layer = CRF(3)
    layer.build((None, None, 3))
    layer.set_weights([trans, start, end])
    rng = np.random.default_rng(3)
    em = rng.normal(size=(2, 4, 3)).astype("float32")
    mask = np.array([[1, 1, 1, 1], [1, 1, 1, 0]], dtype="float32")
    q = rng.dirichlet(np.ones(3), size=(2, 4)).astype("float32")
    out = np.asarray(layer(em, mask=mask.astype(bool)))
    soft = np.asarray(layer.soft_log_likelihood(q, out))
    for b, n in enumerate((4, 3)):
        seqs, scores = brute_scores(em[b, :n], trans, start, end)
        logp = scores - logsumexp(scores)
        weight = np.array([np.prod([q[b, t, y[t]] for t in range(n)]) for y in seqs])
        assert soft[b] == pytest.approx(float(weight @ logp), abs=1e-4)
    tags = np.array([[0, 1, 2, 0], [1, 2, 0, 0]], dtype="int32")
    onehot = np.eye(3, dtype="float32")[tags]
    np.testing.assert_allclose(layer.soft_log_likelihood(onehot, out), layer.log_likelihood(tags, out), atol=1e-5)
    # the distillation loss: (1 - w) of gold's and w of the teacher's, over the real rows
    targets = np.concatenate([q, tags[..., None].astype("float32")], -1)
    w = 0.25
    expected = -((1 - w) * np.asarray(layer.log_likelihood(tags, out)) + w * soft).mean()
    assert float(layer.distill_loss(w)(targets, out)) == pytest.approx(expected, abs=1e-4)
