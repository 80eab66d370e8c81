"""Import documents into a project: tokenise them (spaCy, as for tagging) and,
with a model, pre-annotate them with its spans and confidences (and, from a model with
frame heads, their polarity, intensity and a DSE's holder, attitude and targets, each flagged as the model's).

Every input record is imported, reported as already in the project, or reported
as an error with its reason; nothing is dropped silently.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from opinion_tagger.annotation.store import (
    ATTITUDES,
    HOLDERS,
    INTENSITIES,
    NO_ATTITUDE,
    POLARITIES,
    SPAN_HOLDER,
    Project,
    StoredSpan,
    StoredTarget,
    StoredToken,
)
from opinion_tagger.tagging.documents import SpanFrame, TaggedDocument
from opinion_tagger.tagging.inputs import MAX_CHARS, Record, directory_files, read_records
from opinion_tagger.tagging.inputs import _file_records as file_records
from opinion_tagger.tagging.tagger import OpinionTagger, tokenised
from opinion_tagger.wording import counted


@dataclass
class ImportReport:
    imported: int = 0
    duplicates: int = 0  # the same name and text already in the project
    errors: list[tuple[str, str]] = field(default_factory=list)  # (record id, reason)

    def summary(self) -> str:
        return (
            f"imported {counted(self.imported, 'document')}, {self.duplicates} already in the project, "
            f"{counted(len(self.errors), 'error')}"
        )


def input_records(
    inputs: Iterable[str], max_chars: int | None = MAX_CHARS, skip: Collection[Path] = ()
) -> Iterator[Record]:
    """The records of ``annotate import``'s inputs, named the same on every machine: a file in a
    directory given by its path relative to that directory (``sub/b.txt``; JSONL lines
    ``sub/c.jsonl:3``), a file given alone by its name; files in ``skip`` (resolved paths: the
    project's own files) are left out.  Standard input and missing paths as ``read_records``."""
    for spec in inputs:
        path = Path(spec)
        if spec == "-" or not (path.is_dir() or path.is_file()):
            yield from read_records((), [spec], max_chars)
        elif path.is_file():
            if path.resolve() not in skip:
                yield from file_records(path, max_chars, name=path.name)
        else:
            files = directory_files(path)
            if not files:
                yield Record(spec, error="directory holds no files")
            for f in files:
                if f.resolve() not in skip:
                    yield from file_records(f, max_chars, name=f.relative_to(path).as_posix())


def _roles(span: StoredSpan, f: SpanFrame, first: dict[int, int], last: dict[int, int]) -> None:
    """A DSE's attitude and targets as the model's, where it predicts them (a model without attitude or target
    heads leaves them not set): an attitude of ``ATTITUDE_TYPES`` (None with a score: the head's "none"), and its
    targets' words as token spans (one whose offsets are not a token's start and end is left out), each with its
    probability; an empty list: the model finds none."""
    if f.attitude in ATTITUDES or (f.attitude is None and f.attitude_score is not None):
        span.attitude, span.attitude_source, span.attitude_score = f.attitude or NO_ATTITUDE, "model", f.attitude_score
    if f.targets is not None:
        found: dict[tuple[int, int], StoredTarget] = {}
        for t in f.targets:
            if t.get("start") in first and t.get("end") in last:
                key = (first[t["start"]], last[t["end"]] + 1)
                found.setdefault(key, StoredTarget(*key, "model", t.get("score")))
        span.targets, span.targets_source = tuple(found[k] for k in sorted(found)), "model"


def stored_parts(doc: TaggedDocument) -> tuple[list[StoredToken], list[StoredSpan]]:
    """A tagged document's tokens and (model) spans over token positions; from a model with frame heads, each
    span's polarity and intensity and a DSE's holder, as the model's (with its probabilities), and its attitude
    and targets from a model with those heads (``_roles``)."""
    tokens = [
        StoredToken(k, s_i, t.start, t.end)
        for k, (s_i, t) in enumerate((s_i, t) for s_i, s in enumerate(doc.sentences) for t in s.tokens)
    ]
    first = {t.start: t.position for t in tokens}
    last = {t.end: t.position for t in tokens}
    spans = []
    for sp in doc.spans:
        span = StoredSpan(None, sp.type, first[sp.start], last[sp.end] + 1, "model", sp.score)
        f = sp.frame
        if f is not None:
            if f.polarity in POLARITIES:
                span.polarity, span.polarity_source, span.polarity_score = f.polarity, "model", f.polarity_score
            if f.intensity in INTENSITIES:
                span.intensity, span.intensity_source, span.intensity_score = f.intensity, "model", f.intensity_score
            if sp.type == "DSE":  # the model's holder: its words, writer, implicit, or None: none in the sentence
                h = f.holder
                if isinstance(h, dict) and h.get("start") in first and h.get("end") in last:
                    span.holder, span.holder_start, span.holder_end = SPAN_HOLDER, first[h["start"]], last[h["end"]] + 1
                else:
                    span.holder = h if h in HOLDERS else "none"
                span.holder_source, span.holder_score = "model", f.holder_score
                _roles(span, f, first, last)
        spans.append(span)
    return tokens, spans


def _unique_name(project: Project, name: str, text: str, taken: set[str]) -> str | None:
    """``name``, or ``name (2)``... when another text has it; None when this text is already there."""
    candidate, k = name, 1
    while candidate in taken or project.has_document(candidate):
        if candidate not in taken and project.text_of(candidate) == text:
            return None
        k += 1
        candidate = f"{name} ({k})"
    return candidate


def import_records(
    project: Project,
    records: Iterable[Record],
    tagger: OpinionTagger | None = None,
    model_name: str | None = None,
    chunk: int = 64,
    overlap: int = 0,
) -> ImportReport:
    """Add ``records`` to ``project``, pre-annotated by ``tagger`` when given; one
    transaction per ``chunk`` documents.  ``overlap`` N (2 or more): each new document is
    annotated by N annotators independently, each in a copy of their own (``Project.claim``),
    then reviewed."""
    report = ImportReport()
    pending: list[tuple[str, str]] = []

    def flush():
        taken: set[str] = set()
        named = []
        for rid, text in pending:
            name = _unique_name(project, rid, text, taken)
            if name is None:
                report.duplicates += 1
            else:
                taken.add(name)
                named.append((name, text))
        docs = tagger.tag_many(named, chunk=len(named) or 1) if tagger else tokenised(named, project.types)
        rows = []
        for d in docs:
            if getattr(d, "error", None) is not None:  # the tagger refused or failed on this record
                report.errors.append((d.id, d.error))
            else:
                rows.append((d.id, d.text, *stored_parts(d), model_name if tagger else None))
        report.imported += sum(1 for _, i in project.add_documents(rows, overlap=overlap) if i is not None)
        pending.clear()

    for rec in records:
        if rec.error is not None or rec.text is None:
            report.errors.append((rec.id, rec.error or "a record without text"))
            continue
        pending.append((rec.id, rec.text))
        if len(pending) >= chunk:
            flush()
    flush()
    return report
