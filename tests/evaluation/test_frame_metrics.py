"""Frame scores (opinion_tagger.evaluation.frames) on hand-computed cases."""

import pytest

from opinion_tagger.evaluation.frames import frame_report, holder_right, matched_pairs
from opinion_tagger.sentences import Frame

# gold DSEs A (negative), B (positive) and C (polarity unknown); an ESE of polarity "both"
A = Frame("DSE", 0, 4, "negative", "high", "medium", (14, 16))
B = Frame("DSE", 6, 8, "positive", "low", None, "writer")
C = Frame("DSE", 10, 12, None, "low", "low", "none")
E = Frame("ESE", 0, 1, "both", "medium", None, "writer")
# p1 overlaps A by 2 tokens, same polarity; p2 overlaps B by 1, another polarity; p3 overlaps only C; p4 nothing
P1 = Frame("DSE", 2, 6, "negative", "high", None, (15, 17))
P2 = Frame("DSE", 6, 7, "neutral", "medium", None, "implicit")
P3 = Frame("DSE", 10, 11, "positive", "low", None, "none")
P4 = Frame("DSE", 13, 14, "positive", "low", None, "writer")
PE = Frame("ESE", 0, 1, "neutral", "medium", None, None)

GOLD = [[A, B, C, E]]
PRED = [[P1, P2, P3, P4, PE]]


def test_polarity_aware_overlap():
    dse = frame_report(GOLD, PRED, ["DSE"])["DSE"]
    # p3 overlaps only a gold span of unknown polarity: left out; p1, p2, p4 count
    assert dse["counts"] == {"gold": 2, "predicted": 3}
    # binary: p1 hits A (1 of 3 predicted); A found, B not (its only overlap has another polarity)
    assert dse["polarity_binary"] == pytest.approx({"precision": 1 / 3, "recall": 1 / 2, "f1": 2 / 5})
    # proportional: p1 covers 2 of its 4 tokens (2/4 / 3); A is covered 2 of 4 (2/4 / 2)
    assert dse["polarity_proportional"] == pytest.approx({"precision": 1 / 6, "recall": 1 / 4, "f1": 1 / 5})


def test_both_merged_into_neutral_when_the_head_merges_them():
    keep = frame_report(GOLD, PRED, ["ESE"])["ESE"]
    merged = frame_report(GOLD, PRED, ["ESE"], both="neutral")["ESE"]
    assert keep["polarity_binary"]["f1"] == 0.0 and keep["polarity"]["accuracy"] == 0.0
    assert merged["polarity_binary"]["f1"] == 1.0 and merged["polarity"]["accuracy"] == 1.0
    assert "holder" not in keep


def test_matched_spans_polarity_and_intensity():
    assert matched_pairs([[A, B, C]], [[P1, P2, P3, P4]]) == [(A, P1), (B, P2), (C, P3)]
    dse = frame_report(GOLD, PRED, ["DSE"])["DSE"]
    # polarity: A right, B wrong, C unknown; the majority baseline: negative and positive tie, 1 of 2
    assert dse["polarity"] == {"matched": 2, "accuracy": 0.5, "majority": 0.5, "majority_class": "negative"}
    # intensity: high/high, low/medium, low/low; majority low (2 of 3)
    assert dse["intensity"] == pytest.approx(
        {"matched": 3, "accuracy": 2 / 3, "majority": 2 / 3, "majority_class": "low"}
    )
    # scored against expression-intensity: medium/high, B unknown, low/low
    expr = frame_report(GOLD, PRED, ["DSE"], dse_intensity="expression-intensity")["DSE"]["intensity"]
    assert expr == {"matched": 2, "accuracy": 0.5, "majority": 0.5, "majority_class": "low"}


def test_holder_of_matched_dses():
    holder = frame_report(GOLD, PRED, ["DSE"])["DSE"]["holder"]
    # A's span holder overlaps p1's; B is the writer's, p2 says implicit; C has none, p3 says none
    assert holder["matched"] == 3 and holder["accuracy"] == pytest.approx(2 / 3)
    assert (holder["majority_class"], holder["majority"]) == ("none", pytest.approx(1 / 3))
    # naming a holder: p1 and p2 name one (p1 right); A and B have one
    assert (holder["precision"], holder["recall"], holder["f1"]) == (0.5, 0.5, 0.5)
    assert holder["kinds"] == {
        "none": {"gold": 1, "right": 1},
        "span": {"gold": 1, "right": 1},
        "writer": {"gold": 1, "right": 0},
    }


def test_holder_right():
    assert holder_right((3, 5), (4, 6)) and not holder_right((3, 5), (5, 6))
    assert holder_right("writer", "writer") and not holder_right("writer", (0, 1))
    assert not holder_right((0, 1), "none") and not holder_right("none", None)


def test_empty_sets_follow_the_paper_convention():
    report = frame_report([[]], [[]], ["DSE", "ESE"])
    assert report["DSE"]["polarity_binary"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0}
    assert report["DSE"]["polarity"] == {"matched": 0, "accuracy": 0.0, "majority": 0.0, "majority_class": None}
    assert report["DSE"]["holder"]["matched"] == 0
    with pytest.raises(ValueError, match="1 gold sentences but 2 predicted"):
        frame_report([[]], [[], []], ["DSE"])
