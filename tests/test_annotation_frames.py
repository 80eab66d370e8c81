"""Opinion frames in the annotator: each span's polarity and intensity and a DSE's holder in the store (with
their provenance: the model's, with its probability, or a person's), the migration of older projects, edits and
undo, a copy and the review, pre-annotation by a model with frame heads, exports, and the training sentences of
the accepted documents."""

import sqlite3
from pathlib import Path

import pytest

from opinion_tagger.annotation.store import Project, ProjectError, StoredSpan, StoredToken

DATA = Path(__file__).resolve().parent / "data"
# invented sentences
TEXT = "Maria said the new bridge was a disaster. Tom agreed."
#       0     6    11  15  19     26  30 32      40 42  46    52
WORDS = [(0, 5), (6, 10), (11, 14), (15, 18), (19, 25), (26, 29), (30, 31), (32, 40), (40, 41)]
WORDS += [(42, 45), (46, 52), (52, 53)]  # Tom agreed .


def tokens() -> list[StoredToken]:
    return [StoredToken(k, 0 if k < 9 else 1, a, b) for k, (a, b) in enumerate(WORDS)]


def model_spans() -> list[StoredSpan]:
    """The model's spans with its frames: "said" (DSE; negative, medium; holder "Maria"), "a disaster" (ESE;
    negative, high), "agreed" (DSE; positive, low; no holder in its sentence)."""
    said = StoredSpan(None, "DSE", 1, 2, "model", 0.9, polarity="negative", polarity_source="model")
    said.polarity_score, said.intensity, said.intensity_source, said.intensity_score = 0.8, "medium", "model", 0.7
    said.holder, said.holder_start, said.holder_end, said.holder_source, said.holder_score = "span", 0, 1, "model", 0.6
    ese = StoredSpan(None, "ESE", 6, 8, "model", 0.85, polarity="negative", polarity_source="model")
    ese.polarity_score, ese.intensity, ese.intensity_source, ese.intensity_score = 0.9, "high", "model", 0.75
    agreed = StoredSpan(None, "DSE", 10, 11, "model", 0.55, polarity="positive", polarity_source="model")
    agreed.polarity_score, agreed.intensity, agreed.intensity_source, agreed.intensity_score = 0.5, "low", "model", 0.4
    agreed.holder, agreed.holder_source, agreed.holder_score = "none", "model", 0.45
    return [said, ese, agreed]


def frames_of(doc) -> list[tuple]:
    """Per span: type, words, polarity (source, score), intensity (source, score), holder (source, score)."""
    out = []
    for s in doc.spans:
        a, b = doc.span_chars(s)
        out.append(
            (
                s.type,
                doc.text[a:b],
                (s.polarity, s.polarity_source, s.polarity_score),
                (s.intensity, s.intensity_source, s.intensity_score),
                (s.holder_value, s.holder_source, s.holder_score),
            )
        )
    return out


MODEL_FRAMES = [
    ("DSE", "said", ("negative", "model", 0.8), ("medium", "model", 0.7), ((0, 1), "model", 0.6)),
    ("ESE", "a disaster", ("negative", "model", 0.9), ("high", "model", 0.75), (None, None, None)),
    ("DSE", "agreed", ("positive", "model", 0.5), ("low", "model", 0.4), ("none", "model", 0.45)),
]


@pytest.fixture
def project(tmp_path):
    p = Project(tmp_path / "p.sqlite", create=True)
    p.add_documents([("bridge.txt", TEXT, tokens(), model_spans(), "tiny")])
    yield p
    p.close()


def test_frames_round_trip_with_their_provenance_and_edits_make_them_a_persons(project):
    doc = project.document(1)
    assert frames_of(doc) == MODEL_FRAMES
    said, ese, agreed = (s.id for s in doc.spans)
    # intensity changed, polarity the same: the intensity becomes ann's, the polarity stays the model's
    v = project.set_attributes(1, 0, said, "ann", intensity="high", polarity="negative")
    # the holder of "agreed" is "Tom" (token 9)
    v = project.set_holder(1, v, agreed, "ann", (9, 10))
    # the holder of "said" set to what it was: still the model's
    v = project.set_holder(1, v, said, "ann", (0, 1))
    # the ESE's polarity cleared: no value, no source
    v = project.set_attributes(1, v, ese, "ann", intensity="high", polarity=None)
    doc = project.document(1)
    assert frames_of(doc) == [
        ("DSE", "said", ("negative", "model", 0.8), ("high", "human", None), ((0, 1), "model", 0.6)),
        ("ESE", "a disaster", (None, None, None), ("high", "model", 0.75), (None, None, None)),
        ("DSE", "agreed", ("positive", "model", 0.5), ("low", "model", 0.4), ((9, 10), "human", None)),
    ]
    assert [h["action"] for h in project.history(1)] == ["attributes", "holder", "holder", "attributes"]
    # writer and implicit, then not set; "neutral" is an intensity now
    v = project.set_holder(1, v, said, "ann", "writer")
    assert project.document(1).spans[0].holder_value == "writer"
    v = project.set_attributes(1, v, said, "ann", intensity="neutral", polarity="negative", holder="implicit")
    assert frames_of(project.document(1))[0][3:] == (("neutral", "human", None), ("implicit", "human", None))
    v = project.set_holder(1, v, said, "ann", None)
    assert frames_of(project.document(1))[0][4] == (None, None, None)
    # refused: a holder of an ESE, across sentences, unknown; nothing saved
    for holder, match in (
        ((0, 10), "the holder: a span cannot cross a sentence boundary"),
        ((5, 99), r"the holder: tokens 5\.\.99 are not a span"),
        ("somebody", "unknown holder 'somebody' .*writer, implicit, none"),
    ):
        with pytest.raises(ProjectError, match=match):
            project.set_holder(1, v, said, "ann", holder)
    with pytest.raises(ProjectError, match="only a DSE has a holder, not an ESE"):
        project.set_holder(1, v, ese, "ann", "writer")
    assert project.document(1).version == v
    # "agreed" relabelled as an ESE loses its holder (an ESE has none), its polarity and intensity stay
    v = project.change_span(1, v, agreed, "ann", typ="ESE")
    assert frames_of(project.document(1))[2] == (
        "ESE",
        "agreed",
        ("positive", "model", 0.5),
        ("low", "model", 0.4),
        (None, None, None),
    )
    # undo walks every step back, provenance included
    for _ in range(8):
        v = project.undo(1, v, "ann")
    assert frames_of(project.document(1)) == MODEL_FRAMES
    # reopened: the same
    project.close()
    with Project(project.path) as again:
        assert frames_of(again.document(1)) == MODEL_FRAMES


def test_a_project_written_at_schema_version_3_is_migrated_with_a_persons_values(tmp_path):
    path = tmp_path / "v3.sqlite"
    db = sqlite3.connect(path)
    db.executescript((DATA / "project-v3.sql").read_text(encoding="utf-8"))
    db.close()
    with Project(path) as p:
        assert p.schema_version() == 4 and p.check() == "ok"
        doc = p.document(1)
        # "said" (model, nothing set), "late" (model; ana set high and negative before version 4)
        assert [(s.type, s.source, s.score) for s in doc.spans] == [("DSE", "model", 0.88), ("ESE", "model", 0.61)]
        assert [f[2:] for f in frames_of(doc)] == [
            ((None, None, None), (None, None, None), (None, None, None)),
            (("negative", "human", None), ("high", "human", None), (None, None, None)),
        ]
        copy = p.document(2, "ben")
        unset = (None, None, None)
        assert [f[2:] for f in frames_of(copy)] == [(("neutral", "human", None), unset, unset)]
        # history written at version 3 is undone at version 4: a person's values, as they were
        v = p.undo(1, 2, "ana")  # the acceptance
        assert [f[2:4] for f in frames_of(p.document(1))][1] == (("negative", "human", None), ("high", "human", None))
        v = p.undo(1, v, "ana")  # the attributes
        assert [f[2] for f in frames_of(p.document(1))] == [(None, None, None)] * 2
        # what version 4 adds works on the migrated file
        dse = p.document(1).spans[0].id
        v = p.set_attributes(1, v, dse, "ana", intensity="neutral", holder=(0, 1))
        assert frames_of(p.document(1))[0][3:] == (("neutral", "human", None), ((0, 1), "human", None))
        # foreign keys still cascade after the rebuild of spans
        p.db.execute("DELETE FROM documents WHERE id = 2")
        assert p.db.execute("SELECT COUNT(*) FROM spans WHERE doc_id = 2").fetchone()[0] == 0
    with Project(path) as p:  # opened again: nothing left to migrate
        assert p.schema_version() == 4
