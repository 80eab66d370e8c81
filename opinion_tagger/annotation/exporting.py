"""A project's documents as tagged documents (tags in strict IOB2, decoded from
the spans), written as JSONL (the ``tag`` schema plus provenance), CoNLL or
BRAT standoff; and the project's statistics.

JSONL record: ``{"id", "text", "sentences", "spans", "status", "annotator"}`` (``annotator``: who changed it last)
where each span is ``{"type", "start", "end", "text", "score", "source"}`` plus
``"annotator"`` and ``"at"`` for a human span (``score`` is the model's confidence, 1.0 for a human span:
``StoredSpan.confidence``, as the page shows it), and its frame where set: MPQA's ``"intensity"`` and
``"polarity"`` and a DSE's ``"holder"`` (``{"start", "end", "text"}``, ``"writer"``, ``"implicit"``, or null:
none) and ``"attitude"`` (a type, or null: none), each with its ``_source`` (``model``, with its ``_score``, or
``human``), and a DSE's ``"targets"`` (``[{"start", "end", "text", "source", "score"}]``, ``[]``: none) with
``"targets_source"`` (``opinion_tagger.annotation.frames``).  BRAT writes those as attributes
(``A1<TAB>Intensity T3 high``, ``Attitude``), a holder of words as a ``HOLDER`` span and a ``Holder`` relation,
each target as a ``TARGET`` span and a ``Target`` relation, and their sources in the span's note; CoNLL as a frame
column per type, as ``opinion-tagger tag`` writes it (``polarity/intensity/holder/attitude/targets``, ``_`` where
not set), where any span has a value set.
By default an export is of the accepted documents alone (``DEFAULT_STATUSES``: status ``done``; for
a document several annotators annotated, that is its reviewed final version); other statuses
are written when asked for.

Every export is of the documents' final versions: for a document several annotators
annotated, the reviewed one.  Its record adds ``"review": {"reviewer", "at", "method",
"annotators"}`` and each span ``"annotators"``: those whose copies had it (BRAT: in the
span's note; CoNLL: a ``# review`` line).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from opinion_tagger.annotation.frames import brat_lines, json_fields, sources, tagged_frame, targets_sources
from opinion_tagger.annotation.store import STATUSES, Document, Project
from opinion_tagger.tagging.documents import TaggedDocument, TaggedSentence, TaggedSpan, TaggedToken
from opinion_tagger.tagging.formats import Writer, brat_ann, conll_lines

EXPORT_FORMATS = ("jsonl", "conll", "brat")


def tagged(doc: Document, types: tuple[str, ...]) -> TaggedDocument:
    """The document with per-token tags in strict IOB2 (every span opens with B-)."""
    tags = [{t: "O" for t in types} for _ in doc.tokens]
    for sp in doc.spans:
        for k in range(sp.tok_start, sp.tok_end):
            tags[k][sp.type] = ("B-" if k == sp.tok_start else "I-") + sp.type
    out = TaggedDocument(doc.name, doc.text, types=types)
    current = None  # the sentence index of the last token placed
    for tok, tg in zip(doc.tokens, tags):
        t = TaggedToken(doc.text[tok.start : tok.end], tok.start, tok.end, tg)
        if tok.sentence != current:
            out.sentences.append(TaggedSentence(tok.start, tok.end, []))
            current = tok.sentence
        out.sentences[-1].tokens.append(t)
        out.sentences[-1].end = tok.end
    for sp in sorted(doc.spans, key=lambda s: (s.tok_start, s.tok_end, s.type)):
        start, end = doc.span_chars(sp)
        out.spans.append(TaggedSpan(sp.type, start, end, doc.text[start:end], round(sp.confidence, 4)))
    return out


def with_frames(doc: Document, tagged_doc: TaggedDocument) -> TaggedDocument:
    """``tagged_doc`` (``tagged``) with its spans' frames (``frames.tagged_frame``) where any span has a value set,
    so CoNLL writes its frame column; as it is otherwise."""
    spans = sorted(doc.spans, key=lambda s: (s.tok_start, s.tok_end, s.type))
    frames = [tagged_frame(doc, sp) for sp in spans]
    if any(f is not None for f in frames):
        tagged_doc.frames = True
        for out, frame in zip(tagged_doc.spans, frames):
            out.frame = frame
    return tagged_doc


def record(doc: Document, types: tuple[str, ...]) -> dict:
    """The JSONL record of a document: the ``tag`` schema plus status and per-span provenance."""
    rec = tagged(doc, types).to_dict()
    spans = sorted(doc.spans, key=lambda s: (s.tok_start, s.tok_end, s.type))
    for out, sp in zip(rec["spans"], spans):
        out["source"] = sp.source
        if sp.source == "human":
            out["annotator"], out["at"] = sp.annotator, sp.at
        out.update(json_fields(doc, sp))
        if sp.origin is not None:
            out["annotators"] = json.loads(sp.origin)
    rec["status"] = doc.status
    rec["annotator"] = doc.annotator
    if doc.review is not None:
        rec["review"] = doc.review
    return rec


def review_line(doc: Document) -> str | None:
    """``merged by ana (copies of ben, cy)``: how the final version was made, when it was reviewed."""
    if doc.review is None:
        return None
    r = doc.review
    return f"{r.get('method')} by {r.get('reviewer') or '?'} (copies of {', '.join(r.get('annotators') or [])})"


def brat_notes(doc: Document) -> str:
    """BRAT ``AnnotatorNotes`` with each span's provenance (``#1<TAB>AnnotatorNotes T1<TAB>model 0.87``)."""
    spans = sorted(doc.spans, key=lambda s: (s.tok_start, s.tok_end, s.type))
    lines = []
    for n, sp in enumerate(spans, 1):
        note = (
            f"model {sp.score:.4f}"
            if sp.source == "model" and sp.score is not None
            else f"human {sp.annotator or ''} {sp.at or ''}".strip()
        )
        for given in (sources(sp), targets_sources(doc, sp)):
            note += f"; {given}" if given else ""
        if sp.origin is not None:
            note += f"; in the copies of {', '.join(json.loads(sp.origin)) or 'none'}"
        lines.append(f"#{n}\tAnnotatorNotes T{n}\t{note}")
    return "\n".join(lines) + ("\n" if lines else "")


class ProjectWriter(Writer):
    """``formats.Writer`` for stored documents: provenance in JSONL and BRAT, status in CoNLL."""

    def __init__(self, fmt: str, types: tuple[str, ...], stream=None, directory: Path | None = None):
        if fmt not in EXPORT_FORMATS:
            raise ValueError(f"unknown export format {fmt!r}")
        super().__init__(fmt, stream, directory)
        self.types = types

    def stored(self, doc: Document) -> None:
        if self.fmt == "jsonl":
            self._out().write(json.dumps(record(doc, self.types), ensure_ascii=False) + "\n")
        elif self.fmt == "conll":
            lines = conll_lines(with_frames(doc, tagged(doc, self.types))).split("\n", 1)
            review = review_line(doc)
            review = f"# review = {review}\n" if review else ""
            self._out().write(f"{lines[0]}\n# status = {doc.status}\n{review}{lines[1]}\n")
        else:
            name = self._file_name(doc.name)
            (self._dir() / f"{name}.txt").write_text(doc.text, encoding="utf-8")
            td = tagged(doc, self.types)
            self.write_ann(name, brat_ann(td) + brat_lines(doc, td) + brat_notes(doc), self.types)


DEFAULT_STATUSES = ("done",)  # the accepted documents: a team's, reviewed (the final version is done by a review)
UNREJECTED = ("todo", "in_progress", "done")  # all the work but the rejected documents


def iter_documents(project: Project, statuses: tuple[str, ...] | None = None) -> Iterator[Document]:
    """The documents with ``statuses``; by default the accepted ones (``DEFAULT_STATUSES``)."""
    statuses = DEFAULT_STATUSES if statuses is None else statuses
    for info in project.documents():
        if info.status in statuses:
            yield project.document(info.id)


def export(project: Project, fmt: str, out: Path, statuses: tuple[str, ...] | None = None) -> int:
    """Write the project's documents (those with ``statuses``, default the accepted ones) to ``out`` (a file, or a
    directory for BRAT), atomically for a file.  Returns the number of documents."""
    import os

    n = 0
    if fmt == "brat":
        out.mkdir(parents=True, exist_ok=True)
        w = ProjectWriter(fmt, project.types, directory=out)
        for doc in iter_documents(project, statuses):
            w.stored(doc)
            n += 1
        w.close()  # the directory's annotation.conf
        return n
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        w = ProjectWriter(fmt, project.types, stream=fh)
        for doc in iter_documents(project, statuses):
            w.stored(doc)
            n += 1
        fh.flush()
        os.fsync(fh.fileno())
    tmp.replace(out)
    return n


def export_stream(project: Project, fmt: str, stream: TextIO, statuses: tuple[str, ...] | None = None) -> int:
    """Write the project's documents (as ``export``) as JSONL or CoNLL to ``stream``; the number of documents."""
    if fmt == "brat":
        raise ValueError("BRAT is written to a directory")
    w = ProjectWriter(fmt, project.types, stream=stream)
    n = 0
    for doc in iter_documents(project, statuses):
        w.stored(doc)
        n += 1
    stream.flush()
    return n


def export_text(project: Project, fmt: str, statuses: tuple[str, ...] | None = None) -> str:
    """JSONL or CoNLL of the project as one string (the page's downloads)."""
    import io

    buf = io.StringIO()
    export_stream(project, fmt, buf, statuses)
    return buf.getvalue()


def export_brat_zip(project: Project, statuses: tuple[str, ...] | None = None) -> bytes:
    """BRAT standoff files (``NAME.txt``, ``NAME.ann``) in a zip archive (the page's download)."""
    import io
    import tempfile
    import zipfile

    buf = io.BytesIO()
    with tempfile.TemporaryDirectory() as tmp:
        export(project, "brat", Path(tmp), statuses)
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
            for f in sorted(Path(tmp).iterdir()):
                z.write(f, f.name)
    return buf.getvalue()


def stats(project: Project, with_agreement: bool = True) -> dict:
    """Documents per status (of their final versions), progress, spans per type and source (final
    versions), annotators; for a team: each annotator's copies per status, the documents with an
    overlap, those awaiting review and those reviewed, and the agreement (``agreement.agreement``)."""
    from opinion_tagger.annotation.agreement import agreement
    from opinion_tagger.annotation.review import reviewable

    counts = project.counts()
    with project._lock:
        rows = project.db.execute(
            "SELECT type, source, COUNT(*) FROM spans WHERE owner = '' GROUP BY type, source"
        ).fetchall()
        annotators = project.annotators()
        tokens = project.db.execute("SELECT COUNT(*) FROM tokens").fetchone()[0]
        team, reviewed = project.db.execute(
            "SELECT COUNT(*), COALESCE(SUM(status IN ('done', 'rejected')), 0) FROM documents WHERE overlap > 0"
        ).fetchone()
        copy_rows = project.db.execute("SELECT owner, status, COUNT(*) FROM copies GROUP BY owner, status").fetchall()
    copies: dict[str, dict[str, int]] = {}
    for owner, status, n in copy_rows:
        copies.setdefault(owner, {s: 0 for s in STATUSES})[status] = n
    ready = reviewable(project) if team else []
    spans: dict[str, dict[str, int]] = {t: {"model": 0, "human": 0} for t in project.types}
    for typ, source, n in rows:
        spans.setdefault(typ, Counter())[source] = n
    total = sum(counts.values())
    return {
        "project": str(project.path),
        "documents": total,
        "status": counts,
        "done": counts["done"],
        "progress": f"{counts['done']} of {total} done",
        "tokens": tokens,
        "spans": spans,
        "annotators": annotators,
        "copies": copies,
        "team": {
            "documents": team,
            "awaiting_review": sum(1 for r in ready if r[2] in ("todo", "in_progress")),
            "reviewed": reviewed,
        },
        "agreement": agreement(project) if team and with_agreement else [],
    }
