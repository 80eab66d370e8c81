"""The annotation store: one SQLite file per project (standard library ``sqlite3``,
WAL journal, ``synchronous=FULL``), so every change is durable once a call returns.

Schema (``SCHEMA_VERSION`` 3; a file of an older version is migrated forward in place,
in one transaction, when it is opened: see ``MIGRATIONS``)::

    meta(key, value)                       schema_version, types (JSON list), created
    documents(id, name UNIQUE, text,       one row per imported document; ``version`` grows
              status, version,             by one with every change (optimistic locking)
              annotator, model,            who changed it last; which model pre-annotated it
              created, updated,            ISO-8601 UTC timestamps
              overlap, review)             annotators who annotate it independently (0: one
                                           shared version); the review that made the final
                                           version (JSON: reviewer, at, method, annotators)
    copies(doc_id, owner, status,          an annotator's own copy of a document with an
           version, created, updated)      overlap: its status and version, as a document's
    tokens(doc_id, position, sentence,     the document's tokens (character offsets into
           start, end)                     ``text``) and the sentence each belongs to
    spans(id, doc_id, owner, type,         a DSE/ESE span over tokens [tok_start, tok_end)
          tok_start, tok_end, source,      of one sentence, in the document's final version
          score, annotator, at,            (owner '') or in an annotator's copy (owner: the
          intensity, polarity, origin)     annotator); source 'model' (with its score) or
                                           'human' (with who and when); MPQA's attributes,
                                           each optional; origin: the annotators whose copies
                                           had the span, for a span a review took (JSON list)
    history(id, doc_id, owner, version,    every change of a version (owner as for spans),
            action, annotator, at, before) with its spans and status before it (JSON):
                                           what undo restores

A document is a set of *layers*: its final version (layer ``""``; the one exported and
trained on) and, when it was imported with an overlap of N, up to N annotators' copies
(layer: the annotator's name), each edited like a document of its own, starting from the
model's spans.  A copy is made at the annotator's first change of the document (``claim``;
``document(preview=True)`` shows it before), while fewer than N annotators have one.  A review
(``review``) writes the final version from the copies: one annotator's spans accepted, or a merge of them.

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

SCHEMA_VERSION = 3
FINAL = ""  # the layer of a document's final version (an annotator's copy: their name)
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
    updated TEXT NOT NULL,
    overlap INTEGER NOT NULL DEFAULT 0,
    review TEXT
);
CREATE TABLE IF NOT EXISTS copies (
    doc_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    owner TEXT NOT NULL CHECK (owner != ''),
    status TEXT NOT NULL DEFAULT 'todo' CHECK (status IN ('todo', 'in_progress', 'done', 'rejected')),
    version INTEGER NOT NULL DEFAULT 0,
    created TEXT NOT NULL,
    updated TEXT NOT NULL,
    PRIMARY KEY (doc_id, owner)
) WITHOUT ROWID;
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
    polarity TEXT CHECK (polarity IN ('positive', 'negative', 'neutral', 'both')),
    owner TEXT NOT NULL DEFAULT '',
    origin TEXT
);
CREATE INDEX IF NOT EXISTS spans_by_layer ON spans(doc_id, owner);
CREATE TABLE IF NOT EXISTS history (
    id INTEGER PRIMARY KEY,
    doc_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    owner TEXT NOT NULL DEFAULT '',
    version INTEGER NOT NULL,
    action TEXT NOT NULL,
    annotator TEXT,
    at TEXT NOT NULL,
    before TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS history_by_layer ON history(doc_id, owner, id);
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


def _migrate_2_to_3(db) -> None:
    """Version 3: several annotators per document.  Documents get their ``overlap`` (0: one
    shared version, as every document before) and ``review``; annotators' ``copies``; spans
    and history their layer (``owner``, '' for the final version every row so far belongs to)
    and spans their ``origin``."""
    db.execute("ALTER TABLE documents ADD COLUMN overlap INTEGER NOT NULL DEFAULT 0")
    db.execute("ALTER TABLE documents ADD COLUMN review TEXT")
    db.execute("ALTER TABLE spans ADD COLUMN owner TEXT NOT NULL DEFAULT ''")
    db.execute("ALTER TABLE spans ADD COLUMN origin TEXT")
    db.execute("ALTER TABLE history ADD COLUMN owner TEXT NOT NULL DEFAULT ''")
    db.execute("DROP INDEX IF EXISTS spans_by_doc")
    db.execute("DROP INDEX IF EXISTS history_by_doc")
    for stmt in SCHEMA.split(";"):  # the new table and indexes (IF NOT EXISTS: the others stay)
        if "copies" in stmt or "_by_layer" in stmt:
            db.execute(stmt)


# from version N to N + 1; each runs inside the transaction that opens the file
MIGRATIONS = {1: _migrate_1_to_2, 2: _migrate_2_to_3}


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
    origin: str | None = None  # a reviewed span: the annotators whose copies had it (JSON list)

    @property
    def key(self) -> tuple[str, int, int]:
        return self.type, self.tok_start, self.tok_end


SPAN_COLUMNS = "id, type, tok_start, tok_end, source, score, annotator, at, intensity, polarity, origin"


@dataclass
class DocumentInfo:
    id: int
    name: str
    status: str
    version: int
    spans: int
    annotator: str | None
    updated: str
    overlap: int = 0  # annotators who annotate it independently (0: one shared version)
    layer: str = FINAL  # whose version the status, version and spans are


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
    layer: str = FINAL  # the final version, or the name of the annotator whose copy this is
    overlap: int = 0
    review: dict | None = None  # how the final version was made from the copies, when it was

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
        self, docs: Iterable[tuple[str, str, Sequence[StoredToken], Sequence[StoredSpan], str | None]], overlap: int = 0
    ) -> list[tuple[str, int | None]]:
        """Add ``(name, text, tokens, spans, model)`` documents in one transaction; ``overlap``: how
        many annotators annotate each independently (0 or 1: one shared version).
        Returns ``(name, id)`` per document, ``id`` None for a name already in the project."""
        if not isinstance(overlap, int) or overlap < 0:
            raise ProjectError(f"overlap {overlap!r}: a number of annotators, 0 or more")
        overlap = overlap if overlap >= 2 else 0
        out = []
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

    # what an annotator works on, per document: the shared version of a document without overlap, their
    # copy of one with it, or (status 'todo') a copy still to be made while fewer than its overlap exist;
    # NULL status: not theirs (its annotators are complete without them, or it was reviewed before they
    # finished their copy)
    _WORK = (
        "work AS (SELECT d.id AS id, d.overlap AS overlap, c.owner AS owner, "
        "CASE WHEN :who IS NULL OR d.overlap = 0 THEN d.status "
        "WHEN c.owner IS NOT NULL AND d.status IN ('done', 'rejected') AND c.status IN ('todo', 'in_progress') "
        "THEN NULL WHEN c.owner IS NOT NULL THEN c.status "
        "WHEN d.status IN ('todo', 'in_progress') AND "
        "(SELECT COUNT(*) FROM copies k WHERE k.doc_id = d.id) < d.overlap THEN 'todo' END AS status, "
        "CASE WHEN :who IS NULL OR d.overlap = 0 OR c.owner IS NULL THEN '' ELSE c.owner END AS layer "
        "FROM documents d LEFT JOIN copies c ON c.doc_id = d.id AND c.owner = :who)"
    )
    # the uncertainty order's key: (no model span, lowest model score in the version worked on, import order)
    _RANKED = (
        "WITH " + _WORK + ", ranked AS (SELECT id, status, low IS NULL AS none, COALESCE(low, 0.0) AS low "
        "FROM (SELECT w.id, w.status, (SELECT MIN(score) FROM spans s WHERE s.doc_id = w.id AND "
        "s.owner = w.layer AND s.source = 'model' AND s.score IS NOT NULL) AS low FROM work w)) "
    )

    def work_list(self, annotator: str | None) -> list[DocumentInfo]:
        """The documents ``annotator`` works on, in import order, each as they see it (``layer``: ''
        for a shared document, their name for their copy, made or still to be made)."""
        with self._lock:
            rows = self.db.execute(
                "WITH " + self._WORK + " SELECT d.id, d.name, w.status, "
                "CASE WHEN w.owner IS NULL THEN d.version ELSE c.version END, "
                "(SELECT COUNT(*) FROM spans s WHERE s.doc_id = d.id AND s.owner = w.layer "
                "AND (w.overlap = 0 OR w.owner IS NOT NULL OR s.source = 'model')), "
                "CASE WHEN w.overlap = 0 THEN d.annotator ELSE w.owner END, COALESCE(c.updated, d.updated), "
                "d.overlap, CASE WHEN w.overlap = 0 THEN '' ELSE :who END "
                "FROM documents d JOIN work w ON w.id = d.id LEFT JOIN copies c ON c.doc_id = d.id AND c.owner = :who "
                "WHERE w.status IS NOT NULL ORDER BY d.id",
                {"who": annotator},
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
            doc = Document(*row[:7], overlap=row[7], review=json.loads(row[8]) if row[8] else None)
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
                doc.spans = [s for s in doc.spans if s.source == "model"]
        return doc

    def _spans(self, doc_id: int, layer: str = FINAL) -> list[StoredSpan]:
        return [
            StoredSpan(*r)
            for r in self.db.execute(
                f"SELECT {SPAN_COLUMNS} FROM spans WHERE doc_id = ? AND owner = ? ORDER BY tok_start, tok_end, type",
                (doc_id, layer),
            )
        ]

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
        """Make ``annotator``'s copy of a document with an overlap (the model's spans, status to do),
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
            db.execute(
                "INSERT INTO spans (doc_id, owner, type, tok_start, tok_end, source, score) "
                "SELECT doc_id, ?, type, tok_start, tok_end, source, score FROM spans "
                "WHERE doc_id = ? AND owner = '' AND source = 'model' ORDER BY id",
                (annotator, doc_id),
            )
        return True

    def queue(self, order: str = "file", annotator: str | None = None) -> list[int]:
        """The unfinished documents (to do, in progress) in the order ``next`` follows: ``file``
        (import order) or ``uncertainty`` (see ``ORDER_RULES``); with ``annotator``, those they work
        on, by the status of their copy where the document has an overlap (``work_list``)."""
        if order not in ORDERS:
            raise ProjectError(f"unknown order {order!r} (choose from {', '.join(ORDERS)})")
        key = "id" if order == "file" else "none, low, id"
        with self._lock:
            rows = self.db.execute(
                self._RANKED + f"SELECT id FROM ranked WHERE status IN ('todo', 'in_progress') ORDER BY {key}",
                {"who": annotator},
            ).fetchall()
        return [r[0] for r in rows]

    def next_unfinished(
        self, after: int | None = None, order: str = "file", annotator: str | None = None
    ) -> int | None:
        """The first unfinished document (to do, in progress) after ``after`` in ``order``
        (wrapping round), or None when none is left; ``annotator`` as for ``queue``.  In the
        uncertainty order "after" is by ``after``'s key now (its spans may have changed since it
        was chosen)."""
        if order not in ORDERS:
            raise ProjectError(f"unknown order {order!r} (choose from {', '.join(ORDERS)})")
        key = "id" if order == "file" else "none, low, id"
        params = {"who": annotator, "after": after}
        unfinished = self._RANKED + "SELECT id FROM ranked WHERE status IN ('todo', 'in_progress') "
        with self._lock:
            row = None
            if after is not None:
                row = self.db.execute(
                    unfinished + f"AND ({key}) > (SELECT {key} FROM ranked WHERE id = :after) ORDER BY {key} LIMIT 1",
                    params,
                ).fetchone()
            if row is None:
                row = self.db.execute(unfinished + f"ORDER BY {key} LIMIT 1", params).fetchone()
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

    def history(self, doc_id: int, layer: str = FINAL) -> list[dict]:
        with self._lock:
            rows = self.db.execute(
                "SELECT version, action, annotator, at FROM history WHERE doc_id = ? AND owner = ? ORDER BY id",
                (doc_id, layer),
            ).fetchall()
        return [dict(zip(("version", "action", "annotator", "at"), r)) for r in rows]

    # -- edits ------------------------------------------------------------------
    def _insert_spans(self, db, doc_id: int, spans: Iterable[StoredSpan], layer: str = FINAL) -> None:
        db.executemany(
            "INSERT INTO spans (doc_id, owner, type, tok_start, tok_end, source, score, annotator, at, "
            "intensity, polarity, origin) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    doc_id,
                    layer,
                    s.type,
                    s.tok_start,
                    s.tok_end,
                    s.source,
                    s.score,
                    s.annotator,
                    s.at,
                    s.intensity,
                    s.polarity,
                    s.origin,
                )
                for s in spans
            ],
        )

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
                raise ConflictError(
                    f"the document changed elsewhere (another tab or annotator saved version "
                    f"{row[0]}; this change was made on version {version}) and was not saved"
                )
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
        """Relabel and/or resize a span; it becomes a human span (who and when)."""
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
        return version + 1

    def set_attributes(
        self,
        doc_id: int,
        version: int,
        span_id: int,
        annotator: str | None,
        intensity: str | None = None,
        polarity: str | None = None,
        layer: str = FINAL,
    ) -> int:
        """Set a span's MPQA attributes (None: not set; both are written).  The span keeps its
        source; the change is recorded (who, when) in the history and can be undone."""
        if intensity is not None and intensity not in INTENSITIES:
            raise ProjectError(f"unknown intensity {str(intensity)[:20]!r} (choose from {', '.join(INTENSITIES)})")
        if polarity is not None and polarity not in POLARITIES:
            raise ProjectError(f"unknown polarity {str(polarity)[:20]!r} (choose from {', '.join(POLARITIES)})")
        with self._edit(doc_id, version, "attributes", annotator, layer=layer) as db:
            self._span_row(db, doc_id, span_id, layer)
            db.execute("UPDATE spans SET intensity = ?, polarity = ? WHERE id = ?", (intensity, polarity, span_id))
        return version + 1

    def set_status(self, doc_id: int, version: int, status: str, annotator: str | None, layer: str = FINAL) -> int:
        """``done`` accepts the document (its spans, model or human, are the annotation);
        ``rejected`` skips it for good (out of training data and of default exports).  On a copy:
        the annotator's own verdict, which the review sees."""
        if status not in STATUSES:
            raise ProjectError(f"unknown status {status!r}")
        with self._edit(doc_id, version, f"status {status}", annotator, status=status, layer=layer):
            pass
        return version + 1

    def review(
        self,
        doc_id: int,
        version: int,
        spans: Sequence[StoredSpan],
        reviewer: str | None,
        method: str,
        annotators: Sequence[str],
    ) -> int:
        """Write a document's final version from its copies: ``spans`` (as ``tagger.annotation.review``
        chooses them) replace the final version's, the document is done, and the review is recorded
        (``reviewer``, when, ``method``, the copies' ``annotators``).  A change like any other: undo
        restores the version before it."""
        with self._edit(doc_id, version, f"review: {method}", reviewer, status="done") as db:
            by_type: dict[str, list[tuple[int, int]]] = {}
            for sp in spans:
                self._check_span(db, doc_id, sp.type, sp.tok_start, sp.tok_end)
                for a, b in by_type.get(sp.type, []):
                    if a < sp.tok_end and sp.tok_start < b:
                        raise ProjectError(
                            f"two {sp.type} spans overlap (tokens {a}..{b} and {sp.tok_start}.."
                            f"{sp.tok_end}): keep one of them"
                        )
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
            # restored spans get new ids (an old id may belong to a span made since, in another document);
            # a change saved before version 2 has no intensity or polarity, before version 3 no origin: None
            self._insert_spans(
                db,
                doc_id,
                [
                    StoredSpan(
                        None,
                        s["type"],
                        s["tok_start"],
                        s["tok_end"],
                        s["source"],
                        s["score"],
                        s["annotator"],
                        s["at"],
                        s.get("intensity"),
                        s.get("polarity"),
                        s.get("origin"),
                    )
                    for s in before["spans"]
                ],
                layer,
            )
            if layer == FINAL:
                db.execute("UPDATE documents SET review = ? WHERE id = ?", (before.get("review"), doc_id))
            db.execute("DELETE FROM history WHERE id = ?", (hist_id,))
        return version + 1
