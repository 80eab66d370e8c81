"""The store's tables, created in a new file, and the migrations that bring an older file
forward in place, in one transaction, when it is opened.

Schema (``SCHEMA_VERSION`` 5; see ``MIGRATIONS``)::

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
          intensity, polarity, origin,     annotator); source 'model' (with its score) or
          polarity_source, _score,         'human' (with who and when); MPQA's attributes,
          intensity_source, _score,        each optional, each with its source ('model', with
          holder, holder_start,            the model's probability, or 'human'); a DSE's holder:
          holder_end, holder_source,       writer, implicit, none, or span (its tokens
          holder_score,                    [holder_start, holder_end)), its source likewise;
          attitude, attitude_source,       a DSE's attitude (ATTITUDE_TYPES or 'none'), likewise;
          attitude_score,                  its targets (JSON list of {start, end, source, score}:
          targets, targets_source)         token spans; NULL: not set) and who made that list;
                                           origin: the annotators whose copies had the span,
                                           for a span a review took (JSON list)
    history(id, doc_id, owner, version,    every change of a version (owner as for spans),
            action, annotator, at, before) with its spans and status before it (JSON):
                                           what undo restores
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from opinion_tagger.annotation.store.records import ATTITUDES, ProjectError, now

SCHEMA_VERSION = 5

# a DSE's roles (version 5): its attitude, and its targets with who made the list
ROLE_COLUMNS = (
    "attitude TEXT CHECK (attitude IN ({}))".format(", ".join(f"'{a}'" for a in ATTITUDES)),
    "attitude_source TEXT CHECK (attitude_source IN ('model', 'human'))",
    "attitude_score REAL",
    "targets TEXT",  # JSON (records.targets_of reads it)
    "targets_source TEXT CHECK (targets_source IN ('model', 'human'))",
)
ROLES = "".join(f"\n    {column}," for column in ROLE_COLUMNS)  # in the spans table

# the spans table (version 4: ``neutral`` intensity, the frame values' sources and scores, a DSE's holder;
# version 5: a DSE's attitude and targets)
SPANS = """CREATE TABLE IF NOT EXISTS {name} (
    id INTEGER PRIMARY KEY,
    doc_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    type TEXT NOT NULL,
    tok_start INTEGER NOT NULL,
    tok_end INTEGER NOT NULL CHECK (tok_end > tok_start),
    source TEXT NOT NULL CHECK (source IN ('model', 'human')),
    score REAL,
    annotator TEXT,
    at TEXT,
    intensity TEXT CHECK (intensity IN ('low', 'medium', 'high', 'extreme', 'neutral')),
    polarity TEXT CHECK (polarity IN ('positive', 'negative', 'neutral', 'both')),
    owner TEXT NOT NULL DEFAULT '',
    origin TEXT,
    polarity_source TEXT CHECK (polarity_source IN ('model', 'human')),
    polarity_score REAL,
    intensity_source TEXT CHECK (intensity_source IN ('model', 'human')),
    intensity_score REAL,
    holder TEXT CHECK (holder IN ('writer', 'implicit', 'none', 'span')),
    holder_start INTEGER,
    holder_end INTEGER,
    holder_source TEXT CHECK (holder_source IN ('model', 'human')),
    holder_score REAL,{roles}
    CHECK ((holder = 'span') = (holder_start IS NOT NULL AND holder_end > holder_start))
)"""

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
{spans};
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
""".replace("{spans}", SPANS.format(name="spans", roles=ROLES))


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


def _migrate_3_to_4(db) -> None:
    """Version 4: opinion frames on spans.  The spans table is rebuilt (SQLite cannot change a CHECK
    constraint: intensity may be ``neutral``) with each frame value's source and score and a DSE's holder; the
    intensities and polarities set so far were set by a person (source ``human``)."""
    db.execute(SPANS.format(name="spans_v4", roles=""))  # the table of version 4
    kept = "id, doc_id, type, tok_start, tok_end, source, score, annotator, at, intensity, polarity, owner, origin"
    db.execute(
        f"INSERT INTO spans_v4 ({kept}, intensity_source, polarity_source) SELECT {kept}, "
        "CASE WHEN intensity IS NULL THEN NULL ELSE 'human' END, "
        "CASE WHEN polarity IS NULL THEN NULL ELSE 'human' END FROM spans"
    )
    db.execute("DROP TABLE spans")  # its index with it; nothing refers to a span's row
    db.execute("ALTER TABLE spans_v4 RENAME TO spans")
    db.execute("CREATE INDEX IF NOT EXISTS spans_by_layer ON spans(doc_id, owner)")


def _migrate_4_to_5(db) -> None:
    """Version 5: a DSE's roles beside its holder: its attitude and its targets, each with its source (and the
    attitude's score; each target's own in the list).  Columns added, NULL in every span so far: not set."""
    for column in ROLE_COLUMNS:
        db.execute(f"ALTER TABLE spans ADD COLUMN {column}")


# from version N to N + 1; each runs inside the transaction that opens the file
MIGRATIONS = {1: _migrate_1_to_2, 2: _migrate_2_to_3, 3: _migrate_3_to_4, 4: _migrate_4_to_5}


def open_schema(db: sqlite3.Connection, path: Path, types: Sequence[str]) -> None:
    """Create the schema in a new file, or migrate an older file forward, inside the transaction
    the caller opened (so a failed migration leaves the file as it was).  Foreign keys are off
    meanwhile (a table rebuild must not cascade), and checked before the commit."""
    has_meta = db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").fetchone()
    row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() if has_meta else None
    if row is None:
        if db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'documents'").fetchone():
            raise ProjectError(f"{path}: not an annotation project (no schema version)")
        for stmt in SCHEMA.split(";"):
            if stmt.strip():
                db.execute(stmt)
        db.executemany(
            "INSERT INTO meta VALUES (?, ?)",
            [("schema_version", str(SCHEMA_VERSION)), ("types", json.dumps(list(types))), ("created", now())],
        )
        return
    try:
        found = int(row[0])
    except ValueError:
        raise ProjectError(f"{path}: project schema version {row[0]!r} is not a number") from None
    if found > SCHEMA_VERSION:
        raise ProjectError(
            f"{path}: project schema version {found} is newer than this "
            f"opinion-tagger's ({SCHEMA_VERSION}); upgrade opinion-tagger"
        )
    if found not in MIGRATIONS and found != SCHEMA_VERSION:
        raise ProjectError(f"{path}: project schema version {found} is not supported")
    while found < SCHEMA_VERSION:
        try:
            MIGRATIONS[found](db)
        except sqlite3.DatabaseError as exc:
            raise ProjectError(
                f"{path}: cannot migrate the project from schema version {found} to "
                f"{found + 1} ({exc}); the file is unchanged"
            ) from None
        found += 1
        db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(found),))
    bad = db.execute("PRAGMA foreign_key_check").fetchall()
    if bad:
        raise ProjectError(f"{path}: {len(bad)} rows refer to missing documents; not migrated")
