"""A DSE's attitude and targets in the annotator: stored with their provenance (the model's, with its
probabilities, or a person's), the migration of a version 4 project, values of the wrong kind in a file, edits
and undo, pre-annotation from a model's predicted frames, the editor's events, a copy and the review, exports,
and the frames training reads (``sentence_frames``)."""

import json
import sqlite3
from pathlib import Path

import pytest

from opinion_tagger.annotation.store import Project, ProjectError, StoredSpan, StoredTarget, StoredToken
from opinion_tagger.sentences import ATTITUDE_TYPES, Frame

DATA = Path(__file__).resolve().parents[1] / "data"
# invented sentences
TEXT = "Omar feared the new tax. Lena praised it."
#       0    5      12  16  20 23 25   30      38
WORDS = [(0, 4), (5, 11), (12, 15), (16, 19), (20, 23), (23, 24)]  # Omar feared the new tax .
WORDS += [(25, 29), (30, 37), (38, 40), (40, 41)]  # Lena praised it .


def tokens() -> list[StoredToken]:
    return [StoredToken(k, 0 if k < 6 else 1, a, b) for k, (a, b) in enumerate(WORDS)]


def model_spans() -> list[StoredSpan]:
    """The model's: DSE "feared" (attitude sentiment-neg 0.7, target "the new tax" 0.55), ESE "new" (no roles:
    an ESE), DSE "praised" (attitude and targets not set: as from a model without those heads)."""
    feared = StoredSpan(None, "DSE", 1, 2, "model", 0.9, attitude="sentiment-neg", attitude_source="model")
    feared.attitude_score, feared.targets_source = 0.7, "model"
    feared.targets = (StoredTarget(2, 5, "model", 0.55),)
    return [feared, StoredSpan(None, "ESE", 3, 4, "model", 0.6), StoredSpan(None, "DSE", 7, 8, "model", 0.8)]


def words(doc, start: int, end: int) -> str:
    return doc.text[doc.tokens[start].start : doc.tokens[end - 1].end]


def roles_of(doc) -> list[tuple]:
    """Per span: type, words, attitude (source, score), targets (words, source, score; None: not set) and who made
    the list of targets."""
    out = []
    for s in doc.spans:
        targets = None if s.targets is None else [(words(doc, t.start, t.end), t.source, t.score) for t in s.targets]
        attitude = (s.attitude, s.attitude_source, s.attitude_score)
        out.append((s.type, words(doc, s.tok_start, s.tok_end), attitude, targets, s.targets_source))
    return out


UNSET = (None, None, None)
MODEL_ROLES = [
    ("DSE", "feared", ("sentiment-neg", "model", 0.7), [("the new tax", "model", 0.55)], "model"),
    ("ESE", "new", UNSET, None, None),
    ("DSE", "praised", UNSET, None, None),
]


@pytest.fixture
def project(tmp_path):
    p = Project(tmp_path / "p.sqlite", create=True)
    p.add_documents([("tax.txt", TEXT, tokens(), model_spans(), "tiny")])
    yield p
    p.close()


def test_roles_round_trip_with_their_provenance_and_edits_make_them_a_persons(project):
    assert roles_of(project.document(1)) == MODEL_ROLES
    feared, new, praised = (s.id for s in project.document(1).spans)
    # the attitude set to what it was: still the model's; then changed: ann's, no score
    v = project.set_attitude(1, 0, feared, "ann", "sentiment-neg")
    assert roles_of(project.document(1))[0] == MODEL_ROLES[0]
    v = project.set_attitude(1, v, feared, "ann", "arguing-neg")
    # "tax" added: a person's target, the model's stays the model's; the list is ann's now
    v, added = project.toggle_target(1, v, feared, "ann", (4, 5))
    assert added
    assert roles_of(project.document(1))[0] == (
        "DSE",
        "feared",
        ("arguing-neg", "human", None),
        [("the new tax", "model", 0.55), ("tax", "human", None)],
        "human",
    )
    # "the new tax" toggled again: removed
    v, added = project.toggle_target(1, v, feared, "ann", (2, 5))
    assert not added and roles_of(project.document(1))[0][3] == [("tax", "human", None)]
    # "praised": its attitude set by a person confirms its targets, not set so far: none, ann's
    v = project.set_attitude(1, v, praised, "ann", "none")
    assert roles_of(project.document(1))[2] == ("DSE", "praised", ("none", "human", None), [], "human")
    # its targets: "it" and "Omar" (another sentence: stored, and left out of its sentence's frame), in token order
    v = project.set_targets(1, v, praised, "ann", [(8, 9), (0, 1), (8, 9)])
    assert roles_of(project.document(1))[2][3] == [("Omar", "human", None), ("it", "human", None)]
    v = project.set_attributes(1, v, praised, "ann", attitude=None, targets=None)  # both not set again
    assert roles_of(project.document(1))[2] == ("DSE", "praised", UNSET, None, None)
    history = [h["action"] for h in project.history(1)]
    assert history == ["attitude", "attitude", "target", "target", "attitude", "targets", "attributes"]
    # refused, nothing saved: a target across sentences or outside the text, an ESE's roles, an unknown attitude
    for call, match in (
        (lambda: project.toggle_target(1, v, feared, "ann", (4, 7)), "a target: a span cannot cross a sentence"),
        (lambda: project.set_targets(1, v, feared, "ann", [(5, 99)]), r"a target: tokens 5\.\.99 are not a span"),
        (lambda: project.set_targets(1, v, feared, "ann", [(1,)]), "a target's tokens are two positions"),
        (lambda: project.set_targets(1, v, new, "ann", []), "only a DSE has targets, not an ESE"),
        (lambda: project.set_attitude(1, v, new, "ann", "speculation"), "only a DSE has an attitude, not an ESE"),
        (lambda: project.set_attitude(1, v, feared, "ann", "angry"), "unknown attitude 'angry' .*speculation"),
        (lambda: project.set_attributes(1, v, feared, "ann", targets="tax"), "targets are a list of token spans"),
    ):
        with pytest.raises(ProjectError, match=match):
            call()
    assert project.document(1).version == v
    # "feared" relabelled as an ESE loses its attitude and targets (a DSE's)
    v = project.change_span(1, v, feared, "ann", typ="ESE")
    assert roles_of(project.document(1))[0] == ("ESE", "feared", UNSET, None, None)
    # undo walks every step back, provenance included; reopened: the same
    for _ in range(8):
        v = project.undo(1, v, "ann")
    assert roles_of(project.document(1)) == MODEL_ROLES
    project.close()
    with Project(project.path) as again:
        assert roles_of(again.document(1)) == MODEL_ROLES


def test_a_project_written_at_schema_version_4_opens_with_no_attitudes_or_targets(tmp_path):
    from opinion_tagger.annotation.accepted import accepted_documents

    path = tmp_path / "v4.sqlite"
    db = sqlite3.connect(path)
    db.executescript((DATA / "project-v4.sql").read_text(encoding="utf-8"))
    db.close()
    with Project(path) as p:
        assert p.schema_version() == 5 and p.check() == "ok"
        doc, copy = p.document(1), p.document(2, "ben")
        # "feared" (the model's DSE; ana made its holder the writer) and "anyway" (the model's ESE): no roles
        assert [(s.type, s.holder_value, s.holder_source) for s in doc.spans] == [
            ("DSE", "writer", "human"),
            ("ESE", None, None),
        ]
        assert roles_of(doc) == [("DSE", "feared", UNSET, None, None), ("ESE", "anyway", UNSET, None, None)]
        assert [(s.intensity, s.intensity_source) for s in copy.spans] == [("high", "human"), ("low", "model")]
        assert [r[2:] for r in roles_of(copy)] == [(UNSET, None, None)] * 2
        # training reads the accepted document's roles as not read
        sentences = accepted_documents(path)["tax.txt"]
        assert [(f.type, f.holder, f.attitude, f.targets) for s in sentences for f in s.frames] == [
            ("DSE", "writer", None, None),
            ("ESE", None, None, None),
        ]
        # history written at version 4 is undone at version 5
        v = p.undo(1, 2, "ana")  # the acceptance
        v = p.undo(1, v, "ana")  # the holder
        assert p.document(1).spans[0].holder_value == (0, 1)
        # what version 5 adds works on the migrated file
        v = p.set_targets(1, v, p.document(1).spans[0].id, "ana", [(2, 5)])
        assert roles_of(p.document(1))[0][3:] == ([("the new tax", "human", None)], "human")
    with Project(path) as p:  # opened again: nothing left to migrate
        assert p.schema_version() == 5


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("targets", "[[2, 5]]", r"targets '\[\[2, 5\]\]' are not its targets \(a target is not \{start, end"),
        ("targets", "{oops", "targets '{oops' are not its targets"),
        ("targets", '[{"start": 5, "end": 2, "source": "model"}]', r"targets .* \(a target's tokens are not two"),
        ("targets", '[{"start": 2, "end": 5, "source": "robot"}]', r"targets .* \(a target's source is not model"),
        ("attitude_score", "'high'", "attitude_score 'high' is not a number"),
        ("attitude", "7", "attitude '7' is not one of sentiment-pos, .*, none"),
        ("attitude_source", "'robot'", "attitude_source 'robot' is not model or human"),
        ("holder_start", "'Omar'", "holder_start 'Omar' is not a token position"),
    ],
)
def test_a_value_of_the_wrong_kind_in_the_file_is_a_one_line_error_naming_the_span(
    tmp_path, capsys, column, value, message
):
    from opinion_tagger.cli import main

    path = tmp_path / "p.sqlite"
    with Project(path, create=True) as p:
        p.add_documents([("tax.txt", TEXT, tokens(), model_spans(), "tiny")])
        p.set_status(1, 0, "done", "ann")
    db = sqlite3.connect(path)
    db.execute("PRAGMA ignore_check_constraints = ON")  # as another program could have written it
    quoted = value if value.startswith("'") else "'" + value.replace("'", "''") + "'"
    db.execute(f"UPDATE spans SET {column} = {quoted} WHERE id = 1")
    db.commit()
    db.close()
    with Project(path) as p, pytest.raises(ProjectError, match=f"p.sqlite: span 1 of document 1: {message}") as err:
        p.document(1)
    assert "\n" not in str(err.value)
    capsys.readouterr()
    assert main(["annotate", "export", str(path), "--out", str(tmp_path / "out.jsonl")]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "span 1 of document 1" in lines[0]


def test_a_change_in_the_history_with_targets_of_the_wrong_kind_is_not_undone(project):
    v = project.set_attitude(1, 0, project.document(1).spans[0].id, "ann", "speculation")
    (before,) = project.db.execute("SELECT before FROM history").fetchone()
    state = json.loads(before)
    state["spans"][0]["targets"] = [[2, 5]]  # as another program could have written it
    project.db.execute("UPDATE history SET before = ?", (json.dumps(state),))
    with pytest.raises(ProjectError, match=r"p.sqlite: change 1 of document 1: targets \(a target is not") as err:
        project.undo(1, v, "ann")
    assert "\n" not in str(err.value)
    assert roles_of(project.document(1))[0][2] == ("speculation", "human", None)  # nothing undone


class StandIn:
    """What ``import_records`` uses of an OpinionTagger, for a model with frame heads: each sentence's tags, and
    the runtime's prediction of each span's frame (``FramePrediction``, token ranges of its sentence), turned into
    the tagged spans as the tagger turns them (``spans_of``)."""

    def __init__(self, frames: dict):
        self.frames = frames  # (sentence, type, start, end) -> FramePrediction

    def tag_many(self, records, chunk):
        from opinion_tagger.tagging.documents import TaggedDocument, TaggedSentence, TaggedToken, spans_of

        (rid, text), out = records[0], []
        doc = TaggedDocument(rid, text, frames=True)
        for k, words in enumerate((WORDS[:6], WORDS[6:])):
            toks = [TaggedToken(text[a:b], a, b, {"DSE": "O", "ESE": "O"}) for a, b in words]
            for sentence, typ, start, end in self.frames:
                for i in range(start, end) if sentence == k else ():
                    toks[i].tags[typ] = ("B-" if i == start else "I-") + typ
            doc.sentences.append(TaggedSentence(words[0][0], words[-1][1], toks))
        doc.spans = spans_of(doc, frames=self.frames)
        out.append(doc)
        return out


def predictions(roles: bool) -> dict:
    """The model's frames: "feared" (sentiment-neg 0.7; targets "the new tax" 0.55 and "Omar" 0.3) and "praised"
    (its attitude the head's none, 0.6: no type; no targets); without roles, as a model without those heads."""
    from opinion_tagger.runtime.frame_heads import FramePrediction

    feared = FramePrediction("DSE", 1, 2, "negative", 0.8, "medium", 0.7, (0, 1), 0.6)
    praised = FramePrediction("DSE", 1, 2, "positive", 0.9, "low", 0.5, (0, 1), 0.65)
    if roles:
        feared.attitude, feared.attitude_score = "sentiment-neg", 0.7
        feared.targets, feared.target_scores = ((0, 1), (2, 5)), (0.3, 0.55)
        praised.attitude_score, praised.targets, praised.target_scores = 0.6, (), ()
    return {(0, "DSE", 1, 2): feared, (1, "DSE", 1, 2): praised}


def test_pre_annotation_stores_the_models_attitudes_and_targets_as_the_models(tmp_path):
    from opinion_tagger.annotation.importing import import_records
    from opinion_tagger.tagging.inputs import Record

    with Project(tmp_path / "p.sqlite", create=True) as p:
        assert import_records(p, [Record("tax.txt", TEXT)], StandIn(predictions(True)), model_name="tiny").imported
        assert roles_of(p.document(1)) == [
            (
                "DSE",
                "feared",
                ("sentiment-neg", "model", 0.7),
                [("Omar", "model", 0.3), ("the new tax", "model", 0.55)],
                "model",
            ),
            ("DSE", "praised", ("none", "model", 0.6), [], "model"),
        ]
        # the rest of the frame as before: the holder "Omar" (token 0), "Lena" (token 6)
        assert [s.holder_value for s in p.document(1).spans] == [(0, 1), (6, 7)]
        # a model without attitude and target heads leaves them not set
        assert import_records(p, [Record("again.txt", TEXT)], StandIn(predictions(False)), model_name="tiny").imported
        assert [r[2:] for r in roles_of(p.document(2))] == [(UNSET, None, None)] * 2


def test_the_editor_shows_a_dses_roles_and_its_keys_set_them(project):
    from opinion_tagger.annotation.editor import apply_event, editor_data

    feared, new, praised = (s.id for s in project.document(1).spans)
    data = editor_data(project.document(1), project.types, 0.5)
    assert data["attitudes"][-1] == "none" and "speculation" in data["attitudes"]
    assert [(s["attitude"], s["targets"], s["from"]["attitude"], s["from"]["targets"]) for s in data["spans"]] == [
        ("sentiment-neg", [{"start": 2, "end": 5, "from": "model 0.55"}], "model 0.70", "model"),
        (None, None, "", ""),
        (None, None, "", ""),
    ]
    event = lambda op, version, span, **kw: {"op": op, "doc": 1, "version": version, "span": span, **kw}
    # t with "tax" selected after clicking "feared", then with "the new tax": added, removed
    assert apply_event(project, event("target", 0, feared, target={"start": 4, "end": 5}), "ann").message == (
        "Target added: “tax”."
    )
    assert apply_event(project, event("target", 1, feared, target={"start": 2, "end": 5}), "ann").message == (
        "Target removed: “the new tax”."
    )
    # k on "praised": the first attitude type; t without words on it: none, then not set again
    assert apply_event(project, event("attitude", 2, praised, attitude="sentiment-pos"), "ann").message == (
        "Attitude saved: sentiment-pos."
    )
    assert apply_event(project, event("targets", 3, praised, targets=None), "ann").message == "Targets saved: not set."
    assert apply_event(project, event("targets", 4, praised, targets=[]), "ann").message == "Targets saved: none."
    # the form: the attitude and the targets kept
    form = event("attributes", 5, feared, attitude="other-attitude", targets=[{"start": 4, "end": 5}])
    assert apply_event(project, form, "ann").message == "Attributes saved."
    data = editor_data(project.document(1), project.types, 0.5)
    assert [(s["attitude"], s["targets"], s["from"]["attitude"], s["from"]["targets"]) for s in data["spans"]] == [
        ("other-attitude", [{"start": 4, "end": 5, "from": "human"}], "human", "human"),
        (None, None, "", ""),
        ("sentiment-pos", [], "human", "human"),
    ]
    for bad, match in (
        (event("target", 6, feared, target=3), "a target is the target's words"),
        (event("targets", 6, feared, targets={"start": 4}), "targets are a list of words"),
        (event("attitude", 6, feared, attitude=["x"]), "an attitude is a name"),
        (event("target", 6, new, target={"start": 3, "end": 4}), "only a DSE has targets, not an ESE"),
    ):
        with pytest.raises(ProjectError, match=match):
            apply_event(project, bad, "ann")
    for v in range(6, 12):
        apply_event(project, {"op": "undo", "doc": 1, "version": v}, "ann")
    assert roles_of(project.document(1)) == MODEL_ROLES


def test_copies_start_from_the_models_roles_and_the_review_keeps_the_copys(tmp_path):
    from opinion_tagger.annotation.review import accept_copy, candidates

    with Project(tmp_path / "team.sqlite", create=True) as p:
        p.add_documents([("tax.txt", TEXT, tokens(), model_spans(), "tiny")], overlap=2)
        # a person's list of targets in the final version is not the model's: a copy starts without it
        v = p.toggle_target(1, 0, p.document(1).spans[0].id, "lead", (4, 5))[0]
        assert roles_of(p.document(1, "ann", preview=True))[0] == (
            "DSE",
            "feared",
            ("sentiment-neg", "model", 0.7),
            None,
            None,
        )
        p.undo(1, v, "lead")
        assert p.claim(1, "ann") and p.claim(1, "ben")
        assert roles_of(p.document(1, "ann")) == MODEL_ROLES
        # ann: "feared" is arguing-neg, about "tax"; ben leaves the model's
        feared = p.document(1, "ann").spans[0].id
        v = p.set_attributes(1, 0, feared, "ann", attitude="arguing-neg", targets=[(4, 5)], layer="ann")
        p.set_status(1, v, "done", "ann", layer="ann")
        p.set_status(1, 0, "done", "ben", layer="ben")
        cands = candidates(p, 1, ["ann", "ben"])
        assert cands[0].frame_text() == (
            "ann: attitude arguing-neg, targets “tax”; ben: attitude sentiment-neg, targets “the new tax”"
        )
        accept_copy(p, 1, 2, "ann", ["ann", "ben"], "rita")
        assert roles_of(p.document(1))[0] == (
            "DSE",
            "feared",
            ("arguing-neg", "human", None),
            [("tax", "human", None)],
            "human",
        )


def edited(p: Project, version: int = 0) -> int:
    """ann's changes on ``version``, accepted: "feared" about "tax" too; "praised" arguing-pos about "it" (and
    "Omar", in another sentence)."""
    feared, _, praised = (s.id for s in p.document(1).spans)
    v = p.toggle_target(1, version, feared, "ann", (4, 5))[0]
    v = p.set_attitude(1, v, praised, "ann", "arguing-pos")
    v = p.set_targets(1, v, praised, "ann", [(8, 9), (0, 1)])
    return p.set_status(1, v, "done", "ann")


def test_jsonl_and_brat_exports_carry_the_roles_and_their_sources(project, tmp_path):
    from opinion_tagger.annotation.exporting import export, export_text, record

    role_keys = lambda sp: {k: v for k, v in sp.items() if k.split("_")[0] in ("attitude", "targets")}
    spans = record(project.document(1), project.types)["spans"]
    assert [role_keys(sp) for sp in spans] == [
        {
            "attitude": "sentiment-neg",
            "attitude_source": "model",
            "attitude_score": 0.7,
            "targets": [{"start": 12, "end": 23, "text": "the new tax", "source": "model", "score": 0.55}],
            "targets_source": "model",
        },
        {},  # an ESE: no roles
        {},  # not set
    ]
    v = edited(project)
    v = project.set_attitude(1, v, project.document(1).spans[0].id, "ann", "none")
    project.set_status(1, v, "done", "ann")
    spans = record(project.document(1), project.types)["spans"]
    assert [role_keys(sp) for sp in spans[::2]] == [
        {
            "attitude": None,  # none: it has no attitude
            "attitude_source": "human",
            "targets": [
                {"start": 12, "end": 23, "text": "the new tax", "source": "model", "score": 0.55},
                {"start": 20, "end": 23, "text": "tax", "source": "human"},
            ],
            "targets_source": "human",
        },
        {
            "attitude": "arguing-pos",
            "attitude_source": "human",
            "targets": [
                {"start": 0, "end": 4, "text": "Omar", "source": "human"},
                {"start": 38, "end": 40, "text": "it", "source": "human"},
            ],
            "targets_source": "human",
        },
    ]
    # the page's JSONL download is the same records
    assert [json.loads(line)["spans"][0]["attitude_source"] for line in export_text(project, "jsonl").splitlines()] == [
        "human"
    ]
    assert export(project, "brat", tmp_path / "brat") == 1
    assert (tmp_path / "brat" / "tax.ann").read_text(encoding="utf-8").splitlines() == [
        "T1\tDSE 5 11\tfeared",
        "T2\tESE 16 19\tnew",
        "T3\tDSE 30 37\tpraised",
        "T4\tTARGET 12 23\tthe new tax",
        "T5\tTARGET 20 23\ttax",
        "T6\tTARGET 0 4\tOmar",
        "T7\tTARGET 38 40\tit",
        "A1\tAttitude T1 none",
        "A2\tAttitude T3 arguing-pos",
        "R1\tTarget Arg1:T1 Arg2:T4",
        "R2\tTarget Arg1:T1 Arg2:T5",
        "R3\tTarget Arg1:T3 Arg2:T6",
        "R4\tTarget Arg1:T3 Arg2:T7",
        "#1\tAnnotatorNotes T1\tmodel 0.9000; attitude human; targets human: “the new tax” model 0.55, “tax” human",
        "#2\tAnnotatorNotes T2\tmodel 0.6000",
        "#3\tAnnotatorNotes T3\tmodel 0.8000; attitude human; targets human: “Omar” human, “it” human",
    ]
    conf = (tmp_path / "brat" / "annotation.conf").read_text(encoding="utf-8").splitlines()
    assert "TARGET" in conf and "Target\tArg1:DSE, Arg2:TARGET" in conf
    # every attitude type, then the value the export also holds
    assert f"Attitude\tArg:DSE, Value:{'|'.join(ATTITUDE_TYPES)}|none" in conf
    # CoNLL: a frame column per type, as the tagger writes it (polarity/intensity/holder/attitude/targets, _ not set)
    lines = export_text(project, "conll").splitlines()
    assert lines[:3] == ["# id = tax.txt", "# status = done", "# columns = token start end DSE ESE DSE-frame ESE-frame"]
    rows = [line.split("\t") for line in lines if line and not line.startswith("#")]
    assert [r[0] for r in rows] == ["Omar", "feared", "the", "new", "tax", ".", "Lena", "praised", "it", "."]
    assert [r[5:] for r in rows[:4]] == [["_", "_"], ["_/_/_/_/12-23+20-23", "_"], ["_", "_"], ["_", "_"]]
    assert rows[7][5:] == ["_/_/_/arguing-pos/0-4+38-40", "_"]


def test_sentence_frames_read_a_dses_attitude_and_targets_where_set(project):
    from opinion_tagger.annotation.accepted import accepted_documents
    from opinion_tagger.annotation.frames import frame_counts

    project.set_status(1, 0, "done", "ann")
    first, second = accepted_documents(project.path)["tax.txt"]
    # the model's: read; "praised": not set, not read (None); an ESE: none
    assert first.frames == [
        Frame("DSE", 1, 2, None, None, None, None, "sentiment-neg", ((2, 5),)),
        Frame("ESE", 3, 4),
    ]
    assert second.frames == [Frame("DSE", 1, 2)]
    assert frame_counts({"tax.txt": [first, second]}).to_dict()["matched"] == {"DSE": 1, "ESE": 0}
    # edited: "feared" about "the new tax" and "tax"; "praised" about "it" (sentence 1: token 2), and "Omar" in
    # the sentence before is left out; an attitude of none is read as no attitude (None), its targets still read
    v = edited(project, 1)
    v = project.set_attitude(1, v, project.document(1).spans[0].id, "ann", "none")
    project.set_status(1, v, "done", "ann")
    first, second = accepted_documents(project.path)["tax.txt"]
    assert [(f.attitude, f.targets) for f in first.frames + second.frames] == [
        (None, ((2, 5), (4, 5))),
        (None, None),
        ("arguing-pos", ((2, 3),)),
    ]


def test_import_edit_export_and_train_read_the_same_roles(tmp_path):
    """The whole way: a model's predicted roles imported, corrected in the editor, accepted, exported, and read
    back as the frames training learns from."""
    from opinion_tagger.annotation.accepted import accepted_documents
    from opinion_tagger.annotation.editor import apply_event
    from opinion_tagger.annotation.exporting import export
    from opinion_tagger.annotation.importing import import_records
    from opinion_tagger.tagging.inputs import Record

    path = tmp_path / "p.sqlite"
    with Project(path, create=True) as p:
        import_records(p, [Record("tax.txt", TEXT)], StandIn(predictions(True)), model_name="tiny")
        feared, praised = (s.id for s in p.document(1).spans)
        event = lambda op, version, span, **kw: {"op": op, "doc": 1, "version": version, "span": span, **kw}
        apply_event(p, event("target", 0, feared, target={"start": 0, "end": 1}), "ann")  # "Omar" is no target
        apply_event(p, event("attitude", 1, praised, attitude="sentiment-pos"), "ann")
        apply_event(p, event("target", 2, praised, target={"start": 8, "end": 9}), "ann")  # about "it"
        apply_event(p, {"op": "accept", "doc": 1, "version": 3}, "ann")
        assert export(p, "jsonl", tmp_path / "out.jsonl") == 1
    (rec,) = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()]
    exported = [
        (sp["text"], sp["attitude"], sp["attitude_source"], [(t["text"], t["source"]) for t in sp["targets"]])
        for sp in rec["spans"]
    ]
    assert exported == [
        ("feared", "sentiment-neg", "model", [("the new tax", "model")]),
        ("praised", "sentiment-pos", "human", [("it", "human")]),
    ]
    first, second = accepted_documents(path)["tax.txt"]
    assert [(f.attitude, f.targets) for f in first.frames + second.frames] == [
        ("sentiment-neg", ((2, 5),)),
        ("sentiment-pos", ((2, 3),)),
    ]
