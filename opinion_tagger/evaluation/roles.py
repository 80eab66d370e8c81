"""Scores of a DSE's opinion roles: its holder and its targets by token overlap, after Marasović & Frank (2018),
and its attitude type (docs/frames.md, *Holders, targets and attitudes: scores*).

Gold and predicted frames (``opinion_tagger.sentences.Frame``) come per sentence, spans as token ranges
[start, end); only DSE frames are read.  A frame's *role spans*:

- holder: ``[holder]`` when the holder is a token span of the sentence; ``[]`` when it is a class (``writer``,
  ``implicit``, ``none``: no words of the sentence, as Marasović & Frank give such a DSE no holder span); None
  when unknown.
- target: the frame's ``targets`` (possibly empty); None when not read (a document without attitudes, a
  predictor without a target head).

Overlap of one role span with a set of role spans, over tokens: *binary*, 1 if they share a token, else 0;
*proportional*, the share of the span's tokens that lie in any span of the set (|r ∩ ∪S| / |r|).  Precision is
the sum of the predicted role spans' overlaps with their gold role spans over the number of predicted role
spans; recall the sum of the gold role spans' overlaps with their predicted role spans over the number of gold
role spans; F1 their harmonic mean.  Micro-averaged over every DSE of every sentence; with no predicted role
span precision is 1, with no gold one recall is 1 (as ``opinion_tagger.evaluation.metrics``).  Where the spans
of a set do not overlap each other this is Irsoy & Cardie's, and Johansson & Moschitti's, sum over pairs; a
DSE's targets may nest (a noun phrase and the clause around it), and the share of the union never counts a
token twice.

- **Gold DSE given**: the roles predicted for each gold DSE (the role heads run on the gold span) against that
  DSE's gold roles; a DSE whose gold role is unknown is left out.  Marasović & Frank's setting.
- **End to end**: the roles of the predicted DSEs.  A predicted role span of predicted DSE p is scored against
  the gold role spans of the gold DSEs that p overlaps (their union; none: it scores 0), and a gold role span
  of gold DSE g against the predicted role spans of the predicted DSEs that overlap g: a role counts only where
  its expression was found.  A gold DSE whose role is unknown is left out, and so are the predicted DSEs that
  overlap only such gold DSEs; a predicted DSE that overlaps no gold DSE counts its role spans against
  precision.  Targets are scored only in the documents where they were read (some gold DSE has ``targets``).
- **Attitude type**: accuracy on the DSEs whose gold attitude is known, beside the majority class's share
  (``opinion_tagger.evaluation.frames.accuracy``): on the gold DSEs given, and on the matched DSEs (each gold
  DSE and the predicted DSE that overlaps it most, ``opinion_tagger.evaluation.frames.matched_pairs``).

Marasović & Frank's released scorer (``eval_utils.f_measure_orl``) counts each predicted span that overlaps a
gold span once (the first gold span it meets) and divides that one count by the predicted spans for precision
and by the gold spans for recall; its proportional count is the overlap's share of that *gold* span, for both.
With at most one gold and one predicted span of a role per DSE (the holder nearly always) its binary figures are
the ones here; its proportional precision divides by the gold span's length where this one divides by the
predicted span's.
"""

from __future__ import annotations

from collections.abc import Sequence

from opinion_tagger.evaluation.frames import accuracy, matched_pairs
from opinion_tagger.evaluation.metrics import _prf
from opinion_tagger.sentences import Frame

ROLES = ("holder", "target")
Spans = list[tuple[int, int]]


def role_spans(frame: Frame, role: str) -> Spans | None:
    """A frame's spans of ``role`` (``holder`` or ``target``), None when unknown (see the module)."""
    if role == "holder":
        h = frame.holder
        return None if h is None else [h] if isinstance(h, tuple) else []
    if role == "target":
        return None if frame.targets is None else list(frame.targets)
    raise ValueError(f"unknown role {role!r} (one of {', '.join(ROLES)})")


def _covered(span: tuple[int, int], others: Sequence[tuple[int, int]]) -> int:
    """How many tokens of ``span`` lie in any span of ``others``."""
    return sum(any(a <= k < b for a, b in others) for k in range(span[0], span[1]))


def _overlaps(a: Frame, b: Frame) -> bool:
    return max(a.start, b.start) < min(a.end, b.end)


class _Tally:
    """The sums of the role spans' overlaps, predicted and gold, and how many there were."""

    def __init__(self) -> None:
        self.bin_p = self.prop_p = self.bin_r = self.prop_r = 0.0
        self.n_pred = self.n_gold = self.dses = 0

    def predicted(self, spans: Spans, gold: Spans) -> None:
        for s in spans:
            covered = _covered(s, gold)
            self.n_pred += 1
            self.bin_p += covered > 0
            self.prop_p += covered / (s[1] - s[0])

    def gold(self, spans: Spans, predicted: Spans) -> None:
        for s in spans:
            covered = _covered(s, predicted)
            self.n_gold += 1
            self.bin_r += covered > 0
            self.prop_r += covered / (s[1] - s[0])

    def report(self) -> dict:
        return {
            "binary": _prf(self.bin_p, self.n_pred, self.bin_r, self.n_gold),
            "proportional": _prf(self.prop_p, self.n_pred, self.prop_r, self.n_gold),
            "counts": {"dses": self.dses, "gold": self.n_gold, "predicted": self.n_pred},
        }


def _dses(frames: Sequence[Frame]) -> list[Frame]:
    return [f for f in frames if f.type == "DSE"]


def _given_pairs(gold: Sequence[Sequence[Frame]], given: Sequence[Sequence[Frame]]) -> list[tuple[Frame, Frame]]:
    """(gold DSE, the frame predicted on its span) for every gold DSE; the predicted frames must be those of the
    gold DSEs' spans, in their order."""
    if len(gold) != len(given):
        raise ValueError(f"{len(gold)} gold sentences but {len(given)} with frames of the gold DSEs")
    pairs: list[tuple[Frame, Frame]] = []
    for k, (gs, ps) in enumerate(zip(gold, given)):
        g, p = _dses(gs), _dses(ps)
        if [(f.start, f.end) for f in g] != [(f.start, f.end) for f in p]:
            raise ValueError(f"sentence {k}: the frames given are not those of the gold DSEs' spans")
        pairs += zip(g, p)
    return pairs


def given_overlap(gold: Sequence[Sequence[Frame]], given: Sequence[Sequence[Frame]], role: str) -> dict:
    """Binary and proportional precision, recall and F1 of ``role`` with the gold DSEs given: ``given`` holds,
    per sentence, the frames predicted on the gold DSEs' spans (in their order); their ``counts``."""
    tally = _Tally()
    for g, p in _given_pairs(gold, given):
        gold_spans = role_spans(g, role)
        if gold_spans is None:
            continue
        pred_spans = role_spans(p, role) or []
        tally.dses += 1
        tally.predicted(pred_spans, gold_spans)
        tally.gold(gold_spans, pred_spans)
    return tally.report()


def end_to_end_overlap(
    gold: Sequence[Sequence[Frame]],
    pred: Sequence[Sequence[Frame]],
    role: str,
    scored: Sequence[bool] | None = None,
) -> dict:
    """Binary and proportional precision, recall and F1 of ``role`` end to end: the roles of the predicted DSEs
    (see the module); only the sentences ``scored`` marks (default: all).  ``counts.dses``: the gold DSEs
    scored."""
    if len(gold) != len(pred):
        raise ValueError(f"{len(gold)} gold sentences but {len(pred)} predicted")
    tally = _Tally()
    for k, (gs, ps) in enumerate(zip(gold, pred)):
        if scored is not None and not scored[k]:
            continue
        golds, preds = _dses(gs), _dses(ps)
        for g in golds:
            gold_spans = role_spans(g, role)
            if gold_spans is None:
                continue
            tally.dses += 1
            tally.gold(gold_spans, [s for p in preds if _overlaps(p, g) for s in role_spans(p, role) or []])
        for p in preds:
            hits = [role_spans(g, role) for g in golds if _overlaps(p, g)]
            known = [spans for spans in hits if spans is not None]
            if hits and not known:
                continue  # it overlaps only gold DSEs whose role is unknown
            tally.predicted(role_spans(p, role) or [], [s for spans in known for s in spans])
    return tally.report()


def read_documents(gold: Sequence[Sequence[Frame]], role: str, documents: Sequence[str]) -> list[bool]:
    """For each sentence, whether its document (``documents``: each sentence's) has a gold DSE whose ``role`` is
    known."""
    known = {d for d, frames in zip(documents, gold) if any(role_spans(f, role) is not None for f in _dses(frames))}
    return [d in known for d in documents]


def attitude_scores(
    gold: Sequence[Sequence[Frame]],
    pred: Sequence[Sequence[Frame]],
    given: Sequence[Sequence[Frame]] | None = None,
) -> dict:
    """Attitude-type accuracy and the majority class's share: on the matched DSEs (``matched``) and, with
    ``given`` (the frames predicted on the gold DSEs' spans), on the gold DSEs (``gold_dse_given``); both over
    the DSEs whose gold attitude is known."""
    pairs = matched_pairs([_dses(s) for s in gold], [_dses(s) for s in pred])
    out = {}
    if given is not None:
        out["gold_dse_given"] = accuracy([(g.attitude, p.attitude) for g, p in _given_pairs(gold, given)])
    out["matched"] = accuracy([(g.attitude, p.attitude) for g, p in pairs])
    return out


def role_report(
    gold: Sequence[Sequence[Frame]],
    pred: Sequence[Sequence[Frame]],
    given: Sequence[Sequence[Frame]] | None = None,
    roles: Sequence[str] = ("holder",),
    attitude: bool = False,
    documents: Sequence[str] | None = None,
) -> dict:
    """The scores of what a predictor predicts: for each of ``roles`` (``holder``, ``target``) binary and
    proportional F1 with the gold DSEs given (``gold_dse_given``, when ``given`` holds the frames predicted on the
    gold DSEs' spans) and end to end (``end_to_end``); with ``attitude``, the attitude-type accuracies.
    ``documents``: each sentence's document, for the documents where targets were read (default: each sentence
    its own)."""
    if len(gold) != len(pred):
        raise ValueError(f"{len(gold)} gold sentences but {len(pred)} predicted")
    names = list(documents) if documents is not None else [str(k) for k in range(len(gold))]
    out: dict = {}
    for role in roles:
        scored = None if role == "holder" else read_documents(gold, role, names)
        report = {"gold_dse_given": given_overlap(gold, given, role)} if given is not None else {}
        out[role] = {**report, "end_to_end": end_to_end_overlap(gold, pred, role, scored)}
    if attitude:
        out["attitude"] = attitude_scores(gold, pred, given)
    return out
