"""*Spans of this document* with Streamlit's AppTest: the form that sets a span's intensity, polarity, holder, and
a DSE's attitude and targets starts at the span's own values and saves only what the user changed."""

import pytest
from pages import APP
from streamlit.testing.v1 import AppTest

from opinion_tagger.annotation.page.login import CHOSEN
from opinion_tagger.annotation.store import Project, StoredSpan, StoredTarget, StoredToken

# no_login: tests/conftest.py; integration: Streamlit runs each page whole, seconds a test
pytestmark = [pytest.mark.usefixtures("no_login"), pytest.mark.integration]

# invented sentence: "Maria said the plan was a disaster."
TEXT = "Maria said the plan was a disaster."
WORDS = [(0, 5), (6, 10), (11, 14), (15, 19), (20, 23), (24, 25), (26, 34), (34, 35)]


def _spans() -> list[StoredSpan]:
    """The model's: DSE "said" (medium 0.7, negative 0.8, holder "Maria" 0.6, attitude sentiment-neg 0.66, targets
    "the plan" 0.5 and "disaster" 0.4) and ESE "a disaster" (high 0.57, no polarity)."""
    said = StoredSpan(None, "DSE", 1, 2, "model", 0.9, intensity="medium", polarity="negative")
    said.intensity_source, said.intensity_score, said.polarity_source, said.polarity_score = "model", 0.7, "model", 0.8
    said.holder, said.holder_start, said.holder_end, said.holder_source, said.holder_score = "span", 0, 1, "model", 0.6
    said.attitude, said.attitude_source, said.attitude_score = "sentiment-neg", "model", 0.66
    said.targets, said.targets_source = (StoredTarget(2, 4, "model", 0.5), StoredTarget(6, 7, "model", 0.4)), "model"
    ese = StoredSpan(None, "ESE", 5, 7, "model", 0.85, intensity="high", intensity_source="model", intensity_score=0.57)
    return [said, ese]


@pytest.fixture
def project_path(tmp_path):
    path = tmp_path / "projects" / "spans.sqlite"
    with Project(path, create=True) as p:
        tokens = [StoredToken(k, 0, a, b) for k, (a, b) in enumerate(WORDS)]
        p.add_documents([("plan", TEXT, tokens, _spans(), "marker")])
    return path


def _app(monkeypatch, project_path) -> AppTest:
    monkeypatch.setenv("OPINION_TAGGER_PROJECT", str(project_path))
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state[CHOSEN] = "tester"
    at.run()
    assert not at.exception
    return at


def _box(at, label):
    return next(s for s in at.selectbox if s.label == label)


def _values(path) -> list[tuple]:
    """Per span: each value with its source and score."""
    with Project(path) as p:
        return [
            (
                (s.intensity, s.intensity_source, s.intensity_score),
                (s.polarity, s.polarity_source, s.polarity_score),
                (s.holder_value, s.holder_source, s.holder_score),
            )
            for s in p.document(1).spans
        ]


SAID, ESE = ("DSE", 1, 2), ("ESE", 5, 7)  # the form's choices of span: type and tokens
MODEL_VALUES = [
    (("medium", "model", 0.7), ("negative", "model", 0.8), ((0, 1), "model", 0.6)),
    (("high", "model", 0.57), (None, None, None), (None, None, None)),
]


def test_the_table_shows_each_value_with_its_source(monkeypatch, project_path):
    with Project(project_path) as p:
        p.set_attributes(1, 0, p.document(1).spans[1].id, "ann", polarity="positive")
    at = _app(monkeypatch, project_path)
    (table,) = [t.value.map(lambda v: v.replace("\\", "")) for t in at.table if "confidence" in t.value.columns]
    columns = ["span", "confidence", "by", "at", "intensity", "polarity", "holder", "attitude", "targets"]
    assert list(table.columns) == columns
    assert table.values.tolist() == [
        ["DSE “said”", "0.90", "model", "—", "medium (model 0.70)", "negative (model 0.80)", "“Maria” (model 0.60)"]
        + ["sentiment-neg (model 0.66)", "“the plan” (model 0.50), “disaster” (model 0.40)"],
        ["ESE “a disaster”", "0.85", "model", "—", "high (model 0.57)", "positive ✎", "", "", ""],
    ]


def test_the_form_starts_at_the_spans_own_values(monkeypatch, project_path):
    at = _app(monkeypatch, project_path)
    assert _box(at, "Span").value == SAID
    holder = _box(at, "Holder")
    assert (_box(at, "Intensity").value, _box(at, "Polarity").value, holder.value) == ("medium", "negative", "words")
    assert holder.format_func(holder.value) == "“Maria”" and not holder.disabled
    _box(at, "Span").set_value(ESE).run()  # its own values, and no holder (a DSE's)
    assert (_box(at, "Intensity").value, _box(at, "Polarity").value) == ("high", "—")
    assert _box(at, "Holder").disabled and _box(at, "Holder").format_func(_box(at, "Holder").value) == "—"
    next(b for b in at.button if b.label == "Set attributes").click().run()  # nothing changed: nothing saved
    assert not at.exception and any("Nothing to save" in i.value for i in at.info)
    with Project(project_path) as p:
        assert p.document(1).version == 0
    assert _values(project_path) == MODEL_VALUES


@pytest.mark.parametrize(
    ("span", "label", "value", "changed"),
    [
        (ESE, "Polarity", "negative", (1, 1, ("negative", "human", None))),  # its intensity (model 0.57) stays
        (ESE, "Intensity", "—", (1, 0, (None, None, None))),  # cleared; its polarity stays not set
        (SAID, "Intensity", "extreme", (0, 0, ("extreme", "human", None))),
        (SAID, "Polarity", "both", (0, 1, ("both", "human", None))),
        (SAID, "Holder", "writer", (0, 2, ("writer", "human", None))),
        (SAID, "Holder", "", (0, 2, (None, None, None))),  # not set
    ],
)
def test_the_form_saves_only_the_value_changed(monkeypatch, project_path, span, label, value, changed):
    at = _app(monkeypatch, project_path)
    _box(at, "Span").set_value(span).run()
    _box(at, label).set_value(value)
    next(b for b in at.button if b.label == "Set attributes").click().run()
    assert not at.exception and any("Attributes saved" in s.value for s in at.success)
    expected = [list(values) for values in MODEL_VALUES]
    k, field, new = changed
    expected[k][field] = new
    assert _values(project_path) == [tuple(values) for values in expected]
    # the form is drawn again at the values saved, the same span still chosen
    assert _box(at, "Span").value == span and _box(at, label).value == value


def test_a_persons_span_has_confidence_1_in_the_table_the_editor_and_the_export(monkeypatch, project_path):
    from opinion_tagger.annotation.editor import editor_data
    from opinion_tagger.annotation.exporting import record

    with Project(project_path) as p:
        v = p.add_span(1, 0, "ESE", 3, 4, "ann")  # "plan": a person's span
        p.change_span(1, v, p.document(1).spans[0].id, "ann", tok_end=3)  # "said the": the model's, now a person's
        doc = p.document(1)
        assert [(s.source, s.score, s.confidence) for s in doc.spans] == [
            ("human", None, 1.0),
            ("human", None, 1.0),
            ("model", 0.85, 0.85),
        ]
        shown = [(s["source"], s["score"]) for s in editor_data(doc, p.types, 0.5)["spans"]]
        exported = [(s["source"], s["score"]) for s in record(doc, p.types)["spans"]]
    at = _app(monkeypatch, project_path)
    table = next(t.value for t in at.table if "confidence" in t.value.columns)  # (Markdown: escaped)
    assert list(zip(table["by"], table["confidence"])) == [("ann", "1\\.00"), ("ann", "1\\.00"), ("model", "0\\.85")]
    assert shown == exported == [("human", 1.0), ("human", 1.0), ("model", 0.85)]


def test_in_a_copy_the_span_chosen_stays_chosen_when_the_first_change_makes_the_copy(monkeypatch, tmp_path):
    path = tmp_path / "projects" / "team.sqlite"
    with Project(path, create=True) as p:
        tokens = [StoredToken(k, 0, a, b) for k, (a, b) in enumerate(WORDS)]
        p.add_documents([("plan", TEXT, tokens, _spans(), "marker")], overlap=2)
    at = _app(monkeypatch, path)
    _box(at, "Span").set_value(ESE).run()
    _box(at, "Polarity").set_value("both")
    next(b for b in at.button if b.label == "Set attributes").click().run()
    assert not at.exception and any("Attributes saved" in s.value for s in at.success)
    with Project(path) as p:
        assert [(s.key, s.polarity, s.intensity) for s in p.document(1, "tester").spans] == [
            (SAID, "negative", "medium"),
            (ESE, "both", "high"),
        ]
    assert _box(at, "Span").value == ESE and _box(at, "Polarity").value == "both"


def _roles(path) -> tuple:
    """The DSE's attitude (source, score) and targets (tokens, source, score), and who made its list of targets."""
    with Project(path) as p:
        said = p.document(1).spans[0]
        targets = [(t.tokens, t.source, t.score) for t in said.targets or ()]
        return (said.attitude, said.attitude_source, said.attitude_score), targets, said.targets_source


MODEL_ROLES = (("sentiment-neg", "model", 0.66), [((2, 4), "model", 0.5), ((6, 7), "model", 0.4)], "model")


def test_the_attitude_box_and_the_targets_start_at_the_dses_own_and_set_them(monkeypatch, project_path):
    at = _app(monkeypatch, project_path)
    attitude, (targets,) = _box(at, "Attitude"), at.multiselect
    assert attitude.value == "sentiment-neg" and "speculation" in attitude.options and "none" in attitude.options
    assert attitude.options[0] == "—" and not attitude.disabled  # not set, first
    assert targets.label == "Targets" and targets.value == [(2, 4), (6, 7)] and not targets.disabled
    assert [targets.format_func(t) for t in targets.value] == ["“the plan” (model 0.50)", "“disaster” (model 0.40)"]
    # nothing changed: nothing saved
    next(b for b in at.button if b.label == "Set attributes").click().run()
    assert _roles(project_path) == MODEL_ROLES
    # "disaster" unticked: removed, the list a person's, "the plan" still the model's; the attitude stays the model's
    at.multiselect[0].set_value([(2, 4)])
    next(b for b in at.button if b.label == "Set attributes").click().run()
    assert not at.exception and any("Attributes saved" in s.value for s in at.success)
    assert _roles(project_path) == (MODEL_ROLES[0], [((2, 4), "model", 0.5)], "human")
    # the attitude: arguing-neg, a person's; drawn again at the values saved
    _box(at, "Attitude").set_value("arguing-neg")
    next(b for b in at.button if b.label == "Set attributes").click().run()
    assert _roles(project_path) == (("arguing-neg", "human", None), [((2, 4), "model", 0.5)], "human")
    assert _box(at, "Attitude").value == "arguing-neg" and at.multiselect[0].value == [(2, 4)]
    (table,) = [t.value.map(lambda v: v.replace("\\", "")) for t in at.table if "confidence" in t.value.columns]
    assert table.values.tolist()[0][-2:] == ["arguing-neg ✎", "“the plan” (model 0.50)"]
    # none, then not set
    _box(at, "Attitude").set_value("none")
    next(b for b in at.button if b.label == "Set attributes").click().run()
    _box(at, "Attitude").set_value("—")
    next(b for b in at.button if b.label == "Set attributes").click().run()
    assert _roles(project_path)[0] == (None, None, None)
    # an ESE has neither
    _box(at, "Span").set_value(ESE).run()
    assert _box(at, "Attitude").disabled and at.multiselect[0].disabled and at.multiselect[0].value == []


def test_setting_the_attitude_of_a_dse_without_targets_confirms_them_as_none(monkeypatch, tmp_path):
    path = tmp_path / "projects" / "bare.sqlite"
    with Project(path, create=True) as p:
        tokens = [StoredToken(k, 0, a, b) for k, (a, b) in enumerate(WORDS)]
        p.add_documents([("plan", TEXT, tokens, [StoredSpan(None, "DSE", 1, 2, "model", 0.9)], "marker")])
    at = _app(monkeypatch, path)
    assert _box(at, "Attitude").value == "—" and at.multiselect[0].placeholder == "—"  # not set
    _box(at, "Attitude").set_value("speculation")
    next(b for b in at.button if b.label == "Set attributes").click().run()
    assert _roles(path) == (("speculation", "human", None), [], "human")
    (table,) = [t.value.map(lambda v: v.replace("\\", "")) for t in at.table if "confidence" in t.value.columns]
    assert table.values.tolist()[0][-2:] == ["speculation ✎", "none ✎"]
    assert at.multiselect[0].placeholder == "none"
