"""Changes of a version (the final one, or an annotator's copy): spans added, changed,
deleted, their attributes, the status, and undo.  Each checks the version it was made on
(``ConflictError`` when it changed since) and records the state before it in the history."""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import asdict

from opinion_tagger.annotation.store.documents import Documents
from opinion_tagger.annotation.store.records import (
    ATTITUDES,
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
    StoredTarget,
    now,
    span_of,
    targets_json,
    targets_of,
)

Targets = Sequence[tuple[int, int]] | None  # a DSE's targets as token spans of the document; None: not set


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
        their sources; relabelled as no DSE, it loses its holder, attitude and targets."""
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
            if typ != "DSE":  # a holder, an attitude and targets are a DSE's
                self._write_holder(db, span_id, None, None)
                db.execute(
                    "UPDATE spans SET attitude = NULL, attitude_source = NULL, attitude_score = NULL, "
                    "targets = NULL, targets_source = NULL WHERE id = ?",
                    (span_id,),
                )
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
        attitude: str | None = UNCHANGED,
        targets: Targets | str = UNCHANGED,
    ) -> int:
        """Set a span's MPQA attributes (None: not set) and a DSE's holder (``set_holder``), attitude
        (``set_attitude``) and targets (``set_targets``); a value given as ``UNCHANGED`` (the default) is left as
        it is.  A value that changes becomes a person's (source ``human``, no score); one that stays keeps its
        source (the model's stays the model's).  The span keeps its source; the change is recorded (who, when) in
        the history and can be undone."""
        if intensity not in (None, UNCHANGED, *INTENSITIES):
            raise ProjectError(f"unknown intensity {str(intensity)[:20]!r} (choose from {', '.join(INTENSITIES)})")
        if polarity not in (None, UNCHANGED, *POLARITIES):
            raise ProjectError(f"unknown polarity {str(polarity)[:20]!r} (choose from {', '.join(POLARITIES)})")
        if isinstance(targets, str) and targets != UNCHANGED:
            raise ProjectError("targets are a list of token spans")
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
            if not isinstance(targets, str):  # (a string: UNCHANGED)
                self._change_targets(db, doc_id, span_id, typ, targets)
            if attitude != UNCHANGED:
                self._change_attitude(db, span_id, typ, attitude)
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

    def set_attitude(
        self, doc_id: int, version: int, span_id: int, annotator: str | None, attitude: str | None, layer: str = FINAL
    ) -> int:
        """Set a DSE's attitude: one of ``ATTITUDE_TYPES``, ``none`` (it has none) or None (not set).  It becomes a
        person's (unless it is what it was).  Set by a person, it confirms the DSE's targets as they are: targets
        not set become none (set, empty; ``opinion_tagger.annotation.frames.sentence_frames`` reads them)."""
        with self._edit(doc_id, version, "attitude", annotator, layer=layer) as db:
            typ, _, _ = self._span_row(db, doc_id, span_id, layer)
            self._change_attitude(db, span_id, typ, attitude)
        return version + 1

    def _change_attitude(self, db, span_id: int, typ: str, attitude: str | None) -> None:
        if attitude is not None and attitude not in ATTITUDES:
            raise ProjectError(f"unknown attitude {str(attitude)[:24]!r} (choose from {', '.join(ATTITUDES)})")
        if not self._of_a_dse(typ, "an attitude", attitude):
            return
        (before,) = db.execute("SELECT attitude FROM spans WHERE id = ?", (span_id,)).fetchone()
        if attitude == before:
            return  # what it was: its source stays
        db.execute(
            "UPDATE spans SET attitude = ?, attitude_source = ?, attitude_score = NULL WHERE id = ?",
            (attitude, None if attitude is None else "human", span_id),
        )
        if attitude is not None:  # the targets confirmed as they are: none, where not set
            db.execute(
                "UPDATE spans SET targets = '[]', targets_source = 'human' WHERE id = ? AND targets IS NULL",
                (span_id,),
            )

    @staticmethod
    def _of_a_dse(typ: str, what: str, value: object) -> bool:
        """Whether a role's value goes on to be set: on a DSE; a span that is no DSE has none (None changes
        nothing) and refuses any other value."""
        if typ == "DSE":
            return True
        if value is None:
            return False
        raise ProjectError(f"only a DSE has {what}, not an {typ}" if typ == "ESE" else f"only a DSE has {what}")

    def set_targets(
        self, doc_id: int, version: int, span_id: int, annotator: str | None, targets: Targets, layer: str = FINAL
    ) -> int:
        """Set a DSE's targets: token spans ``(start, end)`` of the document (each within one sentence; in any
        order, the same twice once), an empty list (none), or None (not set).  A target it had keeps its source
        and score, a new one is a person's; the list becomes a person's unless it is what it was."""
        with self._edit(doc_id, version, "targets", annotator, layer=layer) as db:
            typ, _, _ = self._span_row(db, doc_id, span_id, layer)
            self._change_targets(db, doc_id, span_id, typ, targets)
        return version + 1

    def toggle_target(
        self,
        doc_id: int,
        version: int,
        span_id: int,
        annotator: str | None,
        target: tuple[int, int],
        layer: str = FINAL,
    ) -> tuple[int, bool]:
        """Add a target ``(start, end)`` to a DSE's targets, or remove it when it is one of them (as
        ``set_targets``).  Returns the new version and whether the target was added."""
        with self._edit(doc_id, version, "target", annotator, layer=layer) as db:
            typ, _, _ = self._span_row(db, doc_id, span_id, layer)
            self._of_a_dse(typ, "targets", target)
            row = db.execute("SELECT targets FROM spans WHERE id = ?", (span_id,)).fetchone()
            spans = [t.tokens for t in targets_of(row[0]) or ()]
            key = self._token_span(db, doc_id, target, "a target")
            added = key not in spans
            self._change_targets(db, doc_id, span_id, typ, [*spans, key] if added else [t for t in spans if t != key])
        return version + 1, added

    def _token_span(self, db, doc_id: int, value: object, what: str) -> tuple[int, int]:
        """``value`` as a token span ``(start, end)`` of the document within one sentence (a ``what``)."""
        if not isinstance(value, list | tuple) or len(value) != 2:
            raise ProjectError(f"{what}'s tokens are two positions, its first and its end")
        if not all(isinstance(k, int) and not isinstance(k, bool) for k in value):
            raise ProjectError(f"{what}'s tokens are two positions, its first and its end")
        try:
            self._check_span(db, doc_id, "DSE", value[0], value[1])
        except ProjectError as exc:
            raise ProjectError(f"{what}: {exc}") from None
        return value[0], value[1]

    def _change_targets(self, db, doc_id: int, span_id: int, typ: str, targets: Targets) -> None:
        if not self._of_a_dse(typ, "targets", targets):
            return
        if targets is not None and (isinstance(targets, str) or not isinstance(targets, Sequence)):
            raise ProjectError("targets are a list of token spans")
        row = db.execute("SELECT targets FROM spans WHERE id = ?", (span_id,)).fetchone()
        before = {t.tokens: t for t in targets_of(row[0]) or ()}
        if targets is None:
            if row[0] is not None:
                db.execute("UPDATE spans SET targets = NULL, targets_source = NULL WHERE id = ?", (span_id,))
            return
        keys = sorted({self._token_span(db, doc_id, t, "a target") for t in targets})
        if row[0] is not None and keys == sorted(before):
            return  # what they were: their sources stay
        kept = tuple(before.get(k) or StoredTarget(*k, "human") for k in keys)
        db.execute("UPDATE spans SET targets = ?, targets_source = 'human' WHERE id = ?", (targets_json(kept), span_id))

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
            # saved before version 2 has no intensity or polarity, before 3 no origin, before 4 no frame sources,
            # before 5 no attitude or targets
            try:
                spans = [span_of(s) for s in before["spans"]]
            except (ValueError, TypeError) as exc:
                raise ProjectError(f"{self.path}: change {hist_id} of document {doc_id}: targets ({exc})") from None
            self._insert_spans(db, doc_id, spans, layer)
            if layer == FINAL:
                db.execute("UPDATE documents SET review = ? WHERE id = ?", (before.get("review"), doc_id))
            db.execute("DELETE FROM history WHERE id = ?", (hist_id,))
        return version + 1
