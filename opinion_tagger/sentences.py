"""The data types shared by every stage: tokens, sentences and spans."""

from __future__ import annotations

from dataclasses import dataclass, field

TYPES = ("DSE", "ESE")
# MPQA's other annotations, which auxiliary heads may learn (opinion_tagger.corpus.auxiliary): agents (sources),
# targets, attitudes, objective speech events
AUXILIARY_TYPES = ("AGENT", "TARGET", "ATTITUDE", "OSE")


@dataclass(frozen=True)
class Token:
    text: str
    start: int  # character offsets into the document (or input text)
    end: int


@dataclass(frozen=True)
class Span:
    type: str
    start: int  # character offsets
    end: int


HOLDER_CLASSES = ("writer", "implicit", "none")  # a holder that is no token span of the sentence
POLARITIES = ("neutral", "negative", "positive", "both")  # an opinion frame's values (opinion_tagger.corpus.frames)
INTENSITIES = ("neutral", "low", "medium", "high", "extreme")


@dataclass(frozen=True)
class Frame:
    """The opinion frame of one tagged span (``opinion_tagger.corpus.frames``): its polarity and intensity and, for
    the span's source, its holder.

    ``start``/``end`` are token indices [start, end) of the span in its sentence (a span of ``Sentence.tags``).
    ``holder``: a token span (i, j) of the sentence (the source's mention nearest the expression), ``"writer"``,
    ``"implicit"``, ``"none"`` (the source has no mention in the sentence), or None: not known.  Every value is
    None where the corpus gives none (or no annotation matches the span).
    """

    type: str
    start: int
    end: int
    polarity: str | None = None
    intensity: str | None = None
    expression_intensity: str | None = None  # DSEs only
    holder: tuple[int, int] | str | None = None


@dataclass
class Sentence:
    """A tokenised sentence with BIO tags per opinion type.

    ``tags`` maps a type ("DSE", "ESE") to one tag per token, written
    ``B-DSE``/``I-DSE``/``O``.  ``doc`` and ``index`` locate the sentence in
    its corpus (document name and 0-based sentence number).
    """

    tokens: list[Token]
    tags: dict[str, list[str]] = field(default_factory=dict)
    doc: str = ""
    index: int = 0
    text: str = ""
    start: int = 0
    end: int = 0
    pos: list[str] | None = None  # part-of-speech tags, where the source has them
    frames: list[Frame] | None = None  # one per span of ``tags``, where the frames were read (corpus.frames)

    @property
    def words(self) -> list[str]:
        return [t.text for t in self.tokens]

    def __len__(self) -> int:
        return len(self.tokens)
