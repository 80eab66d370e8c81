"""The store's records as Python sees them: tokens, spans, documents, the statuses and
layers they take, and the store's errors."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from opinion_tagger.errors import TaggerError

FINAL = ""  # the layer of a document's final version (an annotator's copy: their name)
STATUSES = ("todo", "in_progress", "done", "rejected")
UNFINISHED = ("todo", "in_progress")
SOURCES = ("model", "human")
INTENSITIES = ("low", "medium", "high", "extreme")
POLARITIES = ("positive", "negative", "neutral", "both")


class ProjectError(TaggerError):
    """A project file that cannot be opened, or an edit that is not valid."""


class ConflictError(ProjectError):
    """The document changed (another tab or annotator) since the version the edit was made on."""


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class StoredToken:
    position: int
    sentence: int
    start: int
    end: int


@dataclass
class StoredSpan:
    id: int | None
    type: str
    tok_start: int  # token positions [tok_start, tok_end)
    tok_end: int
    source: str = "human"
    score: float | None = None
    annotator: str | None = None
    at: str | None = None
    intensity: str | None = None  # MPQA's attributes, optional: INTENSITIES, POLARITIES
    polarity: str | None = None
    origin: str | None = None  # a reviewed span: the annotators whose copies had it (JSON list)

    @property
    def key(self) -> tuple[str, int, int]:
        return self.type, self.tok_start, self.tok_end


SPAN_COLUMNS = "id, type, tok_start, tok_end, source, score, annotator, at, intensity, polarity, origin"


@dataclass
class DocumentInfo:
    id: int
    name: str
    status: str
    version: int
    spans: int
    annotator: str | None
    updated: str
    overlap: int = 0  # annotators who annotate it independently (0: one shared version)
    layer: str = FINAL  # whose version the status, version and spans are


@dataclass
class Document:
    id: int
    name: str
    text: str
    status: str
    version: int
    annotator: str | None
    model: str | None
    tokens: list[StoredToken] = field(default_factory=list)
    spans: list[StoredSpan] = field(default_factory=list)
    layer: str = FINAL  # the final version, or the name of the annotator whose copy this is
    overlap: int = 0
    review: dict | None = None  # how the final version was made from the copies, when it was

    def span_chars(self, span: StoredSpan) -> tuple[int, int]:
        """Character offsets of a span."""
        return self.tokens[span.tok_start].start, self.tokens[span.tok_end - 1].end
