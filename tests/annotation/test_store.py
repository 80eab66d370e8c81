"""The annotation store (SQLite): edits, provenance, undo, versions between two
writers, durability when the writing process is killed, and exports."""

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opinion_tagger.annotation.exporting import UNREJECTED, export, record, stats, tagged
from opinion_tagger.annotation.importing import import_records
from opinion_tagger.annotation.store import ConflictError, Project, ProjectError, StoredSpan, StoredToken
from opinion_tagger.tagging.inputs import Record

ROOT = Path(__file__).resolve().parents[2]
TEXT = "Ann said it was awful. Bob left."
#       0   4    9  12  16   21 23  27


def _tokens():
    # Ann said it was awful . | Bob left .
    offs = [(0, 3), (4, 8), (9, 11), (12, 15), (16, 21), (21, 22), (23, 26), (27, 31), (31, 32)]
    return [StoredToken(k, 0 if k < 6 else 1, a, b) for k, (a, b) in enumerate(offs)]


@pytest.fixture
def project(tmp_path):
    p = Project(tmp_path / "p.sqlite", create=True)
    [(_, doc_id)] = p.add_documents(
        [
            (
                "d1",
                TEXT,
                _tokens(),
                [StoredSpan(None, "DSE", 1, 2, "model", 0.9), StoredSpan(None, "ESE", 4, 5, "model", 0.4)],
                "default",
            )
        ]
    )
    p.doc_id = doc_id
    yield p
    p.close()


def test_add_relabel_delete_undo_and_provenance(project):
    d = project.document(project.doc_id)
    assert (d.status, d.version) == ("todo", 0)
    assert [(s.type, d.span_chars(s), s.source, s.score) for s in d.spans] == [
        ("DSE", (4, 8), "model", 0.9),
        ("ESE", (16, 21), "model", 0.4),
    ]
    v = project.add_span(d.id, 0, "ESE", 3, 5, "ann")  # "was awful" replaces the ESE "awful"
    d = project.document(d.id)
    assert (v, d.version, d.status, d.annotator) == (1, 1, "in_progress", "ann")
    ese = [s for s in d.spans if s.type == "ESE"]
    assert [(d.span_chars(s), s.source, s.annotator) for s in ese] == [((12, 21), "human", "ann")]
    assert ese[0].at.endswith("+00:00")
    v = project.change_span(d.id, v, d.spans[0].id, "bob", typ="ESE")  # "said" becomes an ESE, by bob
    d = project.document(d.id)
    assert [(s.type, d.span_chars(s), s.source, s.annotator) for s in d.spans] == [
        ("ESE", (4, 8), "human", "bob"),
        ("ESE", (12, 21), "human", "ann"),
    ]
    v = project.delete_span(d.id, v, d.spans[1].id, "ann")
    v = project.set_status(d.id, v, "done", "ann")
    assert project.counts() == {"todo": 0, "in_progress": 0, "done": 1, "rejected": 0}
    # undo walks back: accept, delete, relabel, add
    for expected in (
        [("ESE", 4, 8)],
        [("ESE", 4, 8), ("ESE", 12, 21)],
        [("DSE", 4, 8), ("ESE", 12, 21)],
        [("DSE", 4, 8), ("ESE", 16, 21)],
    ):
        v = project.undo(d.id, v, "ann")
        d = project.document(d.id)
        assert [(s.type, *d.span_chars(s)) for s in d.spans] == expected
    assert d.status == "todo" and d.spans[0].source == "model" and d.spans[0].score == 0.9
    with pytest.raises(ProjectError, match="nothing to undo"):
        project.undo(d.id, v, "ann")


def test_invalid_spans_are_refused(project):
    with pytest.raises(ProjectError, match="sentence boundary"):
        project.add_span(project.doc_id, 0, "DSE", 4, 7, "ann")
    with pytest.raises(ProjectError, match="unknown span type"):
        project.add_span(project.doc_id, 0, "XYZ", 0, 1, "ann")
    with pytest.raises(ProjectError, match="not a span"):
        project.add_span(project.doc_id, 0, "DSE", 8, 10, "ann")
    assert project.document(project.doc_id).version == 0  # nothing was saved


def test_two_writers_stale_version_is_refused(project, tmp_path):
    other = Project(project.path)  # a second tab / process on the same file
    project.add_span(project.doc_id, 0, "DSE", 0, 1, "tab-a")
    with pytest.raises(ConflictError, match=r"changed since version 0, .*: tab-a saved version 1 \(add DSE"):
        other.add_span(project.doc_id, 0, "ESE", 6, 7, "tab-b")
    with pytest.raises(ConflictError, match=r": you \(tab-a\) saved version 1 "):  # tab-a's own other tab
        other.add_span(project.doc_id, 0, "ESE", 6, 7, "tab-a")
    d = other.document(project.doc_id)
    assert d.version == 1 and [s.annotator for s in d.spans if s.source == "human"] == ["tab-a"]
    other.add_span(project.doc_id, d.version, "ESE", 6, 7, "tab-b")  # after reloading, it saves
    assert len(project.document(project.doc_id).spans) == 4
    other.close()


def test_two_writers_at_once_lose_nothing(tmp_path):
    import threading

    with Project(tmp_path / "p.sqlite", create=True) as p:
        ids = [i for _, i in p.add_documents([(f"d{k}", TEXT, _tokens(), [], None) for k in range(2)])]
    errors = []

    def writer(doc_id):  # its own connection, as another process or tab would have
        try:
            with Project(tmp_path / "p.sqlite") as mine:
                v = 0
                for k in range(30):
                    v = mine.add_span(doc_id, v, "DSE" if k % 2 else "ESE", k % 6, k % 6 + 1, f"w{doc_id}")
        except Exception as exc:  # noqa: BLE001  (reported below)
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(i,)) for i in ids]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with Project(tmp_path / "p.sqlite") as p:
        assert [p.document(i).version for i in ids] == [30, 30]
        assert [len(p.history(i)) for i in ids] == [30, 30]


WRITER = textwrap.dedent("""
    import sys
    from opinion_tagger.annotation.store import Project
    p = Project(sys.argv[1])
    doc = p.documents()[0].id
    v = p.document(doc).version
    pos = 0
    while True:  # add and delete spans for ever, reporting each saved version
        if pos % 2 == 0:
            v = p.add_span(doc, v, "DSE", 0, 1, "writer")
        else:
            v = p.delete_span(doc, v, p.document(doc).spans[0].id, "writer")
        print(v, flush=True)
        pos += 1
""")


@pytest.mark.integration
def test_killed_writer_loses_nothing_saved(project):
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(project.path)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    saved = [int(proc.stdout.readline()) for _ in range(40)]
    os.kill(proc.pid, signal.SIGKILL)  # mid-save: it is writing the next change
    proc.wait()
    reopened = Project(project.path)
    assert reopened.check() == "ok"
    d = reopened.document(project.doc_id)
    assert d.version >= saved[-1] == 40  # every acknowledged change is there
    assert len(reopened.history(d.id)) == d.version
    has_dse = any(s.type == "DSE" and s.tok_start == 0 for s in d.spans)
    assert has_dse == (d.version % 2 == 1)
    reopened.close()


def test_not_a_project_is_a_clear_error(tmp_path):
    bad = tmp_path / "junk.sqlite"
    bad.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(ProjectError, match="not an annotation project"):
        Project(bad)
    with pytest.raises(ProjectError, match="no such project"):
        Project(tmp_path / "missing.sqlite")


def test_exports_strict_iob2_and_provenance(project, tmp_path):
    project.add_span(project.doc_id, 0, "ESE", 3, 5, "ann")  # was awful (human); DSE said (model)
    d = project.document(project.doc_id)
    td = tagged(d, project.types)
    assert [t.tags["ESE"] for t in td.sentences[0].tokens] == ["O", "O", "O", "B-ESE", "I-ESE", "O"]
    assert [t.tags["DSE"] for t in td.sentences[0].tokens] == ["O", "B-DSE", "O", "O", "O", "O"]
    assert [len(s.tokens) for s in td.sentences] == [6, 3]
    rec = record(d, project.types)
    assert rec["status"] == "in_progress"
    assert [(s["type"], s["text"], s["source"], s["score"]) for s in rec["spans"]] == [
        ("DSE", "said", "model", 0.9),
        ("ESE", "was awful", "human", 1.0),
    ]
    assert rec["spans"][1]["annotator"] == "ann"
    n = export(project, "jsonl", tmp_path / "out.jsonl", UNREJECTED)
    assert n == 1 and json.loads((tmp_path / "out.jsonl").read_text())["spans"] == rec["spans"]
    export(project, "conll", tmp_path / "out.conll", UNREJECTED)
    lines = (tmp_path / "out.conll").read_text().splitlines()
    assert lines[:3] == ["# id = d1", "# status = in_progress", "# text = Ann said it was awful."]
    assert lines[6] == "was\t12\t15\tO\tB-ESE"
    export(project, "brat", tmp_path / "brat", UNREJECTED)
    assert (tmp_path / "brat" / "d1.ann").read_text().splitlines() == [
        "T1\tDSE 4 8\tsaid",
        "T2\tESE 12 21\twas awful",
        "#1\tAnnotatorNotes T1\tmodel 0.9000",
        f"#2\tAnnotatorNotes T2\thuman ann {d.spans[1].at}",
    ]
    s = stats(project)
    assert s["progress"] == "0 of 1 done" and s["spans"]["ESE"] == {"model": 0, "human": 1}


def test_import_without_model_reports_every_record(tmp_path):
    with Project(tmp_path / "p.sqlite", create=True) as p:
        recs = [
            Record("a", "Rain fell. It was cold."),
            Record("b", error="empty text"),
            Record("a", "Other text."),
            Record("c", "Rain fell. It was cold."),
        ]
        rep = import_records(p, recs)
        assert (rep.imported, rep.duplicates, rep.errors) == (3, 0, [("b", "empty text")])
        assert [i.name for i in p.documents()] == ["a", "a (2)", "c"]
        again = import_records(p, [Record("a", "Rain fell. It was cold.")])
        assert (again.imported, again.duplicates) == (0, 1)
        d = p.document(p.documents()[0].id)
        assert [(t.sentence, d.text[t.start : t.end]) for t in d.tokens] == [
            (0, "Rain"),
            (0, "fell"),
            (0, "."),
            (1, "It"),
            (1, "was"),
            (1, "cold"),
            (1, "."),
        ]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["DSE", "ESE"]), st.integers(0, 5), st.integers(1, 3)), max_size=8))
def test_spans_of_one_type_never_overlap(tmp_path_factory, edits):
    with Project(tmp_path_factory.mktemp("h") / "p.sqlite", create=True) as p:
        [(_, doc)] = p.add_documents([("d", TEXT, _tokens(), [], None)])
        v = 0
        for typ, start, length in edits:
            end = min(start + length, 6)
            v = p.add_span(doc, v, typ, start, end, "h")
            d = p.document(doc)
            assert any((s.type, s.tok_start, s.tok_end) == (typ, start, end) for s in d.spans)
        d = p.document(doc)
        for typ in ("DSE", "ESE"):
            own = sorted((s.tok_start, s.tok_end) for s in d.spans if s.type == typ)
            assert all(a[1] <= b[0] for a, b in zip(own, own[1:]))
        tags = tagged(d, p.types)
        for typ in ("DSE", "ESE"):  # strict IOB2: no I- without a B- or I- of its type before it
            seq = [t.tags[typ] for s in tags.sentences for t in s.tokens]
            assert all(not t.startswith("I-") or p_.endswith(typ) for p_, t in zip(["O"] + seq, seq))
