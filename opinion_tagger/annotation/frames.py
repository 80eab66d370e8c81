"""Opinion frames of stored spans (docs/frames.md): each span's polarity and intensity and a DSE's holder, as the
exports write them (JSONL fields, BRAT attributes and relations), as people read them (the review, the spans
table), and as training reads them (``opinion_tagger.sentences.Frame`` per sentence, the form
``opinion_tagger.corpus.frames`` gives MPQA's in).

A value is the model's (``*_source`` ``model``, with its probability ``*_score``) until a person changes it
(``human``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from opinion_tagger.annotation.store import Document, StoredSpan
from opinion_tagger.sentences import Frame, Sentence
from opinion_tagger.tagging.documents import TaggedDocument
from opinion_tagger.tagging.formats import _text_bound

if TYPE_CHECKING:
    from opinion_tagger.corpus.frames import FrameCounts

VALUES = ("polarity", "intensity", "holder")


def holder_chars(doc: Document, span: StoredSpan) -> tuple[int, int] | None:
    """Character offsets of a holder that is a token span of the document; None for any other."""
    h = span.holder_value
    if not isinstance(h, tuple) or not 0 <= h[0] < h[1] <= len(doc.tokens):
        return None
    return doc.tokens[h[0]].start, doc.tokens[h[1] - 1].end


def holder_json(doc: Document, span: StoredSpan) -> dict | str | None:
    """The holder as the ``tag`` command's JSONL gives it: ``{"start", "end", "text"}`` (offsets into the
    document), ``"writer"``, ``"implicit"``, or None for ``none`` (no holder)."""
    chars = holder_chars(doc, span)
    if chars is not None:
        return {"start": chars[0], "end": chars[1], "text": doc.text[chars[0] : chars[1]]}
    h = span.holder_value
    return h if isinstance(h, str) and h != "none" else None


def json_fields(doc: Document, span: StoredSpan) -> dict:
    """A span's frame fields in a JSONL export, each value where set: ``polarity``, ``intensity`` and a DSE's
    ``holder``, each with its ``_source`` (``model`` or ``human``) and, for the model's, its ``_score``."""
    out: dict = {}
    for name in VALUES:
        if getattr(span, name) is None or (name == "holder" and span.type != "DSE"):
            continue
        out[name] = holder_json(doc, span) if name == "holder" else getattr(span, name)
        out[f"{name}_source"] = getattr(span, f"{name}_source")
        if getattr(span, f"{name}_source") == "model" and getattr(span, f"{name}_score") is not None:
            out[f"{name}_score"] = getattr(span, f"{name}_score")
    return out


def holder_text(doc: Document, span: StoredSpan) -> str | None:
    """The holder for people: its words in quotes, ``writer``, ``implicit``, ``none``; None when not set."""
    chars = holder_chars(doc, span)
    if chars is not None:
        return f"“{' '.join(doc.text[chars[0] : chars[1]].split())}”"
    h = span.holder_value
    return h if isinstance(h, str) else None


def provenance(span: StoredSpan, name: str) -> str:
    """``model 0.81`` or ``human`` (who set a value), "" when the value is not set."""
    source, score = getattr(span, f"{name}_source"), getattr(span, f"{name}_score")
    if getattr(span, name) is None or source is None:
        return ""
    return f"model {score:.2f}" if source == "model" and score is not None else source


def summary(doc: Document, span: StoredSpan) -> str:
    """``negative, high, holder “Maria”``: the values set, "" when none is."""
    parts = [v for v in (span.polarity, span.intensity) if v is not None]
    holder = holder_text(doc, span) if span.type == "DSE" else None
    return ", ".join(parts + ([f"holder {holder}"] if holder else []))


def sources(span: StoredSpan) -> str:
    """``polarity model 0.80, intensity human``: where each value set came from."""
    return ", ".join(f"{name} {provenance(span, name)}" for name in VALUES if provenance(span, name))


def brat_lines(doc: Document, tagged_doc: TaggedDocument) -> str:
    """BRAT lines of the spans' frames, after ``brat_ann``'s text spans (``T`` numbers: spans in token order):
    ``A1<TAB>Intensity T3 high``, ``A2<TAB>Polarity T3 negative``, a DSE's holder as ``Holder T1 writer``
    (``implicit``, ``none``) or as a text span of type ``HOLDER`` (one per distinct holder) and a relation
    ``R1<TAB>Holder Arg1:T1 Arg2:T5``, as ``opinion_tagger.tagging.formats.brat_ann`` writes a model's."""
    spans = sorted(doc.spans, key=lambda s: (s.tok_start, s.tok_end, s.type))
    bounds: list[str] = []
    attrs: list[str] = []
    relations: list[str] = []
    holders: dict[tuple[int, int], int] = {}
    for n, sp in enumerate(spans, 1):
        for name, value in (("Intensity", sp.intensity), ("Polarity", sp.polarity)):
            if value is not None:
                attrs.append(f"A{len(attrs) + 1}\t{name} T{n} {value}")
        if sp.type != "DSE" or sp.holder_value is None:
            continue
        chars = holder_chars(doc, sp)
        if chars is None:
            attrs.append(f"A{len(attrs) + 1}\tHolder T{n} {sp.holder_value}")
            continue
        if chars not in holders:
            holders[chars] = len(spans) + len(holders) + 1
            bounds.append(_text_bound(holders[chars], "HOLDER", tagged_doc, *chars))
        relations.append(f"R{len(relations) + 1}\tHolder Arg1:T{n} Arg2:T{holders[chars]}")
    lines = bounds + attrs + relations
    return "\n".join(lines) + ("\n" if lines else "")


def sentence_frames(doc: Document, types: Sequence[str]) -> list[list[Frame]]:
    """Per sentence of the document (in order), the frames of its spans: by type (in ``types``' order), then in
    token order, with token positions in the sentence, as ``opinion_tagger.corpus.frames`` gives MPQA's.  A
    holder of words is a token span of the DSE's sentence; one in another sentence is ``none`` (as MPQA's
    reading has it: the holder has no mention in the sentence).  No ``expression_intensity``."""
    first: dict[int, int] = {}  # a sentence's number -> its first token's position
    for tok in doc.tokens:
        first.setdefault(tok.sentence, tok.position)
    index = {number: k for k, number in enumerate(first)}
    out: list[list[Frame]] = [[] for _ in first]
    order = {t: k for k, t in enumerate(types)}
    for sp in sorted(doc.spans, key=lambda s: (order.get(s.type, len(order)), s.tok_start)):
        if sp.type not in order:
            continue
        sentence = doc.tokens[sp.tok_start].sentence
        base = first[sentence]
        holder = sp.holder_value if sp.type == "DSE" else None
        if isinstance(holder, tuple):
            same = all(doc.tokens[k].sentence == sentence for k in (holder[0], holder[1] - 1))
            holder = (holder[0] - base, holder[1] - base) if same else "none"
        frame = Frame(sp.type, sp.tok_start - base, sp.tok_end - base, sp.polarity, sp.intensity, None, holder)
        out[index[sentence]].append(frame)
    return out


def frame_counts(docs: dict[str, list[Sentence]]) -> FrameCounts:
    """What the sentences' frames hold (the bundle records it): spans per type, those with a value set
    (``matched``), and the values."""
    from opinion_tagger.corpus.frames import FrameCounts

    counts = FrameCounts()
    for sentences in docs.values():
        for s in sentences:
            for f in s.frames or []:
                if f.type in counts.polarity:  # the corpus's types (DSE, ESE)
                    counts.add(f, any(v is not None for v in (f.polarity, f.intensity, f.holder)))
    return counts
