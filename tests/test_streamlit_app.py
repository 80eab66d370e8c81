"""The Streamlit page's flows with Streamlit's AppTest (no browser)."""

import json
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tagger.annotate import OpinionTagger

APP = str(Path(__file__).resolve().parent.parent / "streamlit_app.py")


@pytest.fixture
def app():
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception
    return at


def test_paste_and_tag_shows_escaped_highlights(app):
    assert app.sidebar.success, "the bundled model loads"
    text = "The minister fears the worst and criticized the <b>absurd</b> plan."
    app.text_area(key="text").input(text).run()
    app.button[0].click().run()
    assert not app.exception
    page = "\n".join(m.value for m in app.markdown)
    expected = OpinionTagger.load().tag(text).spans  # what the bundled model finds, through the library
    assert expected, "the bundled model finds opinion expressions here"
    assert page.count("<mark") == len(expected)
    assert "<b>" not in page and "</b>" not in page
    assert "&lt;b&gt;absurd&lt;/b&gt; plan." in re.sub(r"</?mark[^>]*>", "", page)
    table = app.data_editor[0].value
    assert list(table.columns) == ["sentence", "token", "start", "end", "DSE", "ESE"]
    assert "criticized" in list(table["token"])


def test_correction_changes_spans_and_export(app):
    app.text_area(key="text").input("Rain fell on Tuesday.").run()
    app.button[0].click().run()
    table = app.data_editor[0].value
    row = list(table["token"]).index("Tuesday")
    app.session_state["editor_0"] = {"edited_rows": {row: {"ESE": "B-ESE"}}, "added_rows": [],
                                     "deleted_rows": []}
    app.run()
    assert not app.exception
    spans = app.dataframe[-1].value
    assert ("ESE", "Tuesday") in set(zip(spans["type"], spans["text"]))
    doc = app.session_state["docs"][0]
    assert any(s["type"] == "ESE" and s["text"] == "Tuesday" and s["score"] == 1.0 for s in doc["spans"])
    assert json.loads(json.dumps(doc))["text"] == "Rain fell on Tuesday."


def test_upload_jsonl_with_bad_records(app):
    app.radio[0].set_value("Upload a file").run()
    data = b'{"id": "one", "text": "Officials said no."}\nnot json\n{"id": "two", "text": ""}\n'
    app.file_uploader[0].set_value(("batch.jsonl", data, "application/jsonl")).run()
    app.button[0].click().run()
    assert not app.exception
    warnings = [w.value for w in app.warning]
    assert any("batch.jsonl:2" in w and "invalid JSON" in w for w in warnings)
    assert any("two" in w and "empty text" in w for w in warnings)
    assert [d["id"] for d in app.session_state["docs"]] == ["one"]


def test_upload_non_utf8_text(app):
    app.radio[0].set_value("Upload a file").run()
    app.file_uploader[0].set_value(("latin.txt", "caf\xe9".encode("latin-1"), "text/plain")).run()
    app.button[0].click().run()
    assert any("UTF-8" in w.value for w in app.warning)


def test_bad_model_path_is_a_clear_error(app, tmp_path):
    app.sidebar.text_input[0].set_value(str(tmp_path / "nope")).run()
    assert any("model bundle not found" in e.value for e in app.sidebar.error)
    assert app.button[0].disabled
