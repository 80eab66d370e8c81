"""Text in, tagged documents out: ``OpinionTagger``, a thin layer over the runtime's ``SentenceTagger``.

Sentences and tokens come from spaCy (a blank English tokenizer and the rule-based sentencizer, or the
``Doc`` a pipeline made), the network tags each sentence's words, and spans are decoded from the tags with
character offsets into the input and a confidence (the mean of their words').

    from opinion_tagger import OpinionTagger
    ot = OpinionTagger.load()                 # the bundled model (accurate)
    doc = ot.tag("Officials said the plan was daylight robbery.")
    doc.spans   # [TaggedSpan(type='DSE', start=10, end=14, text='said', score=0.93), ...]
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from opinion_tagger.errors import InvalidText
from opinion_tagger.paths import resolve_model
from opinion_tagger.runtime.network import DEFAULT_BACKEND, DEFAULT_PRECISION
from opinion_tagger.runtime.sentence_tagger import SentenceTagger
from opinion_tagger.tagging.documents import (
    BySentenceAndType,
    TaggedDocument,
    TaggedSentence,
    TaggedToken,
    spans_of,
)
from opinion_tagger.tagging.inputs import Record, as_record

if TYPE_CHECKING:
    from spacy.tokens import Doc

BATCH_SIZE = 128  # sentences a batch of the network at most, by default (within the tagger's budgets)
Input = tuple[str, str] | str | Record  # what tag_many takes: (id, text) pairs, bare texts or records


def from_spacy(
    rid: str, text: str, sdoc: Doc, types: tuple[str, ...], starts: Sequence[bool] | None = None
) -> TaggedDocument:
    """A spaCy ``Doc`` of ``text`` as a ``TaggedDocument`` with no tags yet: its sentences (``starts``: a sentence
    start per token, in place of the Doc's own) and its tokens, whitespace tokens dropped (a sentence of
    whitespace alone is none)."""
    import numpy as np
    from spacy.attrs import IDX, IS_SPACE, LENGTH, SENT_START

    doc = TaggedDocument(rid, text, types=types)
    # the tokens' offsets, lengths and sentence starts in one array (faster than a spaCy Token object each)
    arr = sdoc.to_array([IDX, LENGTH, IS_SPACE, SENT_START]).astype(np.int64).reshape(-1, 4)
    first = np.asarray(starts, dtype=bool) if starts is not None else arr[:, 3] == 1
    keep = arr[:, 2] == 0
    sentence = np.cumsum(first)[keep]
    begin_at = arr[keep, 0]
    begin, end = begin_at.tolist(), (begin_at + arr[keep, 1]).tolist()
    cuts = (np.flatnonzero(np.diff(sentence)) + 1).tolist()
    for a, b in zip([0, *cuts], [*cuts, len(begin)]) if begin else ():
        toks = [TaggedToken(text[i:j], i, j, {}) for i, j in zip(begin[a:b], end[a:b])]
        doc.sentences.append(TaggedSentence(toks[0].start, toks[-1].end, toks))
    return doc


def tokenised(records: list[tuple[str, str]], types: tuple[str, ...] = ("DSE", "ESE")) -> list[TaggedDocument]:
    """``(id, text)`` records split into sentences and tokens (spaCy), with no tags or spans yet."""
    from opinion_tagger.tokenize import _nlp

    return [
        from_spacy(rid, text, sdoc, types) for (rid, text), sdoc in zip(records, _nlp().pipe(t for _, t in records))
    ]


def with_predictions(
    docs: list[TaggedDocument], preds: list[dict[str, Any]], frames: list[Any] | None = None
) -> list[TaggedDocument]:
    """``docs`` (from ``tokenised``) with their tokens' tags and their spans set from ``SentenceTagger.predict``'s
    output for their sentences, in order; ``frames``: each sentence's frames (``predict_frames``), for a model
    with frame heads."""
    k = 0
    for doc in docs:
        conf: BySentenceAndType = {}
        tagged: BySentenceAndType = {}
        found: dict[tuple[int, str, int, int], Any] = {}
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
    """Text in, tagged documents out."""

    def __init__(self, tagger: SentenceTagger, batch_size: int | None = None, lang_check: bool = True) -> None:
        """``tagger``: a loaded model (``SentenceTagger.load``); ``batch_size``: sentences in a batch of the network,
        whatever their length (the tagger's word and wordpiece budgets lifted): for a GPU, where a batch of 1,024
        sentences costs little more than one of 64; default: ``BATCH_SIZE`` within the budgets, the CPU's best;
        ``lang_check``: give a document whose text is not English a ``language`` and a ``warning``
        (``opinion_tagger.tagging.language``)."""
        self.tagger = tagger
        self.batch_size = batch_size or BATCH_SIZE
        self.lang_check = lang_check
        if batch_size:
            tagger.lift_budgets()

    @classmethod
    def load(
        cls,
        model: str | Path | None = None,
        backend: str = DEFAULT_BACKEND,
        threads: int | None = None,
        batch_size: int | None = None,
        precision: str = DEFAULT_PRECISION,
        lang_check: bool = True,
    ) -> OpinionTagger:
        """Load a model.

        Args:
            model: a bundle directory or a bundled model's name (``accurate``, the default; ``fast``;
                ``accurate-mpnet``).
            backend: ``onnx`` (ONNX Runtime, the default) or ``keras`` (the ``train`` extra).
            threads: ONNX Runtime's threads (default: the cores this process may use, or
                ``$OPINION_TAGGER_THREADS``).
            batch_size: sentences a batch whatever their length (for a GPU); default: batches within a budget of
                words or wordpieces.
            precision: ``fp32`` (ONNX Runtime, the default) or ``bf16`` (OpenVINO on a CPU with native bf16,
                AVX512_BF16 or AMX; the ``bf16`` extra; refused in one line elsewhere).
            lang_check: check each text's language: a document that looks like another language than English
                gets ``language`` (its ISO 639 code) and ``warning`` set, as the models are trained on English;
                short texts (a few words) are never judged.  ``False``: no check.

        Raises:
            opinion_tagger.BundleError: the bundle is missing, damaged or inconsistent (one line naming the file).
        """
        network = SentenceTagger.load(resolve_model(model), backend=backend, threads=threads, precision=precision)
        return cls(network, batch_size, lang_check=lang_check)

    @property
    def types(self) -> tuple[str, ...]:
        """The opinion types the model tags, e.g. ``("DSE", "ESE")``."""
        return self.tagger.types

    @property
    def frames(self) -> bool:
        """Whether the model has frame heads: its spans carry a polarity, an intensity and a DSE's holder."""
        return getattr(self.tagger, "heads", None) is not None

    def tag(self, text: str, id: str = "", html: bool = False) -> TaggedDocument:
        """Tag one text.

        Args:
            text: the document (any length; sentences are split here).
            id: the document's id in the result.
            html: ``text`` is HTML: the text a browser shows is tagged, offsets point into the source.

        Returns:
            The tagged document: its sentences and tokens (one BIO tag per type) and its spans; ``warning`` set
            when the text looks like another language than English (see ``load``'s ``lang_check``).

        Raises:
            InvalidText: (a ``ValueError``) ``check_text`` refuses the text (empty, lone surrogates, NUL
                characters, no visible text in the HTML, not a string), with the reason.
        """
        doc = next(self.tag_many([(id, text)], html=html))
        if doc.error is not None:
            raise InvalidText(f"{doc.id or 'text'}: {doc.error}")
        return doc

    def tag_many(self, records: Iterable[Input], chunk: int = 64, html: bool = False) -> Iterator[TaggedDocument]:
        """Tag ``(id, text)`` pairs, bare strings or ``Record``s lazily, ``chunk`` at a time.

        Exactly one document per input, in input order: one that cannot be tagged
        (see ``opinion_tagger.tagging.inputs.check_text``) comes back with ``error`` set, and never
        stops the stream.  ``html``: every text is HTML: its visible text is tagged and offsets point into the
        source (``opinion_tagger.tagging.html_input.tag_records`` also takes a mix, ``Record.html`` saying which).
        A document whose text looks like another language than English has ``language`` and ``warning`` set
        (see ``load``'s ``lang_check``)."""
        if html:
            from opinion_tagger.tagging.html_input import tag_records

            yield from tag_records(self, records, chunk=chunk, html=html)
            return
        for doc in self._tag_plain(records, chunk):
            yield self.check_language(doc)

    def check_language(self, doc: TaggedDocument) -> TaggedDocument:
        """``doc`` with ``language`` and ``warning`` set when the language check is on and its text is not
        English (``opinion_tagger.tagging.language.check``)."""
        if not self.lang_check:
            return doc
        from opinion_tagger.tagging.language import check

        return check(doc)

    def tag_docs(
        self, docs: Sequence[Doc], starts: Sequence[Sequence[bool] | None] | None = None
    ) -> list[TaggedDocument]:
        """Tag spaCy ``Doc``s on their own tokens; ``starts``: per doc, a sentence start per token in place of the
        Doc's own sentences (None: the Doc's).  For the spaCy pipeline component."""
        tagged = [
            from_spacy(str(k), d.text, d, self.types, starts[k] if starts is not None else None)
            for k, d in enumerate(docs)
        ]
        return self._predict(tagged)

    def _tag_plain(self, records: Iterable[Input], chunk: int) -> Iterator[TaggedDocument]:
        buf: list[Record] = []
        for n, rec in enumerate(records):
            buf.append(as_record(n, rec))
            if len(buf) >= max(chunk, 1):
                yield from self._tag_records(buf)
                buf = []
        if buf:
            yield from self._tag_records(buf)

    def _tag_records(self, records: list[Record]) -> list[TaggedDocument]:
        good = [(r.id, r.text or "") for r in records if r.error is None]  # checked (as_record): no error, a text
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
        return self._predict(tokenised(records, self.types))

    def _predict(self, docs: list[TaggedDocument]) -> list[TaggedDocument]:
        """``docs`` with their sentences' tags and spans (and frames, from a model with frame heads)."""
        words = [[t.text for t in s.tokens] for doc in docs for s in doc.sentences]
        if self.frames:  # frame heads: polarity, intensity, holder too
            both = self.tagger.predict_frames(words, batch_size=self.batch_size)
            return with_predictions(docs, [p for p, _ in both], [f for _, f in both])
        return with_predictions(docs, self.tagger.predict(words, batch_size=self.batch_size))
