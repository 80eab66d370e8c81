"""Changes of a version (the final one, or an annotator's copy): spans added, changed,
deleted, their attributes, the status, and undo.  Each checks the version it was made on
(``ConflictError`` when it changed since) and records the state before it in the history."""

from __future__ import annotations

import json
from contextlib import contextmanager
from dataclasses import asdict

from opinion_tagger.annotation.store.documents import Documents
from opinion_tagger.annotation.store.records import (
    FINAL,
    HOLDERS,
    INTENSITIES,
    POLARITIES,
    SPAN_HOLDER,
    STATUSES,
    UNCHANGED,
    ConflictError,
    Holder,
    ProjectError,
    StoredSpan,
    now,
    span_of,
)


class Edits(Documents):
    """Changes of a document's final version or of an annotator's copy, each checked and undoable."""

    @contextmanager
    def _edit(
        self,
        doc_id: int,
        version: int,
        action: str,
        annotator: str | None,
        status: str | None = None,
        layer: str = FINAL,
    ):
        """One change of a version (``layer``: the final one, or ``annotator``'s copy): check the
        version, record the state before, run the body, bump the version."""
        if layer != FINAL and annotator != layer:
            raise ProjectError(f"only {layer} changes their copy")
        with self._transaction() as db:
            row = db.execute("SELECT version, status, review FROM documents WHERE id = ?", (doc_id,)).fetchone()
            if row is None:
                raise ProjectError(f"{self.path}: no document {doc_id}")
            if layer != FINAL:
                row = db.execute(
                    "SELECT version, status, NULL FROM copies WHERE doc_id = ? AND owner = ?", (doc_id, layer)
                ).fetchone()
                if row is None:
                    raise ProjectError(f"{layer} has no copy of document {doc_id}")
            if row[0] != version:
                raise ConflictError(self._conflict(db, doc_id, layer, row[0], version, annotator))
            before = {"status": row[1], "spans": [asdict(s) for s in self._spans(doc_id, layer)]}
            if layer == FINAL:
                before["review"] = row[2]
            yield db
            stamp = now()
            new_status = status or ("in_progress" if row[1] == "todo" else row[1])
            if layer == FINAL:
                db.execute(
                    "UPDATE documents SET version = version + 1, status = ?, annotator = ?, updated = ? WHERE id = ?",
                    (new_status, annotator, stamp, doc_id),
                )
            else:
                db.execute(
                    "UPDATE copies SET version = version + 1, status = ?, updated = ? WHERE doc_id = ? AND owner = ?",
                    (new_status, stamp, doc_id, layer),
                )
            db.execute(
                "INSERT INTO history (doc_id, owner, version, action, annotator, at, before) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (doc_id, layer, version + 1, action, annotator, stamp, json.dumps(before)),
            )

    @staticmethod
    def _conflict(db, doc_id: int, layer: str, current: int, version: int, annotator: str | None) -> str:
        """Why a change made on ``version`` is refused: who saved the ``current`` one and when (from the
        history; "you" when it was ``annotator``, in another tab or by an earlier action of this one)."""
        saved = db.execute(
            "SELECT annotator, action, at FROM history WHERE doc_id = ? AND owner = ? AND version = ? "
            "ORDER BY id DESC LIMIT 1",
            (doc_id, layer, current),
        ).fetchone()
        if saved is None:
            by = f"version {current} was saved since"
        else:
            who = f"you ({annotator})" if saved[0] == annotator and annotator else (saved[0] or "someone")
            by = f"{who} saved version {current} ({saved[1]}, at {saved[2][11:19]} UTC)"
        return f"the document changed since version {version}, which this change was made on: {by}"

    def _check_span(self, db, doc_id: int, typ: str, tok_start: int, tok_end: int) -> None:
        if typ not in self.types:
            raise ProjectError(f"unknown span type {typ!r} (this project has {', '.join(self.types)})")
        sents = db.execute(
            "SELECT sentence FROM tokens WHERE doc_id = ? AND position IN (?, ?)", (doc_id, tok_start, tok_end - 1)
        ).fetchall()
        if tok_end <= tok_start or len(sents) != (1 if tok_end - tok_start == 1 else 2):
            raise ProjectError(f"tokens {tok_start}..{tok_end} are not a span of this document")
        if len({s for (s,) in sents}) != 1:
            raise ProjectError("a span cannot cross a sentence boundary")

    def _replace_overlapping(
        self, db, doc_id: int, typ: str, tok_start: int, tok_end: int, keep: int | None = None, layer: str = FINAL
    ) -> None:
        db.execute(
            "DELETE FROM spans WHERE doc_id = ? AND owner = ? AND type = ? AND tok_start < ? AND tok_end > ? "
            "AND id IS NOT ?",
            (doc_id, layer, typ, tok_end, tok_start, keep),
        )

    def add_span(
        self,
        doc_id: int,
        version: int,
        typ: str,
        tok_start: int,
        tok_end: int,
        annotator: str | None,
        layer: str = FINAL,
    ) -> int:
        """A human span over tokens [tok_start, tok_end); same-type spans it overlaps are removed.
        Returns the new version."""
        with self._edit(doc_id, version, f"add {typ}", annotator, layer=layer) as db:
            self._check_span(db, doc_id, typ, tok_start, tok_end)
            self._replace_overlapping(db, doc_id, typ, tok_start, tok_end, layer=layer)
            self._insert_spans(
                db, doc_id, [StoredSpan(None, typ, tok_start, tok_end, "human", None, annotator, now())], layer
            )
        return version + 1

    def _span_row(self, db, doc_id: int, span_id: int, layer: str = FINAL):
        row = db.execute(
            "SELECT type, tok_start, tok_end FROM spans WHERE id = ? AND doc_id = ? AND owner = ?",
            (span_id, doc_id, layer),
        ).fetchone()
        if row is None:
            raise ProjectError(f"no span {span_id} in document {doc_id}")
        return row

    def delete_span(self, doc_id: int, version: int, span_id: int, annotator: str | None, layer: str = FINAL) -> int:
        with self._edit(doc_id, version, "delete", annotator, layer=layer) as db:
            self._span_row(db, doc_id, span_id, layer)
            db.execute("DELETE FROM spans WHERE id = ?", (span_id,))
        return version + 1

    def change_span(
        self,
        doc_id: int,
        version: int,
        span_id: int,
        annotator: str | None,
        typ: str | None = None,
        tok_start: int | None = None,
        tok_end: int | None = None,
        layer: str = FINAL,
    ) -> int:
        """Relabel and/or resize a span; it becomes a human span (who and when).  Its frame values stay, with
        their sources; relabelled as no DSE, it loses its holder."""
        with self._edit(doc_id, version, "change", annotator, layer=layer) as db:
            old_type, old_start, old_end = self._span_row(db, doc_id, span_id, layer)
            typ = typ or old_type
            tok_start = old_start if tok_start is None else tok_start
            tok_end = old_end if tok_end is None else tok_end
            self._check_span(db, doc_id, typ, tok_start, tok_end)
            self._replace_overlapping(db, doc_id, typ, tok_start, tok_end, keep=span_id, layer=layer)
            db.execute(
                "UPDATE spans SET type = ?, tok_start = ?, tok_end = ?, source = 'human', score = NULL, "
                "annotator = ?, at = ? WHERE id = ?",
                (typ, tok_start, tok_end, annotator, now(), span_id),
            )
            if typ != "DSE":  # a holder is a DSE's
                self._write_holder(db, span_id, None, None)
        return version + 1

    def set_attributes(
        self,
        doc_id: int,
        version: int,
        span_id: int,
        annotator: str | None,
        intensity: str | None = UNCHANGED,
        polarity: str | None = UNCHANGED,
        layer: str = FINAL,
        holder: Holder = UNCHANGED,
    ) -> int:
        """Set a span's MPQA attributes (None: not set) and a DSE's holder (``set_holder``); a value given as
        ``UNCHANGED`` (the default) is left as it is.  A value that changes becomes a person's (source ``human``,
        no score); one that stays keeps its source (the model's stays the model's).  The span keeps its source;
        the change is recorded (who, when) in the history and can be undone."""
        if intensity not in (None, UNCHANGED, *INTENSITIES):
            raise ProjectError(f"unknown intensity {str(intensity)[:20]!r} (choose from {', '.join(INTENSITIES)})")
        if polarity not in (None, UNCHANGED, *POLARITIES):
            raise ProjectError(f"unknown polarity {str(polarity)[:20]!r} (choose from {', '.join(POLARITIES)})")
        with self._edit(doc_id, version, "attributes", annotator, layer=layer) as db:
            typ, _, _ = self._span_row(db, doc_id, span_id, layer)
            for name, value in (("intensity", intensity), ("polarity", polarity)):
                if value == UNCHANGED:
                    continue
                db.execute(
                    f"UPDATE spans SET {name}_source = CASE WHEN ? IS NULL THEN NULL WHEN {name} IS ? "
                    f"THEN {name}_source ELSE 'human' END, {name}_score = CASE WHEN {name} IS ? "
                    f"THEN {name}_score END, {name} = ? WHERE id = ?",
                    (value, value, value, value, span_id),
                )
            if holder != UNCHANGED:
                self._change_holder(db, doc_id, span_id, typ, holder)
        return version + 1

    def set_holder(
        self, doc_id: int, version: int, span_id: int, annotator: str | None, holder: Holder, layer: str = FINAL
    ) -> int:
        """Set a DSE's holder: ``writer``, ``implicit``, ``none`` (no holder in the document), a token span
        ``(start, end)`` of the document (within one sentence), or None (not set).  It becomes a person's
        (unless it is what it was); the change can be undone."""
        with self._edit(doc_id, version, "holder", annotator, layer=layer) as db:
            typ, _, _ = self._span_row(db, doc_id, span_id, layer)
            self._change_holder(db, doc_id, span_id, typ, holder)
        return version + 1

    def _change_holder(self, db, doc_id: int, span_id: int, typ: str, holder: Holder) -> None:
        if typ != "DSE" and holder is None:
            return  # (a span that is no DSE has none)
        if typ != "DSE":
            raise ProjectError(f"only a DSE has a holder, not an {typ}" if typ == "ESE" else "only a DSE has a holder")
        if isinstance(holder, list | tuple):
            if len(holder) != 2 or not all(isinstance(k, int) and not isinstance(k, bool) for k in holder):
                raise ProjectError("a holder's tokens are two positions, its first and its end")
            try:
                self._check_span(db, doc_id, typ, holder[0], holder[1])
            except ProjectError as exc:
                raise ProjectError(f"the holder: {exc}") from None
            holder = (holder[0], holder[1])
        elif holder is not None and holder not in HOLDERS:
            raise ProjectError(
                f"unknown holder {str(holder)[:20]!r} (choose from {', '.join(HOLDERS)}, or the holder's words)"
            )
        row = db.execute(
            "SELECT holder, holder_start, holder_end, holder_source, holder_score FROM spans WHERE id = ?", (span_id,)
        ).fetchone()
        before = StoredSpan(None, typ, 0, 1, holder=row[0], holder_start=row[1], holder_end=row[2]).holder_value
        if holder == before:
            return  # what it was: its source stays
        self._write_holder(db, span_id, holder, None if holder is None else "human")

    @staticmethod
    def _write_holder(db, span_id: int, holder: Holder, source: str | None, score: float | None = None) -> None:
        kind, start, end = (SPAN_HOLDER, *holder) if isinstance(holder, tuple) else (holder, None, None)
        db.execute(
            "UPDATE spans SET holder = ?, holder_start = ?, holder_end = ?, holder_source = ?, holder_score = ? "
            "WHERE id = ?",
            (kind, start, end, source, score, span_id),
        )

    def set_status(self, doc_id: int, version: int, status: str, annotator: str | None, layer: str = FINAL) -> int:
        """``done`` accepts the document (its spans, model or human, are the annotation);
        ``rejected`` skips it for good (out of training data and of default exports).  On a copy:
        the annotator's own verdict, which the review sees."""
        if status not in STATUSES:
            raise ProjectError(f"unknown status {status!r}")
        with self._edit(doc_id, version, f"status {status}", annotator, status=status, layer=layer):
            pass
        return version + 1

    def undo(self, doc_id: int, version: int, annotator: str | None, layer: str = FINAL) -> int:
        """Restore the spans and status before the last change not yet undone (repeat to go
        further back).  The undo is itself a saved change.  ProjectError when nothing is left."""
        with self._lock:
            row = self.db.execute(
                "SELECT id, before FROM history WHERE doc_id = ? AND owner = ? AND action != 'undo' "
                "ORDER BY id DESC LIMIT 1",
                (doc_id, layer),
            ).fetchone()
        if row is None:
            raise ProjectError("nothing to undo")
        hist_id, before = row[0], json.loads(row[1])
        with self._edit(doc_id, version, "undo", annotator, status=before["status"], layer=layer) as db:
            db.execute("DELETE FROM spans WHERE doc_id = ? AND owner = ?", (doc_id, layer))
            # restored spans get new ids (an old id may belong to a span made since, in another document); a change
            # saved before version 2 has no intensity or polarity, before 3 no origin, before 4 no frame sources
            self._insert_spans(db, doc_id, [span_of(s) for s in before["spans"]], layer)
            if layer == FINAL:
                db.execute("UPDATE documents SET review = ? WHERE id = ?", (before.get("review"), doc_id))
            db.execute("DELETE FROM history WHERE id = ?", (hist_id,))
        return version + 1
