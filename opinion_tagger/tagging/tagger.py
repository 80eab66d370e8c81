"""Tag raw text: sentence splitting and tokenisation (spaCy), the model, and
spans with character offsets into the input and a confidence.

    from opinion_tagger.tagging.tagger import OpinionTagger
    ot = OpinionTagger.load()                 # the bundled model
    doc = ot.tag("Officials said the plan was daylight robbery.")
    doc.spans   # [Span(type='DSE', start=10, end=14, text='said', score=0.93), ...]
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from opinion_tagger.corpus.labels import spans_from_bio
from opinion_tagger.errors import TaggerError
from opinion_tagger.paths import resolve_model
from opinion_tagger.runtime.sentence_tagger import SentenceTagger
from opinion_tagger.tagging.inputs import Record, check_text


@dataclass
class TaggedToken:
    text: str
    start: int
    end: int
    tags: dict[str, str]


@dataclass
class TaggedSentence:
    start: int
    end: int
    tokens: list[TaggedToken]


@dataclass
class SpanFrame:
    """A tagged span's opinion frame, from a model with frame heads (docs/frames.md): its polarity and intensity
    with their probabilities and, for a DSE, its holder: ``{"start", "end", "text"}`` (offsets into the
    document), ``"writer"``, ``"implicit"``, or None (no holder in its sentence)."""

    polarity: str
    polarity_score: float
    intensity: str
    intensity_score: float
    holder: dict | str | None = None
    holder_score: float | None = None

    def to_dict(self, holder: bool) -> dict:
        """The span's JSONL fields (``holder``: with the holder's, a DSE's)."""
        out = {k: getattr(self, k) for k in ("polarity", "polarity_score", "intensity", "intensity_score")}
        return {**out, "holder": self.holder, "holder_score": self.holder_score} if holder else out

    @classmethod
    def from_dict(cls, data: dict) -> SpanFrame | None:
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
    type: str
    start: int
    end: int
    text: str
    score: float
    frame: SpanFrame | None = None  # from a model with frame heads


SPAN_FIELDS = ("type", "start", "end", "text", "score")  # a span's JSONL fields (and its frame's, where it has one)
BATCH_SIZE = 128  # sentences a batch of the network at most, by default (within the tagger's budgets)


@dataclass
class TaggedDocument:
    id: str
    text: str
    sentences: list[TaggedSentence] = field(default_factory=list)
    spans: list[TaggedSpan] = field(default_factory=list)
    types: tuple[str, ...] = ("DSE", "ESE")
    error: str | None = None  # why the record was not tagged (then text, sentences and spans are empty)
    frames: bool = False  # tagged by a model with frame heads: its spans have frames

    def to_dict(self) -> dict:
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
            "spans": [_span_dict(sp) for sp in self.spans],
        }

    @classmethod
    def from_dict(cls, data: dict, types: tuple[str, ...] = ("DSE", "ESE")) -> TaggedDocument:
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
        return doc


def _span_dict(sp: TaggedSpan) -> dict:
    out = {f: getattr(sp, f) for f in SPAN_FIELDS}  # asdict deep-copies: slow
    if sp.frame is not None:
        out.update(sp.frame.to_dict(holder=sp.type == "DSE"))
    return out


def span_frame(doc: TaggedDocument, sent: TaggedSentence, frame) -> SpanFrame:
    """A span's frame from the runtime's prediction (``opinion_tagger.runtime.frame_heads.FramePrediction``): a
    holder's tokens become offsets into the document, ``none`` becomes None."""
    holder = frame.holder
    if isinstance(holder, tuple):
        start, end = sent.tokens[holder[0]].start, sent.tokens[holder[1] - 1].end
        holder = {"start": start, "end": end, "text": doc.text[start:end]}
    elif holder == "none":
        holder = None
    score = None if frame.holder_score is None else round(float(frame.holder_score), 4)
    pol, inten = round(float(frame.polarity_score), 4), round(float(frame.intensity_score), 4)
    return SpanFrame(frame.polarity, pol, frame.intensity, inten, holder, score)


def spans_of(
    doc: TaggedDocument, confidences: dict | None = None, tags: dict | None = None, frames: dict | None = None
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


def tokenised(records: list[tuple[str, str]], types: tuple[str, ...] = ("DSE", "ESE")) -> list[TaggedDocument]:
    """``(id, text)`` records split into sentences and tokens (spaCy), with no tags or spans yet."""
    import numpy as np
    from spacy.attrs import IDX, IS_SPACE, LENGTH, SENT_START

    from opinion_tagger.tokenize import _nlp

    docs = []
    for (rid, text), sdoc in zip(records, _nlp().pipe(t for _, t in records)):
        doc = TaggedDocument(rid, text, types=types)
        # the tokens' offsets, lengths and sentence starts in one array, whitespace tokens dropped; a sentence
        # of whitespace alone is none (whole arrays: faster than a spaCy Token object each)
        arr = sdoc.to_array([IDX, LENGTH, IS_SPACE, SENT_START]).astype(np.int64)
        keep = arr[:, 2] == 0
        sentence = np.cumsum(arr[:, 3] == 1)[keep]
        starts = arr[keep, 0]
        begin, end = starts.tolist(), (starts + arr[keep, 1]).tolist()
        cuts = (np.flatnonzero(np.diff(sentence)) + 1).tolist()
        for a, b in zip([0, *cuts], [*cuts, len(begin)]) if begin else ():
            toks = [TaggedToken(text[i:j], i, j, {}) for i, j in zip(begin[a:b], end[a:b])]
            doc.sentences.append(TaggedSentence(toks[0].start, toks[-1].end, toks))
        docs.append(doc)
    return docs


def with_predictions(docs: list[TaggedDocument], preds: list[dict], frames: list | None = None) -> list[TaggedDocument]:
    """``docs`` (from ``tokenised``) with their tokens' tags and their spans set from ``SentenceTagger.predict``'s
    output for their sentences, in order; ``frames``: each sentence's frames (``predict_frames``), for a model
    with frame heads."""
    k = 0
    for doc in docs:
        conf, tagged, found = {}, {}, {}
        for s_i, sent in enumerate(doc.sentences):
            for typ, (tags, scores) in preds[k].items():
                for tok, tag in zip(sent.tokens, tags):
                    tok.tags[typ] = tag
                conf[(s_i, typ)] = scores
                tagged[(s_i, typ)] = tags
            for f in frames[k] if frames is not None else ():
                found[(s_i, f.type, f.start, f.end)] = f
            k += 1
        doc.frames = frames is not None
        doc.spans = spans_of(doc, conf, tagged, found if frames is not None else None)
    return docs


class OpinionTagger:
    """Text in, tagged documents out; a thin layer over ``SentenceTagger``."""

    def __init__(self, tagger: SentenceTagger, batch_size: int | None = None):
        """``batch_size``: sentences in a batch of the network, whatever their length (the tagger's word and
        wordpiece budgets lifted): for a GPU, where a batch of 1,024 sentences costs little more than one of 64
        (experiments/device/bench_gpu_tagging.py); default: ``BATCH_SIZE`` within the budgets, the CPU's best."""
        self.tagger = tagger
        self.batch_size = batch_size or BATCH_SIZE
        if batch_size:
            tagger.lift_budgets()

    @classmethod
    def load(
        cls,
        model: str | Path | None = None,
        backend: str = "onnx",
        threads: int | None = None,
        batch_size: int | None = None,
    ) -> OpinionTagger:
        """``model``: a bundle directory or a bundled model's name (``accurate``, ``fast``; default
        ``opinion_tagger.paths.DEFAULT_NAME``); ``backend`` and ``threads``: see ``SentenceTagger.load``;
        ``batch_size``: see ``OpinionTagger``."""
        return cls(SentenceTagger.load(resolve_model(model), backend=backend, threads=threads), batch_size)

    @property
    def types(self) -> tuple[str, ...]:
        return self.tagger.types

    def tag(self, text: str, id: str = "") -> TaggedDocument:
        """Tag one text; raises ``InvalidText`` (a ValueError) with the reason when
        ``check_text`` refuses it (empty, lone surrogates, NUL characters, not a string)."""
        doc = next(self.tag_many([(id, text)]))
        if doc.error is not None:
            raise InvalidText(f"{doc.id or 'text'}: {doc.error}")
        return doc

    def tag_many(self, records: Iterable[tuple[str, str] | str | Record], chunk: int = 64) -> Iterator[TaggedDocument]:
        """Tag ``(id, text)`` pairs, bare strings or ``Record``s lazily, ``chunk`` at a time.

        Exactly one document per input, in input order: one that cannot be tagged
        (see ``opinion_tagger.tagging.inputs.check_text``) comes back with ``error`` set, and never
        stops the stream."""
        buf: list[Record] = []
        for n, rec in enumerate(records):
            buf.append(_as_record(n, rec))
            if len(buf) >= max(chunk, 1):
                yield from self._tag_records(buf)
                buf = []
        if buf:
            yield from self._tag_records(buf)

    def _tag_records(self, records: list[Record]) -> list[TaggedDocument]:
        good = [(r.id, r.text or "") for r in records if r.error is None]  # checked (_as_record): no error, a text
        try:
            tagged = self._tag_chunk(good) if good else []
        except Exception:  # find the record that fails, tag the others
            tagged = [self._tag_one(rid, text) for rid, text in good]
        it = iter(tagged)
        return [
            next(it) if r.error is None else TaggedDocument(r.id, "", types=self.types, error=r.error) for r in records
        ]

    def _tag_one(self, rid: str, text: str) -> TaggedDocument:
        try:
            return self._tag_chunk([(rid, text)])[0]
        except Exception as exc:
            reason = (str(exc).splitlines() or [""])[0]
            return TaggedDocument(
                rid, "", types=self.types, error=f"internal error while tagging: {type(exc).__name__}: {reason}"
            )

    def _tag_chunk(self, records: list[tuple[str, str]]) -> list[TaggedDocument]:
        docs = tokenised(records, self.types)
        words = [[t.text for t in s.tokens] for doc in docs for s in doc.sentences]
        if getattr(self.tagger, "heads", None) is not None:  # frame heads: polarity, intensity, holder too
            both = self.tagger.predict_frames(words, batch_size=self.batch_size)
            return with_predictions(docs, [p for p, _ in both], [f for _, f in both])
        return with_predictions(docs, self.tagger.predict(words, batch_size=self.batch_size))


class InvalidText(TaggerError, ValueError):
    """A text that ``check_text`` refuses, given to ``OpinionTagger.tag``."""


def _as_record(n: int, rec) -> Record:
    """A checked record from a tag_many input: a ``Record``, an ``(id, text)`` pair or a string."""
    if isinstance(rec, Record):
        return rec if rec.error is not None else check_text(rec.id, rec.text, max_chars=None)
    if isinstance(rec, (str, bytes)):
        return check_text(str(n), rec, max_chars=None)
    if isinstance(rec, (tuple, list)) and len(rec) == 2:
        return check_text(str(rec[0]), rec[1], max_chars=None)
    return Record(str(n), error=f"expected a string or an (id, text) pair, not {type(rec).__name__}")


def apply_tags(doc: TaggedDocument, tags: list[dict[str, str]]) -> TaggedDocument:
    """A copy of ``doc`` with corrected tags, one ``{type: tag}`` per token in
    document order.  Spans are decoded again; a span the model also predicted
    keeps its score (and frame), a span made or changed by hand gets score 1.0 (and no frame)."""
    n_tokens = sum(len(s.tokens) for s in doc.sentences)
    if len(tags) != n_tokens:
        raise ValueError(f"{len(tags)} tag rows for {n_tokens} tokens")
    new = TaggedDocument(doc.id, doc.text, types=doc.types, frames=doc.frames)
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
