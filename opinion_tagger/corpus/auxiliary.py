"""MPQA's other annotations as BIO tags for auxiliary training heads (``model.auxiliary.types``).

Issue 37: a tagger may learn, beside DSE and ESE, where MPQA marks agents (sources), targets, attitudes and
objective speech events; those heads are trained and then dropped, the bundle tags DSE and ESE only.  A
type's spans are its annotations with a non-empty span (the writer's implicit agent has none), tagged over
the sentence's tokens as DSE and ESE are (``opinion_tagger.corpus.labels``: a token is inside a span it overlaps;
spans that share a token are merged).

Sentences from MPQA (``source: mpqa``) carry document offsets.  Irsoy & Cardie's reference sentences do
not: they are matched to the document's MPQA sentences in order and their PTB tokens aligned to the text
(``opinion_tagger.corpus.agreement.align_tokens``, as the agreement measure does).  A document whose sentences
cannot be matched so gets all-O auxiliary tags, and is counted.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from opinion_tagger.corpus.agreement import align_tokens
from opinion_tagger.corpus.labels import bio_tags, token_range
from opinion_tagger.corpus.mpqa import Annotation, MPQACorpus
from opinion_tagger.errors import CorpusError
from opinion_tagger.runtime.bio import spans_from_bio
from opinion_tagger.sentences import AUXILIARY_TYPES, Sentence, Span, Token

# auxiliary type -> its MPQA annotation type
AUXILIARY = dict(
    zip(AUXILIARY_TYPES, ("GATE_agent", "GATE_target", "GATE_attitude", "GATE_objective-speech-event"), strict=True)
)


def auxiliary_spans(annotations: list[Annotation], types: tuple[str, ...]) -> list[Span]:
    """The spans of the auxiliary ``types`` among a document's annotations (character offsets)."""
    wanted = {AUXILIARY[t]: t for t in types}
    return [Span(wanted[a.type], a.start, a.end) for a in annotations if a.type in wanted and not a.is_empty]


@dataclass
class AuxiliaryCounts:
    """What tagging the auxiliary types found: spans per type inside the tagged documents, those that
    overlap no token (so tag nothing; e.g. in a sentence the reference leaves out), tagged spans per type
    after merging, and the documents whose sentences could not be matched (all-O tags)."""

    spans: dict[str, int] = field(default_factory=dict)
    untagged: dict[str, int] = field(default_factory=dict)
    tagged: dict[str, int] = field(default_factory=dict)
    unmatched_documents: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        """For records: the unmatched documents counted, the first named."""
        out = {k: v for k, v in self.__dict__.items() if k != "unmatched_documents"}
        return {**out, "unmatched_documents": len(self.unmatched_documents), "e.g.": self.unmatched_documents[:1]}


def tag_auxiliary(
    docs: dict[str, list[Sentence]], types: tuple[str, ...], source: str, path, mpqa=None
) -> AuxiliaryCounts:
    """``add_auxiliary_tags`` for sentences read from ``source`` at ``path``: MPQA itself, or the reference
    files with MPQA from ``mpqa`` (default: its place beside the checkout, ``opinion_tagger.paths.default_mpqa``)."""
    from opinion_tagger.paths import default_mpqa

    where = path if source == "mpqa" else (mpqa or default_mpqa())
    return add_auxiliary_tags(docs, MPQACorpus(where), types, source)


def add_auxiliary_tags(
    docs: dict[str, list[Sentence]], corpus: MPQACorpus, types: tuple[str, ...], source: str
) -> AuxiliaryCounts:
    """Add ``tags[t]`` for each auxiliary type ``t`` to every sentence of ``docs`` (by document name, as
    ``opinion_tagger.corpus.sources.load_documents`` returns them), from ``corpus``'s annotations.  ``source``:
    ``mpqa`` (tokens carry document offsets) or ``reference`` (tokens are aligned here)."""
    unknown = [t for t in types if t not in AUXILIARY]
    if unknown:
        raise CorpusError(f"unknown auxiliary types {', '.join(unknown)}; choose from {', '.join(AUXILIARY)}")
    if source not in ("mpqa", "reference"):
        raise CorpusError(f"auxiliary tags need MPQA or reference sentences, not source {source!r}")
    counts = AuxiliaryCounts({t: 0 for t in types}, {t: 0 for t in types}, {t: 0 for t in types})
    for name, sentences in docs.items():
        doc = corpus.read(name)
        if doc is None:
            raise CorpusError(f"{name}: document not in the MPQA corpus at {corpus.root}")
        tokens = document_tokens(doc.text, doc.sentences, sentences, source)
        if tokens is None:
            counts.unmatched_documents.append(name)
        spans = auxiliary_spans(doc.annotations, types)
        for s in spans:
            counts.spans[s.type] += 1
            if tokens is None or not any(token_range(toks, s) for toks in tokens):
                counts.untagged[s.type] += 1
        for k, sent in enumerate(sentences):
            for t in types:
                sent.tags[t] = ["O"] * len(sent) if tokens is None else bio_tags(tokens[k], spans, t)
                counts.tagged[t] += len(spans_from_bio(sent.tags[t]))
    return counts


def document_tokens(
    text: str, spans: list[tuple[int, int]], sentences: list[Sentence], source: str
) -> list[list[Token]] | None:
    """Each sentence's tokens with document offsets; None when reference sentences and the document's
    MPQA sentences differ in number."""
    if source == "mpqa":
        return [s.tokens for s in sentences]
    if len(spans) != len(sentences):
        return None
    return [
        [Token(w, a, b) for w, (a, b) in zip(s.words, align_tokens(s.words, text[start:end], start))]
        for s, (start, end) in zip(sentences, spans)
    ]
