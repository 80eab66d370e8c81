"""The paper's overlap metrics, and exact-match span scores via seqeval.

Irsoy & Cardie (2014) score opinion expressions with *binary* and
*proportional* overlap, micro-averaged over all sentences of a test set:

- spans are decoded from BIO as their evaluator does: a span starts at ``B``,
  or at an ``I`` that follows ``O`` or opens the sentence;
- binary precision: share of predicted spans that overlap any gold span;
  binary recall: share of gold spans overlapped by any predicted span;
- proportional precision: sum over predicted p and gold g of |p∩g|/|p|,
  divided by the number of predicted spans; proportional recall: sum of
  |p∩g|/|g| divided by the number of gold spans;
- F1 is the harmonic mean (0 when precision + recall is 0).

Empty sets follow the paper's evaluator (oir/deep-recurrent, evaluator.cpp):
with no predicted spans precision is 1.0; with no gold spans we set recall to
1.0 (their code divides by zero there).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

from opinion_tagger.runtime.bio import spans_from_bio


def _types(sentences: Sequence[Sequence[str]]) -> list[str]:
    return sorted({t.partition("-")[2] for s in sentences for t in s if t != "O"})


def _only(tags: Sequence[str], typ: str) -> list[str]:
    """Untyped B/I/O view of one type's tags (other types become O)."""
    return [t[0] if t != "O" and t.partition("-")[2] == typ else "O" for t in tags]


def _prf(p_num: float, n_pred: int, r_num: float, n_gold: int) -> dict:
    p = p_num / n_pred if n_pred else 1.0
    r = r_num / n_gold if n_gold else 1.0
    return {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0}


def _untyped_scores(gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]]) -> dict:
    n_pred = n_gold = 0
    bin_p = bin_r = prop_p = prop_r = 0.0
    for k, (g_tags, p_tags) in enumerate(zip(gold, pred, strict=True)):
        if len(g_tags) != len(p_tags):
            raise ValueError(f"sentence {k}: {len(g_tags)} gold tags but {len(p_tags)} predicted")
        gs = [(i, j) for i, j, _ in spans_from_bio(g_tags)]
        ps = [(i, j) for i, j, _ in spans_from_bio(p_tags)]
        n_gold += len(gs)
        n_pred += len(ps)
        overlap = [[max(0, min(pj, gj) - max(pi, gi)) for (gi, gj) in gs] for (pi, pj) in ps]
        for a, (pi, pj) in enumerate(ps):
            bin_p += any(overlap[a])
            prop_p += sum(overlap[a]) / (pj - pi)
        for b, (gi, gj) in enumerate(gs):
            col = [overlap[a][b] for a in range(len(ps))]
            bin_r += any(col)
            prop_r += sum(col) / (gj - gi)
    return {
        "binary": _prf(bin_p, n_pred, bin_r, n_gold),
        "proportional": _prf(prop_p, n_pred, prop_r, n_gold),
        "counts": {"gold": n_gold, "predicted": n_pred},
    }


def overlap_scores(gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]]) -> dict:
    """Binary and proportional overlap precision/recall/F1.

    ``gold`` and ``pred``: lists of sentences, each a list of tags.  With
    untyped tags (``B``/``I``/``O``) returns ``{"binary": {...},
    "proportional": {...}, "counts": {...}}``; with typed tags (``B-DSE``...)
    returns that dict per type, e.g. ``{"DSE": {...}, "ESE": {...}}``.
    """
    if len(gold) != len(pred):
        raise ValueError(f"{len(gold)} gold sentences but {len(pred)} predicted")
    types = _types(list(gold) + list(pred))
    if types in ([], [""]):
        return _untyped_scores(gold, pred)
    if "" in types:
        raise ValueError("mixed typed and untyped tags")
    return {t: _untyped_scores([_only(s, t) for s in gold], [_only(s, t) for s in pred]) for t in types}


def _iob2(tags: Sequence[str]) -> list[str]:
    """Repair stray I tags (I after O or another type) into B, as the paper's decoding reads them."""
    out, prev = [], "O"
    for t in tags:
        if t.startswith("I-") and (prev == "O" or prev.partition("-")[2] != t[2:]):
            t = "B-" + t[2:]
        out.append(t)
        prev = t
    return out


def exact_scores(gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]]) -> dict:
    """Exact-match span precision/recall/F1 per type, from seqeval (strict IOB2).

    Tags must be typed (``B-DSE``); predicted stray ``I`` tags are first read as
    span starts, as the overlap metrics read them.
    """
    from seqeval.metrics import classification_report
    from seqeval.scheme import IOB2

    gold = [_iob2(s) for s in gold]
    pred = [_iob2(s) for s in pred]
    with warnings.catch_warnings():  # seqeval averages empty arrays when a set has no span at all
        warnings.simplefilter("ignore", RuntimeWarning)
        report = classification_report(gold, pred, mode="strict", scheme=IOB2, output_dict=True, zero_division=0)
    return {
        t: {
            "precision": float(v["precision"]),
            "recall": float(v["recall"]),
            "f1": float(v["f1-score"]),
            "support": int(v["support"]),
        }
        for t, v in report.items()
        if "avg" not in t
    }


def span_report(gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]], types: Sequence[str]) -> dict:
    """Per type (e.g. ``["DSE", "ESE"]``): binary, proportional and exact scores."""
    exact = exact_scores(gold, pred)
    out = {}
    for t in types:
        scores = _untyped_scores([_only(s, t) for s in gold], [_only(s, t) for s in pred])
        e = exact.get(t)
        if e is None:  # no gold and no predicted span of this type: the empty-set convention above
            e = {"precision": 1.0, "recall": 1.0, "f1": 1.0, "support": 0}
        out[t] = {**scores, "exact": e}
    return out
