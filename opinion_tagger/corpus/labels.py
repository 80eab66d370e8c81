"""Which MPQA annotations are DSEs and ESEs, and how spans become BIO tags (and BIO tags spans again:
``opinion_tagger.runtime.bio``)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from opinion_tagger.corpus.mpqa import Annotation
from opinion_tagger.sentences import Span, Token

OVERLAP_STRATEGIES = ("merge", "longest", "first")
IMPLICIT_CHOICES = ("none", "words", "all")


@dataclass(frozen=True)
class LabelRules:
    """Choices made when turning MPQA annotations into DSE/ESE BIO tags.

    The defaults were chosen by measuring agreement with Irsoy & Cardie's
    reference files (see corpora/README.md, "Agreement with the reference").

    - ``overlap``: spans of one type that share a token are ``merge``d into one
      span (union), or only the ``longest`` (or the ``first`` by start) is kept.
    - ``dse_insubstantial``: keep DSEs marked ``insubstantial``.
    - ``dse_implicit``: what to do with DSEs marked ``implicit="true"`` that
      still have a non-empty span (801 in the original subset): ``none`` drops
      them, ``all`` keeps them, ``words`` keeps those whose span holds a letter
      or digit (596) and drops those on punctuation only, mostly a quote mark.
    - ``min_intensity``: drop ESEs below this intensity ("" keeps all).
    """

    overlap: str = "merge"
    dse_insubstantial: bool = True
    dse_implicit: str = "words"
    min_intensity: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


_INTENSITY = {"neutral": 0, "low": 1, "medium": 2, "high": 3, "extreme": 4}


def opinion_spans(annotations: list[Annotation], text: str, rules: LabelRules = LabelRules()) -> list[Span]:
    """The DSE and ESE spans of a document's annotations (character offsets)."""
    return [span for span, _ in opinion_annotations(annotations, text, rules)]


def opinion_annotations(
    annotations: list[Annotation], text: str, rules: LabelRules = LabelRules()
) -> list[tuple[Span, Annotation]]:
    """The DSE and ESE spans of a document's annotations (character offsets), each with its annotation."""
    if rules.dse_implicit not in IMPLICIT_CHOICES:
        raise ValueError(f"dse_implicit must be one of {IMPLICIT_CHOICES}, got {rules.dse_implicit!r}")
    spans = []
    for a in annotations:
        if a.is_empty:
            continue
        if a.type == "GATE_direct-subjective":
            if a.is_implicit and (
                rules.dse_implicit == "none"
                or (rules.dse_implicit == "words" and not any(c.isalnum() for c in text[a.start : a.end]))
            ):
                continue
            if "insubstantial" in a.attrs and not rules.dse_insubstantial:
                continue
            spans.append((Span("DSE", a.start, a.end), a))
        elif a.type == "GATE_expressive-subjectivity":
            if rules.min_intensity:
                level = _INTENSITY.get(a.attrs.get("intensity", "").strip().split("-")[0], 2)
                if level < _INTENSITY[rules.min_intensity]:
                    continue
            spans.append((Span("ESE", a.start, a.end), a))
    return spans


def token_range(tokens: list[Token], span: Span) -> tuple[int, int] | None:
    """Indices [i, j) of the tokens that overlap ``span``; None if none does."""
    idx = [k for k, t in enumerate(tokens) if t.start < span.end and span.start < t.end]
    return (idx[0], idx[-1] + 1) if idx else None


def ranges_to_bio(n: int, ranges: list[tuple[int, int]], label: str, overlap: str = "merge") -> list[str]:
    """BIO tags for ``n`` tokens from token ranges [i, j) of one type.

    Ranges that share a token are resolved by ``overlap``: merged into their
    union, or only the longest / first one kept.  Ranges that merely touch
    (one ends where the next starts) stay separate spans.
    """
    if overlap not in OVERLAP_STRATEGIES:
        raise ValueError(f"unknown overlap strategy {overlap!r}")
    ranges = sorted(set(ranges))
    chosen: list[tuple[int, int]] = []
    if overlap == "merge":
        for i, j in ranges:
            if chosen and i < chosen[-1][1]:
                chosen[-1] = (chosen[-1][0], max(chosen[-1][1], j))
            else:
                chosen.append((i, j))
    else:
        order = sorted(ranges, key=lambda r: (r[0] - r[1], r[0])) if overlap == "longest" else ranges
        taken = [False] * n
        for i, j in order:
            if not any(taken[i:j]):
                chosen.append((i, j))
                taken[i:j] = [True] * (j - i)
    tags = ["O"] * n
    for i, j in chosen:
        tags[i] = f"B-{label}"
        for k in range(i + 1, j):
            tags[k] = f"I-{label}"
    return tags


def bio_tags(tokens: list[Token], spans: list[Span], label: str, overlap: str = "merge") -> list[str]:
    """BIO tags of type ``label`` for ``tokens``; a token is inside a span it overlaps."""
    ranges = [r for s in spans if s.type == label and (r := token_range(tokens, s))]
    return ranges_to_bio(len(tokens), ranges, label, overlap)
