"""Tagged documents: tokens with one BIO tag per type, sentences, and spans with character offsets into the
input text and a confidence; their JSONL form (``to_dict`` / ``from_dict``); the spans decoded from the tags
(the paper's decoding); corrected tags applied."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from opinion_tagger.runtime.bio import spans_from_bio

# (sentence index, type) -> a list per token of the sentence
BySentenceAndType = dict[tuple[int, str], list[Any]]


@dataclass
class TaggedToken:
    """A word: its text, its character offsets into the document's text, and its BIO tag per type
    (``{"DSE": "B-DSE", "ESE": "O"}``)."""

    text: str
    start: int
    end: int
    tags: dict[str, str]


@dataclass
class TaggedSentence:
    """A sentence: its character offsets and its tokens (whitespace tokens left out)."""

    start: int
    end: int
    tokens: list[TaggedToken]


@dataclass
class SpanFrame:
    """A tagged span's opinion frame, from a model with frame heads (docs/frames.md): its polarity and intensity
    with their probabilities and, for a DSE, its holder: ``{"start", "end", "text"}`` (offsets into the
    document), ``"writer"``, ``"implicit"``, or None (no holder in its sentence).  From a model with attitude and
    target heads, a DSE's attitude (one of ``ATTITUDE_TYPES``) and its targets (``{"start", "end", "text"}``
    each, in text order), with their probabilities; None without such heads (``to_dict`` leaves them out)."""

    polarity: str
    polarity_score: float
    intensity: str
    intensity_score: float
    holder: dict[str, Any] | str | None = None
    holder_score: float | None = None
    attitude: str | None = None
    attitude_score: float | None = None
    targets: list[dict[str, Any]] | None = None
    target_scores: list[float] | None = None

    def to_dict(self, holder: bool) -> dict[str, Any]:
        """The span's JSONL fields (``holder``: with the holder's, a DSE's)."""
        out = {k: getattr(self, k) for k in ("polarity", "polarity_score", "intensity", "intensity_score")}
        return {**out, "holder": self.holder, "holder_score": self.holder_score} if holder else out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SpanFrame | None:
        """The frame of a span's JSONL fields; None for a span without one."""
        if "polarity" not in data:
            return None
        return cls(
            data["polarity"],
            data.get("polarity_score", 1.0),
            data.get("intensity", ""),
            data.get("intensity_score", 1.0),
            data.get("holder"),
            data.get("holder_score"),
        )


@dataclass
class TaggedSpan:
    """An opinion expression: its type (``DSE`` or ``ESE``), its character offsets into the document's text
    (``text[start:end]`` is ``text``), its confidence (the mean of its words' tag probabilities) and, from a
    model with frame heads, its frame (polarity, intensity, a DSE's holder)."""

    type: str
    start: int
    end: int
    text: str
    score: float
    frame: SpanFrame | None = None


SPAN_FIELDS = ("type", "start", "end", "text", "score")  # a span's JSONL fields (and its frame's, where it has one)


@dataclass
class TaggedDocument:
    """A tagged document, or one that could not be tagged (``error`` set; then ``text``, ``sentences`` and
    ``spans`` are empty)."""

    id: str
    text: str
    sentences: list[TaggedSentence] = field(default_factory=list)
    spans: list[TaggedSpan] = field(default_factory=list)
    types: tuple[str, ...] = ("DSE", "ESE")
    error: str | None = None  # why the record was not tagged
    html: bool = False  # text is HTML source, tagged on what it shows (html_input); not in the JSONL record
    frames: bool = False  # tagged by a model with frame heads: its spans have frames
    # the language check (opinion_tagger.tagging.language): the ISO 639 code of the language the text looks like
    # when it is not English, and the warning that says so; None for English text and unchecked documents
    language: str | None = None
    warning: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSONL record: id, text, sentences with tokens (one tag per type), spans; after the id, the
        ``language`` and ``warning`` of a text that is not English; ``{"id", "error"}`` for a record that was not
        tagged."""
        if self.error is not None:
            return {"id": self.id, "error": self.error}
        sentences = []
        for s in self.sentences:  # loops, not comprehensions: this runs for every token tagged
            tokens = []
            for t in s.tokens:
                row = {"text": t.text, "start": t.start, "end": t.end}
                get = t.tags.get
                for ty in self.types:
                    row[ty] = get(ty, "O")
                tokens.append(row)
            sentences.append({"start": s.start, "end": s.end, "tokens": tokens})
        out: dict[str, Any] = {"id": self.id}
        if self.warning is not None:
            out["language"] = self.language
            out["warning"] = self.warning
        out["text"] = self.text
        out["sentences"] = sentences
        out["spans"] = [_span_dict(sp) for sp in self.spans]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any], types: tuple[str, ...] = ("DSE", "ESE")) -> TaggedDocument:
        """The document of a JSONL record (``to_dict``'s form); spans decoded from the tags when it has none."""
        if "error" in data:
            return cls(str(data.get("id", "")), "", types=types, error=str(data["error"]))
        sents = [
            TaggedSentence(
                s["start"],
                s["end"],
                [
                    TaggedToken(t["text"], t["start"], t["end"], {ty: t.get(ty, "O") for ty in types})
                    for t in s["tokens"]
                ],
            )
            for s in data.get("sentences", [])
        ]
        doc = cls(str(data.get("id", "")), data["text"], sents, [], types)
        given = data.get("spans", [])
        doc.spans = [TaggedSpan(**{f: sp[f] for f in SPAN_FIELDS}, frame=SpanFrame.from_dict(sp)) for sp in given]
        doc.spans = doc.spans or spans_of(doc)
        doc.frames = any(sp.frame is not None for sp in doc.spans)
        doc.language, doc.warning = data.get("language"), data.get("warning")
        return doc


def _span_dict(sp: TaggedSpan) -> dict[str, Any]:
    out = {f: getattr(sp, f) for f in SPAN_FIELDS}  # asdict deep-copies: slow
    if sp.frame is not None:
        out.update(sp.frame.to_dict(holder=sp.type == "DSE"))
    return out


def _words(doc: TaggedDocument, sent: TaggedSentence, tokens: tuple[int, int]) -> dict[str, Any]:
    """A token range of a sentence as ``{"start", "end", "text"}``, offsets into the document."""
    start, end = sent.tokens[tokens[0]].start, sent.tokens[tokens[1] - 1].end
    return {"start": start, "end": end, "text": doc.text[start:end]}


def _rounded(score: Any) -> float | None:
    return None if score is None else round(float(score), 4)


def span_frame(doc: TaggedDocument, sent: TaggedSentence, frame: Any) -> SpanFrame:
    """A span's frame from the runtime's prediction (``opinion_tagger.runtime.frame_heads.FramePrediction``): a
    holder's and the targets' tokens become offsets into the document, a holder ``none`` becomes None."""
    holder = frame.holder
    if isinstance(holder, tuple):
        holder = _words(doc, sent, holder)
    elif holder == "none":
        holder = None
    pol, inten = round(float(frame.polarity_score), 4), round(float(frame.intensity_score), 4)
    out = SpanFrame(frame.polarity, pol, frame.intensity, inten, holder, _rounded(frame.holder_score))
    out.attitude, out.attitude_score = frame.attitude, _rounded(frame.attitude_score)
    if frame.targets is not None:
        out.targets = [_words(doc, sent, t) for t in frame.targets]
        scores = frame.target_scores
        out.target_scores = None if scores is None else [round(float(x), 4) for x in scores]
    return out


def spans_of(
    doc: TaggedDocument,
    confidences: BySentenceAndType | None = None,
    tags: BySentenceAndType | None = None,
    frames: dict[tuple[int, str, int, int], Any] | None = None,
) -> list[TaggedSpan]:
    """Spans decoded from the tokens' BIO tags (the paper's decoding), with the
    mean confidence of their tokens (1.0 where none is given, e.g. after a correction).
    ``confidences`` and ``tags`` (the tokens' tags, where the caller has them as lists):
    by (sentence index, type); ``frames``: the runtime's frame of each span, by (sentence index, type, first
    token, end token)."""
    out = []
    for k, sent in enumerate(doc.sentences):
        for typ in doc.types:
            seq = (tags or {}).get((k, typ)) or [t.tags.get(typ, "O") for t in sent.tokens]
            conf = (confidences or {}).get((k, typ))
            for i, j, _ in spans_from_bio(seq):
                start, end = sent.tokens[i].start, sent.tokens[j - 1].end
                score = sum(conf[i:j]) / (j - i) if conf else 1.0
                span = TaggedSpan(typ, start, end, doc.text[start:end], round(float(score), 4))
                if frames is not None and (k, typ, i, j) in frames:
                    span.frame = span_frame(doc, sent, frames[(k, typ, i, j)])
                out.append(span)
    out.sort(key=lambda s: (s.start, s.end, s.type))
    return out


def apply_tags(doc: TaggedDocument, tags: list[dict[str, str]]) -> TaggedDocument:
    """A copy of ``doc`` with corrected tags, one ``{type: tag}`` per token in
    document order.  Spans are decoded again; a span the model also predicted
    keeps its score (and frame), a span made or changed by hand gets score 1.0 (and no frame)."""
    n_tokens = sum(len(s.tokens) for s in doc.sentences)
    if len(tags) != n_tokens:
        raise ValueError(f"{len(tags)} tag rows for {n_tokens} tokens")
    new = TaggedDocument(
        doc.id, doc.text, types=doc.types, frames=doc.frames, language=doc.language, warning=doc.warning
    )
    it = iter(tags)
    for s in doc.sentences:
        toks = []
        for t in s.tokens:
            row = next(it)
            fixed = {}
            for ty in doc.types:
                tag = row.get(ty) or "O"
                if tag not in ("O", f"B-{ty}", f"I-{ty}"):
                    raise ValueError(f"token {t.text!r} at {t.start}: {tag!r} is not a {ty} tag")
                fixed[ty] = tag
            toks.append(TaggedToken(t.text, t.start, t.end, fixed))
        new.sentences.append(TaggedSentence(s.start, s.end, toks))
    old = {(sp.type, sp.start, sp.end): sp for sp in doc.spans}
    new.spans = []
    for sp in spans_of(new):  # a span the model predicted keeps its score and frame
        kept = old.get((sp.type, sp.start, sp.end))
        new.spans.append(TaggedSpan(sp.type, sp.start, sp.end, sp.text, kept.score if kept else 1.0))
        new.spans[-1].frame = kept.frame if kept else None
    return new
