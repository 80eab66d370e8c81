"""Tagged records read and checked for the summary: each line of ``opinion-tagger tag``'s JSONL becomes a
``Record`` (its id, tag's error if it was not tagged, and an ``Opinion`` per span with a frame), or a
``BadRecord`` that names what is wrong; holders and targets are grouped by ``normalize``-d text."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from opinion_tagger.errors import TaggerError

# an intensity's place on the scale of the mean intensity (the models' ``neutral`` is no strength at all)
INTENSITY_LEVELS = {"neutral": 0, "low": 1, "medium": 2, "high": 3, "extreme": 4}
INTENSITY_SCALE = "neutral 0, low 1, medium 2, high 3, extreme 4"
# left out at the start of a holder's or a target's text when more words follow ("the plan" is "plan")
DETERMINERS = frozenset({"the", "a", "an", "this", "that", "these", "those"})
QUOTES = "\"'“”‘’«»`"
# a holder that is no words of the text: tag's "writer" and "implicit" ("none" is what the annotator's exports
# write for a holder that is not in the sentence, tag's null)
HOLDER_CLASSES = ("writer", "implicit")
# a holder's kind: its words; the writer; implicit; "none": a DSE whose holder the model did not find in its
# sentence (tag's null); "untagged": a span without a holder field (an ESE: the models tag no holder for one)
HOLDER_KINDS = ("words", "writer", "implicit", "none", "untagged")


def normalize(text: str) -> str:
    """A holder's or target's group: case-folded, runs of whitespace one space, quotes at either end and a
    leading determiner (``the``, ``a``, ``an``, ``this``, ``that``, ``these``, ``those``) left out, when words
    follow it: ``"The  Harbour council"`` and ``"harbour Council"`` are both ``harbour council``."""
    words = text.casefold().split()
    words = " ".join(words).strip(QUOTES + " ").split()
    if len(words) > 1 and words[0] in DETERMINERS:
        words = words[1:]
    return " ".join(words)


@dataclass(frozen=True)
class Opinion:
    """One span's frame, as the summary counts it: the document's id, the span's type and text, its holder
    (``holder_kind`` and, for words, their normalized text; ``writer``, ``implicit``; None for the kinds
    ``none`` and ``untagged``), its targets' normalized texts (None: the record gives no targets; ``()``: it
    gives none for this span), its attitude (None without one), polarity and intensity."""

    doc: str
    type: str
    text: str
    holder_kind: str
    holder: str | None
    targets: tuple[str, ...] | None
    attitude: str | None
    polarity: str
    intensity: str


@dataclass
class Record:
    """A tagged record: its id, tag's ``error`` for one that was not tagged, its spans' opinions and how many
    of its spans have no frame (a model without frame heads)."""

    id: str
    error: str | None = None
    opinions: list[Opinion] = field(default_factory=list)
    unframed: int = 0


class BadRecord(ValueError):
    """A line that is no tagged record: its message says what is wrong (the caller adds ``FILE:LINE``)."""


def _what(value: Any) -> str:
    """A JSON value's type in words: ``a string``, ``a number``, ``null``, ..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return f"a number ({value})"
    if isinstance(value, str):
        return f"a string ({_short(value)!r})"
    return "a list" if isinstance(value, list) else "an object"


def _short(text: str, width: int = 40) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _check(ok: bool, where: str, name: str, value: Any, wanted: str) -> None:
    if not ok:
        raise BadRecord(f"{where}{name} is {_what(value)}, not {wanted}")


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _holder(frame: dict[str, Any], where: str) -> tuple[str, str | None]:
    """A span's holder kind and group (``HOLDER_KINDS``)."""
    if "holder" not in frame:
        return "untagged", None
    h = frame["holder"]
    if h is None or h == "none":
        return "none", None
    if isinstance(h, str) and h in HOLDER_CLASSES:
        return h, h
    if isinstance(h, dict):
        _check(isinstance(h.get("text"), str), where, "holder's text", h.get("text"), "a string")
        return "words", normalize(h["text"])
    raise BadRecord(
        f'{where}holder is {_what(h)}, not words ({{"start", "end", "text"}}), "writer", "implicit" or null'
    )


def _targets(frame: dict[str, Any], where: str) -> tuple[str, ...] | None:
    if "targets" not in frame:
        return None
    targets = frame["targets"]
    _check(isinstance(targets, list), where, "targets", targets, 'a list of {"start", "end", "text", "score"}')
    out = []
    for k, t in enumerate(targets, 1):
        _check(isinstance(t, dict), where, f"target {k}", t, 'an object {"start", "end", "text", "score"}')
        _check(isinstance(t.get("text"), str), where, f"target {k}'s text", t.get("text"), "a string")
        for name in ("start", "end"):
            if name in t:
                _check(
                    isinstance(t[name], int) and not isinstance(t[name], bool),
                    where,
                    f"target {k}'s {name}",
                    t[name],
                    "an integer",
                )
        if "score" in t:
            _check(_number(t["score"]), where, f"target {k}'s score", t["score"], "a number")
        out.append(normalize(t["text"]))
    return tuple(dict.fromkeys(out))  # a target named twice in one span counts once


def opinion(doc: str, span: Any, k: int) -> Opinion | None:
    """The opinion of a record's ``k``-th span (from 1), or None for a span without a frame (no ``polarity``);
    ``BadRecord`` names the span and the field of the wrong type or value."""
    where = f"span {k}: "
    _check(isinstance(span, dict), "", f"span {k}", span, "an object")
    _check(isinstance(span.get("type"), str), where, "type", span.get("type"), "a string")
    _check(isinstance(span.get("text"), str), where, "text", span.get("text"), "a string")
    where = f"span {k} ({span['type']} {_short(span['text'])!r}): "
    if "polarity" not in span:
        return None
    polarity, intensity = span["polarity"], span.get("intensity")
    _check(isinstance(polarity, str) and polarity != "", where, "polarity", polarity, "a polarity")
    if not (isinstance(intensity, str) and intensity in INTENSITY_LEVELS):
        raise BadRecord(f"{where}intensity is {_what(intensity)}, not one of {', '.join(INTENSITY_LEVELS)}")
    for name in ("polarity_score", "intensity_score"):
        if name in span:
            _check(_number(span[name]), where, name, span[name], "a number")
    for name in ("holder_score", "attitude_score"):
        if span.get(name) is not None:
            _check(_number(span[name]), where, name, span[name], "a number or null")
    attitude = span.get("attitude")
    _check(
        attitude is None or (isinstance(attitude, str) and attitude != ""),
        where,
        "attitude",
        attitude,
        "an attitude type or null",
    )
    kind, holder = _holder(span, where)
    return Opinion(doc, span["type"], span["text"], kind, holder, _targets(span, where), attitude, polarity, intensity)


def record(data: Any, default_id: str) -> Record:
    """A line's JSON value as a tagged record (``default_id``: the id of a record without one, its
    ``FILE:LINE``); ``BadRecord`` when it is none."""
    if not isinstance(data, dict):
        raise BadRecord(f"{_what(data)}, not a tagged record (a JSON object a line)")
    rid = data.get("id", default_id)
    _check(isinstance(rid, str | int) and not isinstance(rid, bool), "", "id", rid, "a string")
    if "error" in data:
        return Record(str(rid), error=str(data["error"]))
    if "spans" not in data:
        raise BadRecord("no spans field: not a record of the JSONL that opinion-tagger tag writes")
    _check(isinstance(data["spans"], list), "", "spans", data["spans"], "a list")
    rec = Record(str(rid))
    for k, span in enumerate(data["spans"], 1):
        found = opinion(rec.id, span, k)
        if found is None:
            rec.unframed += 1
        else:
            rec.opinions.append(found)
    return rec


STDIN = "-"


def input_files(paths: list[str]) -> list[str]:
    """The files to read, in order: each path given, a directory's ``*.jsonl`` files in name order (``tag
    --engine ray``'s partitions), ``-`` standard input; a path that names nothing is a ``TaggerError``."""
    out = []
    for name in paths:
        path = Path(name)
        if name == STDIN:
            out.append(name)
        elif path.is_dir():
            found = sorted(str(p) for p in path.glob("*.jsonl") if p.is_file())
            if not found:
                raise TaggerError(f"{name}: a directory without .jsonl files")
            out += found
        elif path.is_file():
            out.append(name)
        else:
            raise TaggerError(f"{name}: no such file")
    return out


@dataclass
class Line:
    """One record line read: where it is (``FILE:LINE``) and its record, or what is wrong with it."""

    where: str
    record: Record | None = None
    problem: str | None = None


def read(name: str) -> Iterator[Line]:
    """The record lines of one file (``-``: standard input), lazily; blank lines are no records, a UTF-8
    byte-order mark is dropped."""
    shown = "<stdin>" if name == STDIN else name
    fh: BinaryIO = sys.stdin.buffer if name == STDIN else open(name, "rb")
    try:
        for n, raw in enumerate(fh, 1):
            raw = raw.removeprefix(b"\xef\xbb\xbf").rstrip(b"\r\n")
            if not raw.strip():
                continue
            where = f"{shown}:{n}"
            try:
                data = orjson.loads(raw)
            except orjson.JSONDecodeError as exc:
                problem = "not UTF-8 text" if _not_utf8(raw) else f"not JSON ({exc.msg} at column {exc.colno})"
                yield Line(where, problem=problem)
                continue
            try:
                yield Line(where, record(data, where))
            except BadRecord as exc:
                yield Line(where, problem=str(exc))
    finally:
        if fh is not sys.stdin.buffer:
            fh.close()


def _not_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def opinion_label(op: Opinion) -> tuple[str, str]:
    """``(kind, value)`` of what a group is about besides its holder and target: the span's attitude where it
    has one, else its polarity."""
    return ("attitude", op.attitude) if op.attitude is not None else ("polarity", op.polarity)


def holder_label(kind: str, holder: str | None) -> str:
    """A holder group as the text table and the report show it: its words, ``writer``, ``implicit``, ``(none)``
    (a DSE without a holder in its sentence) or ``(untagged)`` (a span without a holder: an ESE)."""
    return holder if kind == "words" and holder is not None else kind if kind in HOLDER_CLASSES else f"({kind})"


RUNS = re.compile(r"\s+")


def one_line(text: str) -> str:
    """A span's text on one line, for a table."""
    return RUNS.sub(" ", text).strip()
