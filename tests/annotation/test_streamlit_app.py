"""The annotator page's flows with Streamlit's AppTest (no browser), and the editor's
edits as the page saves them (``apply_event``)."""

from pathlib import Path

import pytest
from pages import APP, TEXTS
from streamlit.testing.v1 import AppTest

from opinion_tagger.annotation.editor import apply_event, editor_data
from opinion_tagger.annotation.importing import import_records
from opinion_tagger.annotation.page.login import CHOSEN
from opinion_tagger.annotation.store import ConflictError, Project, ProjectError
from opinion_tagger.paths import DEFAULT_NAME, bundled_models
from opinion_tagger.tagging.inputs import Record

# no_login: tests/conftest.py; integration: Streamlit runs each page whole, seconds a test
pytestmark = [pytest.mark.usefixtures("no_login"), pytest.mark.integration]


@pytest.fixture
def project_path(tmp_path):
    path = tmp_path / "projects" / "demo.sqlite"
    with Project(path, create=True) as p:
        import_records(p, [Record(f"doc{k}", t) for k, t in enumerate(TEXTS[:3])])
        first = p.documents()[0]
        p.set_status(first.id, 0, "done", "someone")
    return path


def _app(monkeypatch, project_path) -> AppTest:
    monkeypatch.setenv("OPINION_TAGGER_PROJECT", str(project_path))
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state[CHOSEN] = "tester"  # the name this browser session chose (test_streamlit_review.py)
    at.run()
    assert not at.exception
    return at


def _text(at) -> str:
    return "\n".join(str(getattr(e, "value", "")) for e in at.main)


def _shown(at) -> str:
    """Everything the page sent, the editor's data included."""
    out, todo = [], [at._tree]
    while todo:
        node = todo.pop()
        out.append(str(getattr(node, "proto", "")))
        todo.extend(getattr(node, "children", {}).values())
    return "\n".join(out)


def _button(at, label):
    return next(b for b in at.button if b.label == label)


def test_progress_status_and_next_unfinished(monkeypatch, project_path):
    at = _app(monkeypatch, project_path)
    assert "1 of 3 done" in at.main.get("progress")[0].proto.text
    pick = at.selectbox[0]
    assert pick.value == 2  # the first unfinished document is shown
    assert pick.options == ["1. doc0 — ● done (0 spans)", "2. doc1 — ○ to do (0 spans)", "3. doc2 — ○ to do (0 spans)"]
    _button(at, "Next (n)").click().run()
    assert at.selectbox[0].value == 3
    _button(at, "Accept (a)").click().run()  # accept doc2, then go to the next unfinished: doc1
    assert not at.exception
    assert "Accepted\\." in [s.value for s in at.success]  # markdown-escaped
    assert "2 of 3 done" in at.main.get("progress")[0].proto.text
    assert at.selectbox[0].value == 2
    _button(at, "Undo (u)").click().run()  # nothing was done to doc1
    assert any("nothing to undo" in w.value for w in at.warning)


def _top(at):
    """The page's top-level elements in order, the work area's among them (a fragment: a block of its own)."""
    for node in at.main.children.values():
        if getattr(node, "type", "") == "flex_container" and not str(getattr(node.proto, "id", "")):
            yield from node.children.values()
        else:
            yield node


def _layout(at) -> list[str]:
    """The page's top-level elements in order; the messages' slot as "messages HEIGHT"."""
    out = []
    for node in _top(at):
        proto = getattr(node, "proto", None)
        if str(getattr(proto, "id", "")).endswith("-messages"):
            out.append(f"messages {proto.height_config.pixel_height}")
        else:
            out.append(getattr(node, "type", type(node).__name__))
    return out


def _messages(at) -> list[str]:
    slot = next(n for n in _top(at) if str(getattr(n.proto, "id", "")).endswith("-messages"))
    return [str(e.value) for e in slot.children.values()]


def test_messages_have_a_fixed_place_so_the_text_never_moves(monkeypatch, project_path):
    at = _app(monkeypatch, project_path)
    before = _layout(at)
    assert before[0] == "title" and before[2] == "progress" and "bidi_component" in before
    assert before[1].startswith("messages ") and int(before[1].split()[1]) >= 60  # a fixed height: one message
    assert _messages(at) == []
    _button(at, "Next (n)").click().run()
    _button(at, "Accept (a)").click().run()
    assert _messages(at) == ["Accepted\\."]  # in the slot, not above it
    assert _layout(at) == before
    _button(at, "Undo (u)").click().run()
    assert any("nothing to undo" in m for m in _messages(at)) and _layout(at) == before


def test_document_and_span_lists_show_a_dash_not_none(monkeypatch, project_path):
    with Project(project_path) as p:
        p.add_span(2, 0, "DSE", 1, 2, None)
    at = _app(monkeypatch, project_path)
    assert not [d for d in at.dataframe if "document" in d.value.columns]  # drawn only while open
    at.session_state["exp_docs"] = True  # the All documents expander opened
    at.run()
    docs = next(d.value for d in at.dataframe if "document" in d.value.columns)
    assert list(docs["annotator"]) == ["someone", "—", "—"]
    assert not docs.isna().any().any() and "None" not in docs.astype(str).to_numpy()
    spans = next(t.value for t in at.table if "confidence" in t.value.columns)  # Spans of this document
    assert list(spans["by"]) == ["—"] and not spans[["by", "at"]].isna().any().any()
    assert "None" not in spans.astype(str).to_numpy()


def test_editor_data_gives_each_type_its_own_mark():
    from opinion_tagger.tagging.formats import COLORS, LINE_COLORS

    doc = type("Doc", (), {"id": 1, "version": 0, "text": "x", "tokens": [], "spans": []})()
    data = editor_data(doc, ("DSE", "ESE"), 0.5)
    assert data["colors"] == COLORS and data["lines"] == LINE_COLORS  # background / underline
    js = (Path(__file__).resolve().parents[2] / "opinion_tagger" / "annotation" / "static" / "editor.js").read_text()
    assert "linear-gradient" not in js  # no mixed colour for a word in two spans


def test_a_stale_tab_does_not_overwrite(monkeypatch, project_path):
    at = _app(monkeypatch, project_path)  # this tab shows doc1 at version 0
    with Project(project_path) as other:  # another tab adds a span meanwhile
        other.add_span(2, 0, "ESE", 0, 1, "other-tab")
    _button(at, "Accept (a)").click().run()
    shown = [w.value.replace("\\", "") for w in at.warning]  # Markdown escapes removed
    assert any(w.startswith("Not saved") and "other-tab saved version 1 (add ESE" in w for w in shown)
    with Project(project_path) as p:
        assert p.document(2).status == "in_progress"
    _button(at, "Accept (a)").click().run()  # now the tab has seen version 1: accepted
    with Project(project_path) as p:
        assert p.document(2).status == "done"


def test_import_bad_uploads_are_messages(monkeypatch, project_path):
    at = _app(monkeypatch, project_path)
    at.text_area(key="paste").input("The <b>mayor</b> [clicked](http://x) praised *everyone*.")
    at.file_uploader(key="uploads").set_value(
        [
            ("latin.txt", "caf\xe9".encode("latin-1"), "text/plain"),
            ("batch.jsonl", b'{"id": "j1", "text": "Rain again."}\nnot json\n{"text": 5}\n', "application/jsonl"),
            ("nul.txt", b"\x00\x01binary", "text/plain"),
        ]
    )
    at.file_uploader(key="folder").set_value([("dir/a.txt", b"A town in a story.", "text/plain")])
    _button(at, "Import").click().run()
    assert not at.exception
    warnings = [w.value.replace("\\", "") for w in at.warning]  # shown with markdown escaped
    assert any("latin.txt" in w and "UTF-8" in w for w in warnings)
    assert any("batch.jsonl:2" in w and "invalid JSON" in w for w in warnings)
    assert any("nul.txt" in w and "binary" in w for w in warnings)
    assert any("imported 3 documents" in s.value for s in at.success)
    with Project(project_path) as p:
        names = [d.name for d in p.documents()]
    assert names[-3:] == ["pasted-1", "j1", "dir/a.txt"]


def test_export_and_scores(monkeypatch, project_path):
    models = project_path.parent / "models"  # annotate serve --models: a directory of bundles
    (models / "broken").mkdir(parents=True)
    (models / "broken" / "meta.json").write_text("{}", encoding="utf-8")
    (models / "not-a-bundle").mkdir()
    monkeypatch.setenv("OPINION_TAGGER_MODELS", str(models))
    at = _app(monkeypatch, project_path)
    box = at.sidebar.selectbox(key="model")  # every bundled model, the default first, then the directory's
    assert box.value == DEFAULT_NAME == "accurate"
    assert box.options == [f"{DEFAULT_NAME} (default)", *(n for n in bundled_models() if n != DEFAULT_NAME)] + [
        "broken (models/)"
    ]
    box.set_value(str(models / "broken")).run()
    _button(at, "Score broken on the accepted documents").click().run()
    assert not at.exception and any("broken" in i.value.replace("\\", "") for i in at.info)
    at.sidebar.selectbox(key="model").set_value(DEFAULT_NAME).run()
    assert [d.proto.label for d in at.get("download_button")] == ["JSONL", "CoNLL (IOB2)", "BRAT standoff (zip)"]
    _button(at, "Score accurate on the accepted documents").click().run()
    assert not at.exception
    table = at.dataframe[-1].value
    assert set(table["type"]) == {"DSE", "ESE"} and len(table) == 6


def test_projects_chosen_and_created_in_the_page(monkeypatch, tmp_path):
    monkeypatch.delenv("OPINION_TAGGER_PROJECT", raising=False)
    monkeypatch.setenv("OPINION_TAGGER_PROJECTS", str(tmp_path / "projects"))
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state[CHOSEN] = "tester"
    at.run()
    assert any("Choose or create a project" in i.value for i in at.info)
    at.sidebar.text_input[0].input("../escape")
    at.sidebar.button[0].click().run()
    assert any("letters, digits" in e.value for e in at.sidebar.error)
    assert not (tmp_path / "escape.sqlite").exists()
    at.sidebar.text_input[0].input("study-1")
    at.sidebar.button[0].click().run()
    assert not at.exception
    assert (tmp_path / "projects" / "study-1.sqlite").is_file()
    assert at.sidebar.selectbox[0].value == "study-1.sqlite"
    assert any("No documents yet" in i.value for i in at.info)


def test_editor_events_are_checked_then_saved(project_path):
    with Project(project_path) as p:
        data = editor_data(p.document(2), p.types, threshold=0.5)
        assert [t["start"] for t in data["tokens"][:3]] == [0, 5, 10] and data["version"] == 0
        out = apply_event(p, {"op": "add", "doc": 2, "version": 0, "type": "DSE", "start": 1, "end": 2}, "ann")
        assert out.message == "Saved DSE “fell”."
        span = p.document(2).spans[0]
        out = apply_event(p, {"op": "change", "doc": 2, "version": 1, "span": span.id, "end": 3}, "ann")
        assert [(s.tok_start, s.tok_end) for s in p.document(2).spans] == [(1, 3)]
        for bad in (
            None,
            "add",
            {"op": "drop"},
            {"op": "add", "doc": "2", "version": 2},
            {"op": "add", "doc": 2, "version": 2, "type": "<script>", "start": 0, "end": 1},
            {"op": "add", "doc": 2, "version": 2, "type": "ESE", "start": True, "end": 1},
            {"op": "add", "doc": 2, "version": 2, "type": "ESE", "start": 5, "end": 99},
            {"op": "delete", "doc": 2, "version": 2, "span": 10**9},
            {"op": "undo", "doc": 99, "version": 0},
        ):
            with pytest.raises(ProjectError):
                apply_event(p, bad, "ann")
        with pytest.raises(ConflictError):
            apply_event(p, {"op": "accept", "doc": 2, "version": 1}, "ann")
        assert p.document(2).version == 2
        out = apply_event(p, {"op": "accept", "doc": 2, "version": 2}, "ann")
        assert out.next_doc == 3 and p.document(2).status == "done"


def test_a_password_login_comes_before_any_project_data(monkeypatch, project_path):
    monkeypatch.setenv("OPINION_TAGGER_PASSWORD", "correct horse")
    at = _app(monkeypatch, project_path)
    shown = _shown(at)
    assert "Rain fell" not in shown and "doc1" not in shown and "demo" not in shown and not at.selectbox
    at.text_input(key="login_user").input("alice")
    at.text_input(key="login_password").input("correct hors")
    _button(at, "Log in").click().run()
    assert not at.exception and any("Wrong password" in e.value for e in at.error)
    assert "Rain fell" not in _shown(at) and not at.selectbox
    at.text_input(key="login_user").input(" ")
    at.text_input(key="login_password").input("correct horse")
    _button(at, "Log in").click().run()
    assert any("your name" in e.value for e in at.error) and "Rain fell" not in _shown(at)
    at.text_input(key="login_user").input("alice")
    _button(at, "Log in").click().run()
    assert not at.exception and "Rain fell on the village" in _shown(at)  # the first unfinished document
    assert "annotator" not in [t.key for t in at.sidebar.text_input]  # the name is the one logged in with
    _button(at, "Accept (a)").click().run()
    with Project(project_path) as p:
        assert p.document(2).status == "done" and p.document(2).annotator == "alice"
    _button(at, "Log out").click().run()
    assert "Rain fell" not in _shown(at) and at.text_input(key="login_password")


def test_a_fixed_annotator_records_every_change(monkeypatch, project_path):
    monkeypatch.delenv("OPINION_TAGGER_PASSWORD", raising=False)
    monkeypatch.setenv("OPINION_TAGGER_ANNOTATOR", "bob")
    at = _app(monkeypatch, project_path)
    assert "annotator" not in [t.key for t in at.sidebar.text_input]
    _button(at, "Accept (a)").click().run()
    with Project(project_path) as p:
        assert p.document(2).annotator == "bob"
