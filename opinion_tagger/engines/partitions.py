"""Partitioned batch tagging, independent of the engine that runs it.

An input (files, directories and globs of ``.txt``, ``.jsonl`` and ``.parquet``
files) is cut into partitions of about ``size`` records: consecutive plain-text
files (one document each), line ranges of a JSONL file, row ranges of a Parquet
file.  ``tag_partition`` tags one partition with the local tagging API
(``opinion_tagger.tagging.inputs`` reads the records, ``OpinionTagger.tag_many`` tags them,
``opinion_tagger.tagging.formats`` writes them), so a record's output is the local engine's.
Each partition becomes one file ``part-NNNNN.EXT`` in the output directory,
written atomically, then ``part-NNNNN.done.json`` (counts and the file's size);
``_plan.json`` holds the partitions and a fingerprint of the inputs and options,
so a restarted run skips finished partitions and refuses an output directory
made from other inputs.
"""

from __future__ import annotations

import glob
import json
import os
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from opinion_tagger.errors import TaggerError
from opinion_tagger.tagging.inputs import (
    MAX_CHARS,
    Record,
    _byte_limit,
    _file_records,
    _jsonl_records,
    _lines,
    check_text,
    directory_files,
    record_id,
)

PLAN = "_plan.json"
OUTPUT_FORMATS = ("jsonl", "conll", "parquet")
PLAN_VERSION = 1


# --------------------------------------------------------------------------- planning
def expand_inputs(specs: Iterable[str]) -> list[Path | Record]:
    """Files in input order; a spec that names nothing becomes an error record
    (as in the local engine).  A spec may be a file, a directory or a glob."""
    items: list[Path | Record] = []
    for spec in specs:
        if spec == "-":
            raise TaggerError("the ray engine reads files: standard input (-) needs --engine local")
        path = Path(spec)
        if path.is_dir():
            items.extend(directory_files(path) or [Record(str(path), error="directory holds no files")])
        elif path.is_file():
            items.append(path)
        elif glob.has_magic(spec):
            files = sorted(Path(f) for f in glob.glob(spec, recursive=True) if Path(f).is_file())
            items.extend(files or [Record(spec, error="no file matches this pattern")])
        else:
            items.append(Record(str(path), error="no such file or directory"))
    return items


def _jsonl_slices(path: Path, size: int, max_chars: int | None) -> list[dict]:
    """Line ranges of ``size`` lines (the reader's line splitting, long lines not
    held in memory): byte offsets, first line number, line count.  An empty file
    is one range of no lines (the reader makes it an ``empty file`` record)."""
    out: list[dict] = []
    offset, line_no = 0, 1
    start: dict | None = None
    with open(path, "rb") as fh:
        for _, length in _lines(fh, _byte_limit(max_chars)):
            if start is None:
                start = {"kind": "jsonl", "path": str(path), "offset": offset, "first_line": line_no, "lines": 0}
            start["lines"] += 1
            offset += length
            line_no += 1
            if start["lines"] == size:
                out.append({**start, "end": offset})
                start = None
    if start is not None or not out:
        out.append(
            {**(start or {"kind": "jsonl", "path": str(path), "offset": 0, "first_line": 1, "lines": 0}), "end": offset}
        )
    return out


class _ByteRange:
    """``readline`` over bytes ``start .. end`` of a binary file (what the JSONL reader needs)."""

    def __init__(self, fh, start: int, end: int):
        fh.seek(start)
        self.fh, self.left = fh, end - start

    def readline(self, size: int = -1) -> bytes:
        n = self.left if size is None or size < 0 else min(size, self.left)
        line = self.fh.readline(n) if n > 0 else b""
        self.left -= len(line)
        return line


def _parquet_slices(path: Path, size: int) -> list[dict]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as exc:
        return [{"kind": "files", "items": [{"id": str(path), "error": f"not a readable Parquet file ({exc})"}]}]
    if "text" not in pf.schema_arrow.names:
        return [
            {"kind": "files", "items": [{"id": str(path), "error": 'a Parquet file with a "text" column is expected'}]}
        ]
    n = pf.metadata.num_rows
    if n == 0:
        return [{"kind": "files", "items": [{"id": str(path), "error": "empty file: no records"}]}]
    return [{"kind": "parquet", "path": str(path), "row": r, "rows": min(size, n - r)} for r in range(0, n, size)]


def plan_partitions(items: list[Path | Record], size: int, max_chars: int | None = MAX_CHARS) -> list[dict]:
    """Partitions in input order, each a JSON-able dict with its ``index``."""
    if size < 1:
        raise TaggerError("--partition-size must be at least 1")
    parts: list[dict] = []
    group: list[dict] = []  # consecutive plain-text files and error records
    for item in items:
        if isinstance(item, Path) and item.suffix in (".jsonl", ".parquet"):
            if group:
                parts.append({"kind": "files", "items": group})
                group = []
            parts.extend(
                _jsonl_slices(item, size, max_chars) if item.suffix == ".jsonl" else _parquet_slices(item, size)
            )
        else:
            group.append({"path": str(item)} if isinstance(item, Path) else {"id": item.id, "error": item.error})
            if len(group) == size:
                parts.append({"kind": "files", "items": group})
                group = []
    if group:
        parts.append({"kind": "files", "items": group})
    return [{"index": k, **p} for k, p in enumerate(parts)]


def _fingerprint(specs: list[str], items: list[Path | Record], options: dict) -> dict:
    files = []
    for p in items:
        if isinstance(p, Path):
            st = p.stat()
            files.append([str(p), st.st_size, st.st_mtime_ns])
    return json.loads(json.dumps({"version": PLAN_VERSION, "inputs": list(specs), "files": files, "options": options}))


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``path``, flush, fsync, rename."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def prepare(out_dir: Path, specs: list[str], options: dict) -> list[dict]:
    """The run's partitions: those in ``out_dir/_plan.json`` when it was made from
    the same inputs (names, sizes, modification times) and options, else a new plan.
    A directory holding finished partitions of another run is refused."""
    items = expand_inputs(specs)
    if out_dir.exists() and not out_dir.is_dir():
        raise TaggerError(f"--out {out_dir}: not a directory")
    for spec in specs:  # its partitions would be read as input by the next run
        if Path(spec).is_dir() and out_dir.resolve().is_relative_to(Path(spec).resolve()):
            raise TaggerError(f"--out {out_dir} is inside the input directory {spec}; write elsewhere")
    out_dir.mkdir(parents=True, exist_ok=True)
    fingerprint = _fingerprint(specs, items, options)
    plan_path = out_dir / PLAN
    if plan_path.exists():
        try:
            saved = json.loads(plan_path.read_text(encoding="utf-8"))
            same = saved["fingerprint"] == fingerprint
            partitions = saved["partitions"]
        except (ValueError, KeyError, TypeError):
            raise TaggerError(f"{plan_path}: damaged; remove the output directory and run again") from None
        if same:
            return partitions
    if plan_path.exists() or any(out_dir.glob("part-*.done.json")):
        raise TaggerError(
            f"--out {out_dir} holds the output of a run over other inputs or options (see {PLAN}); give a new directory"
        )
    partitions = plan_partitions(items, options["partition_size"], options["max_chars"])
    write_atomic(plan_path, json.dumps({"fingerprint": fingerprint, "partitions": partitions}).encode())
    return partitions


# --------------------------------------------------------------------------- reading and tagging
def _parquet_records(path: str, row: int, rows: int, max_chars: int) -> Iterator[Record]:
    """Rows ``row .. row + rows``: a string "text" column, "id" kept (default ``PATH:ROW``, from 1)."""
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(path)
    columns = ["text"] + (["id"] if "id" in pf.schema_arrow.names else [])
    groups, first, pos = [], None, 0
    for g in range(pf.metadata.num_row_groups):
        n = pf.metadata.row_group(g).num_rows
        if pos + n > row and pos < row + rows:
            groups.append(g)
            first = pos if first is None else first
        pos += n
    table = pf.read_row_groups(groups, columns=columns).slice(row - (first or 0), rows)
    ids = table.column("id").to_pylist() if "id" in columns else [None] * table.num_rows
    for k, (text, rid) in enumerate(zip(table.column("text").to_pylist(), ids)):
        yield check_text(record_id(rid, f"{path}:{row + k + 1}"), text, max_chars)


def partition_records(part: dict, max_chars: int) -> Iterator[Record]:
    """The records of one partition, read as the local engine reads them."""
    kind = part["kind"]
    if kind == "files":
        for item in part["items"]:
            if "error" in item:
                yield Record(item["id"], error=item["error"])
                continue
            yield from _file_records(Path(item["path"]), max_chars)
    elif kind == "jsonl":
        with open(part["path"], "rb") as fh:
            yield from _jsonl_records(
                part["path"], _ByteRange(fh, part["offset"], part["end"]), max_chars, first_line=part["first_line"]
            )
    elif kind == "parquet":
        yield from _parquet_records(part["path"], part["row"], part["rows"], max_chars)
    else:
        raise ValueError(f"unknown partition kind {kind!r}")


def parquet_schema(types: tuple[str, ...], frames: bool = False):
    """The Parquet output: the JSONL record's fields as columns (``language`` and ``warning`` null for English text),
    plus ``error``; with ``frames`` (a model with frame heads) a span's polarity and intensity with their scores, a
    DSE's holder (``parquet_row``), and its attitude with its score and its targets (a list of ``start``, ``end``,
    ``text``, ``score``), null where the model does not predict them: the columns are the same for every model
    with frame heads."""
    import pyarrow as pa

    i64, s, f64 = pa.int64(), pa.string(), pa.float64()
    token = pa.struct([("text", s), ("start", i64), ("end", i64), *[(t, s) for t in types]])
    sentence = pa.struct([("start", i64), ("end", i64), ("tokens", pa.list_(token))])
    fields = [("type", s), ("start", i64), ("end", i64), ("text", s), ("score", f64)]
    if frames:
        holder = pa.struct([("start", i64), ("end", i64), ("text", s)])
        fields += [("polarity", s), ("polarity_score", f64), ("intensity", s), ("intensity_score", f64)]
        fields += [("holder", holder), ("holder_class", s), ("holder_score", f64)]
        target = pa.struct([("start", i64), ("end", i64), ("text", s), ("score", f64)])
        fields += [("attitude", s), ("attitude_score", f64), ("targets", pa.list_(target))]
    return pa.schema(
        [
            ("id", s),
            ("language", s),
            ("warning", s),
            ("text", s),
            ("sentences", pa.list_(sentence)),
            ("spans", pa.list_(pa.struct(fields))),
            ("error", s),
        ]
    )


def parquet_row(record: dict) -> dict:
    """A JSONL record as a row of ``parquet_schema``: a DSE's holder, one column type, is ``holder`` when it is
    words (``{"start", "end", "text"}``) and ``holder_class`` when it is ``writer`` or ``implicit`` (both null:
    no holder in the sentence)."""
    spans = []
    for span in record.get("spans", ()):
        if "holder" in span:
            h = span["holder"]
            span = {
                **span,
                "holder": h if isinstance(h, dict) else None,
                "holder_class": h if isinstance(h, str) else None,
            }
        spans.append(span)
    return {**record, "spans": spans} if "spans" in record else record


def part_name(index: int, fmt: str) -> str:
    return f"part-{index:05d}.{fmt}"


def _serialise(fmt: str, docs: Iterable, types: tuple[str, ...], counts: dict, frames: bool = False) -> bytes:
    """The partition's output file, from ``OpinionTagger.tag_many``'s documents (``frames``: from a model with
    frame heads)."""
    import io

    def counted():
        for doc in docs:
            counts["records"] += 1
            if doc.error is not None:
                counts["errors"] += 1
                counts["error_records"].append([doc.id, doc.error])
            else:
                counts["tokens"] += sum(len(s.tokens) for s in doc.sentences)
            if doc.language is not None:
                counts["languages"][doc.language] = counts["languages"].get(doc.language, 0) + 1
            yield doc

    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        rows = [{"error": None, **parquet_row(d.to_dict())} for d in counted()]
        buf = io.BytesIO()
        pq.write_table(pa.Table.from_pylist(rows, schema=parquet_schema(types, frames)), buf)
        return buf.getvalue()
    from opinion_tagger.tagging.formats import Writer

    text = io.StringIO()
    writer = Writer(fmt, text)
    for doc in counted():
        writer.document(doc)  # an error record when the document has one
    writer.close()
    return text.getvalue().encode("utf-8")


def tag_partition(ot, part: dict, out_dir: Path, fmt: str, max_chars: int, chunk: int = 256) -> dict:
    """Tag one partition into ``out_dir/part-NNNNN.FMT`` and record it as done;
    returns the counts (records, errors, tokens; records by the language they look like when it is not English),
    the error records, seconds and CPU seconds."""
    t0, c0 = time.perf_counter(), time.process_time()
    counts = {"index": part["index"], "records": 0, "errors": 0, "tokens": 0, "languages": {}, "error_records": []}
    data = _serialise(fmt, ot.tag_many(partition_records(part, max_chars), chunk=chunk), ot.types, counts, ot.frames)
    name = part_name(part["index"], fmt)
    write_atomic(out_dir / name, data)
    counts["seconds"] = time.perf_counter() - t0
    counts["cpu_seconds"] = time.process_time() - c0  # this process's CPU time: the rate a busy machine hides
    done = {k: v for k, v in counts.items() if k != "error_records"}
    write_atomic(
        out_dir / f"part-{part['index']:05d}.done.json", json.dumps({**done, "file": name, "bytes": len(data)}).encode()
    )
    return counts


def finished(out_dir: Path, part: dict, fmt: str) -> dict | None:
    """The done record of a partition whose output is complete, else None."""
    try:
        done = json.loads((out_dir / f"part-{part['index']:05d}.done.json").read_text(encoding="utf-8"))
        ok = done["file"] == part_name(part["index"], fmt) and (out_dir / done["file"]).stat().st_size == done["bytes"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return done if ok else None
