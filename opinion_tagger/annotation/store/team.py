"""A team's work: annotators' own copies of a document with an overlap, who has one,
and the review that writes the final version from them."""

from __future__ import annotations

import json
from collections.abc import Sequence

from opinion_tagger.annotation.store.edits import Edits
from opinion_tagger.annotation.store.records import UNFINISHED, ProjectError, StoredSpan, now


class Team(Edits):
    """Annotators' copies of the documents with an overlap, and the review that ends them."""

    def has_overlap(self) -> bool:
        """Whether some document is annotated by several annotators (a team project)."""
        with self._lock:
            return self.db.execute("SELECT 1 FROM documents WHERE overlap > 0 LIMIT 1").fetchone() is not None

    def annotators(self) -> list[str]:
        """Everyone who changed a document or has a copy, in alphabetical order."""
        with self._lock:
            return [
                r[0]
                for r in self.db.execute(
                    "SELECT annotator FROM documents WHERE annotator IS NOT NULL "
                    "UNION SELECT owner FROM copies ORDER BY 1"
                )
            ]

    def copies_state(self) -> tuple:
        """Changes whenever a copy does (what the page's agreement figures are cached by)."""
        with self._lock:
            return tuple(
                self.db.execute(
                    "SELECT COUNT(*), COALESCE(SUM(version), 0), COALESCE(MAX(updated), '') FROM copies"
                ).fetchone()
            )

    def copies(self, doc_id: int | None = None) -> list[tuple[int, str, str, int]]:
        """Annotators' copies ``(doc_id, owner, status, version)`` of a document (or of every document),
        in the order they were made."""
        with self._lock:
            if doc_id is None:
                rows = self.db.execute(
                    "SELECT doc_id, owner, status, version FROM copies ORDER BY doc_id, created, owner"
                ).fetchall()
            else:
                rows = self.db.execute(
                    "SELECT doc_id, owner, status, version FROM copies WHERE doc_id = ? ORDER BY created, owner",
                    (doc_id,),
                ).fetchall()
        return [tuple(r) for r in rows]

    def claim(self, doc_id: int, annotator: str) -> bool:
        """Make ``annotator``'s copy of a document with an overlap (the model's spans and frame values, status to do),
        unless they have one (False); the page does it at their first change of the document.  ProjectError when
        the document has no overlap, was reviewed, or already has as many annotators as its overlap."""
        if not annotator:
            raise ProjectError("a copy needs an annotator's name")
        with self._transaction() as db:
            row = db.execute("SELECT overlap, status FROM documents WHERE id = ?", (doc_id,)).fetchone()
            if row is None:
                raise ProjectError(f"{self.path}: no document {doc_id}")
            if db.execute("SELECT 1 FROM copies WHERE doc_id = ? AND owner = ?", (doc_id, annotator)).fetchone():
                return False
            overlap, status = row
            if overlap == 0:
                raise ProjectError(f"document {doc_id} has one shared version, no annotators' copies")
            if status not in UNFINISHED:
                raise ProjectError(f"document {doc_id} is already reviewed")
            if db.execute("SELECT COUNT(*) FROM copies WHERE doc_id = ?", (doc_id,)).fetchone()[0] >= overlap:
                raise ProjectError(f"document {doc_id} already has its {overlap} annotators")
            stamp = now()
            db.execute(
                "INSERT INTO copies (doc_id, owner, created, updated) VALUES (?, ?, ?, ?)",
                (doc_id, annotator, stamp, stamp),
            )
            # the model's spans with the model's frame values
            self._insert_spans(
                db, doc_id, [s.model_part() for s in self._spans(doc_id) if s.source == "model"], annotator
            )
        return True

    @staticmethod
    def _words(db, doc_id: int, tok_start: int, tok_end: int) -> str:
        """The document's text from token ``tok_start`` to the end of token ``tok_end - 1``, on one line."""
        row = db.execute(
            "SELECT d.text, MIN(t.start), MAX(t.end) FROM tokens t JOIN documents d ON d.id = t.doc_id "
            "WHERE t.doc_id = ? AND t.position >= ? AND t.position < ?",
            (doc_id, tok_start, tok_end),
        ).fetchone()
        return (
            " ".join(row[0][row[1] : row[2]].split())
            if row and row[1] is not None
            else f"tokens {tok_start}..{tok_end}"
        )

    def review(
        self,
        doc_id: int,
        version: int,
        spans: Sequence[StoredSpan],
        reviewer: str | None,
        method: str,
        annotators: Sequence[str],
    ) -> int:
        """Write a document's final version from its copies: ``spans`` (as ``opinion_tagger.annotation.review``
        chooses them) replace the final version's, the document is done, and the review is recorded
        (``reviewer``, when, ``method``, the copies' ``annotators``).  A change like any other: undo
        restores the version before it."""
        with self._edit(doc_id, version, f"review: {method}", reviewer, status="done") as db:
            by_type: dict[str, list[tuple[int, int]]] = {}
            for sp in spans:
                self._check_span(db, doc_id, sp.type, sp.tok_start, sp.tok_end)
                for a, b in by_type.get(sp.type, []):
                    if a < sp.tok_end and sp.tok_start < b:
                        first, second = self._words(db, doc_id, a, b), self._words(db, doc_id, sp.tok_start, sp.tok_end)
                        raise ProjectError(f"two {sp.type} spans overlap (“{first}” and “{second}”): keep one of them")
                by_type.setdefault(sp.type, []).append((sp.tok_start, sp.tok_end))
            db.execute("DELETE FROM spans WHERE doc_id = ? AND owner = ''", (doc_id,))
            self._insert_spans(db, doc_id, spans)
            db.execute(
                "UPDATE documents SET review = ? WHERE id = ?",
                (
                    json.dumps(
                        {"reviewer": reviewer, "at": now(), "method": method, "annotators": list(annotators)},
                        ensure_ascii=False,
                    ),
                    doc_id,
                ),
            )
        return version + 1
