"""The local engine: tag a stream of records on this machine, in one process or in a worker process per core.

With ``workers`` > 1, each worker loads the model once (ONNX Runtime with one thread: processes share out
the cores better than threads do, and tokenisation and output formatting run in parallel too), takes
chunks of records, tags them and formats them (``format_chunk``); the parent reads the input, hands out
the chunks and writes the results in input order.  The output is the same as one process's, record for
record.
"""

from __future__ import annotations

import multiprocessing as mp
import sys
from collections import deque
from collections.abc import Iterable, Iterator

from tagger.tagging.inputs import Record

_WORKER: dict = {}  # the worker process's tagger, made by _init


def default_workers(model=None) -> int:
    """Worker processes for ``model`` (a name or bundle path): one per core for networks on word vectors
    (tokenising and formatting then run in parallel too), one for a network with the MiniLM encoder,
    whose session uses every core itself (two processes on two cores were 1.15 times one thread, one
    process with two threads 1.68 times: the encoder's 90 MB of weights are then read once per batch)."""
    from tagger.network.onnx_runtime import default_threads

    try:
        from tagger.network.bundle import _read_json
        from tagger.paths import resolve_model

        if _read_json(resolve_model(model) / "config.json").get("contextual"):
            return 1
    except Exception:  # an unreadable bundle is reported when it is loaded
        pass
    return default_threads()


CHUNK_CHARS = 20_000  # a worker's share at a time: about 4,000 tokens, so that every worker has work


def _chunks(records: Iterable[Record], size: int, chars: int | None = None) -> Iterator[list[Record]]:
    """Consecutive records, at most ``size`` of them and (given ``chars``) about ``chars`` characters."""
    buf: list[Record] = []
    n = 0
    for rec in records:
        buf.append(rec)
        n += len(rec.text or "")
        if len(buf) >= size or (chars and n >= chars):
            yield buf
            buf, n = [], 0
    if buf:
        yield buf


def format_chunk(ot, records: list[Record], fmt: str) -> list[tuple[str, str | None, str | None, object]]:
    """Tag ``records``; per record (id, error or None, the formatted text for ``fmt`` or None, the document
    when ``fmt`` has no per-record text form)."""
    from tagger.tagging.formats import record_text
    from tagger.tagging.html_input import tag_records

    out = []
    for doc in tag_records(ot, records, chunk=len(records)):  # HTML records: the text shown, offsets into it
        text = record_text(doc, fmt)
        out.append((doc.id, doc.error, text, None if text is not None else doc))
    return out


def _init(model, backend: str, fmt: str) -> None:
    from tagger.errors import TaggerError
    from tagger.tagging.annotate import OpinionTagger

    _WORKER["fmt"] = fmt
    try:  # a failure here is raised by the first chunk, in the parent (a pool whose initializer
        _WORKER["ot"] = OpinionTagger.load(model, backend=backend, threads=1)  # fails would restart it forever)
    except TaggerError as exc:
        _WORKER["error"] = exc


def _work(records: list[Record]):
    if "error" in _WORKER:
        raise _WORKER["error"]
    return format_chunk(_WORKER["ot"], records, _WORKER["fmt"])


def tag_stream(
    records: Iterable[Record], model, backend: str, fmt: str, workers: int = 1, chunk: int = 64
) -> Iterator[tuple[str, str | None, str | None, object]]:
    """``format_chunk``'s tuples for every record, in input order; ``workers`` processes (1: this one)."""
    if workers <= 1:
        from tagger.tagging.annotate import OpinionTagger

        ot = OpinionTagger.load(model, backend=backend)
        for part in _chunks(records, chunk):
            yield from format_chunk(ot, part, fmt)
        return
    method = "fork" if sys.platform.startswith("linux") else "spawn"
    with mp.get_context(method).Pool(workers, initializer=_init, initargs=(model, backend, fmt)) as pool:
        pending: deque = deque()  # at most two chunks a worker in flight: the input is read as it is needed
        for part in _chunks(records, chunk, CHUNK_CHARS):
            pending.append(pool.apply_async(_work, (part,)))
            if len(pending) >= 2 * workers:
                yield from pending.popleft().get()
        while pending:
            yield from pending.popleft().get()
