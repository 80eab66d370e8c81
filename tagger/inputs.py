"""Input records for batch tagging: every record becomes ``Record(id, text)``
or ``Record(id, error=...)``, so nothing is silently lost.

Sources: texts given on the command line; a plain-text file (one document);
a ``.jsonl`` file (one JSON object a line with a ``text`` field, ``id`` kept);
a directory (its files, recursively, in name order); ``-`` for standard
input (JSONL if every line is a JSON object, else one document).  Files are
read lazily, JSONL line by line, so memory stays flat on large inputs.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Iterable, Iterator

MAX_CHARS = 200_000  # longer records are refused: split them into documents first


@dataclass
class Record:
    id: str
    text: str | None = None
    error: str | None = None


def check_text(rid: str, raw: bytes | str, max_chars: int) -> Record:
    if isinstance(raw, bytes):
        if b"\x00" in raw:
            return Record(rid, error="binary data (NUL bytes), not text")
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return Record(rid, error=f"not valid UTF-8 (byte {exc.start})")
    if not raw.strip():
        return Record(rid, error="empty text")
    if len(raw) > max_chars:
        return Record(rid, error=f"over-long input: {len(raw)} characters (limit {max_chars})")
    return Record(rid, text=raw)


def _jsonl_records(name: str, fh: BinaryIO, max_chars: int) -> Iterator[Record]:
    for line_no, line in enumerate(fh, 1):
        rid = f"{name}:{line_no}"
        if not line.strip():
            continue
        if len(line) > 4 * max_chars + 1000:
            yield Record(rid, error=f"over-long line: {len(line)} bytes")
            continue
        try:
            obj = json.loads(line.decode("utf-8"))
        except UnicodeDecodeError as exc:
            yield Record(rid, error=f"not valid UTF-8 (byte {exc.start})")
            continue
        except json.JSONDecodeError as exc:
            yield Record(rid, error=f"invalid JSON: {exc.msg}")
            continue
        if not isinstance(obj, dict) or not isinstance(obj.get("text"), str):
            yield Record(rid, error='a JSON object with a string "text" field is expected')
            continue
        yield check_text(str(obj.get("id", rid)), obj["text"], max_chars)


def _file_records(path: Path, max_chars: int) -> Iterator[Record]:
    if path.suffix == ".jsonl":
        with open(path, "rb") as fh:
            yield from _jsonl_records(str(path), fh, max_chars)
        return
    size = path.stat().st_size
    if size > 4 * max_chars + 1000:
        yield Record(str(path), error=f"over-long input: {size} bytes (limit {max_chars} characters)")
        return
    yield check_text(str(path), path.read_bytes(), max_chars)


def read_records(texts: Iterable[str] = (), inputs: Iterable[str] = (), max_chars: int = MAX_CHARS,
                 stdin: BinaryIO | None = None) -> Iterator[Record]:
    for n, text in enumerate(texts):
        yield check_text(f"arg:{n}", text, max_chars)
    for spec in inputs:
        if spec == "-":
            stream = stdin or sys.stdin.buffer
            yield from _stdin_records(stream, max_chars)
            continue
        path = Path(spec)
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith("."))
            if not files:
                yield Record(str(path), error="directory holds no files")
            for f in files:
                yield from _file_records(f, max_chars)
        elif path.is_file():
            yield from _file_records(path, max_chars)
        else:
            yield Record(str(path), error="no such file or directory")


def _stdin_records(stream: BinaryIO, max_chars: int) -> Iterator[Record]:
    first = stream.readline()
    if first.lstrip().startswith(b"{"):
        import itertools

        yield from _jsonl_records("stdin", itertools.chain([first], stream), max_chars)
    else:
        limit = 4 * max_chars + 1000
        rest = stream.read(limit)
        if stream.read(1):
            yield Record("stdin", error=f"over-long input: more than {limit} bytes (limit {max_chars} characters)")
            return
        yield check_text("stdin", first + rest, max_chars)


def records_from_bytes(name: str, data: bytes, max_chars: int = MAX_CHARS) -> list[Record]:
    """Records of an uploaded file: ``.jsonl`` line by line, anything else one document."""
    import io

    if name.endswith(".jsonl"):
        return list(_jsonl_records(name, io.BytesIO(data), max_chars))
    return [check_text(name, data, max_chars)]
