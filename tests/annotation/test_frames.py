"""Opinion frames in the annotator: each span's polarity and intensity and a DSE's holder in the store (with
their provenance: the model's, with its probability, or a person's), the migration of older projects, edits and
undo, a copy and the review, pre-annotation by a model with frame heads, exports, and the training sentences of
the accepted documents."""

import sqlite3
from pathlib import Path

import pytest

from opinion_tagger.annotation.store import Project, ProjectError, StoredSpan, StoredToken

DATA = Path(__file__).resolve().parents[1] / "data"
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
    v = project.set_attributes(1, v, ese, "ann", intensity="high", polarity=None, holder=None)  # the form's "—"
    assert frames_of(project.document(1))[1][4] == (None, None, None)
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
    for _ in range(9):
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
        assert p.schema_version() == 5 and p.check() == "ok"
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
        assert p.schema_version() == 5


def test_the_editor_sets_a_holder_by_words_or_class_and_undo_takes_it_back(project):
    from opinion_tagger.annotation.editor import apply_event, editor_data

    said, _, agreed = (s.id for s in project.document(1).spans)
    data = editor_data(project.document(1), project.types, 0.5)
    assert data["holders"] == ["writer", "implicit", "none"]
    roles = lambda s: {k: v for k, v in s["from"].items() if k not in ("attitude", "targets")}  # (none set)
    assert all(s["from"]["attitude"] == s["from"]["targets"] == "" for s in data["spans"])
    assert [(s["holder"], roles(s)) for s in data["spans"]] == [
        ({"start": 0, "end": 1}, {"intensity": "model 0.70", "polarity": "model 0.80", "holder": "model 0.60"}),
        (None, {"intensity": "model 0.75", "polarity": "model 0.90", "holder": ""}),
        ("none", {"intensity": "model 0.40", "polarity": "model 0.50", "holder": "model 0.45"}),
    ]
    # "Tom" selected after clicking "agreed", then h
    event = {"op": "holder", "doc": 1, "version": 0, "span": agreed, "holder": {"start": 9, "end": 10}}
    assert apply_event(project, event, "ann").message == "Holder saved: “Tom”."
    # h on "said": the next class after a holder of words is writer
    event = {"op": "holder", "doc": 1, "version": 1, "span": said, "holder": "writer"}
    assert apply_event(project, event, "ann").message == "Holder saved: writer."
    # the form: intensity and polarity, the holder left as it is, then set to not set
    form = {"op": "attributes", "doc": 1, "version": 2, "span": said, "intensity": "low", "polarity": "negative"}
    apply_event(project, form, "ann")
    apply_event(project, {**form, "version": 3, "holder": None}, "ann")
    data = editor_data(project.document(1), project.types, 0.5)
    assert [(s["holder"], s["intensity"], roles(s)) for s in data["spans"][::2]] == [
        (None, "low", {"intensity": "human", "polarity": "model 0.80", "holder": ""}),
        ({"start": 9, "end": 10}, "low", {"intensity": "model 0.40", "polarity": "model 0.50", "holder": "human"}),
    ]
    with pytest.raises(ProjectError, match="a holder is writer, implicit, none, or the holder's words"):
        apply_event(project, {"op": "holder", "doc": 1, "version": 4, "span": said, "holder": 3}, "ann")
    for v in (4, 5, 6, 7):
        apply_event(project, {"op": "undo", "doc": 1, "version": v}, "ann")
    assert frames_of(project.document(1)) == MODEL_FRAMES


def test_copies_start_from_the_models_values_and_the_review_keeps_the_copys(tmp_path):
    from opinion_tagger.annotation.review import accept_copy, candidates, merge

    with Project(tmp_path / "team.sqlite", create=True) as p:
        p.add_documents([("bridge.txt", TEXT, tokens(), model_spans(), "tiny")], overlap=2)
        # a person's value in the final version is not the model's: a copy does not start with it
        v = p.set_attributes(1, 0, p.document(1).spans[1].id, "lead", intensity="low", polarity="negative")
        assert (
            frames_of(p.document(1, "ann", preview=True))
            == MODEL_FRAMES[:1]
            + [("ESE", "a disaster", ("negative", "model", 0.9), (None, None, None), (None, None, None))]
            + MODEL_FRAMES[2:]
        )
        p.undo(1, v, "lead")
        assert p.claim(1, "ann") and p.claim(1, "ben")
        assert frames_of(p.document(1, "ann")) == MODEL_FRAMES
        # ann: "said" positive and its holder the writer; ben: "agreed" held by "Tom"
        said, _, agreed = (s.id for s in p.document(1, "ann").spans)
        v = p.set_attributes(1, 0, said, "ann", intensity="medium", polarity="positive", layer="ann", holder="writer")
        p.set_status(1, v, "done", "ann", layer="ann")
        agreed_b = p.document(1, "ben").spans[2].id
        v = p.set_holder(1, 0, agreed_b, "ben", (9, 10), layer="ben")
        p.set_status(1, v, "done", "ben", layer="ben")
        cands = candidates(p, 1, ["ann", "ben"])
        assert [(c.key, c.frame_text()) for c in cands] == [
            (("DSE", 1, 2), "ann: positive, medium, holder writer; ben: negative, medium, holder “Maria”"),
            (("ESE", 6, 8), "negative, high"),
            (("DSE", 10, 11), "ann: positive, low, holder none; ben: positive, low, holder “Tom”"),
        ]
        v = accept_copy(p, 1, 2, "ann", ["ann", "ben"], "rita")  # the final version: 2 (a change and its undo)
        ann_said = ("DSE", "said", ("positive", "human", None), ("medium", "model", 0.7), ("writer", "human", None))
        assert frames_of(p.document(1)) == [ann_said, *MODEL_FRAMES[1:]]
        v = p.undo(1, v, "rita")
        # a merge takes each span as the first annotator compared has it: ben's "said", then ann's "agreed" ...
        v = merge(p, 1, v, [c.key for c in cands], ["ben", "ann"], "rita")
        ben_agreed = ("DSE", "agreed", ("positive", "model", 0.5), ("low", "model", 0.4), ((9, 10), "human", None))
        assert frames_of(p.document(1)) == [*MODEL_FRAMES[:2], ben_agreed]
        v = p.undo(1, v, "rita")
        merge(p, 1, v, [c.key for c in cands], ["ann", "ben"], "rita")  # ... or, ann first, ann's
        assert frames_of(p.document(1))[0] == ann_said


def edited(p: Project) -> int:
    """The model's document with ann's changes, accepted: "said" intensity high, the holder of "agreed" "Tom"."""
    said, _, agreed = (s.id for s in p.document(1).spans)
    v = p.set_attributes(1, 0, said, "ann", intensity="high", polarity="negative")
    v = p.set_holder(1, v, agreed, "ann", (9, 10))
    return p.set_status(1, v, "done", "ann")


def test_jsonl_and_brat_exports_carry_the_frames_and_their_sources(project, tmp_path):
    from opinion_tagger.annotation.exporting import export, record

    frame_keys = lambda sp: {k: v for k, v in sp.items() if k.split("_")[0] in ("polarity", "intensity", "holder")}
    spans = record(project.document(1), project.types)["spans"]
    assert [frame_keys(sp) for sp in spans] == [
        {
            "polarity": "negative",
            "polarity_source": "model",
            "polarity_score": 0.8,
            "intensity": "medium",
            "intensity_source": "model",
            "intensity_score": 0.7,
            "holder": {"start": 0, "end": 5, "text": "Maria"},
            "holder_source": "model",
            "holder_score": 0.6,
        },
        {
            "polarity": "negative",
            "polarity_source": "model",
            "polarity_score": 0.9,
            "intensity": "high",
            "intensity_source": "model",
            "intensity_score": 0.75,
        },  # an ESE: no holder
        {
            "polarity": "positive",
            "polarity_source": "model",
            "polarity_score": 0.5,
            "intensity": "low",
            "intensity_source": "model",
            "intensity_score": 0.4,
            "holder": None,  # none: no holder in its sentence
            "holder_source": "model",
            "holder_score": 0.45,
        },
    ]
    edited(project)
    spans = record(project.document(1), project.types)["spans"]
    assert [(sp["text"], sp["intensity"], sp["intensity_source"], "intensity_score" in sp) for sp in spans] == [
        ("said", "high", "human", False),
        ("a disaster", "high", "model", True),
        ("agreed", "low", "model", True),
    ]
    assert (spans[2]["holder"], spans[2]["holder_source"], "holder_score" in spans[2]) == (
        {"start": 42, "end": 45, "text": "Tom"},
        "human",
        False,
    )
    assert export(project, "brat", tmp_path / "brat") == 1
    assert (tmp_path / "brat" / "bridge.ann").read_text(encoding="utf-8").splitlines() == [
        "T1\tDSE 6 10\tsaid",
        "T2\tESE 30 40\ta disaster",
        "T3\tDSE 46 52\tagreed",
        "T4\tHOLDER 0 5\tMaria",
        "T5\tHOLDER 42 45\tTom",
        "A1\tIntensity T1 high",
        "A2\tPolarity T1 negative",
        "A3\tIntensity T2 high",
        "A4\tPolarity T2 negative",
        "A5\tIntensity T3 low",
        "A6\tPolarity T3 positive",
        "R1\tHolder Arg1:T1 Arg2:T4",
        "R2\tHolder Arg1:T3 Arg2:T5",
        "#1\tAnnotatorNotes T1\tmodel 0.9000; polarity model 0.80, intensity human, holder model 0.60",
        "#2\tAnnotatorNotes T2\tmodel 0.8500; polarity model 0.90, intensity model 0.75",
        "#3\tAnnotatorNotes T3\tmodel 0.5500; polarity model 0.50, intensity model 0.40, holder human",
    ]
    v = project.set_holder(1, 3, project.document(1).spans[0].id, "ann", "implicit")
    project.set_status(1, v, "done", "ann")
    export(project, "brat", tmp_path / "again")
    lines = (tmp_path / "again" / "bridge.ann").read_text(encoding="utf-8").splitlines()
    assert (
        "A3\tHolder T1 implicit" in lines and "T4\tHOLDER 42 45\tTom" in lines and "R1\tHolder Arg1:T3 Arg2:T4" in lines
    )


def test_accepted_documents_give_training_their_frames(project):
    from opinion_tagger.annotation.accepted import accepted_documents
    from opinion_tagger.annotation.frames import frame_counts
    from opinion_tagger.sentences import Frame

    edited(project)
    docs = accepted_documents(project.path)
    assert [s.frames for s in docs["bridge.txt"]] == [
        [Frame("DSE", 1, 2, "negative", "high", None, (0, 1)), Frame("ESE", 6, 8, "negative", "high", None, None)],
        [Frame("DSE", 1, 2, "positive", "low", None, (0, 1))],  # "Tom": token 9 of the document, 0 of its sentence
    ]
    counts = frame_counts(docs).to_dict()
    assert (counts["spans"], counts["holder"]) == ({"DSE": 2, "ESE": 1}, {"DSE": {"span": 2}, "ESE": {"unknown": 1}})
    # a holder in another sentence: none in the DSE's own (as MPQA's reading has it); a value not set: None
    agreed = project.document(1).spans[2].id
    v = project.set_holder(1, 3, agreed, "ann", (0, 1))
    v = project.set_attributes(1, v, agreed, "ann", intensity=None, polarity="positive")
    project.set_status(1, v, "done", "ann")
    assert accepted_documents(project.path)["bridge.txt"][1].frames == [
        Frame("DSE", 1, 2, "positive", None, None, "none")
    ]


def test_pre_annotation_stores_the_models_frames_as_the_models(tmp_path):
    """A tagger's frames (``TaggedSpan.frame``, offsets into the text) become token positions and model values."""
    from opinion_tagger.annotation.importing import import_records
    from opinion_tagger.tagging.documents import SpanFrame, TaggedDocument, TaggedSentence, TaggedSpan, TaggedToken
    from opinion_tagger.tagging.inputs import Record

    class Tagger:  # what import_records uses of an OpinionTagger
        def tag_many(self, records, chunk):
            (rid, text), sents = records[0], [WORDS[:9], WORDS[9:]]
            doc = TaggedDocument(rid, text, frames=True)
            for words in sents:
                toks = [TaggedToken(text[a:b], a, b, {"DSE": "O", "ESE": "O"}) for a, b in words]
                doc.sentences.append(TaggedSentence(words[0][0], words[-1][1], toks))
            maria = {"start": 0, "end": 5, "text": "Maria"}
            doc.spans = [
                TaggedSpan("DSE", 6, 10, "said", 0.9, SpanFrame("negative", 0.8, "medium", 0.7, maria, 0.6)),
                TaggedSpan("ESE", 30, 40, "a disaster", 0.85, SpanFrame("negative", 0.9, "high", 0.75)),
                TaggedSpan("DSE", 46, 52, "agreed", 0.55, SpanFrame("positive", 0.5, "low", 0.4, None, 0.45)),
            ]
            return [doc]

    with Project(tmp_path / "p.sqlite", create=True) as p:
        report = import_records(p, [Record("bridge.txt", TEXT)], Tagger(), model_name="tiny")
        assert report.imported == 1
        assert frames_of(p.document(1)) == MODEL_FRAMES


@pytest.mark.slow
def test_a_frame_head_model_pre_annotates_and_training_learns_the_accepted_frames(tmp_path):
    """A tiny network with frame heads (tests/model/test_frame_heads.py's, which learns its sentences' frames)
    pre-annotates two of its sentences: the stored values are its frames, flagged as the model's with its
    probabilities; accepted, they are the frame heads' data of ``train --data annotations --frames``."""
    import json

    from tiny_frames import TINY, sentences

    from opinion_tagger.annotation.importing import import_records
    from opinion_tagger.cli import main
    from opinion_tagger.config import TaggerConfig
    from opinion_tagger.tagging.inputs import Record
    from opinion_tagger.tagging.tagger import OpinionTagger
    from opinion_tagger.training.run import train

    bundle = tmp_path / "tiny"
    train(TaggerConfig.from_dict({**TINY, "training.stopping.max_epochs": 60}), sentences(), [], bundle, progress=False)
    tagger = OpinionTagger.load(bundle)
    texts = [("officials.txt", "Officials said the plan was awful."), ("hate.txt", "We hate the plan.")]
    expected = list(tagger.tag_many(texts, chunk=2))  # the model's own output, as JSONL gives it
    path = tmp_path / "p.sqlite"
    with Project(path, create=True) as p:
        assert import_records(p, [Record(*t) for t in texts], tagger, model_name="tiny").imported == 2
        first, second = p.document(1), p.document(2)
        values = [f[:2] + tuple(v[:2] for v in f[2:]) for f in frames_of(first) + frames_of(second)]
        assert values == [
            ("DSE", "said", ("neutral", "model"), ("low", "model"), ((0, 1), "model")),
            ("ESE", "awful", ("negative", "model"), ("high", "model"), (None, None)),
            ("DSE", "hate", ("negative", "model"), ("high", "model"), ((0, 1), "model")),
        ]
        scores = [(s.polarity_score, s.intensity_score, s.holder_score) for s in first.spans + second.spans]
        model = [sp.frame for doc in expected for sp in doc.spans]
        assert scores == [(f.polarity_score, f.intensity_score, f.holder_score) for f in model]
        assert all(0 < x <= 1 for row in scores for x in row if x is not None)
        v = p.set_attributes(2, 0, second.spans[0].id, "ann", intensity="medium", polarity="negative")
        p.set_status(2, v, "done", "ann")
        p.set_status(1, 0, "done", "ann")
        # a third accepted document, without spans, held out to choose the epoch (training needs three)
        assert import_records(p, [Record("bus.txt", "The bus left at noon.")], None).imported == 1
        p.set_status(3, 0, "done", "ann")
    out = tmp_path / "m"
    argv = ["train", "--data", "annotations", str(path), "--task", "joint", "--depth", "1", "--hidden", "8"]
    argv += ["--features", "random", "--embedding-dim", "8", "--max-epochs", "1", "--no-jit", "--quiet"]
    assert main([*argv, "--frames", "--frame-units", "4", "--out", str(out)]) == 0
    frames = json.loads((out / "meta.json").read_text())["training"]["data"]["frames"]
    assert (frames["spans"], frames["matched"]) == ({"DSE": 2, "ESE": 1}, {"DSE": 2, "ESE": 1})
    assert frames["polarity"] == {"DSE": {"negative": 1, "neutral": 1}, "ESE": {"negative": 1}}
    assert frames["intensity"] == {"DSE": {"low": 1, "medium": 1}, "ESE": {"high": 1}}
    assert frames["holder"] == {"DSE": {"span": 2}, "ESE": {"unknown": 1}}
