"""Distillation's parts (opinion_tagger/training/distillation.py): training that goes on from a bundle leaves the
bundle's teacher behind, and the teacher's tags come for a run whose record counts its documents instead of
listing them (an annotation project's)."""

import pytest

from opinion_tagger.config import TaggerConfig
from opinion_tagger.corpus import MPQACorpus, mpqa_sentences
from opinion_tagger.training.adapt import AdaptSettings, adapt_config
from opinion_tagger.training.distillation import teacher_targets, without_teacher

STUDENT = {
    "task": "joint",
    "model.recurrent.hidden": 16,
    "training.distillation.teacher": "opinion_tagger/models/accurate-mpnet",  # relative: found from the repository
    "training.distillation.weight": 0.9,
    "training.distillation.copies": 2,
    "training.distillation.noise": 0.3,
}


@pytest.fixture
def sample_sentences(sample_mpqa):
    return list(mpqa_sentences(MPQACorpus(sample_mpqa)))


def test_training_from_a_student_bundle_needs_no_teacher_and_keeps_the_rest():
    student = TaggerConfig.from_dict(STUDENT)
    goes_on = without_teacher(student)
    d = goes_on.training.distillation
    assert (d.teacher, d.weight, d.copies) == (None, 0.0, 0)
    rest = {k: v for k, v in goes_on.dotted().items() if not k.startswith("training.distillation.")}
    assert rest == {k: v for k, v in student.dotted().items() if not k.startswith("training.distillation.")}
    assert goes_on.model.recurrent.hidden == 16


def test_adapting_a_student_bundle_trains_without_its_teacher():
    config = adapt_config(TaggerConfig.from_dict(STUDENT), AdaptSettings(learning_rate=1e-4, epochs=2))
    assert config.training.distillation.teacher is None and config.training.distillation.weight == 0.0
    assert config.training.optimizer.learning_rate == 1e-4 and config.training.stopping.max_epochs == 2


def test_adapting_a_bundle_trained_in_bfloat16_goes_on_in_float32():
    base = TaggerConfig.from_dict({**STUDENT, "training.precision": "mixed_bfloat16"})
    assert adapt_config(base, AdaptSettings()).training.precision == "float32"


def test_the_teacher_tags_a_run_whose_record_counts_its_documents(sample_sentences):
    from opinion_tagger.paths import resolve_model

    record = {"data": {"source": "annotations", "documents": {"train": 11, "dev": 1}}}
    soft, _ = teacher_targets(resolve_model("fast"), sample_sentences[:2], ("DSE", "ESE"), record)
    for t in ("DSE", "ESE"):
        assert [p.shape for p in soft[t]] == [(len(s), 3) for s in sample_sentences[:2]]
