"""Input records for batch tagging: every record becomes ``Record(id, text)``
or ``Record(id, error=...)``, so nothing is silently lost.

Sources: texts given on the command line; a plain-text file (one document);
a ``.jsonl`` file (one JSON object a line with a ``text`` field, ``id`` kept);
a directory (its files, recursively, in name order); ``-`` for standard
input (JSONL if the first line is a JSON object, else one document).  Files are
read lazily, JSONL line by line with a bounded line length, so memory stays
flat on large inputs.  ``input_format`` marks HTML records (``Record.html``, tagged
by ``opinion_tagger.tagging.html_input``): ``text`` none, ``html`` all, ``auto`` those of
``.html``/``.htm`` files.

The rules (stated in docs/tagging.md):

- Every line of a JSONL source is one record, ``NAME:LINE`` its default id: a
  blank (whitespace-only) line is an error record ``blank line``; an empty
  JSONL file is one error record ``empty file``.
- A UTF-8 byte-order mark at the start of a file, of standard input or of a
  JSONL line is dropped.
- ``check_text`` is the one gate every text passes before spaCy and the model
  (command line, Python API, Streamlit page): lone surrogates and NUL
  characters make an error record; other control characters (all of Unicode
  category Cc but tab, line feed and carriage return) become spaces, so
  offsets into the output text are offsets into the input text; a text with no
  character other than whitespace, control and format characters (such as a
  zero-width space) is ``empty text``.
- JSON nested deeper than ``MAX_DEPTH`` is refused before it is parsed.
"""

from __future__ import annotations

import json
import os
import re
import sys
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Protocol

MAX_CHARS = 200_000  # longer records are refused: split them into documents first
MAX_DEPTH = 100  # JSON nesting deeper than this is refused before parsing
INPUT_FORMATS = ("auto", "text", "html")
HTML_SUFFIXES = (".html", ".htm")
BOM = b"\xef\xbb\xbf"

_SURROGATE = re.compile("[\ud800-\udfff]")
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_BRACKET = re.compile(r"[\[\]{}]")


def printable_id(value: str) -> str:
    """An id safe to print and to encode as UTF-8: control characters and lone
    surrogates (e.g. from undecodable file names) become backslash escapes."""
    return _UNPRINTABLE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), value)


@dataclass
class Record:
    id: str
    text: str | None = None
    error: str | None = None
    html: bool = False  # the text is HTML: tag what it shows (opinion_tagger.tagging.html_input)

    def __post_init__(self):
        self.id = printable_id(str(self.id))


def _byte_limit(max_chars: int | None) -> int | None:
    """Bytes read of a line or file at most: enough for ``max_chars`` characters of UTF-8 and some JSON."""
    return None if max_chars is None else 4 * max_chars + 1000


def limit_note(max_chars: int | None) -> str:
    """How an over-long record's error names the limit: in characters, as the option sets it."""
    return f"(limit: --max-chars {max_chars})"


_CONTINUATION = bytes(range(0x80, 0xC0))


def utf8_chars(data: bytes) -> int:
    """Characters in UTF-8 ``data``: its bytes that do not continue a character."""
    return len(data.translate(None, _CONTINUATION))


def _is_blank(text: str) -> bool:
    """True when ``text`` has no character but whitespace, control (Cc) and format (Cf) characters."""
    return all(ch.isspace() or unicodedata.category(ch) in ("Cc", "Cf") for ch in text)


def check_text(rid: str, raw: Any, max_chars: int | None = MAX_CHARS) -> Record:
    """The gate every text passes before tagging: ``Record(rid, text)`` with the
    normalised text, or ``Record(rid, error=reason)``.  ``raw`` may be bytes
    (decoded as UTF-8, a leading byte-order mark dropped) or a string; anything
    else is an error.  ``max_chars=None``: no length limit."""
    if isinstance(raw, (bytes, bytearray)):
        raw = bytes(raw)
        if raw.startswith(BOM):
            raw = raw[len(BOM) :]
        if b"\x00" in raw:
            return Record(rid, error="binary data (NUL bytes), not text")
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return Record(rid, error=f"not valid UTF-8 (byte {exc.start})")
    if not isinstance(raw, str):
        return Record(rid, error=f"text must be a string, not {type(raw).__name__}")
    if max_chars is not None and len(raw) > max_chars:
        return Record(rid, error=f"over-long input: {len(raw)} characters {limit_note(max_chars)}")
    bad = _SURROGATE.search(raw)
    if bad:
        return Record(
            rid, error=f"not valid Unicode: lone surrogate U+{ord(bad.group()):04X} at character {bad.start()}"
        )
    nul = raw.find("\x00")
    if nul >= 0:
        return Record(rid, error=f"binary data (NUL character at {nul}), not text")
    text = _CONTROL.sub(" ", raw)
    if _is_blank(text):
        return Record(rid, error="empty text")
    return Record(rid, text=text)


def record_id(value: Any, default: str) -> str:
    """The id of a JSONL record: its ``id`` field (a string as it is, another JSON
    value as JSON), or ``default`` when the field is missing or null."""
    if value is None:
        return default
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except ValueError:  # e.g. an integer too long to print
        return default


def too_deep(line: str, limit: int = MAX_DEPTH) -> bool:
    """Whether JSON text nests arrays/objects deeper than ``limit`` (brackets in strings ignored)."""
    if line.count("[") + line.count("{") <= limit:
        return False
    depth = 0
    for m in _BRACKET.finditer(_JSON_STRING.sub('""', line)):
        depth += 1 if m.group() in "[{" else -1
        if depth > limit:
            return True
    return False


class LineReader(Protocol):
    """What the JSONL reader reads: ``readline`` of bytes (a binary file, or a byte range of one)."""

    def readline(self, size: int = -1, /) -> bytes: ...


def _lines(fh: LineReader, limit: int | None, first: bytes | None = None) -> Iterator[tuple[bytes | None, int]]:
    """``(line, length)`` for each line of ``fh`` (``first``: its first line, already
    read with the same limit); a line over ``limit`` bytes is skipped without being
    held in memory and comes as ``(None, length)``."""
    for line, length, _ in _counted_lines(fh, limit, first):
        yield line, length


def _counted_lines(
    fh: LineReader, limit: int | None, first: bytes | None = None
) -> Iterator[tuple[bytes | None, int, int | None]]:
    """``_lines`` with the number of characters of each skipped line: ``(None, length, chars)``."""
    while True:
        if first is not None:
            line, first = first, None
        else:
            line = fh.readline(-1 if limit is None else limit + 1)
        if not line:
            return
        if limit is not None and len(line) > limit:
            n, chars = len(line), utf8_chars(line)
            while not line.endswith(b"\n"):
                line = fh.readline(1 << 20)
                if not line:
                    break
                n, chars = n + len(line), chars + utf8_chars(line)
            yield None, n, chars - line.endswith(b"\n")
        else:
            yield line, len(line), None


def jsonl_record(rid: str, line: bytes, max_chars: int | None = MAX_CHARS) -> Record:
    """One JSONL line as a record (see the module's rules)."""
    if line.startswith(BOM):
        line = line[len(BOM) :]
    if not line.strip():
        return Record(rid, error="blank line")
    try:
        source = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Record(rid, error=f"not valid UTF-8 (byte {exc.start})")
    if too_deep(source):
        return Record(rid, error=f"invalid JSON: nested deeper than {MAX_DEPTH} levels")
    try:
        obj = json.loads(source)
    except json.JSONDecodeError as exc:  # the whole message: what, line, column, character
        return Record(rid, error=f"invalid JSON: {exc}")
    except (ValueError, RecursionError) as exc:  # e.g. an integer with too many digits
        return Record(rid, error=f"invalid JSON: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
    if not isinstance(obj, dict):
        return Record(rid, error='a JSON object with a string "text" field is expected')
    rid = record_id(obj.get("id"), rid)  # the record's own id, whatever is wrong with its text
    if not isinstance(obj.get("text"), str):
        return Record(rid, error='a JSON object with a string "text" field is expected')
    return check_text(rid, obj["text"], max_chars)


def _jsonl_records(
    name: str, fh: LineReader, max_chars: int | None, first: bytes | None = None, first_line: int = 1
) -> Iterator[Record]:
    """Records of a JSONL stream, one per line; ``first``: a first line already read;
    ``first_line``: the number of the stream's first line (a slice of a file keeps the file's ids)."""
    limit = _byte_limit(max_chars)
    n = first_line - 1
    for n, (line, _, chars) in enumerate(_counted_lines(fh, limit, first), first_line):
        rid = f"{name}:{n}"
        if line is None:
            yield Record(rid, error=f"over-long line: {chars} characters {limit_note(max_chars)}")
        else:
            yield jsonl_record(rid, line, max_chars)
    if n < first_line:
        yield Record(name, error="empty file: no records")


def _file_records(path: Path, max_chars: int | None, name: str | None = None) -> Iterator[Record]:
    """The records of a file; ``name``: the id of a text file, and of a JSONL file's lines
    ``NAME:LINE`` (default: the path)."""
    name = str(path) if name is None else name
    try:
        if path.suffix == ".jsonl":
            with open(path, "rb") as fh:
                yield from _jsonl_records(name, fh, max_chars)
            return
        limit = _byte_limit(max_chars)
        size = path.stat().st_size
        if limit is not None and size > limit:
            yield Record(
                name, error=f"over-long input: {size} bytes, more than {max_chars} characters {limit_note(max_chars)}"
            )
            return
        data = path.read_bytes()
    except OSError as exc:
        yield Record(name, error=f"cannot read: {exc.strerror or exc}")
        return
    yield check_text(name, data, max_chars)


def is_html(name: str, input_format: str) -> bool:
    """Whether a source's texts are HTML: ``input_format`` ``html``, or ``auto`` and a ``.html``/``.htm`` file."""
    return input_format == "html" or (input_format == "auto" and name.lower().endswith(HTML_SUFFIXES))


def _marked(records: Iterable[Record], html: bool) -> Iterator[Record]:
    for rec in records:
        rec.html = html
        yield rec


def read_records(
    texts: Iterable[str] = (),
    inputs: Iterable[str] = (),
    max_chars: int | None = MAX_CHARS,
    stdin: BinaryIO | None = None,
    input_format: str = "text",
) -> Iterator[Record]:
    """The records of texts and of ``inputs`` (files, directories, ``-``), in order;
    ``input_format`` (``text``, ``html``, ``auto``) says which are HTML (``Record.html``)."""
    if input_format not in INPUT_FORMATS:
        raise ValueError(f"input_format must be one of {', '.join(INPUT_FORMATS)}, not {input_format!r}")
    every = input_format == "html"
    for n, text in enumerate(texts):
        yield from _marked([check_text(f"arg:{n}", text, max_chars)], every)
    for spec in inputs:
        if spec == "-":
            stream = stdin or sys.stdin.buffer
            yield from _marked(_stdin_records(stream, max_chars), every)
            continue
        path = Path(spec)
        if path.is_dir():
            files = directory_files(path)
            if not files:
                yield Record(str(path), error="directory holds no files")
            for f in files:
                yield from _marked(_file_records(f, max_chars), is_html(f.name, input_format))
        elif path.is_file():
            yield from _marked(_file_records(path, max_chars), is_html(path.name, input_format))
        else:
            yield Record(str(path), error="no such file or directory")


def input_prefixes(inputs: Iterable[str]) -> list[str]:
    """What the ids of the records read from ``inputs`` start with before a file's own name: a directory
    given (``docs/`` of ``docs/sub/a.txt``), or the directory of a file given alone (``/tmp/x/in/`` of
    ``/tmp/x/in/a.txt``); none for standard input or a file of the working directory."""
    out = []
    for spec in inputs:
        if spec == "-":
            continue
        path = Path(spec)
        base = str(path if path.is_dir() else path.parent)
        if base != ".":
            out.append(base.rstrip("/" + os.sep) + os.sep)
    return out


def directory_files(path: Path) -> list[Path]:
    """A directory's files, recursively, in name order; hidden files left out."""
    return sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith("."))


def _stdin_records(stream: BinaryIO, max_chars: int | None) -> Iterator[Record]:
    limit = _byte_limit(max_chars)
    first = stream.readline(-1 if limit is None else limit + 1)
    if first.startswith(BOM):
        first = first[len(BOM) :]
    if first.lstrip().startswith(b"{"):
        yield from _jsonl_records("stdin", stream, max_chars, first=first)
        return
    rest = stream.read(-1 if limit is None else limit)
    if limit is not None and stream.read(1):
        yield Record("stdin", error=f"over-long input: more than {max_chars} characters {limit_note(max_chars)}")
        return
    yield check_text("stdin", first + rest, max_chars)


def records_from_bytes(name: str, data: bytes, max_chars: int | None = MAX_CHARS) -> list[Record]:
    """Records of an uploaded file: ``.jsonl`` line by line, anything else one document."""
    import io

    if name.endswith(".jsonl"):
        return list(_jsonl_records(name, io.BytesIO(data), max_chars))
    return [check_text(name, data, max_chars)]


def as_record(n: int, rec) -> Record:
    """A checked record from a tag_many input: a ``Record``, an ``(id, text)`` pair or a string."""
    if isinstance(rec, Record):
        return rec if rec.error is not None else check_text(rec.id, rec.text, max_chars=None)
    if isinstance(rec, (str, bytes)):
        return check_text(str(n), rec, max_chars=None)
    if isinstance(rec, (tuple, list)) and len(rec) == 2:
        return check_text(str(rec[0]), rec[1], max_chars=None)
    return Record(str(n), error=f"expected a string or an (id, text) pair, not {type(rec).__name__}")
