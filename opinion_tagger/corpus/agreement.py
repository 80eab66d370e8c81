"""Agreement of the project's MPQA conversion with Irsoy & Cardie's reference files.

Reference tokens are PTB-style without offsets; they are aligned to the MPQA
sentence text by a left-to-right search, so every reference span gets a
character range in the document.  Spans are then compared by character
overlap: the share of reference spans that some converted span overlaps, and
the share of converted spans that some reference span overlaps.
"""

from __future__ import annotations

from dataclasses import dataclass

from opinion_tagger.runtime.bio import spans_from_bio
from opinion_tagger.sentences import TYPES, Sentence

_PTB = {"``": '"', "''": '"', "-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-LCB-": "{", "-RCB-": "}"}


def align_tokens(words: list[str], text: str, offset: int = 0) -> list[tuple[int, int]]:
    """Character ranges of PTB ``words`` in ``text`` (shifted by ``offset``).

    A word that cannot be found near the cursor gets an empty range at the
    cursor, so alignment never fails, it only degrades locally.
    """
    out, cur = [], 0
    for w in words:
        cands = [_PTB.get(w, w).replace("\\/", "/").replace("\\*", "*")]
        if w in ("``", "''"):
            cands += ["``", "''", "'", "\u201c", "\u201d"]
        best = None
        for c in cands:
            k = text.find(c, cur, cur + 40 + len(c))
            if k >= 0 and (best is None or k < best[0]):
                best = (k, k + len(c))
        if best is None:
            out.append((offset + cur, offset + cur))
        else:
            out.append((offset + best[0], offset + best[1]))
            cur = best[1]
    return out


@dataclass
class Agreement:
    sentences_ours: int
    sentences_reference: int
    sentences_matched: int
    spans_ours: dict[str, int]
    spans_reference: dict[str, int]
    reference_covered: dict[str, float]  # share of reference spans overlapped by ours
    ours_covered: dict[str, float]  # share of our spans overlapped by reference spans

    def to_dict(self) -> dict:
        return self.__dict__.copy()


def _char_spans(sent: Sentence, typ: str, ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    return [(ranges[i][0], ranges[j - 1][1]) for i, j, _ in spans_from_bio(sent.tags[typ])]


def _covered(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> int:
    return sum(1 for s, e in a if any(s < e2 and s2 < e for s2, e2 in b))


def measure_agreement(ours: list[Sentence], reference: list[Sentence]) -> Agreement:
    """Compare converted MPQA sentences with reference sentences (matched by
    document name and sentence order within the document)."""
    by_doc: dict[str, list[Sentence]] = {}
    for s in ours:
        by_doc.setdefault(s.doc, []).append(s)
    ref_by_doc: dict[str, list[Sentence]] = {}
    for s in reference:
        ref_by_doc.setdefault(s.doc, []).append(s)

    n_ours = {t: 0 for t in TYPES}
    n_ref = {t: 0 for t in TYPES}
    cov_ref = {t: 0 for t in TYPES}
    cov_ours = {t: 0 for t in TYPES}
    matched = 0
    for doc, refs in ref_by_doc.items():
        mine = by_doc.get(doc, [])
        if len(mine) != len(refs):
            continue  # sentence segmentation differs: not comparable sentence by sentence
        for o, r in zip(mine, refs):
            matched += 1
            our_ranges = [(t.start, t.end) for t in o.tokens]
            ref_ranges = align_tokens(r.words, o.text, o.start)
            for t in TYPES:
                a = _char_spans(o, t, our_ranges)
                b = _char_spans(r, t, ref_ranges)
                n_ours[t] += len(a)
                n_ref[t] += len(b)
                cov_ref[t] += _covered(b, a)
                cov_ours[t] += _covered(a, b)
    return Agreement(
        sentences_ours=len(ours),
        sentences_reference=len(reference),
        sentences_matched=matched,
        spans_ours=n_ours,
        spans_reference=n_ref,
        reference_covered={t: cov_ref[t] / max(n_ref[t], 1) for t in TYPES},
        ours_covered={t: cov_ours[t] / max(n_ours[t], 1) for t in TYPES},
    )
