"""Scores of opinion frames (``opinion_tagger.sentences.Frame``): polarity, intensity and holder, per type.

Gold and predicted frames come per sentence, spans as token ranges [start, end); a gold value of None is
unknown (the corpus gives none: ``opinion_tagger.corpus.frames``) and left out of what needs it.

- Polarity-aware binary and proportional overlap (the paper's metrics, ``metrics``): a predicted span and a
  gold span overlap only where their polarities are equal.  Gold spans of unknown polarity are left out, and
  so are the predicted spans that overlap only such gold spans; a predicted span that overlaps no gold span
  counts, against precision.
- On matched spans: each gold span is matched to the predicted span that overlaps it most (a tie: the
  earlier); the polarity accuracy and the intensity accuracy over the matched gold spans whose value is known,
  beside the majority-class baseline (the share of the most frequent gold value among them).
- The holder of matched DSEs whose gold holder is known: right when both are the same class (``writer``,
  ``implicit``, ``none``) or both are token spans that overlap.  Accuracy, the majority baseline (the most
  frequent gold class: a constant answer cannot name a span), and precision, recall and F1 of naming a
  holder: a prediction other than ``none`` is a positive, right when the holder is; recall counts the gold
  holders other than ``none``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from opinion_tagger.evaluation.metrics import _prf
from opinion_tagger.sentences import HOLDER_CLASSES, Frame

NO_HOLDER = HOLDER_CLASSES[2]


def _overlap(a: Frame, b: Frame) -> int:
    return max(0, min(a.end, b.end) - max(a.start, b.start))


def _gold_polarity(frame: Frame, both: str) -> str | None:
    """The gold polarity scored: ``both`` read as ``neutral`` when a head merges them (``both="neutral"``)."""
    return "neutral" if both == "neutral" and frame.polarity == "both" else frame.polarity


def polarity_overlap(gold: Sequence[Sequence[Frame]], pred: Sequence[Sequence[Frame]], both: str = "keep") -> dict:
    """Polarity-aware binary and proportional precision, recall and F1 of one type's spans (see the module)."""
    n_pred = n_gold = 0
    bin_p = bin_r = prop_p = prop_r = 0.0
    for gs, ps in zip(gold, pred, strict=True):
        known = [g for g in gs if g.polarity is not None]
        unknown = [g for g in gs if g.polarity is None]
        n_gold += len(known)
        for p in ps:
            hits = [g for g in known if _overlap(p, g)]
            if not hits and any(_overlap(p, g) for g in unknown):
                continue  # it overlaps only gold spans of unknown polarity
            n_pred += 1
            same = [_overlap(p, g) for g in hits if _gold_polarity(g, both) == p.polarity]
            bin_p += any(same)
            prop_p += sum(same) / (p.end - p.start)
        for g in known:
            same = [_overlap(p, g) for p in ps if p.polarity == _gold_polarity(g, both)]
            bin_r += any(same)
            prop_r += sum(same) / (g.end - g.start)
    return {
        "binary": _prf(bin_p, n_pred, bin_r, n_gold),
        "proportional": _prf(prop_p, n_pred, prop_r, n_gold),
        "counts": {"gold": n_gold, "predicted": n_pred},
    }


def matched_pairs(gold: Sequence[Sequence[Frame]], pred: Sequence[Sequence[Frame]]) -> list[tuple[Frame, Frame]]:
    """(gold, predicted) for each gold span that a predicted span overlaps: the one that overlaps it most (a tie:
    the earlier)."""
    pairs = []
    for gs, ps in zip(gold, pred, strict=True):
        for g in gs:
            best = max(ps, key=lambda p: (_overlap(p, g), -p.start), default=None)
            if best is not None and _overlap(best, g):
                pairs.append((g, best))
    return pairs


def accuracy(pairs: Sequence[tuple[str | None, str | None]]) -> dict:
    """Accuracy of (gold, predicted) values where gold is known, and the majority-class baseline."""
    known = [(g, p) for g, p in pairs if g is not None]
    counts = Counter(g for g, _ in known)
    majority, n_majority = min(counts.items(), key=lambda kv: (-kv[1], kv[0]), default=(None, 0))
    n = len(known)
    return {
        "matched": n,
        "accuracy": sum(g == p for g, p in known) / n if n else 0.0,
        "majority": n_majority / n if n else 0.0,
        "majority_class": majority,
    }


def holder_right(gold, predicted) -> bool:
    """Whether a predicted holder is the gold one: the same class, or token spans that overlap."""
    if isinstance(gold, tuple) and isinstance(predicted, tuple):
        return max(gold[0], predicted[0]) < min(gold[1], predicted[1])
    return isinstance(gold, str) and gold == predicted


def holder_scores(pairs: Sequence[tuple[Frame, Frame]]) -> dict:
    """The holder of matched DSEs whose gold holder is known (see the module): accuracy, majority baseline,
    precision, recall and F1 of naming a holder, and per gold kind (``span`` for a token span) how many were
    right."""
    known = [(g.holder, p.holder) for g, p in pairs if g.holder is not None]
    n = len(known)
    right = [holder_right(g, p) for g, p in known]
    counts = Counter(g for g, _ in known if isinstance(g, str))
    majority, n_majority = min(counts.items(), key=lambda kv: (-kv[1], kv[0]), default=(None, 0))
    positives = sum(p is not None and p != NO_HOLDER for _, p in known)
    gold_positives = sum(g != NO_HOLDER for g, _ in known)
    true = sum(r for r, (g, _) in zip(right, known) if g != NO_HOLDER)
    kinds: dict[str, dict[str, int]] = {}
    for r, (g, _) in zip(right, known):
        entry = kinds.setdefault(g if isinstance(g, str) else "span", {"gold": 0, "right": 0})
        entry["gold"] += 1
        entry["right"] += r
    return {
        "matched": n,
        "accuracy": sum(right) / n if n else 0.0,
        "majority": n_majority / n if n else 0.0,
        "majority_class": majority,
        **_prf(true, positives, true, gold_positives),
        "kinds": dict(sorted(kinds.items())),
    }


def frame_report(
    gold: Sequence[Sequence[Frame]],
    pred: Sequence[Sequence[Frame]],
    types: Sequence[str],
    both: str = "keep",
    dse_intensity: str = "intensity",
) -> dict:
    """Per type: ``polarity_binary``, ``polarity_proportional`` (precision, recall, F1) and their ``counts``;
    ``polarity`` and ``intensity`` accuracy on matched spans with their majority baseline; for DSEs ``holder``.
    ``both``: ``neutral`` scores gold ``both`` as ``neutral`` (a head that merges them); ``dse_intensity``: the
    gold value a DSE's predicted intensity is scored against (``intensity`` or ``expression-intensity``)."""
    if len(gold) != len(pred):
        raise ValueError(f"{len(gold)} gold sentences but {len(pred)} predicted")
    out = {}
    for t in types:
        g_t = [[f for f in s if f.type == t] for s in gold]
        p_t = [[f for f in s if f.type == t] for s in pred]
        overlap = polarity_overlap(g_t, p_t, both)
        pairs = matched_pairs(g_t, p_t)
        expression = t == "DSE" and dse_intensity == "expression-intensity"
        report = {
            "polarity_binary": overlap["binary"],
            "polarity_proportional": overlap["proportional"],
            "counts": overlap["counts"],
            "polarity": accuracy([(_gold_polarity(g, both), p.polarity) for g, p in pairs]),
            "intensity": accuracy(
                [(g.expression_intensity if expression else g.intensity, p.intensity) for g, p in pairs]
            ),
        }
        if t == "DSE":
            report["holder"] = holder_scores(pairs)
        out[t] = report
    return out
