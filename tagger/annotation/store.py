"""The annotation store: one SQLite file per project (standard library ``sqlite3``,
WAL journal, ``synchronous=FULL``), so every change is durable once a call returns.

Schema (``SCHEMA_VERSION`` 2; a file of an older version is migrated forward in place,
in one transaction, when it is opened: see ``MIGRATIONS``)::

    meta(key, value)                       schema_version, types (JSON list), created
    documents(id, name UNIQUE, text,       one row per imported document; ``version`` grows
              status, version,             by one with every change (optimistic locking)
              annotator, model,            who changed it last; which model pre-annotated it
              created, updated)            ISO-8601 UTC timestamps
    tokens(doc_id, position, sentence,     the document's tokens (character offsets into
           start, end)                     ``text``) and the sentence each belongs to
    spans(id, doc_id, type, tok_start,     a DSE/ESE span over tokens [tok_start, tok_end)
          tok_end, source, score,          of one sentence; source 'model' (with its score)
          annotator, at,                   or 'human' (with who and when); MPQA's
          intensity, polarity)             attributes, each optional (NULL when not set)
    history(id, doc_id, version, action,   every change, with the document's spans and
            annotator, at, before)         status before it (JSON): what undo restores

Status is ``todo`` (untouched), ``in_progress`` (changed), ``done`` (accepted) or
``rejected`` (skipped for good: out of training data and, unless asked, of exports).
Spans of one type never overlap (a new span replaces the ones it overlaps);
spans of different types may.

Every change names the document version it was made on; a change on an older
version (another tab or annotator saved in between) raises ``ConflictError`` and
changes nothing.  Each change is one transaction (``BEGIN IMMEDIATE``).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from tagger.errors import TaggerError

SCHEMA_VERSION = 2
STATUSES = ("todo", "in_progress", "done", "rejected")
UNFINISHED = ("todo", "in_progress")
SOURCES = ("model", "human")
INTENSITIES = ("low", "medium", "high", "extreme")
POLARITIES = ("positive", "negative", "neutral", "both")
ORDERS = ("file", "uncertainty")
ORDER_RULES = {
    "file": "import order",
    "uncertainty": "least confident model span first (the document whose lowest model score is lowest); "
    "documents without model spans last, in import order",
}

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    text TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'todo' CHECK (status IN ('todo', 'in_progress', 'done', 'rejected')),
    version INTEGER NOT NULL DEFAULT 0,
    annotator TEXT,
    model TEXT,
    created TEXT NOT NULL,
    updated TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS tokens (
    doc_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    sentence INTEGER NOT NULL,
    start INTEGER NOT NULL,
    end INTEGER NOT NULL,
    PRIMARY KEY (doc_id, position)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS spans (
    id INTEGER PRIMARY KEY,
    doc_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    type TEXT NOT NULL,
    tok_start INTEGER NOT NULL,
    tok_end INTEGER NOT NULL CHECK (tok_end > tok_start),
    source TEXT NOT NULL CHECK (source IN ('model', 'human')),
    score REAL,
    annotator TEXT,
    at TEXT,
    intensity TEXT CHECK (intensity IN ('low', 'medium', 'high', 'extreme')),
    polarity TEXT CHECK (polarity IN ('positive', 'negative', 'neutral', 'both'))
);
CREATE INDEX IF NOT EXISTS spans_by_doc ON spans(doc_id);
CREATE TABLE IF NOT EXISTS history (
    id INTEGER PRIMARY KEY,
    doc_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    version INTEGER NOT NULL,
    action TEXT NOT NULL,
    annotator TEXT,
    at TEXT NOT NULL,
    before TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS history_by_doc ON history(doc_id, id);
"""


def _migrate_1_to_2(db) -> None:
    """Version 2: status ``rejected`` (the documents table is rebuilt: SQLite cannot change a
    CHECK constraint) and the spans' optional ``intensity`` and ``polarity``."""
    db.execute("""CREATE TABLE documents_v2 (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        text TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'todo' CHECK (status IN ('todo', 'in_progress', 'done', 'rejected')),
        version INTEGER NOT NULL DEFAULT 0,
        annotator TEXT,
        model TEXT,
        created TEXT NOT NULL,
        updated TEXT NOT NULL)""")
    db.execute(
        "INSERT INTO documents_v2 (id, name, text, status, version, annotator, model, created, updated) "
        "SELECT id, name, text, status, version, annotator, model, created, updated FROM documents"
    )
    db.execute("DROP TABLE documents")  # foreign keys are off: tokens, spans and history stay
    db.execute("ALTER TABLE documents_v2 RENAME TO documents")
    db.execute("ALTER TABLE spans ADD COLUMN intensity TEXT CHECK (intensity IN ('low', 'medium', 'high', 'extreme'))")
    db.execute(
        "ALTER TABLE spans ADD COLUMN polarity TEXT CHECK (polarity IN ('positive', 'negative', 'neutral', 'both'))"
    )


# from version N to N + 1; each runs inside the transaction that opens the file
MIGRATIONS = {1: _migrate_1_to_2}


class ProjectError(TaggerError):
    """A project file that cannot be opened, or an edit that is not valid."""


class ConflictError(ProjectError):
    """The document changed (another tab or annotator) since the version the edit was made on."""


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class StoredToken:
    position: int
    sentence: int
    start: int
    end: int


@dataclass
class StoredSpan:
    id: int | None
    type: str
    tok_start: int  # token positions [tok_start, tok_end)
    tok_end: int
    source: str = "human"
    score: float | None = None
    annotator: str | None = None
    at: str | None = None
    intensity: str | None = None  # MPQA's attributes, optional: INTENSITIES, POLARITIES
    polarity: str | None = None


SPAN_COLUMNS = "id, type, tok_start, tok_end, source, score, annotator, at, intensity, polarity"


@dataclass
class DocumentInfo:
    id: int
    name: str
    status: str
    version: int
    spans: int
    annotator: str | None
    updated: str


@dataclass
class Document:
    id: int
    name: str
    text: str
    status: str
    version: int
    annotator: str | None
    model: str | None
    tokens: list[StoredToken] = field(default_factory=list)
    spans: list[StoredSpan] = field(default_factory=list)

    def span_chars(self, span: StoredSpan) -> tuple[int, int]:
        """Character offsets of a span."""
        return self.tokens[span.tok_start].start, self.tokens[span.tok_end - 1].end


class Project:
    """An annotation project: a SQLite file.  Safe to share between threads (one lock);
    several processes may open the same file (SQLite's locking plus versions)."""

    def __init__(self, path: str | Path, create: bool = False, types: Sequence[str] = ("DSE", "ESE")):
        self.path = Path(path)
        if not create and not self.path.is_file():
            raise ProjectError(f"{self.path}: no such project file (import documents to create one)")
        if self.path.exists() and not self.path.is_file():
            raise ProjectError(f"{self.path}: not a file")
        if create:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        try:
            self.db = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=FULL")
            self._open_schema(types)
            self.db.execute("PRAGMA foreign_keys=ON")
            self.types = tuple(json.loads(self._meta("types")))
        except sqlite3.DatabaseError as exc:
            raise ProjectError(f"{self.path}: not an annotation project ({exc})") from None

    # -- plumbing ---------------------------------------------------------------
    def _open_schema(self, types: Sequence[str]) -> None:
        """Create the schema in a new file, or migrate an older file forward: one transaction,
        so a failed migration leaves the file as it was.  Foreign keys are off meanwhile (a
        table rebuild must not cascade), and checked before the commit."""
        with self._transaction():
            has_meta = self.db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").fetchone()
            row = (
                self.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() if has_meta else None
            )
            if row is None:
                if self.db.execute(
                    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'documents'"
                ).fetchone():
                    raise ProjectError(f"{self.path}: not an annotation project (no schema version)")
                for stmt in SCHEMA.split(";"):
                    if stmt.strip():
                        self.db.execute(stmt)
                self.db.executemany(
                    "INSERT INTO meta VALUES (?, ?)",
                    [("schema_version", str(SCHEMA_VERSION)), ("types", json.dumps(list(types))), ("created", now())],
                )
                return
            try:
                found = int(row[0])
            except ValueError:
                raise ProjectError(f"{self.path}: project schema version {row[0]!r} is not a number") from None
            if found > SCHEMA_VERSION:
                raise ProjectError(
                    f"{self.path}: project schema version {found} is newer than this "
                    f"opinion-tagger's ({SCHEMA_VERSION}); upgrade opinion-tagger"
                )
            if found not in MIGRATIONS and found != SCHEMA_VERSION:
                raise ProjectError(f"{self.path}: project schema version {found} is not supported")
            while found < SCHEMA_VERSION:
                try:
                    MIGRATIONS[found](self.db)
                except sqlite3.DatabaseError as exc:
                    raise ProjectError(
                        f"{self.path}: cannot migrate the project from schema version {found} to "
                        f"{found + 1} ({exc}); the file is unchanged"
                    ) from None
                found += 1
                self.db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(found),))
            bad = self.db.execute("PRAGMA foreign_key_check").fetchall()
            if bad:
                raise ProjectError(f"{self.path}: {len(bad)} rows refer to missing documents; not migrated")

    def schema_version(self) -> int:
        with self._lock:
            return int(self._meta("schema_version"))

    def close(self) -> None:
        with self._lock:
            self.db.close()

    def __enter__(self) -> Project:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @contextmanager
    def _transaction(self):
        with self._lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield self.db
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")

    def _meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def check(self) -> str:
        """SQLite's integrity check ("ok" when the file is sound)."""
        with self._lock:
            return self.db.execute("PRAGMA integrity_check").fetchone()[0]

    # -- documents --------------------------------------------------------------
    def add_documents(
        self, docs: Iterable[tuple[str, str, Sequence[StoredToken], Sequence[StoredSpan], str | None]]
    ) -> list[tuple[str, int | None]]:
        """Add ``(name, text, tokens, spans, model)`` documents in one transaction.
        Returns ``(name, id)`` per document, ``id`` None for a name already in the project."""
        out = []
        stamp = now()
        with self._transaction() as db:
            for name, text, tokens, spans, model in docs:
                try:
                    cur = db.execute(
                        "INSERT INTO documents (name, text, model, created, updated) VALUES (?, ?, ?, ?, ?)",
                        (name, text, model, stamp, stamp),
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
        """Every document (without text), in import order."""
        with self._lock:
            rows = self.db.execute(
                "SELECT d.id, d.name, d.status, d.version, "
                "(SELECT COUNT(*) FROM spans s WHERE s.doc_id = d.id), d.annotator, d.updated "
                "FROM documents d ORDER BY d.id"
            ).fetchall()
        return [DocumentInfo(*r) for r in rows]

    def counts(self) -> dict[str, int]:
        """Documents per status (every status present, 0 where none)."""
        with self._lock:
            rows = dict(self.db.execute("SELECT status, COUNT(*) FROM documents GROUP BY status").fetchall())
        return {s: rows.get(s, 0) for s in STATUSES}

    def document(self, doc_id: int) -> Document:
        with self._lock:
            row = self.db.execute(
                "SELECT id, name, text, status, version, annotator, model FROM documents WHERE id = ?", (doc_id,)
            ).fetchone()
            if row is None:
                raise ProjectError(f"{self.path}: no document {doc_id}")
            doc = Document(*row)
            doc.tokens = [
                StoredToken(*r)
                for r in self.db.execute(
                    "SELECT position, sentence, start, end FROM tokens WHERE doc_id = ? ORDER BY position", (doc_id,)
                )
            ]
            doc.spans = self._spans(doc_id)
        return doc

    def _spans(self, doc_id: int) -> list[StoredSpan]:
        return [
            StoredSpan(*r)
            for r in self.db.execute(
                f"SELECT {SPAN_COLUMNS} FROM spans WHERE doc_id = ? ORDER BY tok_start, tok_end, type", (doc_id,)
            )
        ]

    # the uncertainty order's key: (no model span, lowest model score, import order)
    _RANKED = (
        "WITH ranked AS (SELECT d.id, d.status, m.low IS NULL AS none, COALESCE(m.low, 0.0) AS low "
        "FROM documents d LEFT JOIN (SELECT doc_id, MIN(score) AS low FROM spans "
        "WHERE source = 'model' AND score IS NOT NULL GROUP BY doc_id) m ON m.doc_id = d.id) "
    )

    def queue(self, order: str = "file") -> list[int]:
        """The unfinished documents (to do, in progress) in the order ``next`` follows: ``file``
        (import order) or ``uncertainty`` (see ``ORDER_RULES``)."""
        if order not in ORDERS:
            raise ProjectError(f"unknown order {order!r} (choose from {', '.join(ORDERS)})")
        with self._lock:
            if order == "file":
                rows = self.db.execute(
                    "SELECT id FROM documents WHERE status IN ('todo', 'in_progress') ORDER BY id"
                ).fetchall()
            else:
                rows = self.db.execute(
                    self._RANKED + "SELECT id FROM ranked WHERE status IN "
                    "('todo', 'in_progress') ORDER BY none, low, id"
                ).fetchall()
        return [r[0] for r in rows]

    def next_unfinished(self, after: int | None = None, order: str = "file") -> int | None:
        """The first unfinished document (to do, in progress) after ``after`` in ``order``
        (wrapping round), or None when none is left.  In the uncertainty order "after" is by
        ``after``'s key now (its spans may have changed since it was chosen)."""
        if order not in ORDERS:
            raise ProjectError(f"unknown order {order!r} (choose from {', '.join(ORDERS)})")
        with self._lock:
            if order == "file":
                q = "SELECT id FROM documents WHERE status IN ('todo', 'in_progress') AND id > ? ORDER BY id LIMIT 1"
                row = self.db.execute(q, (after if after is not None else -1,)).fetchone()
                if row is None and after is not None:
                    row = self.db.execute(q, (-1,)).fetchone()
                return row[0] if row else None
            q = (
                self._RANKED + "SELECT id FROM ranked WHERE status IN ('todo', 'in_progress') "
                "AND (none, low, id) > (SELECT none, low, id FROM ranked WHERE id = ?) ORDER BY none, low, id LIMIT 1"
            )
            first = (
                self._RANKED + "SELECT id FROM ranked WHERE status IN ('todo', 'in_progress') "
                "ORDER BY none, low, id LIMIT 1"
            )
            row = self.db.execute(q, (after,)).fetchone() if after is not None else None
            if row is None:
                row = self.db.execute(first).fetchone()
        return row[0] if row else None

    def search(self, query: str, limit: int = 50) -> list[tuple[int, str, str]]:
        """Documents whose text (or name) contains ``query`` (case-insensitive for ASCII letters,
        SQLite's LIKE; ``%`` and ``_`` match themselves), in import order: ``(id, name, snippet)``,
        the snippet about 80 characters round the first match in the text ("" when only the
        name matched)."""
        query = query.strip()
        if not query:
            return []
        pattern = "%" + query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        with self._lock:
            rows = self.db.execute(
                "SELECT id, name, text FROM documents WHERE text LIKE ? ESCAPE '\\' "
                "OR name LIKE ? ESCAPE '\\' ORDER BY id LIMIT ?",
                (pattern, pattern, limit),
            ).fetchall()
        out = []
        for doc_id, name, text in rows:
            at = text.lower().find(query.lower())
            snippet = ""
            if at >= 0:
                a, b = max(0, at - 30), min(len(text), at + len(query) + 50)
                snippet = ("…" if a else "") + " ".join(text[a:b].split()) + ("…" if b < len(text) else "")
            out.append((doc_id, name, snippet))
        return out

    def history(self, doc_id: int) -> list[dict]:
        with self._lock:
            rows = self.db.execute(
                "SELECT version, action, annotator, at FROM history WHERE doc_id = ? ORDER BY id", (doc_id,)
            ).fetchall()
        return [dict(zip(("version", "action", "annotator", "at"), r)) for r in rows]

    # -- edits ------------------------------------------------------------------
    def _insert_spans(self, db, doc_id: int, spans: Iterable[StoredSpan]) -> None:
        db.executemany(
            "INSERT INTO spans (doc_id, type, tok_start, tok_end, source, score, annotator, at, "
            "intensity, polarity) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (doc_id, s.type, s.tok_start, s.tok_end, s.source, s.score, s.annotator, s.at, s.intensity, s.polarity)
                for s in spans
            ],
        )

    @contextmanager
    def _edit(self, doc_id: int, version: int, action: str, annotator: str | None, status: str | None = None):
        """One change: check the version, record the state before, run the body, bump the version."""
        with self._transaction() as db:
            row = db.execute("SELECT version, status FROM documents WHERE id = ?", (doc_id,)).fetchone()
            if row is None:
                raise ProjectError(f"{self.path}: no document {doc_id}")
            if row[0] != version:
                raise ConflictError(
                    f"the document changed elsewhere (another tab or annotator saved version "
                    f"{row[0]}; this change was made on version {version}) and was not saved"
                )
            before = {"status": row[1], "spans": [asdict(s) for s in self._spans(doc_id)]}
            yield db
            stamp = now()
            new_status = status or ("in_progress" if row[1] == "todo" else row[1])
            db.execute(
                "UPDATE documents SET version = version + 1, status = ?, annotator = ?, updated = ? WHERE id = ?",
                (new_status, annotator, stamp, doc_id),
            )
            db.execute(
                "INSERT INTO history (doc_id, version, action, annotator, at, before) VALUES (?, ?, ?, ?, ?, ?)",
                (doc_id, version + 1, action, annotator, stamp, json.dumps(before)),
            )

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
        self, db, doc_id: int, typ: str, tok_start: int, tok_end: int, keep: int | None = None
    ) -> None:
        db.execute(
            "DELETE FROM spans WHERE doc_id = ? AND type = ? AND tok_start < ? AND tok_end > ? AND id IS NOT ?",
            (doc_id, typ, tok_end, tok_start, keep),
        )

    def add_span(self, doc_id: int, version: int, typ: str, tok_start: int, tok_end: int, annotator: str | None) -> int:
        """A human span over tokens [tok_start, tok_end); same-type spans it overlaps are removed.
        Returns the new version."""
        with self._edit(doc_id, version, f"add {typ}", annotator) as db:
            self._check_span(db, doc_id, typ, tok_start, tok_end)
            self._replace_overlapping(db, doc_id, typ, tok_start, tok_end)
            self._insert_spans(db, doc_id, [StoredSpan(None, typ, tok_start, tok_end, "human", None, annotator, now())])
        return version + 1

    def _span_row(self, db, doc_id: int, span_id: int):
        row = db.execute(
            "SELECT type, tok_start, tok_end FROM spans WHERE id = ? AND doc_id = ?", (span_id, doc_id)
        ).fetchone()
        if row is None:
            raise ProjectError(f"no span {span_id} in document {doc_id}")
        return row

    def delete_span(self, doc_id: int, version: int, span_id: int, annotator: str | None) -> int:
        with self._edit(doc_id, version, "delete", annotator) as db:
            self._span_row(db, doc_id, span_id)
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
    ) -> int:
        """Relabel and/or resize a span; it becomes a human span (who and when)."""
        with self._edit(doc_id, version, "change", annotator) as db:
            old_type, old_start, old_end = self._span_row(db, doc_id, span_id)
            typ = typ or old_type
            tok_start = old_start if tok_start is None else tok_start
            tok_end = old_end if tok_end is None else tok_end
            self._check_span(db, doc_id, typ, tok_start, tok_end)
            self._replace_overlapping(db, doc_id, typ, tok_start, tok_end, keep=span_id)
            db.execute(
                "UPDATE spans SET type = ?, tok_start = ?, tok_end = ?, source = 'human', score = NULL, "
                "annotator = ?, at = ? WHERE id = ?",
                (typ, tok_start, tok_end, annotator, now(), span_id),
            )
        return version + 1

    def set_attributes(
        self,
        doc_id: int,
        version: int,
        span_id: int,
        annotator: str | None,
        intensity: str | None = None,
        polarity: str | None = None,
    ) -> int:
        """Set a span's MPQA attributes (None: not set; both are written).  The span keeps its
        source; the change is recorded (who, when) in the history and can be undone."""
        if intensity is not None and intensity not in INTENSITIES:
            raise ProjectError(f"unknown intensity {str(intensity)[:20]!r} (choose from {', '.join(INTENSITIES)})")
        if polarity is not None and polarity not in POLARITIES:
            raise ProjectError(f"unknown polarity {str(polarity)[:20]!r} (choose from {', '.join(POLARITIES)})")
        with self._edit(doc_id, version, "attributes", annotator) as db:
            self._span_row(db, doc_id, span_id)
            db.execute("UPDATE spans SET intensity = ?, polarity = ? WHERE id = ?", (intensity, polarity, span_id))
        return version + 1

    def set_status(self, doc_id: int, version: int, status: str, annotator: str | None) -> int:
        """``done`` accepts the document (its spans, model or human, are the annotation);
        ``rejected`` skips it for good (out of training data and of default exports)."""
        if status not in STATUSES:
            raise ProjectError(f"unknown status {status!r}")
        with self._edit(doc_id, version, f"status {status}", annotator, status=status):
            pass
        return version + 1

    def undo(self, doc_id: int, version: int, annotator: str | None) -> int:
        """Restore the spans and status before the last change not yet undone (repeat to go
        further back).  The undo is itself a saved change.  ProjectError when nothing is left."""
        with self._lock:
            row = self.db.execute(
                "SELECT id, before FROM history WHERE doc_id = ? AND action != 'undo' ORDER BY id DESC LIMIT 1",
                (doc_id,),
            ).fetchone()
        if row is None:
            raise ProjectError("nothing to undo")
        hist_id, before = row[0], json.loads(row[1])
        with self._edit(doc_id, version, "undo", annotator, status=before["status"]) as db:
            db.execute("DELETE FROM spans WHERE doc_id = ?", (doc_id,))
            # a change saved before version 2 has no intensity or polarity: None
            db.executemany(
                f"INSERT INTO spans (doc_id, {SPAN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        doc_id,
                        s["id"],
                        s["type"],
                        s["tok_start"],
                        s["tok_end"],
                        s["source"],
                        s["score"],
                        s["annotator"],
                        s["at"],
                        s.get("intensity"),
                        s.get("polarity"),
                    )
                    for s in before["spans"]
                ],
            )
            db.execute("DELETE FROM history WHERE id = ?", (hist_id,))
        return version + 1
