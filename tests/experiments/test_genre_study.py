"""The zero-shot genre study (experiments/genre_study.py): what it records of a student bundle, and the spans its
fillers-alone rule drops."""

import json

from experiments.genre_study import FILLERS, student_record


def test_a_students_record_names_its_teacher_weight_copies_and_training_commit(tmp_path):
    distillation = {"teacher": "/somewhere/models/accurate-mpnet", "weight": 0.9, "copies": 1, "noise": 0.3}
    (tmp_path / "config.json").write_text(json.dumps({"training": {"distillation": distillation}}))
    meta = {"training": {"git_commit": "heads", "network": {"git_commit": "abc123"}}}
    (tmp_path / "meta.json").write_text(json.dumps(meta))
    record = student_record(tmp_path, "how it was trained")
    assert record == {
        "bundle": "how it was trained",
        "teacher": "accurate-mpnet",
        "weight": 0.9,
        "copies": 1,
        "noise": 0.3,
        "git_commit": "abc123",
    }


def test_fillers_are_lowercase_words_of_conversation_and_not_opinion_words():
    assert {"yeah", "uh", "huh", "-", "you", "know"} <= FILLERS
    assert not {"fear", "said", "hope", "Yeah"} & FILLERS
