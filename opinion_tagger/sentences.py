"""The data types shared by every stage: tokens, sentences and spans."""

from __future__ import annotations

import dataclasses
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
# the types of a DSE's attitude (MPQA 2.0's ``attitude-type``, read by opinion_tagger.corpus.frames)
ATTITUDE_TYPES = (
    "sentiment-pos",
    "sentiment-neg",
    "arguing-pos",
    "arguing-neg",
    "agree-pos",
    "agree-neg",
    "intention-pos",
    "intention-neg",
    "speculation",
    "other-attitude",
)


@dataclass(frozen=True)
class Frame:
    """The opinion frame of one tagged span (``opinion_tagger.corpus.frames``): its polarity and intensity and, for
    the span's source, its holder.

    ``start``/``end`` are token indices [start, end) of the span in its sentence (a span of ``Sentence.tags``).
    ``holder``: a token span (i, j) of the sentence (the source's mention nearest the expression), ``"writer"``,
    ``"implicit"``, ``"none"`` (the source has no mention in the sentence), or None: not known.  Every value is
    None where the corpus gives none (or no annotation matches the span).

    For a DSE of a document with attitude annotations (MPQA 2.0's attitude subset and ULA): ``attitude``, the
    type of its attitude (one of ATTITUDE_TYPES; None where it has none), and ``targets``, the token spans
    (i, j) of the sentence that its attitudes are about, in token order (empty where there are none).
    ``targets`` is None where they were not read (an ESE, a document without attitudes, a predictor without a
    target head); ``docs/frames.md`` gives the rules.  Every field is a string, an int, None or a tuple of
    those, so a frame goes to JSON and back as it is (``frame_to_dict``, ``frame_from_dict``).
    """

    type: str
    start: int
    end: int
    polarity: str | None = None
    intensity: str | None = None
    expression_intensity: str | None = None  # DSEs only
    holder: tuple[int, int] | str | None = None
    attitude: str | None = None  # DSEs
    targets: tuple[tuple[int, int], ...] | None = None  # DSEs


def frame_to_dict(frame: Frame) -> dict:
    """A frame as JSON values (token spans as lists)."""
    out = dataclasses.asdict(frame)
    out["holder"] = list(frame.holder) if isinstance(frame.holder, tuple) else frame.holder
    out["targets"] = None if frame.targets is None else [list(t) for t in frame.targets]
    return out


def frame_from_dict(data: dict) -> Frame:
    """``frame_to_dict``'s inverse; a dict written before attitudes and targets were read lacks them (None)."""
    holder = data.get("holder")
    targets = data.get("targets")
    return Frame(
        data["type"],
        int(data["start"]),
        int(data["end"]),
        data.get("polarity"),
        data.get("intensity"),
        data.get("expression_intensity"),
        (int(holder[0]), int(holder[1])) if isinstance(holder, list | tuple) else holder,
        data.get("attitude"),
        None if targets is None else tuple((int(i), int(j)) for i, j in targets),
    )


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
