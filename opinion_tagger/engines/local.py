"""The local engine: tag a stream of records on this machine, in one process or in a worker process per core.

With ``workers`` > 1, this process and ``workers`` - 1 forked ones each load the model once (ONNX Runtime
with one thread: processes share out the cores better than threads do, and tokenisation and output
formatting run in parallel too) and tag and format chunks of records (``format_chunk``); this process also
reads the input, hands out the chunks and writes the results in input order.  The output is the same as
one process's, record for record.
"""

from __future__ import annotations

import multiprocessing as mp
import sys
from collections import deque
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from opinion_tagger.tagging.inputs import Record

if TYPE_CHECKING:
    from opinion_tagger.tagging.tagger import OpinionTagger

_WORKER: dict = {}  # the worker process's tagger, made by _init


def default_workers(model=None) -> int:
    """Worker processes for ``model`` (a name or bundle path): one per core for networks on word vectors
    (tokenising and formatting then run in parallel too), one for a network with the MiniLM encoder,
    whose session uses every core itself (faster than a process per core: the encoder's weights are then
    read once per batch, not once per process: experiments/README.md)."""
    from opinion_tagger.runtime.onnx_network import default_threads

    try:
        from opinion_tagger.paths import resolve_model
        from opinion_tagger.runtime.bundle import read_config

        if read_config(resolve_model(model) / "config.json").model.encoder.name:
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


Tagged = tuple[str, str | None, str | None, object, str | None]  # what format_chunk gives per record


def format_chunk(ot, records: list[Record], fmt: str) -> list[Tagged]:
    """Tag ``records``; per record (id, error or None, the formatted text for ``fmt`` or None, the document
    when ``fmt`` has no per-record text form, the language the text looks like when the language check finds
    it is not English or None)."""
    from opinion_tagger.tagging.formats import record_text
    from opinion_tagger.tagging.html_input import tag_records

    out: list[Tagged] = []
    for doc in tag_records(ot, records, chunk=len(records)):  # HTML records: the text shown, offsets into it
        text = record_text(doc, fmt)
        out.append((doc.id, doc.error, text, None if text is not None else doc, doc.language))
    return out


def _init(load: tuple, fmt: str) -> None:
    from opinion_tagger.errors import TaggerError
    from opinion_tagger.tagging.tagger import OpinionTagger

    _WORKER["fmt"] = fmt
    try:  # a failure here is raised by the first chunk, in the parent (a pool whose initializer
        _WORKER["ot"] = OpinionTagger.load(*load)  # fails would restart it forever)
    except TaggerError as exc:
        _WORKER["error"] = exc


def _work(records: list[Record]):
    if "error" in _WORKER:
        raise _WORKER["error"]
    return format_chunk(_WORKER["ot"], records, _WORKER["fmt"])


def tag_stream(
    records: Iterable[Record],
    model,
    backend: str,
    fmt: str,
    workers: int = 1,
    chunk: int = 64,
    batch_size: int | None = None,
    precision: str = "fp32",
    lang_check: bool = True,
) -> Iterator[Tagged]:
    """``format_chunk``'s tuples for every record, in input order, from ``workers`` processes: this one and
    ``workers`` - 1 forked ones: one process fewer to start than a worker per core beside a parent that only
    reads and writes, and this process's chunks never cross a pipe.  A chunk goes to a worker while the
    workers have fewer than two chunks each still to tag, else it stays here, to be tagged while a worker's
    chunk is awaited or when its turn to be written comes: this process, which also reads and writes, takes
    the share that keeps every core busy.  ``batch_size``, ``precision``, ``lang_check``: see
    ``OpinionTagger.load``."""
    if workers <= 1:
        from opinion_tagger.tagging.tagger import OpinionTagger

        ot = OpinionTagger.load(
            model, backend=backend, batch_size=batch_size, precision=precision, lang_check=lang_check
        )
        for part in _chunks(records, chunk):
            yield from format_chunk(ot, part, fmt)
        return
    method = "fork" if sys.platform.startswith("linux") else "spawn"
    # OpinionTagger.load's arguments in every process but a lone one
    load = (model, backend, 1, batch_size, precision, lang_check)
    # the pool's thread that receives the workers' results needs the interpreter lock, which this process's
    # tagging holds for up to the switch interval at a time (5 ms by default): a worker whose result fills
    # the pipe waits meanwhile.  A shorter interval keeps the workers busier (experiments/README.md)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL)
    try:
        with mp.get_context(method).Pool(workers - 1, initializer=_init, initargs=(load, fmt)) as pool:
            window = _Window(pool, workers, load, fmt)
            for part in _chunks(records, chunk, CHUNK_CHARS):
                window.pending.append(part)
                yield from window.step(WINDOW * workers)
            yield from window.step(0)
    finally:
        sys.setswitchinterval(interval)


SWITCH_INTERVAL = 0.001  # seconds, while worker processes run


WINDOW = 4  # chunks read ahead per process
QUEUED = 2  # a worker's chunks handed out and not yet tagged, at most


class _Window:
    """The chunks read and not yet written, in input order: not yet handed out (the list of records), a
    worker's (its ``AsyncResult``) or tagged here (its tuples, in a tuple)."""

    def __init__(self, pool, workers: int, load: tuple, fmt: str):
        self.pool, self.workers, self.load, self.fmt = pool, workers, load, fmt  # load: OpinionTagger.load's
        self.pending: deque = deque()
        # this process's tagger, loaded with its first chunk (the workers load theirs meanwhile)
        self.own: OpinionTagger | None = None

    def step(self, room: int) -> Iterator[Tagged]:
        """Hand chunks to the workers while each has fewer than QUEUED; write the first chunks as soon as they
        are done; return to read more while fewer than ``room`` chunks are read (0: the input has ended).
        Otherwise tag the first chunk not handed out here, or, when there is none, wait for the first."""
        while self.pending:
            busy = sum(1 for item in self.pending if hasattr(item, "ready") and not item.ready())
            for k, item in enumerate(self.pending):
                if busy >= QUEUED * (self.workers - 1):
                    break
                if isinstance(item, list):
                    self.pending[k] = self.pool.apply_async(_work, (item,))
                    busy += 1
            head = self.pending[0]
            if isinstance(head, tuple) or (hasattr(head, "ready") and head.ready()):
                self.pending.popleft()
                yield from head[0] if isinstance(head, tuple) else head.get()
                continue
            if room and len(self.pending) < room:
                return
            mine = next((k for k, item in enumerate(self.pending) if isinstance(item, list)), None)
            if mine is None:
                self.pending.popleft()
                yield from head.get()
            else:
                self.pending[mine] = (self._tag(self.pending[mine]),)

    def _tag(self, part: list[Record]) -> list:
        if self.own is None:
            from opinion_tagger.tagging.tagger import OpinionTagger

            self.own = OpinionTagger.load(*self.load)
        return format_chunk(self.own, part, self.fmt)
