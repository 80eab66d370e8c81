"""The annotator page's team features with Streamlit's AppTest: reject,
search, the uncertainty queue and span attributes."""

from pathlib import Path

import pytest
from pages import APP, TEXTS
from streamlit.testing.v1 import AppTest

from opinion_tagger.annotation.editor import apply_event, editor_data
from opinion_tagger.annotation.importing import import_records
from opinion_tagger.annotation.page.login import CHOSEN
from opinion_tagger.annotation.store import Project
from opinion_tagger.tagging.inputs import Record

# no_login: tests/conftest.py; integration: Streamlit runs each page whole, seconds a test
pytestmark = [pytest.mark.usefixtures("no_login"), pytest.mark.integration]


@pytest.fixture
def project_path(tmp_path):
    """doc0 done; model spans: doc1 lowest 0.6, doc2 lowest 0.2, doc3 none."""
    path = tmp_path / "projects" / "demo.sqlite"
    with Project(path, create=True) as p:
        import_records(p, [Record(f"doc{k}", t) for k, t in enumerate(TEXTS)])
        p.set_status(1, 0, "done", "someone")
        p.db.executemany(
            "INSERT INTO spans (doc_id, type, tok_start, tok_end, source, score) VALUES (?, ?, ?, ?, 'model', ?)",
            [(2, "DSE", 1, 2, 0.9), (2, "ESE", 3, 4, 0.6), (3, "DSE", 2, 3, 0.2)],
        )
    return path


def _app(monkeypatch, project_path) -> AppTest:
    monkeypatch.setenv("OPINION_TAGGER_PROJECT", str(project_path))
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state[CHOSEN] = "tester"  # the name this browser session chose (test_streamlit_review.py)
    at.run()
    assert not at.exception
    return at


def _button(at, label):
    return next(b for b in [*at.button, *at.sidebar.button] if b.label == label)


def _progress(at) -> str:
    return at.main.get("progress")[0].proto.text


def test_reject_a_document_in_the_page(monkeypatch, project_path):
    at = _app(monkeypatch, project_path)
    assert at.selectbox[0].value == 2
    _button(at, "Reject (r)").click().run()
    assert not at.exception
    assert at.selectbox[0].value == 3  # the next unfinished one
    assert "1 rejected" in _progress(at) and "1 of 4 done" in _progress(at)
    assert at.selectbox[0].options[1] == "2. doc1 — ✕ rejected (2 spans)"
    with Project(project_path) as p:
        assert p.document(2).status == "rejected"
    exp = at.checkbox(key="export_rejected")
    assert exp.value is False


def test_find_documents_by_their_text_and_open_one(monkeypatch, project_path):
    at = _app(monkeypatch, project_path)
    at.sidebar.text_input(key="search").input("VILLAGE").run()
    assert not at.exception
    hits = [b.label for b in at.sidebar.button if b.key and b.key.startswith("hit_")]
    assert hits == ["doc1", "doc3"]
    assert any("<b>village</b>" in c.value.replace("\\", "") and "\\<b\\>" in c.value for c in at.sidebar.caption)
    _button(at, "doc3").click().run()
    assert not at.exception and at.selectbox[0].value == 4
    at.sidebar.text_input(key="search").input("50_").run()  # _ matches only itself
    assert any("No document contains it" in c.value for c in at.sidebar.caption)


def test_next_follows_the_order_chosen_in_the_sidebar(monkeypatch, project_path):
    at = _app(monkeypatch, project_path)
    assert any("import order" in c.value for c in at.sidebar.caption)
    _button(at, "Next (n)").click().run()
    assert at.selectbox[0].value == 3  # file order: doc1, doc2, doc3
    at.sidebar.radio(key="order").set_value("uncertainty").run()
    assert any("least confident model span first" in c.value for c in at.sidebar.caption)
    _button(at, "Next (n)").click().run()  # from doc2 (0.2): doc1 (0.6)
    assert at.selectbox[0].value == 2
    _button(at, "Next (n)").click().run()  # then doc3 (no model span)
    assert at.selectbox[0].value == 4
    _button(at, "Next (n)").click().run()  # round again to doc2
    assert at.selectbox[0].value == 3


def test_span_attributes_set_in_the_page(monkeypatch, project_path):
    at = _app(monkeypatch, project_path)  # doc1: DSE "fell" 0.9, ESE "the" 0.6
    at.selectbox(key="attr_span_2").select_index(1).run()
    next(s for s in at.selectbox if s.label == "Intensity").set_value("high")
    next(s for s in at.selectbox if s.label == "Polarity").set_value("negative")
    _button(at, "Set attributes").click().run()
    assert not at.exception
    with Project(project_path) as p:
        assert [(s.type, s.intensity, s.polarity) for s in p.document(2).spans] == [
            ("DSE", None, None),
            ("ESE", "high", "negative"),
        ]
    spans = next(t.value for t in at.table if "confidence" in t.value.columns)  # Spans of this document
    assert list(spans["intensity"]) == ["—", "high ✎"] and list(spans["polarity"]) == ["—", "negative ✎"]


def test_the_editor_keys_send_reject_and_attribute_edits(project_path):
    js = (Path(__file__).resolve().parents[2] / "opinion_tagger" / "annotation" / "static" / "editor.js").read_text()
    assert 'k === "r") return () => send({ op: "reject" })' in js and 'cycle("intensity", data.intensities)' in js
    with Project(project_path) as p:
        data = editor_data(p.document(2), p.types, 0.5)
        assert data["intensities"] == ["low", "medium", "high", "extreme", "neutral"]
        assert data["holders"] == ["writer", "implicit", "none"]
        assert data["polarities"] == ["positive", "negative", "neutral", "both"]
        span = data["spans"][0]
        assert (span["intensity"], span["polarity"]) == (None, None)
        # what the editor sends for i on a span without attributes, then p: the value the key steps, alone
        assert 'send({ op: "attributes", span: sp.id, [name]: next })' in js
        apply_event(p, {"op": "attributes", "doc": 2, "version": 0, "span": span["id"], "intensity": "low"}, "ann")
        apply_event(p, {"op": "attributes", "doc": 2, "version": 1, "span": span["id"], "polarity": "positive"}, "ann")
        span = editor_data(p.document(2), p.types, 0.5)["spans"][0]
        assert (span["intensity"], span["polarity"]) == ("low", "positive")
        assert [h["action"] for h in p.history(2)] == ["attributes", "attributes"]
