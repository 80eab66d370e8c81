"""Issue 34, a tool a team can run: schema migration, rejected documents, search,
the uncertainty queue and MPQA's span attributes (the store, exports and the CLI)."""

import json
import sqlite3

import pytest

from tagger.annotation.store import SCHEMA_VERSION, Project, ProjectError, StoredToken

TEXT = "Ann said it was awful. Bob left."
OFFS = [(0, 3), (4, 8), (9, 11), (12, 15), (16, 21), (21, 22), (23, 26), (27, 31), (31, 32)]

# the schema as opinion-tagger wrote it before versions were migrated (schema_version 1)
V1_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE documents (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, text TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'todo' CHECK (status IN ('todo', 'in_progress', 'done')),
    version INTEGER NOT NULL DEFAULT 0, annotator TEXT, model TEXT, created TEXT NOT NULL, updated TEXT NOT NULL);
CREATE TABLE tokens (
    doc_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE, position INTEGER NOT NULL,
    sentence INTEGER NOT NULL, start INTEGER NOT NULL, end INTEGER NOT NULL,
    PRIMARY KEY (doc_id, position)) WITHOUT ROWID;
CREATE TABLE spans (
    id INTEGER PRIMARY KEY, doc_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    type TEXT NOT NULL, tok_start INTEGER NOT NULL, tok_end INTEGER NOT NULL CHECK (tok_end > tok_start),
    source TEXT NOT NULL CHECK (source IN ('model', 'human')), score REAL, annotator TEXT, at TEXT);
CREATE INDEX spans_by_doc ON spans(doc_id);
CREATE TABLE history (
    id INTEGER PRIMARY KEY, doc_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    version INTEGER NOT NULL, action TEXT NOT NULL, annotator TEXT, at TEXT NOT NULL, before TEXT NOT NULL);
CREATE INDEX history_by_doc ON history(doc_id, id);
"""


def _tokens():
    return [StoredToken(k, 0 if k < 6 else 1, a, b) for k, (a, b) in enumerate(OFFS)]


def _v1_file(path):
    """A version-1 project: d1 done (a model and a human span, one change in its history),
    d2 to do with a model span."""
    db = sqlite3.connect(path)
    db.executescript(V1_SCHEMA)
    db.executemany("INSERT INTO meta VALUES (?, ?)", [("schema_version", "1"), ("types", '["DSE", "ESE"]'),
                                                      ("created", "2026-01-01T00:00:00.000+00:00")])
    for doc_id, name, status, version in ((1, "d1", "done", 1), (2, "d2", "todo", 0)):
        db.execute("INSERT INTO documents VALUES (?, ?, ?, ?, ?, 'ann', 'fast', 't0', 't1')",
                   (doc_id, name, TEXT, status, version))
        db.executemany("INSERT INTO tokens VALUES (?, ?, ?, ?, ?)",
                       [(doc_id, t.position, t.sentence, t.start, t.end) for t in _tokens()])
    db.execute("INSERT INTO spans VALUES (1, 1, 'DSE', 1, 2, 'model', 0.9, NULL, NULL)")
    db.execute("INSERT INTO spans VALUES (2, 1, 'ESE', 3, 5, 'human', NULL, 'ann', 't1')")
    db.execute("INSERT INTO spans VALUES (3, 2, 'ESE', 4, 5, 'model', 0.4, NULL, NULL)")
    before = {"status": "todo", "spans": [{"id": 1, "type": "DSE", "tok_start": 1, "tok_end": 2, "source": "model",
                                           "score": 0.9, "annotator": None, "at": None}]}
    db.execute("INSERT INTO history VALUES (1, 1, 1, 'add ESE', 'ann', 't1', ?)", (json.dumps(before),))
    db.commit()
    db.close()


# --------------------------------------------------------------------------- 1. migration
def test_a_version_1_file_is_migrated_in_place_and_keeps_everything(tmp_path):
    path = tmp_path / "old.sqlite"
    _v1_file(path)
    with Project(path) as p:
        assert p.schema_version() == SCHEMA_VERSION == 2
        assert p.check() == "ok"
        assert [(d.name, d.status, d.version, d.spans) for d in p.documents()] == [
            ("d1", "done", 1, 2), ("d2", "todo", 0, 1)]
        d1 = p.document(1)
        assert [(s.id, s.type, s.tok_start, s.tok_end, s.source, s.score, s.annotator, s.intensity, s.polarity)
                for s in d1.spans] == [(1, "DSE", 1, 2, "model", 0.9, None, None, None),
                                       (2, "ESE", 3, 5, "human", None, "ann", None, None)]
        assert len(d1.tokens) == 9 and p.history(1)[0]["action"] == "add ESE"
        # the new features work on the migrated file
        v = p.set_attributes(1, 1, 2, "bob", intensity="high", polarity="negative")
        assert [(s.intensity, s.polarity) for s in p.document(1).spans] == [(None, None), ("high", "negative")]
        p.set_status(2, 0, "rejected", "bob")
        assert p.counts() == {"todo": 0, "in_progress": 0, "done": 1, "rejected": 1}
        # undo of a change saved before the migration (its spans have no attributes)
        v = p.undo(1, v, "bob")  # the attributes
        v = p.undo(1, v, "bob")  # the ESE added under version 1
        assert [(s.type, s.source) for s in p.document(1).spans] == [("DSE", "model")]
        # foreign keys still cascade after the rebuild of documents
        p.db.execute("DELETE FROM documents WHERE id = 2")
        assert p.db.execute("SELECT COUNT(*) FROM tokens WHERE doc_id = 2").fetchone()[0] == 0
    with Project(path) as p:  # opened again: nothing left to migrate
        assert p.schema_version() == 2


def test_a_failed_migration_leaves_the_file_as_it_was(tmp_path, monkeypatch):
    from tagger.annotation import store

    path = tmp_path / "old.sqlite"
    _v1_file(path)

    def broken(db):
        store._migrate_1_to_2(db)
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setitem(store.MIGRATIONS, 1, broken)
    with pytest.raises(ProjectError, match="not an annotation project"):
        Project(path)
    db = sqlite3.connect(path)
    assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("1",)
    assert "intensity" not in [r[1] for r in db.execute("PRAGMA table_info(spans)")]
    assert db.execute("SELECT COUNT(*) FROM documents").fetchone() == (2,)
    db.close()


def test_a_newer_or_foreign_file_is_refused_in_one_line(tmp_path):
    path = tmp_path / "new.sqlite"
    Project(path, create=True).close()
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = '9' WHERE key = 'schema_version'")
    db.commit()
    db.close()
    with pytest.raises(ProjectError, match=r"new\.sqlite: project schema version 9 is newer"):
        Project(path)
    other = tmp_path / "other.sqlite"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE documents (x)")
    db.commit()
    db.close()
    with pytest.raises(ProjectError, match="not an annotation project"):
        Project(other)
