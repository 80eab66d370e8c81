"""Documents in and out of the store: importing them (text, tokens, the model's spans) and
reading them back, as a list or one whole document in one of its layers."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence

from opinion_tagger.annotation.store.connection import Connection
from opinion_tagger.annotation.store.records import (
    FINAL,
    SPAN_COLUMNS,
    SPAN_FIELDS,
    STATUSES,
    Document,
    DocumentInfo,
    ProjectError,
    StoredSpan,
    StoredToken,
    bad_frame_field,
    now,
    targets_json,
    targets_of,
)


class Documents(Connection):
    """The project's documents: added in one transaction, read back as a list or one by one."""

    def add_documents(
        self, docs: Iterable[tuple[str, str, Sequence[StoredToken], Sequence[StoredSpan], str | None]], overlap: int = 0
    ) -> list[tuple[str, int | None]]:
        """Add ``(name, text, tokens, spans, model)`` documents in one transaction; ``overlap``: how
        many annotators annotate each independently (0 or 1: one shared version).
        Returns ``(name, id)`` per document, ``id`` None for a name already in the project."""
        if not isinstance(overlap, int) or overlap < 0:
            raise ProjectError(f"overlap {overlap!r}: a number of annotators, 0 or more")
        overlap = overlap if overlap >= 2 else 0
        out: list[tuple[str, int | None]] = []
        stamp = now()
        with self._transaction() as db:
            for name, text, tokens, spans, model in docs:
                try:
                    cur = db.execute(
                        "INSERT INTO documents (name, text, model, created, updated, overlap) "
                        "VALUES (?, ?, ?, ?, ?, ?)",
                        (name, text, model, stamp, stamp, overlap),
                    )
                except sqlite3.IntegrityError:
                    out.append((name, None))
                    continue
                doc_id = cur.lastrowid
                db.executemany(
                    "INSERT INTO tokens VALUES (?, ?, ?, ?, ?)",
                    [(doc_id, k, t.sentence, t.start, t.end) for k, t in enumerate(tokens)],
                )
                self._insert_spans(db, doc_id, spans)
                out.append((name, doc_id))
        return out

    def has_document(self, name: str) -> bool:
        with self._lock:
            return self.db.execute("SELECT 1 FROM documents WHERE name = ?", (name,)).fetchone() is not None

    def text_of(self, name: str) -> str | None:
        with self._lock:
            row = self.db.execute("SELECT text FROM documents WHERE name = ?", (name,)).fetchone()
        return row[0] if row else None

    def documents(self) -> list[DocumentInfo]:
        """Every document (without text) as its final version, in import order."""
        with self._lock:
            rows = self.db.execute(
                "SELECT d.id, d.name, d.status, d.version, "
                "(SELECT COUNT(*) FROM spans s WHERE s.doc_id = d.id AND s.owner = ''), d.annotator, d.updated, "
                "d.overlap FROM documents d ORDER BY d.id"
            ).fetchall()
        return [DocumentInfo(*r) for r in rows]

    def counts(self) -> dict[str, int]:
        """Documents per status of their final version (every status present, 0 where none)."""
        with self._lock:
            rows = dict(self.db.execute("SELECT status, COUNT(*) FROM documents GROUP BY status").fetchall())
        return {s: rows.get(s, 0) for s in STATUSES}

    def document(self, doc_id: int, layer: str = FINAL, preview: bool = False) -> Document:
        """A document's final version (``layer`` ''), or an annotator's copy of it; with ``preview``,
        a copy not made yet is shown as it would be made (``claim``): the model's spans, version 0."""
        with self._lock:
            row = self.db.execute(
                "SELECT id, name, text, status, version, annotator, model, overlap, review FROM documents WHERE id = ?",
                (doc_id,),
            ).fetchone()
            if row is None:
                raise ProjectError(f"{self.path}: no document {doc_id}")
            doc_id, name, text, status, version, annotator, model, overlap, review = row
            doc = Document(
                doc_id,
                name,
                text,
                status,
                version,
                annotator,
                model,
                overlap=overlap,
                review=json.loads(review) if review else None,
            )
            if layer != FINAL:
                copy = self.db.execute(
                    "SELECT status, version FROM copies WHERE doc_id = ? AND owner = ?", (doc_id, layer)
                ).fetchone()
                if copy is None and preview:
                    copy = ("todo", 0)
                    layer, doc.layer, doc.annotator = FINAL, layer, layer
                elif copy is None:
                    raise ProjectError(f"{layer} has no copy of document {doc_id}")
                else:
                    doc.annotator, doc.layer = layer, layer
                doc.status, doc.version = copy
            doc.tokens = [
                StoredToken(*r)
                for r in self.db.execute(
                    "SELECT position, sentence, start, end FROM tokens WHERE doc_id = ? ORDER BY position", (doc_id,)
                )
            ]
            doc.spans = self._spans(doc_id, layer)
            if doc.layer != layer:  # a preview: the spans a copy starts with
                doc.spans = [s.model_part() for s in doc.spans if s.source == "model"]
        return doc

    def _spans(self, doc_id: int, layer: str = FINAL) -> list[StoredSpan]:
        return [
            self._span(doc_id, r)
            for r in self.db.execute(
                f"SELECT {SPAN_COLUMNS} FROM spans WHERE doc_id = ? AND owner = ? ORDER BY tok_start, tok_end, type",
                (doc_id, layer),
            )
        ]

    def _span(self, doc_id: int, row: tuple) -> StoredSpan:
        """A span of the file; a frame field of the wrong kind (written by another program) is a ProjectError
        naming the span and the field."""
        values = dict(zip(SPAN_FIELDS, row))
        where = f"{self.path}: span {values['id']} of document {doc_id}"
        try:
            values["targets"] = targets_of(values["targets"])
        except (ValueError, TypeError) as exc:
            raise ProjectError(f"{where}: targets {values['targets']!r:.60} are not its targets ({exc})") from None
        span = StoredSpan(**values)
        wrong = bad_frame_field(span)
        if wrong is not None:
            raise ProjectError(f"{where}: {wrong}")
        return span

    def _insert_spans(self, db, doc_id: int, spans: Iterable[StoredSpan], layer: str = FINAL) -> None:
        names = [f for f in SPAN_FIELDS if f != "id"]
        column = lambda s, f: targets_json(s.targets) if f == "targets" else getattr(s, f)
        db.executemany(
            f"INSERT INTO spans (doc_id, owner, {', '.join(names)}) VALUES (?, ?{', ?' * len(names)})",
            [(doc_id, layer, *(column(s, f) for f in names)) for s in spans],
        )
