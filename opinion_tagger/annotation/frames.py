"""Opinion frames of stored spans (docs/frames.md): each span's polarity and intensity and a DSE's holder, attitude
and targets, as the exports write them (JSONL fields, BRAT attributes and relations), as people read them (the
review, the spans table), and as training reads them (``opinion_tagger.sentences.Frame`` per sentence, the form
``opinion_tagger.corpus.frames`` gives MPQA's in).

A value is the model's (``*_source`` ``model``, with its probability ``*_score``) until a person changes it
(``human``); so is each target of a DSE, and its list of targets (``targets_source``: the model's as it gave
it, or a person's once they added, removed or confirmed targets)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from opinion_tagger.annotation.store import NO_ATTITUDE, Document, StoredSpan, StoredTarget
from opinion_tagger.sentences import ATTITUDE_TYPES, Frame, Sentence
from opinion_tagger.tagging.documents import SpanFrame, TaggedDocument
from opinion_tagger.tagging.formats import _text_bound

if TYPE_CHECKING:
    from opinion_tagger.corpus.frames import FrameCounts

VALUES = ("polarity", "intensity", "holder", "attitude")  # each with its source and score
ROLES = ("holder", "attitude")  # a DSE's alone (and its targets)


def token_chars(doc: Document, start: int, end: int) -> tuple[int, int] | None:
    """Character offsets of the document's tokens [start, end); None for positions outside the document."""
    if not 0 <= start < end <= len(doc.tokens):
        return None
    return doc.tokens[start].start, doc.tokens[end - 1].end


def holder_chars(doc: Document, span: StoredSpan) -> tuple[int, int] | None:
    """Character offsets of a holder that is a token span of the document; None for any other."""
    h = span.holder_value
    return token_chars(doc, *h) if isinstance(h, tuple) else None


def _quoted(doc: Document, chars: tuple[int, int]) -> str:
    return f"“{' '.join(doc.text[chars[0] : chars[1]].split())}”"


def target_list(doc: Document, span: StoredSpan) -> list[tuple[StoredTarget, tuple[int, int]]]:
    """A DSE's targets with their character offsets, in token order (none for a span that is no DSE, or targets not
    set)."""
    if span.type != "DSE":
        return []
    found = ((t, token_chars(doc, t.start, t.end)) for t in span.targets or ())
    return [(t, chars) for t, chars in found if chars is not None]


def targets_json(doc: Document, span: StoredSpan) -> list[dict]:
    """A DSE's targets in a JSONL export: ``{"start", "end", "text", "source"}`` (offsets into the document) and,
    for the model's, its ``score``."""
    out = []
    for t, (a, b) in target_list(doc, span):
        item = {"start": a, "end": b, "text": doc.text[a:b], "source": t.source}
        out.append(item | ({"score": t.score} if t.source == "model" and t.score is not None else {}))
    return out


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
    ``holder`` and ``attitude`` (a type, or null: none), each with its ``_source`` (``model`` or ``human``) and,
    for the model's, its ``_score``; a DSE's ``targets`` (``targets_json``; ``[]``: none) and ``targets_source``
    (who made the list)."""
    out: dict = {}
    for name in VALUES:
        if getattr(span, name) is None or (name in ROLES and span.type != "DSE"):
            continue
        value = getattr(span, name)
        out[name] = holder_json(doc, span) if name == "holder" else None if value == NO_ATTITUDE else value
        out[f"{name}_source"] = getattr(span, f"{name}_source")
        if getattr(span, f"{name}_source") == "model" and getattr(span, f"{name}_score") is not None:
            out[f"{name}_score"] = getattr(span, f"{name}_score")
    if span.type == "DSE" and span.targets is not None:
        out["targets"] = targets_json(doc, span)
        out["targets_source"] = span.targets_source
    return out


def tagged_frame(doc: Document, span: StoredSpan) -> SpanFrame | None:
    """A stored span's frame as a tagged span carries it (what the CoNLL frame column writes, ``frame_text``): its
    polarity and intensity (``_`` where not set), a DSE's holder (``holder_json``) and, where its attitude or
    targets are set, its attitude (None: none) and targets; None when no value is set."""
    roles = span.type == "DSE" and (span.attitude is not None or span.targets is not None)
    if not roles and all(getattr(span, name) is None for name in VALUES if name not in ROLES or span.type == "DSE"):
        return None
    attitude = None if span.attitude in (None, NO_ATTITUDE) else span.attitude
    return SpanFrame(
        span.polarity or "_",
        span.polarity_score or 0.0,
        span.intensity or "_",
        span.intensity_score or 0.0,
        holder=holder_json(doc, span) if span.type == "DSE" else None,
        holder_score=span.holder_score,
        attitude=attitude,
        attitude_score=(span.attitude_score or 1.0) if roles else None,
        targets=[{k: t[k] for k in ("start", "end", "text")} for t in targets_json(doc, span)] if roles else None,
    )


def holder_text(doc: Document, span: StoredSpan) -> str | None:
    """The holder for people: its words in quotes, ``writer``, ``implicit``, ``none``; None when not set."""
    chars = holder_chars(doc, span)
    if chars is not None:
        return _quoted(doc, chars)
    h = span.holder_value
    return h if isinstance(h, str) else None


def target_provenance(target: StoredTarget) -> str:
    """``model 0.50`` or ``human``: where a target came from."""
    return f"model {target.score:.2f}" if target.source == "model" and target.score is not None else target.source


def targets_text(doc: Document, span: StoredSpan, sources: bool = False) -> str | None:
    """A DSE's targets for people: their words in quotes (``“the tax”, “Omar”``; with ``sources``, each with where
    it came from: ``“the tax” (model 0.50), “Omar” ✎``), ``none``; None when not set (or no DSE)."""
    if span.type != "DSE" or span.targets is None:
        return None
    shown = []
    for t, chars in target_list(doc, span):
        source = target_provenance(t)
        mark = "" if not sources else " ✎" if source == "human" else f" ({source})"
        shown.append(_quoted(doc, chars) + mark)
    return ", ".join(shown) or "none"


def targets_sources(doc: Document, span: StoredSpan) -> str:
    """``targets human: “the tax” model 0.50, “Omar” human`` (who made the list, then each target's source),
    ``targets model: none``; "" when not set."""
    if span.type != "DSE" or span.targets is None:
        return ""
    each = ", ".join(f"{_quoted(doc, chars)} {target_provenance(t)}" for t, chars in target_list(doc, span))
    return f"targets {span.targets_source}: {each or 'none'}"


def provenance(span: StoredSpan, name: str) -> str:
    """``model 0.81`` or ``human`` (who set a value), "" when the value is not set."""
    source, score = getattr(span, f"{name}_source"), getattr(span, f"{name}_score")
    if getattr(span, name) is None or source is None:
        return ""
    return f"model {score:.2f}" if source == "model" and score is not None else source


def summary(doc: Document, span: StoredSpan) -> str:
    """``negative, high, holder “Maria”, attitude sentiment-neg, targets “the tax”``: the values set, "" when none
    is."""
    parts = [v for v in (span.polarity, span.intensity) if v is not None]
    if span.type == "DSE":
        roles = (("holder", holder_text(doc, span)), ("attitude", span.attitude), ("targets", targets_text(doc, span)))
        parts += [f"{name} {value}" for name, value in roles if value is not None]
    return ", ".join(parts)


def sources(span: StoredSpan) -> str:
    """``polarity model 0.80, intensity human``: where each value set came from (the targets': ``targets_sources``)."""
    return ", ".join(
        f"{name} {provenance(span, name)}"
        for name in VALUES
        if provenance(span, name) and (name not in ROLES or span.type == "DSE")
    )


class _BratFrames:
    """The lines ``brat_lines`` writes, gathered span by span: text spans of holders and targets (numbered after
    the document's ``n`` opinion spans, one per kind and distinct offsets), attributes and relations."""

    def __init__(self, tagged_doc: TaggedDocument, n: int):
        self.tagged_doc, self.n = tagged_doc, n
        self.bounds: list[str] = []
        self.attrs: list[str] = []
        self.relations: list[str] = []
        self.numbers: dict[tuple[str, int, int], int] = {}

    def attribute(self, name: str, n: int, value: str) -> None:
        self.attrs.append(f"A{len(self.attrs) + 1}\t{name} T{n} {value}")

    def relation(self, name: str, n: int, kind: str, chars: tuple[int, int]) -> None:
        """A relation ``name`` from span ``n`` to the text span of ``kind`` at ``chars`` (written once)."""
        key = (kind, *chars)
        if key not in self.numbers:
            self.numbers[key] = self.n + len(self.numbers) + 1
            self.bounds.append(_text_bound(self.numbers[key], kind, self.tagged_doc, *chars))
        self.relations.append(f"R{len(self.relations) + 1}\t{name} Arg1:T{n} Arg2:T{self.numbers[key]}")

    def roles(self, doc: Document, sp: StoredSpan, n: int) -> None:
        """A DSE's holder (an attribute, or a ``HOLDER`` span and a relation), attitude and targets."""
        chars = holder_chars(doc, sp)
        if chars is not None:
            self.relation("Holder", n, "HOLDER", chars)
        elif sp.holder_value is not None:
            self.attribute("Holder", n, str(sp.holder_value))
        if sp.attitude is not None:
            self.attribute("Attitude", n, sp.attitude)
        for _, chars in target_list(doc, sp):
            self.relation("Target", n, "TARGET", chars)

    def text(self) -> str:
        lines = self.bounds + self.attrs + self.relations
        return "\n".join(lines) + ("\n" if lines else "")


def brat_lines(doc: Document, tagged_doc: TaggedDocument) -> str:
    """BRAT lines of the spans' frames, after ``brat_ann``'s text spans (``T`` numbers: spans in token order):
    ``A1<TAB>Intensity T3 high``, ``A2<TAB>Polarity T3 negative``, a DSE's holder as ``Holder T1 writer``
    (``implicit``, ``none``) or as a text span of type ``HOLDER`` (one per distinct holder) and a relation
    ``R1<TAB>Holder Arg1:T1 Arg2:T5``, as ``opinion_tagger.tagging.formats.brat_ann`` writes a model's; a DSE's
    attitude as ``Attitude T1 sentiment-neg`` (``none``), each of its targets as a text span of type ``TARGET``
    (one per distinct target) and a relation ``R2<TAB>Target Arg1:T1 Arg2:T6``."""
    spans = sorted(doc.spans, key=lambda s: (s.tok_start, s.tok_end, s.type))
    out = _BratFrames(tagged_doc, len(spans))
    for n, sp in enumerate(spans, 1):
        for name, value in (("Intensity", sp.intensity), ("Polarity", sp.polarity)):
            if value is not None:
                out.attribute(name, n, value)
        if sp.type == "DSE":
            out.roles(doc, sp, n)
    return out.text()


def _in_sentence(doc: Document, start: int, end: int, sentence: int) -> bool:
    """Whether the document's tokens [start, end) lie in ``sentence``."""
    if not 0 <= start < end <= len(doc.tokens):
        return False
    return doc.tokens[start].sentence == sentence == doc.tokens[end - 1].sentence


def sentence_targets(doc: Document, span: StoredSpan, sentence: int, base: int) -> tuple[tuple[int, int], ...] | None:
    """A DSE's targets as ``Frame.targets``: token spans of its sentence (``base``: the sentence's first token's
    position), in token order; a target in another sentence is dropped.  None (not read) while its targets are not
    set: the model gave none (no target head) and no person set them or its attitude."""
    if span.type != "DSE" or span.targets is None:
        return None
    inside = (t for t in span.targets if _in_sentence(doc, t.start, t.end, sentence))
    return tuple(sorted({(t.start - base, t.end - base) for t in inside}))


def sentence_frames(doc: Document, types: Sequence[str]) -> list[list[Frame]]:
    """Per sentence of the document (in order), the frames of its spans: by type (in ``types``' order), then in
    token order, with token positions in the sentence, as ``opinion_tagger.corpus.frames`` gives MPQA's.  A
    holder of words is a token span of the DSE's sentence; one in another sentence is ``none`` (as MPQA's
    reading has it: the holder has no mention in the sentence).  A DSE's attitude is its type (None where it is
    ``none`` or not set), its targets ``sentence_targets``.  No ``expression_intensity``."""
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
            holder = (holder[0] - base, holder[1] - base) if _in_sentence(doc, *holder, sentence) else "none"
        attitude = sp.attitude if sp.type == "DSE" and sp.attitude in ATTITUDE_TYPES else None
        targets = sentence_targets(doc, sp, sentence, base)
        start, end = sp.tok_start - base, sp.tok_end - base
        frame = Frame(sp.type, start, end, sp.polarity, sp.intensity, None, holder, attitude, targets)
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
                    values = (f.polarity, f.intensity, f.holder, f.attitude, f.targets)
                    counts.add(f, any(v is not None for v in values))
    return counts
