"""A team on the same documents: copies per annotator (``--overlap``), agreement
(span F1 with the project's metrics, Cohen's kappa by hand), the review that makes the
final version, exports with provenance, and a project written at schema version 2."""

import json
import sqlite3
from pathlib import Path

import pytest

from opinion_tagger.annotation.accepted import accepted_documents
from opinion_tagger.annotation.agreement import agreement, cohen_kappa
from opinion_tagger.annotation.editor import apply_event
from opinion_tagger.annotation.exporting import UNREJECTED, export, record, stats
from opinion_tagger.annotation.review import accept_copy, candidates, copy_keys, dropped, merge, reviewable, ticked
from opinion_tagger.annotation.store import (
    SCHEMA_VERSION,
    Project,
    ProjectError,
    StoredSpan,
    StoredToken,
)
from opinion_tagger.cli import main

DATA = Path(__file__).resolve().parents[1] / "data"
TEXT = "Ann said it was awful. Bob left."  # invented
OFFS = [(0, 3), (4, 8), (9, 11), (12, 15), (16, 21), (21, 22), (23, 26), (27, 31), (31, 32)]


def _tokens():
    return [StoredToken(k, 0 if k < 6 else 1, a, b) for k, (a, b) in enumerate(OFFS)]


def _team(path):
    """t1 and t2 with an overlap of 2 (a model DSE on "said", 0.9), s3 shared (no overlap)."""
    p = Project(path, create=True)
    model = [StoredSpan(None, "DSE", 1, 2, "model", 0.9)]
    p.add_documents([(n, TEXT, _tokens(), model, "fast") for n in ("t1", "t2")], overlap=2)
    p.add_documents([("s3", TEXT, _tokens(), model, "fast")])
    return p


# --------------------------------------------------------------------------- kappa by hand
def test_cohen_kappa_against_hand_computed_examples():
    # 50 items: both yes 20, A yes B no 5, A no B yes 10, both no 15: p_o = 35/50 = 0.7;
    # A says yes 25/50, B 30/50: p_e = 0.5 * 0.6 + 0.5 * 0.4 = 0.5; kappa = (0.7 - 0.5) / 0.5 = 0.4
    a = ["y"] * 20 + ["y"] * 5 + ["n"] * 10 + ["n"] * 15
    b = ["y"] * 20 + ["n"] * 5 + ["y"] * 10 + ["n"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    # 10 tokens, 3 in a span each, 2 of them the same: p_o = 0.8, p_e = 0.3^2 + 0.7^2 = 0.58: 0.22 / 0.42
    a = [1, 1, 0, 0, 0, 0, 1, 0, 0, 0]
    b = [1, 0, 0, 0, 0, 0, 1, 1, 0, 0]
    assert cohen_kappa(a, b) == pytest.approx(0.22 / 0.42)
    assert cohen_kappa(a, a) == pytest.approx(1.0)
    assert cohen_kappa([1, 0], [0, 1]) == pytest.approx(-1.0)
    assert cohen_kappa([0, 0, 0], [0, 0, 0]) is None and cohen_kappa([], []) is None  # undefined
    with pytest.raises(ValueError):
        cohen_kappa([1], [1, 0])


# --------------------------------------------------------------------------- copies
def test_each_annotator_works_in_a_copy_of_their_own(tmp_path):
    with _team(tmp_path / "p.sqlite") as p:
        assert [(d.name, d.overlap) for d in p.documents()] == [("t1", 2), ("t2", 2), ("s3", 0)]
        assert p.claim(1, "ann") is True and p.claim(1, "ann") is False  # made once
        assert p.claim(1, "ben") is True
        with pytest.raises(ProjectError, match="already has its 2 annotators"):
            p.claim(1, "cy")
        with pytest.raises(ProjectError, match="one shared version"):
            p.claim(3, "ann")
        ann = p.document(1, "ann")
        assert (ann.layer, ann.status, ann.version) == ("ann", "todo", 0)
        assert [(s.type, s.tok_start, s.source, s.score) for s in ann.spans] == [("DSE", 1, "model", 0.9)]
        assert ann.spans[0].id != p.document(1).spans[0].id  # a span of its own
        v = p.add_span(1, 0, "ESE", 3, 5, "ann", layer="ann")
        with pytest.raises(ProjectError, match="only ann changes their copy"):
            p.add_span(1, v, "ESE", 3, 5, "ben", layer="ann")
        with pytest.raises(ProjectError, match="no span"):  # a span of another copy, by its id
            p.delete_span(1, 0, ann.spans[0].id, "ben", layer="ben")
        with pytest.raises(ProjectError, match="cy has no copy"):
            p.document(1, "cy")
        # the final version and ben's copy are untouched; history is per copy
        assert p.document(1).version == 0 and len(p.document(1).spans) == 1
        assert len(p.document(1, "ben").spans) == 1 and p.history(1, "ann")[0]["action"] == "add ESE"
        assert p.history(1) == []
        v = p.undo(1, v, "ann", layer="ann")
        assert [s.type for s in p.document(1, "ann").spans] == ["DSE"]
        # what each annotator works on: cy cannot join t1; s3 is shared by everyone
        work = lambda who: [(d.name, d.status, d.layer, d.spans) for d in p.work_list(who)]
        assert work("cy") == [("t2", "todo", "cy", 1), ("s3", "todo", "", 1)]
        assert work("ann") == [("t1", "todo", "ann", 1), ("t2", "todo", "ann", 1), ("s3", "todo", "", 1)]
        p.set_status(1, v, "done", "ann", layer="ann")
        assert p.queue(annotator="ann") == [2, 3] and p.queue(annotator="ben") == [1, 2, 3]
        assert p.next_unfinished(after=2, annotator="ann") == 3 and p.next_unfinished(after=3, annotator="ann") == 2
        assert p.queue(order="uncertainty", annotator="cy") == [2, 3]
        # the page's edits on a copy (the page names the layer, the browser cannot)
        out = apply_event(p, {"op": "accept", "doc": 1, "version": 0}, "ben", layer="ben", queue_of="ben")
        assert out.next_doc == 2 and p.document(1, "ben").status == "done" and p.document(1).status == "todo"
        assert p.copies(1) == [(1, "ann", "done", 3), (1, "ben", "done", 1)]


def test_a_copy_is_made_at_the_first_change_on_its_preview(tmp_path):
    with _team(tmp_path / "p.sqlite") as p:
        preview = p.document(1, "ann", preview=True)
        assert (preview.layer, preview.status, preview.version, len(preview.spans)) == ("ann", "todo", 0, 1)
        assert p.copies(1) == []  # looking makes no copy
        p.add_span(1, 0, "ESE", 3, 5, None)  # a human span in the final version is not in a copy
        assert [s.source for s in p.document(1, "ann", preview=True).spans] == ["model"]
        # the first change names the final version's span id (what the preview showed)
        out = apply_event(p, {"op": "delete", "doc": 1, "version": 0, "span": preview.spans[0].id}, "ann", layer="ann")
        assert out.message == "Span deleted." and p.copies(1) == [(1, "ann", "in_progress", 1)]
        assert p.document(1, "ann").spans == [] and len(p.document(1).spans) == 2  # the final version kept its own
        for who in ("ben", "cy"):
            p.claim(2, who)
        with pytest.raises(ProjectError, match="already has its 2 annotators"):
            apply_event(p, {"op": "accept", "doc": 2, "version": 0}, "ann", layer="ann")
        assert p.work_list("ann")[1].name == "s3"  # t2 is not hers


def _annotated(p):
    """ann: DSE "said", ESE "was awful"; ben: DSE "said", ESE "awful", DSE "left"; both accepted t1."""
    p.claim(1, "ann")
    p.claim(1, "ben")
    v = p.add_span(1, 0, "ESE", 3, 5, "ann", layer="ann")
    p.set_status(1, v, "done", "ann", layer="ann")
    v = p.add_span(1, 0, "ESE", 4, 5, "ben", layer="ben")
    v = p.add_span(1, v, "DSE", 7, 8, "ben", layer="ben")
    p.set_status(1, v, "done", "ben", layer="ben")


def test_agreement_per_pair_and_type_by_the_projects_metrics(tmp_path):
    with _team(tmp_path / "p.sqlite") as p:
        assert agreement(p) == []
        _annotated(p)
        p.claim(2, "ann")  # a copy not accepted does not count
        p.add_span(2, 0, "ESE", 0, 1, "ann", layer="ann")
        rows = {r["type"]: r for r in agreement(p)}
        assert [r["annotators"] for r in rows.values()] == [["ann", "ben"], ["ann", "ben"]]
        dse, ese = rows["DSE"], rows["ESE"]
        assert (dse["documents"], dse["tokens"], dse["spans"]) == (1, 9, [1, 2])
        # DSE: ann "said"; ben "said", "left": P 1/2, R 1: F1 2/3, binary and proportional
        assert dse["binary_f1"] == pytest.approx(2 / 3) and dse["proportional_f1"] == pytest.approx(2 / 3)
        # tokens in a DSE: ann 1 of 9, ben 2 of 9, 8 alike: p_o 72/81, p_e (2 + 56)/81: kappa 14/23
        assert dse["kappa"] == pytest.approx(14 / 23)
        # ESE: ann "was awful", ben "awful": binary 1; proportional P 1, R 1/2: 2/3; kappa 14/23 again
        assert ese["binary_f1"] == pytest.approx(1.0) and ese["proportional_f1"] == pytest.approx(2 / 3)
        assert ese["kappa"] == pytest.approx(14 / 23)
        s = stats(p)
        assert s["team"] == {"documents": 2, "awaiting_review": 1, "reviewed": 0}
        assert s["copies"]["ann"] == {"todo": 0, "in_progress": 1, "done": 1, "rejected": 0}
        assert s["annotators"] == ["ann", "ben"] and s["agreement"] == agreement(p)


def test_review_accepts_or_merges_into_the_final_version_with_provenance(tmp_path):
    path = tmp_path / "p.sqlite"
    with _team(path) as p:
        _annotated(p)
        assert [(r[1], r[2], r[3]) for r in reviewable(p)] == [("t1", "todo", [("ann", "done"), ("ben", "done")])]
        cands = candidates(p, 1, ["ann", "ben"])
        assert [(c.key, c.text, c.by) for c in cands] == [
            (("DSE", 1, 2), "said", ["ann", "ben"]),
            (("ESE", 3, 5), "was awful", ["ann"]),
            (("ESE", 4, 5), "awful", ["ben"]),
            (("DSE", 7, 8), "left", ["ben"]),
        ]
        # a refusal names the words, as the reviewer sees them, not token numbers
        with pytest.raises(
            ProjectError, match="^two ESE spans overlap \\(“was awful” and “awful”\\): keep one of them$"
        ):
            merge(p, 1, 0, [("DSE", 1, 2), ("ESE", 3, 5), ("ESE", 4, 5)], ["ann", "ben"], "rev")
        with pytest.raises(ProjectError, match="^no copy has the DSE span “Ann”$"):
            merge(p, 1, 0, [("DSE", 0, 1)], ["ann", "ben"], "rev")
        assert p.document(1).version == 0 and p.document(1).status == "todo"  # nothing saved
        v = merge(p, 1, 0, [("DSE", 1, 2), ("ESE", 3, 5), ("DSE", 7, 8)], ["ann", "ben"], "rev")
        final = p.document(1)
        assert final.status == "done" and final.annotator == "rev"
        assert final.review["method"] == "merged" and final.review["reviewer"] == "rev"
        assert final.review["annotators"] == ["ann", "ben"]
        assert [(s.type, s.tok_start, s.source, s.annotator, json.loads(s.origin)) for s in final.spans] == [
            ("DSE", 1, "model", None, ["ann", "ben"]),
            ("ESE", 3, "human", "ann", ["ann"]),
            ("DSE", 7, "human", "ben", ["ben"]),
        ]
        rec = record(final, p.types)
        assert rec["review"]["method"] == "merged" and rec["status"] == "done"
        assert [(sp["text"], sp["source"], sp["annotators"]) for sp in rec["spans"]] == [
            ("said", "model", ["ann", "ben"]),
            ("was awful", "human", ["ann"]),
            ("left", "human", ["ben"]),
        ]
        assert stats(p)["team"] == {"documents": 2, "awaiting_review": 0, "reviewed": 1}
        # undo takes the review back; accepting ben's copy instead
        v = p.undo(1, v, "rev")
        assert p.document(1).review is None and p.document(1).status == "todo"
        assert [s.source for s in p.document(1).spans] == ["model"]
        v = accept_copy(p, 1, v, "ben", ["ann", "ben"], "rev")
        final = p.document(1)
        assert final.review["method"] == "accepted ben"
        assert [(s.type, s.tok_start, s.tok_end, json.loads(s.origin)) for s in final.spans] == [
            ("DSE", 1, 2, ["ben", "ann"]),
            ("ESE", 4, 5, ["ben"]),
            ("DSE", 7, 8, ["ben"]),
        ]
        # the reviewer may still correct the final version as any document
        v = p.delete_span(1, v, final.spans[2].id, "rev")
        # a reviewed document leaves the queue of an annotator whose copy was not finished
        p.db.execute("UPDATE documents SET overlap = 3 WHERE id = 1")
        with pytest.raises(ProjectError, match="already reviewed"):
            p.claim(1, "cy")
        p.db.execute("INSERT INTO copies (doc_id, owner, created, updated) VALUES (1, 'cy', 't', 't')")  # made before
        assert [d.name for d in p.work_list("cy")] == ["t2", "s3"]
        assert [(d.name, d.status) for d in p.work_list("ann")][0] == ("t1", "done")  # a finished copy stays listed
        assert export(p, "jsonl", tmp_path / "out.jsonl", UNREJECTED) == 3
        assert export(p, "conll", tmp_path / "out.conll", ("done",)) == 1
        assert export(p, "brat", tmp_path / "brat", ("done",)) == 1
    recs = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [(r["id"], r["status"], "review" in r) for r in recs] == [
        ("t1", "done", True),
        ("t2", "todo", False),
        ("s3", "todo", False),
    ]
    assert [s["text"] for s in recs[0]["spans"]] == ["said", "awful"]
    assert "# review = accepted ben by rev (copies of ann, ben)" in (tmp_path / "out.conll").read_text()
    assert "in the copies of ben, ann" in (tmp_path / "brat" / "t1.ann").read_text()
    assert list(accepted_documents(path)) == ["t1"]  # training reads the reviewed version


def test_a_reviewed_documents_review_starts_from_its_final_version(tmp_path):
    with _team(tmp_path / "p.sqlite") as p:
        _annotated(p)
        pair = ["ann", "ben"]
        cands = candidates(p, 1, pair)
        assert ticked(cands, pair, reviewed=False) == {("DSE", 1, 2)}  # those both made
        assert all(c.final is None for c in cands) and dropped(p, 1, []) == []  # not reviewed: nothing to lose
        v = merge(p, 1, 0, [("DSE", 1, 2), ("ESE", 4, 5)], pair, "rev")
        # corrections in the final version: a span of the reviewer's own, a polarity
        v = p.add_span(1, v, "ESE", 0, 1, "rev")  # "Ann"
        said = p.document(1).spans[1]
        v = p.set_attributes(1, v, said.id, "rev", polarity="both")
        cands = candidates(p, 1, pair)
        assert [(c.key, c.by, c.final is not None) for c in cands] == [
            (("ESE", 0, 1), [], True),  # the final version's alone
            (("DSE", 1, 2), ["ann", "ben"], True),
            (("ESE", 3, 5), ["ann"], False),
            (("ESE", 4, 5), ["ben"], True),
            (("DSE", 7, 8), ["ben"], False),
        ]
        assert ticked(cands, pair, reviewed=True) == {("ESE", 0, 1), ("DSE", 1, 2), ("ESE", 4, 5)}
        assert cands[1].frame_text() == "" and cands[0].text == "Ann"
        # what a review would remove from the final version
        assert dropped(p, 1, [("DSE", 1, 2), ("ESE", 4, 5), ("DSE", 7, 8)]) == ["ESE “Ann”"]
        assert dropped(p, 1, copy_keys(p, 1, "ann")) == ["ESE “Ann”", "ESE “awful”"]
        # merging again: the spans the final version has stay as it has them; a new one comes from the copies
        v = merge(p, 1, v, [("ESE", 0, 1), ("DSE", 1, 2), ("ESE", 4, 5), ("DSE", 7, 8)], pair, "rev")
        spans = p.document(1).spans
        assert [(s.key, s.source, s.annotator, s.polarity) for s in spans] == [
            (("ESE", 0, 1), "human", "rev", None),
            (("DSE", 1, 2), "model", None, "both"),
            (("ESE", 4, 5), "human", "ben", None),
            (("DSE", 7, 8), "human", "ben", None),
        ]
        assert [json.loads(s.origin) if s.origin else None for s in spans] == [None, pair, ["ben"], ["ben"]]


def test_the_command_line_imports_with_an_overlap_and_reports_agreement(tmp_path, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text(TEXT, encoding="utf-8")
    (docs / "b.txt").write_text("Rain fell. We were glad.", encoding="utf-8")
    path = tmp_path / "p.sqlite"
    assert main(["annotate", "import", str(path), str(docs), "--model", "none", "--overlap", "2"]) == 0
    with pytest.raises(SystemExit) as exit_:
        main(["annotate", "import", str(path), str(docs), "--model", "none", "--overlap", "0"])
    assert exit_.value.code == 2 and "--overlap: '0': a number of annotators" in capsys.readouterr().err
    with Project(path) as p:
        assert [(d.name, d.overlap) for d in p.documents()] == [("a.txt", 2), ("b.txt", 2)]
        for who, span in (("ann", (1, 2)), ("ben", (1, 3))):
            p.claim(1, who)
            v = p.add_span(1, 0, "DSE", *span, who, layer=who)
            p.set_status(1, v, "done", who, layer=who)
    assert main(["annotate", "stats", str(path), "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    dse = next(r for r in s["agreement"] if r["type"] == "DSE")
    assert (
        dse["annotators"] == ["ann", "ben"]
        and dse["binary_f1"] == 1.0
        and dse["proportional_f1"] == pytest.approx(2 / 3)
    )  # ann "said" inside ben's "said it": P 1, R 1/2
    assert s["team"] == {"documents": 2, "awaiting_review": 1, "reviewed": 0}
    assert main(["annotate", "stats", str(path)]) == 0
    out = capsys.readouterr().out
    assert "team: 2 documents with an overlap, 1 awaiting review, 0 reviewed" in out
    assert "  ann / ben  DSE  1  100.0  66.7" in out


# --------------------------------------------------------------------------- a project written at schema 2
def test_a_project_written_at_schema_version_2_opens_and_joins_the_team(tmp_path):
    path = tmp_path / "v2.sqlite"
    db = sqlite3.connect(path)
    db.executescript((DATA / "project-v2.sql").read_text(encoding="utf-8"))
    db.close()
    with Project(path) as p:
        assert p.schema_version() == SCHEMA_VERSION == 5 and p.check() == "ok"
        assert [(d.name, d.status, d.version, d.spans, d.overlap) for d in p.documents()] == [
            ("harbour.txt", "done", 4, 2, 0),
            ("sub/rain.txt", "rejected", 1, 0, 0),
        ]
        doc = p.document(1)
        assert [
            (
                s.type,
                p.document(1).text[doc.span_chars(s)[0] : doc.span_chars(s)[1]],
                s.annotator,
                s.intensity,
                s.polarity,
                s.origin,
            )
            for s in doc.spans
        ] == [("DSE", "said", "ana", "medium", "neutral", None), ("ESE", "triumph", "ana", None, None, None)]
        assert doc.review is None and p.copies() == []
        assert [h["action"] for h in p.history(1)] == ["add DSE", "attributes", "add ESE", "status done"]
        v = p.undo(1, 4, "ana")  # history written at version 2 is undone at version 3
        assert p.document(1).status == "in_progress"
        p.undo(1, v, "ana")
        assert [s.type for s in p.document(1).spans] == ["DSE"]
        # the migrated project takes documents with an overlap
        p.add_documents([("new.txt", TEXT, _tokens(), [], None)], overlap=2)
        assert p.claim(3, "ana") and [d.name for d in p.work_list("ana")] == ["harbour.txt", "sub/rain.txt", "new.txt"]
    with Project(path) as p:  # opened again: nothing to migrate
        assert p.schema_version() == 5


def test_undo_after_a_span_id_was_used_again_elsewhere(tmp_path):
    """SQLite gives a new row the highest id + 1: after the newest span is deleted its id goes to the next
    span made, in any document; undoing the deletion must not reuse the old id (it failed with
    sqlite3.IntegrityError before)."""
    with _team(tmp_path / "p.sqlite") as p:
        newest = max(s.id for d in (1, 2, 3) for s in p.document(d).spans)
        v = p.delete_span(3, 0, newest, "ann")
        p.add_span(2, 0, "ESE", 0, 1, None)
        assert newest in [s.id for s in p.document(2).spans]  # the id went to the new span
        p.undo(3, v, "ann")
        assert [(s.type, s.tok_start, s.source) for s in p.document(3).spans] == [("DSE", 1, "model")]
        assert len({s.id for d in (1, 2, 3) for s in p.document(d).spans}) == 4
