"""The zero-shot genre study (experiments/genre_study.py): what it records of a student bundle, and the spans its
fillers-alone rule drops."""

import json

from experiments.genre_study import FILLERS, student_record


def _student(tmp_path, distillation: dict, recurrent: dict, name: str):
    bundle = tmp_path / name
    bundle.mkdir()
    config = {"task": "joint", "model": {"recurrent": recurrent}, "training": {"distillation": distillation}}
    (bundle / "config.json").write_text(json.dumps(config))
    meta = {"training": {"git_commit": "heads", "network": {"git_commit": "abc123"}}}
    (bundle / "meta.json").write_text(json.dumps(meta))
    return bundle


def test_a_students_record_names_its_teacher_weight_copies_and_training_commit(tmp_path):
    distillation = {"teacher": "/somewhere/models/accurate-mpnet", "weight": 0.9, "copies": 1, "noise": 0.3}
    record = student_record(_student(tmp_path, distillation, {}, "student"), "how it was trained")
    assert record == {
        "bundle": "how it was trained",
        "teacher": "accurate-mpnet",
        "weight": 0.9,
        "copies": 1,
        "noise": 0.3,
        "style": "words",
        "changes": {},
        "git_commit": "abc123",
    }


def test_a_students_record_names_what_differs_from_the_base_besides_its_teacher(tmp_path):
    taught = {"teacher": "t", "weight": 0.9, "copies": 1, "noise": 0.1, "style": "genres"}
    student = _student(tmp_path, taught, {"dropout": 0.3, "hidden": 64}, "student")
    base = _student(tmp_path, {"teacher": "t", "weight": 0.5}, {"dropout": 0.1, "hidden": 64}, "base")
    record = student_record(student, "how", base)
    assert record["changes"] == {"model.recurrent.dropout": 0.3} and record["style"] == "genres"


def test_fillers_are_lowercase_words_of_conversation_and_not_opinion_words():
    assert {"yeah", "uh", "huh", "-", "you", "know"} <= FILLERS
    assert not {"fear", "said", "hope", "Yeah"} & FILLERS
