"""The annotator page for a team with Streamlit's AppTest: a name chosen once per
browser session, annotators' own copies of documents with an overlap, the review (two copies
side by side, merge or accept one), the agreement table."""

import json

import pytest
from pages import APP, TEXTS
from streamlit.testing.v1 import AppTest

from opinion_tagger.annotation.importing import import_records
from opinion_tagger.annotation.page.login import CHOSEN
from opinion_tagger.annotation.store import Project
from opinion_tagger.tagging.inputs import Record

# no_login: tests/conftest.py; integration: Streamlit runs each page whole, seconds a test
pytestmark = [pytest.mark.usefixtures("no_login"), pytest.mark.integration]


@pytest.fixture
def project_path(tmp_path):
    """t0 and t1 with an overlap of 2, s2 shared."""
    path = tmp_path / "projects" / "team.sqlite"
    with Project(path, create=True) as p:
        import_records(p, [Record(f"t{k}", t) for k, t in enumerate(TEXTS[:2])], overlap=2)
        import_records(p, [Record("s2", TEXTS[2])])
    return path


def _app(monkeypatch, project_path, name=None) -> AppTest:
    monkeypatch.setenv("OPINION_TAGGER_PROJECT", str(project_path))
    at = AppTest.from_file(APP, default_timeout=120)
    if name:
        at.session_state[CHOSEN] = name
    at.run()
    assert not at.exception
    return at


def _button(at, label):
    return next(b for b in [*at.button, *at.sidebar.button] if b.label == label)


def _review_box(at):
    """The list of documents to review (its key changes with the labels: found by its label)."""
    return next(s for s in at.selectbox if s.label == "Document to review")


def _submit(at, label):
    return next(b for b in at.get("button") if b.proto.label == label)


def test_a_loopback_session_chooses_its_annotator_once(monkeypatch, project_path):
    at = _app(monkeypatch, project_path)
    assert not at.selectbox and at.text_input(key="who_name")  # the name first
    _button(at, "Start annotating").click().run()
    assert any("your name" in e.value for e in at.error) and not at.selectbox
    at.text_input(key="who_name").input("  Ana López ")
    _button(at, "Start annotating").click().run()
    assert not at.exception and at.selectbox[0].value == 1
    assert any("Ana López" in m.value for m in at.sidebar.markdown)
    assert "who_name" not in [t.key for t in at.text_input]  # asked once: not again on the next runs
    _button(at, "Next (n)").click().run()
    _button(at, "Accept (a)").click().run()  # t1: her copy is accepted
    with Project(project_path) as p:
        assert p.copies(2) == [(2, "Ana López", "done", 1)]
        assert p.history(2, "Ana López")[0]["annotator"] == "Ana López"
        assert p.document(2).status == "todo"  # the final version waits for the review
        assert p.annotators() == ["Ana López"]
    _button(at, "Change annotator").click().run()
    assert at.text_input(key="who_name") and any("Ana López" in c.value for c in at.caption)


def test_two_annotators_copies_then_a_third_is_not_let_in(monkeypatch, project_path):
    ann = _app(monkeypatch, project_path, "ann")
    assert ann.selectbox[0].value == 1
    assert ann.selectbox[0].options[0] == "1. t0 — ○ to do (0 spans · your copy)"
    with Project(project_path) as p:
        assert p.copies(1) == []  # opening a document makes no copy: the first change does
        p.claim(1, "ann")
        p.add_span(1, 0, "DSE", 1, 2, "ann", layer="ann")  # said
    ann.run()
    _button(ann, "Accept (a)").click().run()
    assert ann.selectbox[0].value == 2  # t1 opened, not claimed
    ben = _app(monkeypatch, project_path, "ben")
    with Project(project_path) as p:
        p.claim(1, "ben")
        v = p.add_span(1, 0, "DSE", 1, 2, "ben", layer="ben")
        p.add_span(1, v, "ESE", 6, 9, "ben", layer="ben")  # a complete disaster
    ben.run()
    _button(ben, "Accept (a)").click().run()
    assert not ben.exception and ben.selectbox[0].value == 2  # next: t1
    cy = _app(monkeypatch, project_path, "cy")
    assert [o.split(" — ")[0] for o in cy.selectbox[0].options] == ["1. t1", "2. s2"]  # t0 has its two
    with Project(project_path) as p:
        assert [(o, s) for _, o, s, _ in p.copies(1)] == [("ann", "done"), ("ben", "done")]
        assert p.document(1).spans == []


def test_review_side_by_side_merge_agreement_and_reject(monkeypatch, project_path):
    with Project(project_path) as p:
        for who, spans in (("ann", [("DSE", 1, 2), ("ESE", 7, 9)]), ("ben", [("DSE", 1, 2), ("ESE", 6, 9)])):
            p.claim(1, who)
            v = 0
            for span in spans:
                v = p.add_span(1, v, *span, who, layer=who)
            p.set_status(1, v, "done", who, layer=who)
        for who in ("ann", "ben"):  # t1: both accept the copy as it is
            p.claim(2, who)
            p.set_status(2, 0, "done", who, layer=who)
    at = _app(monkeypatch, project_path, "rev")
    at.sidebar.radio(key="mode").set_value("review").run()
    assert not at.exception
    assert at.title[0].value.startswith("Reviewing")
    assert _review_box(at).value == 1
    assert [m.value for m in at.markdown if m.value.startswith("**ann**") or m.value.startswith("**ben**")] == [
        "**ann** · ● done · 2 spans",
        "**ben** · ● done · 2 spans",
    ]
    html = [h.proto.body for h in at.get("html")]
    assert any('<mark class="ese"' in h and "complete disaster" in h for h in html)
    boxes = [(c.label.replace("\\", ""), c.value) for c in at.checkbox if c.key and c.key.startswith("keep_")]
    assert boxes == [
        ("DSE “said” — ann, ben", True),
        ("ESE “a complete disaster” — ben", False),
        ("ESE “complete disaster” — ann", False),
    ]
    # the agreement table: ESE 'complete disaster' inside 'a complete disaster'
    table = at.table[0].value
    assert list(table["annotators"]) == ["ann / ben", "ann / ben"] and list(table["type"]) == ["DSE", "ESE"]
    assert list(table["binary F1"]) == ["100.0", "100.0"] and list(table["proportional F1"]) == ["100.0", "80.0"]
    # ESE kappa over the 18 tokens of t0 and t1: 17 alike; ann 2 in an ESE, ben 3: p_e = (2*3 + 16*15) / 18^2
    assert list(table["kappa"]) == ["1.000", f"{(17 / 18 - 246 / 324) / (1 - 246 / 324):.3f}"] == ["1.000", "0.769"]
    keep = lambda words: next(c for c in at.checkbox if c.key and c.key.startswith("keep_") and words in c.label)
    keep("a complete").check()
    keep("“complete disaster” — ann").check()  # ann's ESE too: two overlapping ESE spans, refused naming their words
    _submit(at, "Merge the ticked spans").click().run()
    assert not at.exception
    refused = [w.value.replace("\\", "") for w in at.warning]
    assert any("two ESE spans overlap (“a complete disaster” and “complete disaster”)" in w for w in refused), refused
    assert _review_box(at).value == 1  # nothing saved: still on t0
    keep("“complete disaster” — ann").uncheck()
    _submit(at, "Merge the ticked spans").click().run()
    assert not at.exception and any("Merged 2 spans" in s.value for s in at.success)
    with Project(project_path) as p:
        final = p.document(1)
        assert final.status == "done" and final.review["method"] == "merged" and final.review["reviewer"] == "rev"
        assert [(s.type, s.tok_start, s.tok_end, json.loads(s.origin)) for s in final.spans] == [
            ("DSE", 1, 2, ["ann", "ben"]),
            ("ESE", 6, 9, ["ben"]),
        ]
    # the page stays on t0, reviewed, its final version in the editor; Next to review goes on to t1
    assert _review_box(at).value == 1
    assert _review_box(at).options == [
        "t0 — ● reviewed (ann: accepted, ben: accepted)",
        "t1 — ○ to review (ann: accepted, ben: accepted)",
    ]
    _button(at, "Next to review (n)").click().run()
    assert not at.exception and _review_box(at).value == 2
    assert not at.get("bidi_component")  # not reviewed: no editor, and the buttons name no key
    _button(at, "Reject").click().run()  # the reviewer rejects t1
    assert not at.exception
    with Project(project_path) as p:
        assert p.document(2).status == "rejected" and p.counts()["rejected"] == 1
    assert "1 of 2 reviewed** · 0 in progress · 0 to do · 1 rejected" in at.main.get("progress")[0].proto.text
    assert _review_box(at).options[1] == "t1 — ✕ rejected (ann: accepted, ben: accepted)"
    assert any("Every document ready for review is reviewed." in i.value for i in at.info)


def test_review_accept_one_annotators_version(monkeypatch, project_path):
    with Project(project_path) as p:
        for who in ("ann", "ben"):
            p.claim(1, who)
        v = p.add_span(1, 0, "ESE", 6, 9, "ben", layer="ben")
        p.set_status(1, v, "done", "ben", layer="ben")
        p.set_status(1, 0, "rejected", "ann", layer="ann")  # ann thought it not worth annotating
    at = _app(monkeypatch, project_path, "rev")
    at.sidebar.radio(key="mode").set_value("review").run()
    assert "ann: rejected" in _review_box(at).options[0]
    _submit(at, "Accept ben's version").click().run()
    assert not at.exception
    with Project(project_path) as p:
        final = p.document(1)
        assert final.review["method"] == "accepted ben" and [s.tok_start for s in final.spans] == [6]
    _button(at, "Undo (u)").click().run()  # the review undone
    with Project(project_path) as p:
        assert p.document(1).review is None and p.document(1).status == "todo"


def test_only_the_reviewers_named_see_the_review(monkeypatch, project_path):
    monkeypatch.setenv("OPINION_TAGGER_REVIEWERS", json.dumps(["rita"]))  # annotate serve --reviewers rita
    ann = _app(monkeypatch, project_path, "ann")
    assert [r.key for r in ann.sidebar.radio] == ["order"] and ann.title[0].value.startswith("Annotating")
    rita = _app(monkeypatch, project_path, "rita")
    assert [r.key for r in rita.sidebar.radio] == ["mode", "order"]
    rita.sidebar.radio(key="mode").set_value("review").run()
    assert not rita.exception and rita.title[0].value.startswith("Reviewing")
    monkeypatch.delenv("OPINION_TAGGER_REVIEWERS")  # without the option everyone may review
    assert [r.key for r in _app(monkeypatch, project_path, "ann").sidebar.radio] == ["mode", "order"]


def test_import_with_an_overlap_in_the_page(monkeypatch, tmp_path):
    path = tmp_path / "projects" / "new.sqlite"
    Project(path, create=True).close()
    at = _app(monkeypatch, path, "lead")
    assert [r.key for r in at.sidebar.radio] == ["order"]  # no document with an overlap: no review mode
    at.text_area(key="paste").input("The committee praised the plan warmly.")
    at.number_input(key="overlap").set_value(2)
    _button(at, "Import").click().run()
    assert not at.exception
    with Project(path) as p:
        assert [(d.name, d.overlap) for d in p.documents()] == [("pasted-1", 2)]
    assert [r.key for r in at.sidebar.radio] == ["mode", "order"]
    _button(at, "Undo (u)").click().run()  # nothing changed in a copy not made yet
    assert any("nothing to undo" in w.value for w in at.warning)
    with Project(path) as p:
        assert p.copies() == []


def test_a_review_on_a_stale_tab_is_refused(monkeypatch, project_path):
    with Project(project_path) as p:
        for who in ("ann", "ben"):
            p.claim(1, who)
            v = p.add_span(1, 0, "DSE", 1, 2, who, layer=who)
            p.set_status(1, v, "done", who, layer=who)
    at = _app(monkeypatch, project_path, "rev")
    at.sidebar.radio(key="mode").set_value("review").run()
    with Project(project_path) as other:  # another reviewer's tab accepts ann's version meanwhile
        other.set_status(1, 0, "rejected", "rita")
    _submit(at, "Accept ben's version").click().run()
    assert not at.exception and any("rita saved version 1" in w.value for w in at.warning)
    with Project(project_path) as p:
        assert p.document(1).status == "rejected" and p.document(1).review is None


def _ready(project_path):
    """t0 finished by ann (DSE "said", ESE "complete disaster") and ben (DSE "said", ESE "a complete disaster")."""
    with Project(project_path) as p:
        for who, spans in (("ann", [("DSE", 1, 2), ("ESE", 7, 9)]), ("ben", [("DSE", 1, 2), ("ESE", 6, 9)])):
            p.claim(1, who)
            v = 0
            for span in spans:
                v = p.add_span(1, v, *span, who, layer=who)
            p.set_status(1, v, "done", who, layer=who)


def _ticks(at) -> list[tuple[str, bool]]:
    """The review's checkboxes: their labels up to the frame values, and whether ticked."""
    return [
        (c.label.replace("\\", "").split(" · ")[0], c.value) for c in at.checkbox if (c.key or "").startswith("keep_")
    ]


def test_before_a_review_the_final_version_is_not_shown_as_if_it_were_one(monkeypatch, project_path):
    _ready(project_path)
    at = _app(monkeypatch, project_path, "rev")
    at.sidebar.radio(key="mode").set_value("review").run()
    assert any("Not reviewed yet" in i.value for i in at.info)
    assert not at.get("bidi_component")  # no editor of the model's version
    _submit(at, "Merge the ticked spans").click().run()
    assert not at.exception and at.get("bidi_component") and not any("Not reviewed yet" in i.value for i in at.info)


def test_a_reviewed_document_starts_from_its_final_version_and_a_merge_asks_before_removing(monkeypatch, project_path):
    _ready(project_path)
    at = _app(monkeypatch, project_path, "rev")
    at.sidebar.radio(key="mode").set_value("review").run()
    assert _ticks(at) == [
        ("DSE “said” — ann, ben", True),
        ("ESE “a complete disaster” — ben", False),
        ("ESE “complete disaster” — ann", False),
    ]
    next(c for c in at.checkbox if (c.key or "").startswith("keep_") and "a complete" in c.label).check()
    _submit(at, "Merge the ticked spans").click().run()
    with Project(project_path) as p:  # then the reviewer corrects the final version: a span of theirs, a value
        final = p.document(1)
        v = p.add_span(1, final.version, "DSE", 4, 5, "rev")  # "bridge"
        v = p.set_attributes(1, v, final.spans[0].id, "rev", polarity="negative")
    # the document opened again in another session: the ticks are the final version's own
    at = _app(monkeypatch, project_path, "rev")
    at.sidebar.radio(key="mode").set_value("review").run()
    assert _review_box(at).value == 1
    assert _ticks(at) == [
        ("DSE “said” — ann, ben", True),
        ("DSE “bridge” — the final version alone", True),
        ("ESE “a complete disaster” — ben", True),
        ("ESE “complete disaster” — ann", False),
    ]
    # a merge as ticked keeps the final version as it is, the reviewer's correction too: no question
    _submit(at, "Merge the ticked spans").click().run()
    assert not at.exception and any("Merged 3 spans" in s.value for s in at.success)
    with Project(project_path) as p:
        final = p.document(1)
        assert [(s.key, s.polarity, s.polarity_source) for s in final.spans] == [
            (("DSE", 1, 2), "negative", "human"),
            (("DSE", 4, 5), None, None),
            (("ESE", 6, 9), None, None),
        ]
        version = final.version
    # unticking a span of the final version: the merge asks first, and saves nothing until told to
    next(c for c in at.checkbox if (c.key or "").startswith("keep_") and "bridge" in c.label).uncheck()
    _submit(at, "Merge the ticked spans").click().run()
    asked = [w.value.replace("\\", "") for w in at.warning]
    assert asked == ["Merging the ticked spans removes 1 span of the final version: DSE “bridge”. Go on?"]
    with Project(project_path) as p:
        assert p.document(1).version == version
    _button(at, "Keep the final version as it is").click().run()
    assert not at.warning and any("Nothing changed" in i.value for i in at.info)
    with Project(project_path) as p:
        assert p.document(1).version == version
    _submit(at, "Merge the ticked spans").click().run()  # (the box is still unticked)
    _button(at, "Merge, removing them").click().run()
    assert not at.exception and any("Merged 2 spans" in s.value for s in at.success)
    with Project(project_path) as p:
        assert [s.key for s in p.document(1).spans] == [("DSE", 1, 2), ("ESE", 6, 9)]
    assert _review_box(at).value == 1  # still on the document reviewed
    # accepting a version that lacks spans of the final version asks too
    _submit(at, "Accept ann's version").click().run()
    assert [w.value.replace("\\", "") for w in at.warning] == [
        "Accepting ann's version removes 1 span of the final version: ESE “a complete disaster”. Go on?"
    ]
    _button(at, "Accept, removing them").click().run()
    with Project(project_path) as p:
        assert [s.key for s in p.document(1).spans] == [("DSE", 1, 2), ("ESE", 7, 9)]
        assert p.document(1).review["method"] == "accepted ann"
