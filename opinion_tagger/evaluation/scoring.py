"""Scoring taggers on gold sentences with the paper's metrics and exact match."""

from __future__ import annotations

from collections.abc import Sequence

from opinion_tagger.evaluation.metrics import span_report
from opinion_tagger.sentences import Sentence


def score_predictions(sentences: Sequence[Sentence], predicted: dict[str, list[list[str]]]) -> dict:
    """Binary, proportional and exact scores per type; ``predicted`` maps a type to tag lists."""
    report = {}
    for t, tags in predicted.items():
        report.update(span_report([s.tags[t] for s in sentences], tags, [t]))
    return report


def evaluate_tagger(tagger, sentences: Sequence[Sentence]) -> dict:
    """Scores of ``tagger`` (anything with ``predict_tags(list of word lists)``) on gold ``sentences``."""
    return score_predictions(sentences, tagger.predict_tags([s.words for s in sentences]))
