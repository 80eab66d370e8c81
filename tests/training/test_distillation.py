"""Distillation's parts (opinion_tagger/training/distillation.py): training that goes on from a bundle leaves the
bundle's teacher behind, and the teacher's tags come for a run whose record counts its documents instead of
listing them (an annotation project's); copies in the style of other genres."""

import numpy as np
import pytest

from opinion_tagger.config import TaggerConfig
from opinion_tagger.corpus import MPQACorpus, mpqa_sentences
from opinion_tagger.sentences import Sentence, Token
from opinion_tagger.training.adapt import AdaptSettings, adapt_config
from opinion_tagger.training.distillation import genre_copy, noisy_copies, teacher_targets, without_teacher

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


NEWS = "He said that they would support the plan , but his aides disagree .".split()
FIRST = "I said that we would support the plan , but my aides disagree .".split()
SECOND = "You said that you would support the plan , but your aides disagree .".split()
FILLER_WORDS = {"uh", "um", "you", "know", "i", "mean", "well", "yeah", "like", "oh"}


def test_a_genre_copy_is_the_sentence_in_another_person_or_transcribed():
    """Without fillers, a copy is the sentence itself, in the first or second person, or any of those as speech is
    transcribed (lower case, the punctuation gone); each of the six comes up, and the same seed gives the same."""
    rng = np.random.default_rng(1)
    seen = {tuple(genre_copy(NEWS, 0.0, rng)) for _ in range(200)}
    forms = [NEWS, FIRST, SECOND]
    spoken = [[w.lower() for w in f if w.isalnum()] for f in forms]
    assert seen == {tuple(f) for f in forms + spoken}
    one, two = np.random.default_rng(1), np.random.default_rng(1)
    assert [genre_copy(NEWS, 0.3, one) for _ in range(5)] == [genre_copy(NEWS, 0.3, two) for _ in range(5)]


def test_a_genre_copy_puts_a_filler_before_each_word_at_the_rate():
    """At rate 1 every word of the sentence comes after a filler (one of a word or two); at 0.2 about a fifth."""
    rng = np.random.default_rng(2)
    copy = genre_copy(["fears"], 1.0, rng)
    assert copy[-1] == "fears" and 2 <= len(copy) <= 3 and {w.lower() for w in copy[:-1]} <= FILLER_WORDS
    words = [f"w{k}" for k in range(1000)]
    added = len(genre_copy(words, 0.2, rng)) - len(words)
    assert 0.2 * 1000 * 1.0 < added < 0.2 * 1000 * 1.5  # a filler is one word or two (1.25 on average)


def test_a_genre_copy_of_punctuation_alone_is_never_empty():
    rng = np.random.default_rng(3)
    assert all(genre_copy(["!", "?"], 0.0, rng) for _ in range(50))


def test_genre_copies_of_sentences_come_untagged_with_their_documents():
    text = [Sentence([Token(w, 0, 0) for w in NEWS], {"DSE": ["O"] * len(NEWS)}, doc="a")]
    copies = noisy_copies(text, 3, 0.0, 7, style="genres")
    assert [(c.doc, c.tags) for c in copies] == [("a", {})] * 3
    assert all(
        tuple(c.words) in {tuple(f) for f in (NEWS, FIRST, SECOND)} or c.words == [w.lower() for w in c.words]
        for c in copies
    )
    assert TaggerConfig.from_dict({"training.distillation.style": "genres"}).training.distillation.style == "genres"
    with pytest.raises(ValueError, match="training.distillation.style"):
        TaggerConfig.from_dict({"training.distillation.style": "tweets"})
