"""The paper's overlap metrics and seqeval exact scores, on hand-computed cases."""

import pytest

from opinion_tagger.evaluation.metrics import exact_scores, overlap_scores, span_report


def approx(d):
    return {k: pytest.approx(v) for k, v in d.items()}


def test_perfect_prediction():
    gold = [["B", "I", "O", "B"], ["O", "O"]]
    s = overlap_scores(gold, gold)
    assert s["binary"] == approx({"precision": 1, "recall": 1, "f1": 1})
    assert s["proportional"] == approx({"precision": 1, "recall": 1, "f1": 1})
    assert s["counts"] == {"gold": 2, "predicted": 2}


def test_partial_overlap():
    # gold span [0,4); predicted [2,6): overlap 2 tokens
    gold = [["B", "I", "I", "I", "O", "O"]]
    pred = [["O", "O", "B", "I", "I", "I"]]
    s = overlap_scores(gold, pred)
    assert s["binary"] == approx({"precision": 1, "recall": 1, "f1": 1})
    assert s["proportional"]["precision"] == pytest.approx(2 / 4)
    assert s["proportional"]["recall"] == pytest.approx(2 / 4)
    assert s["proportional"]["f1"] == pytest.approx(0.5)


def test_one_prediction_covering_two_gold_spans():
    # gold [0,2) and [3,4); predicted [0,4) covers both
    gold = [["B", "I", "O", "B"]]
    pred = [["B", "I", "I", "I"]]
    s = overlap_scores(gold, pred)
    assert s["binary"]["precision"] == pytest.approx(1.0)
    assert s["binary"]["recall"] == pytest.approx(1.0)
    # precision: (2 + 1) / 4 for the one predicted span; recall: 2/2 + 1/1 over 2 gold spans
    assert s["proportional"]["precision"] == pytest.approx(3 / 4)
    assert s["proportional"]["recall"] == pytest.approx(1.0)
    assert s["proportional"]["f1"] == pytest.approx(2 * 0.75 / 1.75)


def test_stray_i_starts_a_span():
    gold = [["O", "B", "I", "O"]]
    pred = [["O", "I", "I", "O"]]  # I after O: a span starting at 1
    s = overlap_scores(gold, pred)
    assert s["counts"] == {"gold": 1, "predicted": 1}
    assert s["proportional"] == approx({"precision": 1, "recall": 1, "f1": 1})
    pred2 = [["I", "O", "O", "I"]]  # sentence start and after O: two spans, neither overlaps
    s2 = overlap_scores(gold, pred2)
    assert s2["counts"]["predicted"] == 2
    assert s2["binary"] == approx({"precision": 0, "recall": 0, "f1": 0})


def test_micro_average_over_sentences():
    gold = [["B", "O"], ["B", "O"], ["O", "O"]]
    pred = [["B", "O"], ["O", "O"], ["O", "B"]]
    s = overlap_scores(gold, pred)
    assert s["binary"]["precision"] == pytest.approx(1 / 2)
    assert s["binary"]["recall"] == pytest.approx(1 / 2)


def test_empty_prediction_and_empty_gold():
    # the paper's evaluator: no predicted spans -> precision 1
    s = overlap_scores([["B", "O"]], [["O", "O"]])
    assert s["binary"] == approx({"precision": 1.0, "recall": 0.0, "f1": 0.0})
    # no gold spans -> recall 1 (our choice; their code divides by zero)
    s = overlap_scores([["O", "O"]], [["B", "O"]])
    assert s["binary"] == approx({"precision": 0.0, "recall": 1.0, "f1": 0.0})
    s = overlap_scores([["O"]], [["O"]])
    assert s["proportional"]["f1"] == pytest.approx(1.0)


def test_typed_tags_scored_per_type():
    gold = [["B-DSE", "I-DSE", "O", "B-ESE"]]
    pred = [["B-DSE", "O", "O", "B-DSE"]]
    s = overlap_scores(gold, pred)
    assert set(s) == {"DSE", "ESE"}
    assert s["DSE"]["binary"]["precision"] == pytest.approx(1 / 2)
    assert s["DSE"]["proportional"]["recall"] == pytest.approx(1 / 2)
    assert s["ESE"]["binary"] == approx({"precision": 1.0, "recall": 0.0, "f1": 0.0})


def test_length_mismatch_is_an_error():
    with pytest.raises(ValueError, match="sentence 0"):
        overlap_scores([["O", "O"]], [["O"]])
    with pytest.raises(ValueError):
        overlap_scores([["O"]], [])


def test_exact_scores_and_report():
    gold = [["B-DSE", "I-DSE", "O", "B-ESE"], ["O", "B-DSE"]]
    pred = [["B-DSE", "I-DSE", "O", "O"], ["O", "I-DSE"]]  # stray I read as a span start
    e = exact_scores(gold, pred)
    assert e["DSE"]["precision"] == pytest.approx(1.0) and e["DSE"]["recall"] == pytest.approx(1.0)
    assert e["ESE"]["recall"] == pytest.approx(0.0)
    r = span_report(gold, pred, ["DSE", "ESE"])
    assert set(r["DSE"]) == {"binary", "proportional", "exact", "counts"}
    assert r["DSE"]["exact"]["f1"] == pytest.approx(1.0)
