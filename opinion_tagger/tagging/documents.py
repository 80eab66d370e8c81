"""Tagged documents: tokens with one BIO tag per type, sentences, and spans with character offsets into the
input text and a confidence; their JSONL form (``to_dict`` / ``from_dict``); the spans decoded from the tags
(the paper's decoding); corrected tags applied."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from opinion_tagger.corpus.labels import spans_from_bio

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
class TaggedSpan:
    """An opinion expression: its type (``DSE`` or ``ESE``), its character offsets into the document's text
    (``text[start:end]`` is ``text``) and its confidence, the mean of its words' tag probabilities."""

    type: str
    start: int
    end: int
    text: str
    score: float


SPAN_FIELDS = tuple(f.name for f in fields(TaggedSpan))


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

    def to_dict(self) -> dict[str, Any]:
        """The JSONL record: id, text, sentences with tokens (one tag per type), spans;
        ``{"id", "error"}`` for a record that was not tagged."""
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
        return {
            "id": self.id,
            "text": self.text,
            "sentences": sentences,
            "spans": [{f: getattr(sp, f) for f in SPAN_FIELDS} for sp in self.spans],  # asdict deep-copies: slow
        }

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
        doc.spans = [TaggedSpan(**sp) for sp in data.get("spans", [])] or spans_of(doc)
        return doc


def spans_of(
    doc: TaggedDocument, confidences: BySentenceAndType | None = None, tags: BySentenceAndType | None = None
) -> list[TaggedSpan]:
    """Spans decoded from the tokens' BIO tags (the paper's decoding), with the
    mean confidence of their tokens (1.0 where none is given, e.g. after a correction).
    ``confidences`` and ``tags`` (the tokens' tags, where the caller has them as lists):
    by (sentence index, type)."""
    out = []
    for k, sent in enumerate(doc.sentences):
        for typ in doc.types:
            seq = (tags or {}).get((k, typ)) or [t.tags.get(typ, "O") for t in sent.tokens]
            conf = (confidences or {}).get((k, typ))
            for i, j, _ in spans_from_bio(seq):
                start, end = sent.tokens[i].start, sent.tokens[j - 1].end
                score = sum(conf[i:j]) / (j - i) if conf else 1.0
                out.append(TaggedSpan(typ, start, end, doc.text[start:end], round(float(score), 4)))
    out.sort(key=lambda s: (s.start, s.end, s.type))
    return out


def apply_tags(doc: TaggedDocument, tags: list[dict[str, str]]) -> TaggedDocument:
    """A copy of ``doc`` with corrected tags, one ``{type: tag}`` per token in
    document order.  Spans are decoded again; a span the model also predicted
    keeps its score, a span made or changed by hand gets score 1.0."""
    n_tokens = sum(len(s.tokens) for s in doc.sentences)
    if len(tags) != n_tokens:
        raise ValueError(f"{len(tags)} tag rows for {n_tokens} tokens")
    new = TaggedDocument(doc.id, doc.text, types=doc.types)
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
    old = {(sp.type, sp.start, sp.end): sp.score for sp in doc.spans}
    new.spans = [
        TaggedSpan(sp.type, sp.start, sp.end, sp.text, old.get((sp.type, sp.start, sp.end), 1.0))
        for sp in spans_of(new)
    ]
    return new
