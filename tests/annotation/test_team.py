"""A tool a team can run: schema migration, rejected documents, search,
the uncertainty queue and MPQA's span attributes (the store, exports and the CLI)."""

import json
import sqlite3

import pytest

from opinion_tagger.annotation.accepted import accepted_documents
from opinion_tagger.annotation.editor import apply_event
from opinion_tagger.annotation.exporting import UNREJECTED, export, record, stats
from opinion_tagger.annotation.store import (
    SCHEMA_VERSION,
    Project,
    ProjectError,
    StoredSpan,
    StoredToken,
)
from opinion_tagger.cli import main

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
    db.executemany(
        "INSERT INTO meta VALUES (?, ?)",
        [("schema_version", "1"), ("types", '["DSE", "ESE"]'), ("created", "2026-01-01T00:00:00.000+00:00")],
    )
    for doc_id, name, status, version in ((1, "d1", "done", 1), (2, "d2", "todo", 0)):
        db.execute(
            "INSERT INTO documents VALUES (?, ?, ?, ?, ?, 'ann', 'fast', 't0', 't1')",
            (doc_id, name, TEXT, status, version),
        )
        db.executemany(
            "INSERT INTO tokens VALUES (?, ?, ?, ?, ?)",
            [(doc_id, t.position, t.sentence, t.start, t.end) for t in _tokens()],
        )
    db.execute("INSERT INTO spans VALUES (1, 1, 'DSE', 1, 2, 'model', 0.9, NULL, NULL)")
    db.execute("INSERT INTO spans VALUES (2, 1, 'ESE', 3, 5, 'human', NULL, 'ann', 't1')")
    db.execute("INSERT INTO spans VALUES (3, 2, 'ESE', 4, 5, 'model', 0.4, NULL, NULL)")
    before = {
        "status": "todo",
        "spans": [
            {
                "id": 1,
                "type": "DSE",
                "tok_start": 1,
                "tok_end": 2,
                "source": "model",
                "score": 0.9,
                "annotator": None,
                "at": None,
            }
        ],
    }
    db.execute("INSERT INTO history VALUES (1, 1, 1, 'add ESE', 'ann', 't1', ?)", (json.dumps(before),))
    db.commit()
    db.close()


# --------------------------------------------------------------------------- 1. migration
def test_a_version_1_file_is_migrated_in_place_and_keeps_everything(tmp_path):
    path = tmp_path / "old.sqlite"
    _v1_file(path)
    with Project(path) as p:
        assert p.schema_version() == SCHEMA_VERSION == 5
        assert p.check() == "ok"
        assert [(d.name, d.status, d.version, d.spans) for d in p.documents()] == [
            ("d1", "done", 1, 2),
            ("d2", "todo", 0, 1),
        ]
        d1 = p.document(1)
        assert [
            (s.id, s.type, s.tok_start, s.tok_end, s.source, s.score, s.annotator, s.intensity, s.polarity)
            for s in d1.spans
        ] == [(1, "DSE", 1, 2, "model", 0.9, None, None, None), (2, "ESE", 3, 5, "human", None, "ann", None, None)]
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
        assert p.schema_version() == 5


def test_a_failed_migration_leaves_the_file_as_it_was(tmp_path, monkeypatch):
    from opinion_tagger.annotation.store import schema

    path = tmp_path / "old.sqlite"
    _v1_file(path)

    def broken(db):
        schema._migrate_1_to_2(db)
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setitem(schema.MIGRATIONS, 1, broken)
    with pytest.raises(
        ProjectError,
        match=r"old\.sqlite: cannot migrate .* version 1 to 2 \(disk I/O error\); "
        "the file is unchanged",
    ):
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


# --------------------------------------------------------------------------- fixtures for 2 to 5
def _project(path, docs):
    """``docs``: (name, text-or-None, model scores) per document; each score a one-token model span."""
    p = Project(path, create=True)
    p.add_documents(
        [
            (
                name,
                text or TEXT,
                _tokens(),
                [
                    StoredSpan(None, "DSE" if k % 2 == 0 else "ESE", k, k + 1, "model", sc)
                    for k, sc in enumerate(scores)
                ],
                "fast",
            )
            for name, text, scores in docs
        ]
    )
    return p


# --------------------------------------------------------------------------- 2. rejected
def test_a_rejected_document_is_out_of_training_exports_and_the_queue(tmp_path, capsys):
    path = tmp_path / "p.sqlite"
    with _project(path, [("a", None, []), ("b", None, []), ("c", None, [])]) as p:
        p.set_status(1, 0, "done", "ann")
        out = apply_event(p, {"op": "reject", "doc": 2, "version": 0}, "ann")
        assert out.next_doc == 3 and p.document(2).status == "rejected"
        assert p.counts() == {"todo": 1, "in_progress": 0, "done": 1, "rejected": 1}
        assert p.queue() == [3] and p.next_unfinished(after=3) == 3  # rejected is not unfinished
        assert stats(p)["status"]["rejected"] == 1
        assert export(p, "jsonl", tmp_path / "all.jsonl", UNREJECTED) == 2
        assert export(p, "jsonl", tmp_path / "r.jsonl", ("rejected",)) == 1
        p.undo(2, 1, "ann")  # a rejection can be undone
        assert p.document(2).status == "todo"
        p.set_status(2, 2, "rejected", "ann")
    assert list(accepted_documents(path)) == ["a"]
    names = lambda f: [json.loads(line)["id"] for line in f.read_text().splitlines()]
    assert names(tmp_path / "all.jsonl") == ["a", "c"] and names(tmp_path / "r.jsonl") == ["b"]
    assert main(["annotate", "export", str(path), "--out", str(tmp_path / "x.jsonl"), "--include-rejected"]) == 0
    assert names(tmp_path / "x.jsonl") == ["a", "b"]  # the default (accepted) and the rejected
    every = ["--status", "todo", "--status", "in_progress", "--status", "done", "--include-rejected"]
    assert main(["annotate", "export", str(path), "--out", str(tmp_path / "x.jsonl"), *every]) == 0
    assert names(tmp_path / "x.jsonl") == ["a", "b", "c"]
    assert (
        main(
            [
                "annotate",
                "export",
                str(path),
                "--out",
                str(tmp_path / "y.jsonl"),
                "--status",
                "done",
                "--include-rejected",
            ]
        )
        == 0
    )
    assert names(tmp_path / "y.jsonl") == ["a", "b"]
    assert main(["annotate", "export", str(path), "--out", str(tmp_path / "z.jsonl"), "--status", "rejected"]) == 0
    assert names(tmp_path / "z.jsonl") == ["b"]
    capsys.readouterr()
    assert main(["annotate", "stats", str(path)]) == 0
    assert "1 to do, 1 rejected" in capsys.readouterr().out
    assert main(["annotate", "stats", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == {"todo": 1, "in_progress": 0, "done": 1, "rejected": 1}


# --------------------------------------------------------------------------- 3. search
def test_search_is_a_case_insensitive_substring_with_percent_and_underscore_literal(tmp_path):
    texts = [
        ("plain", "The Bridge was a DISASTER."),
        ("pct", "Costs rose 50% this year."),
        ("under", "see file_name here"),
        ("other", "Costs rose 500 this year, a disaster."),
        ("back", "a back\\slash"),
        ("space", "the end"),
    ]
    with _project(tmp_path / "p.sqlite", [(n, t, []) for n, t in texts]) as p:
        ids = {d.name: d.id for d in p.documents()}
        assert [h[1] for h in p.search("disaster")] == ["plain", "other"]
        assert [h[1] for h in p.search("50%")] == ["pct"]  # not "500" (% is not a wildcard)
        assert [h[1] for h in p.search("e_n")] == ["under"]  # _ is not a wildcard: not "the end"
        assert [h[1] for h in p.search("k\\s")] == ["back"]
        assert p.search("%") == [(ids["pct"], "pct", "Costs rose 50% this year.")]
        assert p.search("  ") == [] and p.search("nowhere") == []
        assert p.search("OTHER") == [(ids["other"], "other", "")]  # the name matched, not the text
        long = _project(tmp_path / "q.sqlite", [("long", "x" * 100 + " needle " + "y" * 100, [])])
        [(_, _, snippet)] = long.search("needle")
        assert snippet == "…" + "x" * 29 + " needle " + "y" * 49 + "…"
        long.close()


# --------------------------------------------------------------------------- 4. uncertainty queue
def test_the_uncertainty_queue_puts_the_least_confident_document_first(tmp_path):
    # lowest model score: a 0.8, b none, c 0.3, d 0.5 (its human span does not count), e none
    with _project(
        tmp_path / "p.sqlite",
        [("a", None, [0.9, 0.8]), ("b", None, []), ("c", None, [0.7, 0.3]), ("d", None, [0.5]), ("e", None, [])],
    ) as p:
        ids = {d.name: d.id for d in p.documents()}
        name = {v: k for k, v in ids.items()}
        p.add_span(ids["d"], 0, "ESE", 5, 6, "ann")  # human spans have no score
        assert [name[i] for i in p.queue("file")] == ["a", "b", "c", "d", "e"]
        assert [name[i] for i in p.queue("uncertainty")] == ["c", "d", "a", "b", "e"]
        nxt = lambda after: name[p.next_unfinished(after=ids[after], order="uncertainty")]
        assert [nxt(n) for n in ("c", "d", "a", "b", "e")] == ["d", "a", "b", "e", "c"]  # wraps round
        assert name[p.next_unfinished(order="uncertainty")] == "c"
        assert name[p.next_unfinished(after=ids["c"], order="file")] == "d"
        # accepting c: the next is d; deleting c's weakest span moves it behind a
        p.set_status(ids["c"], 0, "done", "ann")
        assert [name[i] for i in p.queue("uncertainty")] == ["d", "a", "b", "e"]
        assert name[p.next_unfinished(after=ids["c"], order="uncertainty")] == "d"
        out = apply_event(p, {"op": "accept", "doc": ids["d"], "version": 1, "order": "uncertainty"}, "ann")
        assert name[out.next_doc] == "a"
        with pytest.raises(ProjectError, match="unknown order"):
            p.queue("random")


# --------------------------------------------------------------------------- 5. attributes
def test_span_attributes_are_stored_undone_and_exported(tmp_path):
    path = tmp_path / "p.sqlite"
    with _project(path, [("a", None, [0.9, 0.8, 0.7])]) as p:
        spans = p.document(1).spans  # DSE 0, ESE 1, DSE 2
        v = p.set_attributes(1, 0, spans[2].id, "ann", intensity="high", polarity="negative")
        v = p.set_attributes(1, v, spans[0].id, "ann", polarity="both")
        with pytest.raises(ProjectError, match="unknown intensity 'huge'"):
            p.set_attributes(1, v, spans[0].id, "ann", intensity="huge")
        with pytest.raises(ProjectError, match="unknown polarity"):
            apply_event(p, {"op": "attributes", "doc": 1, "version": v, "span": spans[0].id, "polarity": "good"}, "a")
        d = p.document(1)
        assert [(s.intensity, s.polarity, s.source) for s in d.spans] == [
            (None, "both", "model"),
            (None, None, "model"),
            ("high", "negative", "model"),
        ]
        rec = record(d, p.types)
        assert [{k: sp[k] for k in ("intensity", "polarity") if k in sp} for sp in rec["spans"]] == [
            {"polarity": "both"},
            {},
            {"intensity": "high", "polarity": "negative"},
        ]
        export(p, "brat", tmp_path / "brat", UNREJECTED)
        ann = (tmp_path / "brat" / "a.ann").read_text().splitlines()
        assert [line for line in ann if line.startswith("A")] == [
            "A1\tPolarity T1 both",
            "A2\tIntensity T3 high",
            "A3\tPolarity T3 negative",
        ]
        assert ann[2].startswith("T3\tDSE 9 11\tit")
        # a relabel or resize keeps the attributes; undo takes them back
        v = p.change_span(1, v, spans[2].id, "ann", typ="ESE")
        assert (p.document(1).spans[2].intensity, p.document(1).spans[2].type) == ("high", "ESE")
        v = p.undo(1, v, "ann")
        v = p.undo(1, v, "ann")
        assert [(s.intensity, s.polarity) for s in p.document(1).spans] == [
            (None, None),
            (None, None),
            ("high", "negative"),
        ]
        v = p.set_attributes(1, v, spans[2].id, "ann", polarity="positive")  # a value not given stays
        assert (p.document(1).spans[2].intensity, p.document(1).spans[2].polarity) == ("high", "positive")
        p.set_attributes(1, v, spans[2].id, "ann", intensity=None)  # None clears
        assert (p.document(1).spans[2].intensity, p.document(1).spans[2].polarity) == (None, "positive")
