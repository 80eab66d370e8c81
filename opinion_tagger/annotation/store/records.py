"""The store's records as Python sees them: tokens, spans, documents, the statuses and
layers they take, and the store's errors."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields, replace
from datetime import UTC, datetime
from typing import Any

from opinion_tagger.errors import TaggerError
from opinion_tagger.sentences import ATTITUDE_TYPES

FINAL = ""  # the layer of a document's final version (an annotator's copy: their name)
STATUSES = ("todo", "in_progress", "done", "rejected")
UNFINISHED = ("todo", "in_progress")
SOURCES = ("model", "human")
INTENSITIES = ("low", "medium", "high", "extreme", "neutral")  # neutral: a model's class, rare in MPQA's intensity
POLARITIES = ("positive", "negative", "neutral", "both")
HOLDERS = ("writer", "implicit", "none")  # a DSE's holder that is no span of the document's tokens
SPAN_HOLDER = "span"  # the stored kind of a holder that is a token span (``holder_start``, ``holder_end``)
UNCHANGED = "unchanged"  # ``set_attributes``: leave a value (intensity, polarity, holder, ...) as it is
# a holder as Python gives it: one of HOLDERS, a token span (start, end) of the document, or None (not set)
Holder = str | tuple[int, int] | None
NO_ATTITUDE = "none"  # a DSE's attitude that a person (or the model) says it has none of ATTITUDE_TYPES
ATTITUDES = (*ATTITUDE_TYPES, NO_ATTITUDE)  # a DSE's attitude as stored (None: not set)


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


@dataclass(frozen=True)
class StoredTarget:
    """One target of a DSE (what its opinion is about): the token positions [start, end) of the document, within
    one sentence, and where it came from: ``model`` (with the model's probability) or ``human``."""

    start: int
    end: int
    source: str = "human"
    score: float | None = None

    @property
    def tokens(self) -> tuple[int, int]:
        return self.start, self.end


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
    # each frame value's provenance: "model" (with the model's probability) or "human"; None while not set
    polarity_source: str | None = None
    polarity_score: float | None = None
    intensity_source: str | None = None
    intensity_score: float | None = None
    # a DSE's holder: a kind of HOLDERS, or SPAN_HOLDER with its tokens [holder_start, holder_end); None: not set
    holder: str | None = None
    holder_start: int | None = None
    holder_end: int | None = None
    holder_source: str | None = None
    holder_score: float | None = None
    # a DSE's attitude: one of ATTITUDES (NO_ATTITUDE: it has none), with its source and score; None: not set
    attitude: str | None = None
    attitude_source: str | None = None
    attitude_score: float | None = None
    # a DSE's targets, in token order, each with its source; ``targets_source``: who made the list as it is (the
    # model, or a person who added, removed or confirmed targets).  None: not set; () set, none
    targets: tuple[StoredTarget, ...] | None = None
    targets_source: str | None = None

    @property
    def key(self) -> tuple[str, int, int]:
        return self.type, self.tok_start, self.tok_end

    @property
    def confidence(self) -> float:
        """The span's score wherever it is shown or exported: the model's confidence for a model span, 1.0 for a
        person's (who made or changed it: ``score`` is None then)."""
        return 1.0 if self.score is None else float(self.score)

    @property
    def holder_value(self) -> Holder:
        """The holder: one of HOLDERS, a token span ``(start, end)``, or None (not set)."""
        if self.holder == SPAN_HOLDER and self.holder_start is not None and self.holder_end is not None:
            return self.holder_start, self.holder_end
        return self.holder if self.holder in HOLDERS else None

    def model_part(self) -> StoredSpan:
        """The span as a model proposed it: a person's frame values left out (an annotator's copy starts so)."""
        out = replace(self)
        for name in FRAME_VALUES:
            if getattr(out, f"{name}_source") != "model":
                setattr(out, name, None)
                setattr(out, f"{name}_source", None)
                setattr(out, f"{name}_score", None)
        if out.holder is None:
            out.holder_start = out.holder_end = None
        if out.targets_source != "model":  # a list a person changed is theirs, every target of it
            out.targets = out.targets_source = None
        return out

    @property
    def target_spans(self) -> list[tuple[int, int]] | None:
        """The targets' token spans, in token order; None when not set."""
        return None if self.targets is None else [t.tokens for t in self.targets]


FRAME_VALUES = ("polarity", "intensity", "holder", "attitude")  # each with its ``_source`` and ``_score``
SPAN_FIELDS = tuple(f.name for f in fields(StoredSpan))
SPAN_COLUMNS = ", ".join(SPAN_FIELDS)


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _position(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def targets_of(value: object) -> tuple[StoredTarget, ...] | None:
    """The targets as the store keeps them (JSON text, or the history's list of dicts), in token order; None
    when not set.  ValueError for anything else than a list of ``{"start", "end", "source", "score"}``."""
    if value is None:
        return None
    items = json.loads(value) if isinstance(value, str) else value
    if not isinstance(items, list):
        raise ValueError("not a list")
    out = []
    for item in items:
        if not isinstance(item, dict) or set(item) - {"start", "end", "source", "score"}:
            raise ValueError("a target is not {start, end, source, score}")
        start, end, source, score = (item.get(k) for k in ("start", "end", "source", "score"))
        if not (isinstance(start, int) and isinstance(end, int)) or bool in (type(start), type(end)) or end <= start:
            raise ValueError("a target's tokens are not two positions, its first and its end")
        if source not in SOURCES or not (score is None or _number(score)):
            raise ValueError("a target's source is not model or human with a score")
        out.append(StoredTarget(start, end, source, None if score is None else float(score)))
    return tuple(sorted(out, key=lambda t: t.tokens))


def targets_json(targets: tuple[StoredTarget, ...] | None) -> str | None:
    """The targets as the store's column keeps them (``targets_of``'s input)."""
    if targets is None:
        return None
    return json.dumps([{"start": t.start, "end": t.end, "source": t.source, "score": t.score} for t in targets])


def bad_frame_field(span: StoredSpan) -> str | None:
    """What is wrong with a stored span's frame fields (a value none of its kind, a source that is neither model
    nor human, a score that is no number, a holder's tokens that are not positions), or None when nothing is."""
    kinds = {"polarity": POLARITIES, "intensity": INTENSITIES, "holder": (*HOLDERS, SPAN_HOLDER), "attitude": ATTITUDES}
    for name, values in kinds.items():
        if getattr(span, name) not in (None, *values):
            return f"{name} {getattr(span, name)!r:.40} is not one of {', '.join(values)}"
    for name in (*FRAME_VALUES, "targets"):
        if getattr(span, f"{name}_source") not in (None, *SOURCES):
            return f"{name}_source {getattr(span, f'{name}_source')!r:.40} is not model or human"
    for name in FRAME_VALUES:
        if not (getattr(span, f"{name}_score") is None or _number(getattr(span, f"{name}_score"))):
            return f"{name}_score {getattr(span, f'{name}_score')!r:.40} is not a number"
    for name in ("holder_start", "holder_end"):
        value = getattr(span, name)
        if not (value is None or _position(value)):
            return f"{name} {value!r:.40} is not a token position"
    return None


def span_of(stored: dict) -> StoredSpan:
    """A span kept in the history (``asdict``), as new (no id).  A change saved before schema version 4 has no
    provenance of its intensity and polarity: a person set them then; before version 5, no attitude or targets."""
    values: dict[str, Any] = {k: stored.get(k) for k in SPAN_FIELDS if k != "id"}
    values["targets"] = targets_of(values["targets"])
    span = StoredSpan(id=None, **values)
    for name in ("intensity", "polarity"):
        if getattr(span, name) is not None and f"{name}_source" not in stored:
            setattr(span, f"{name}_source", "human")
    return span


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
