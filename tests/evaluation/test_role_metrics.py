"""Scores of a DSE's roles (opinion_tagger.evaluation.roles): holder and target binary and proportional overlap
with the gold DSEs given and end to end, and the attitude type's accuracy, on hand-made frames whose figures are
worked out by hand below; and the evaluation's path for a predictor of targets and attitudes (none is bundled
yet), with a fake one."""

from types import SimpleNamespace

import pytest

from opinion_tagger.evaluation.roles import (
    attitude_scores,
    end_to_end_overlap,
    given_overlap,
    role_report,
    role_spans,
)
from opinion_tagger.sentences import Frame, Sentence, Token


def dse(start, end, holder=None, targets=None, attitude=None) -> Frame:
    return Frame("DSE", start, end, holder=holder, attitude=attitude, targets=targets)


# gold: sentences 0 and 1 of document "a" (targets read), sentence 2 of document "b" (targets not read)
G1 = dse(2, 3, (0, 2), ((4, 7),), "sentiment-neg")
G2 = dse(8, 9, "writer", ((9, 12), (10, 12)), "arguing-pos")  # nested targets
G3 = dse(1, 2)  # holder and targets unknown
G4 = dse(0, 1, (2, 3), None, "sentiment-neg")
ESE = Frame("ESE", 4, 5, "negative", "low", None, "writer")  # not a DSE: never scored
GOLD = [[G1, ESE, G2], [G3], [G4]]
DOCUMENTS = ["a", "a", "b"]

# the frames predicted on the gold DSEs' spans, in their order
GIVEN = [
    [dse(2, 3, (1, 2), ((5, 6), (7, 8)), "sentiment-neg"), dse(8, 9, (0, 1), ((10, 11),), "sentiment-neg")],
    [dse(1, 2, (5, 6), ((3, 4),), "agree-pos")],
    [dse(0, 1, (2, 3), ((0, 1),), "sentiment-neg")],
]

# the predicted DSEs: Q1 overlaps G1; Q2 and Q4 overlap no gold DSE; Q3 only G3 (whose roles are unknown)
PRED = [
    [dse(2, 4, (0, 1), ((4, 6),), "arguing-pos"), dse(6, 7, (3, 4), ())],  # Q1, Q2
    [dse(1, 3, (0, 1), ((0, 1),))],  # Q3
    [dse(5, 6, (2, 3), ((0, 1),))],  # Q4: G4's holder, but its expression was not found
]


def f1(p, r):
    return 2 * p * r / (p + r)


def scores(report, metric):
    return pytest.approx((report[metric]["precision"], report[metric]["recall"], report[metric]["f1"]))


def test_role_spans():
    assert role_spans(G1, "holder") == [(0, 2)] and role_spans(G2, "holder") == []  # a class: no words
    assert role_spans(G3, "holder") is None and role_spans(G3, "target") is None
    assert role_spans(G2, "target") == [(9, 12), (10, 12)] and role_spans(dse(0, 1, targets=()), "target") == []
    with pytest.raises(ValueError, match="unknown role 'source'"):
        role_spans(G1, "source")


def test_the_holder_with_the_gold_dses_given():
    report = given_overlap(GOLD, GIVEN, "holder")
    # predicted (1,2), (0,1), (2,3) against G1's (0,2), G2's none (writer), G4's (2,3); G3 left out:
    # precision: (1,2) wholly in (0,2), (0,1) against nothing, (2,3) wholly: binary 2/3, proportional 2/3;
    # recall: (0,2) half covered by (1,2), (2,3) wholly: binary 2/2, proportional 1.5/2
    assert report["counts"] == {"dses": 3, "gold": 2, "predicted": 3}
    assert scores(report, "binary") == (2 / 3, 1.0, 0.8)
    assert scores(report, "proportional") == (2 / 3, 0.75, f1(2 / 3, 0.75))


def test_targets_with_the_gold_dses_given():
    report = given_overlap(GOLD, GIVEN, "target")
    # G1 (4,7) against (5,6) and (7,8): (5,6) inside, (7,8) not; (4,7) has 1 of its 3 tokens covered.
    # G2 (9,12) and (10,12) against (10,11): (10,11) inside their union; (9,12) 1 of 3, (10,12) 1 of 2.
    # G3 and G4: targets unknown, left out
    assert report["counts"] == {"dses": 2, "gold": 3, "predicted": 3}
    assert scores(report, "binary") == (2 / 3, 1.0, 0.8)
    recall = (1 / 3 + 1 / 3 + 1 / 2) / 3
    assert scores(report, "proportional") == (2 / 3, recall, f1(2 / 3, recall))


def test_the_holder_end_to_end():
    report = end_to_end_overlap(GOLD, PRED, "holder")
    # gold: G1 (0,2) against Q1's (0,1): half; G2 none; G3 left out; G4 (2,3): no predicted DSE overlaps G4
    # predicted: Q1 (0,1) inside G1's (0,2); Q2 (3,4) and Q4 (2,3) belong to DSEs that overlap no gold DSE: 0;
    # Q3 overlaps only G3, whose holder is unknown: left out
    assert report["counts"] == {"dses": 3, "gold": 2, "predicted": 3}
    assert scores(report, "binary") == (1 / 3, 1 / 2, 0.4)
    assert scores(report, "proportional") == (1 / 3, 1 / 4, f1(1 / 3, 1 / 4))


def test_targets_end_to_end_only_where_they_were_read():
    scored = [True, True, False]  # document "b" has no targets
    report = end_to_end_overlap(GOLD, PRED, "target", scored)
    # gold: G1 (4,7) against Q1's (4,6): 2 of 3 tokens; G2's two: no predicted DSE overlaps G2
    # predicted: Q1 (4,6) inside (4,7); Q2 has none; Q3 left out; Q4 in document "b": not scored
    assert report["counts"] == {"dses": 2, "gold": 3, "predicted": 1}
    assert scores(report, "binary") == (1.0, 1 / 3, 0.5)
    assert scores(report, "proportional") == (1.0, 2 / 9, f1(1.0, 2 / 9))
    # every sentence scored: Q4's target (0,1) counts against precision
    assert end_to_end_overlap(GOLD, PRED, "target")["counts"]["predicted"] == 2


def test_a_predicted_dse_over_two_gold_dses_meets_the_roles_of_both():
    gold = [[dse(0, 2, (5, 6)), dse(3, 4, (7, 9))]]
    pred = [[dse(1, 4, (8, 9))]]
    report = end_to_end_overlap(gold, pred, "holder")
    # predicted (8,9) inside the union of (5,6) and (7,9); gold (5,6) uncovered, (7,9) half covered
    assert scores(report, "binary") == (1.0, 0.5, f1(1.0, 0.5))
    assert scores(report, "proportional") == (1.0, 0.25, f1(1.0, 0.25))


def test_empty_sets_follow_the_span_metrics():
    report = given_overlap([[dse(0, 1, "writer")]], [[dse(0, 1, "none")]], "holder")
    assert report["binary"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0}  # nothing to find, nothing found
    assert report["counts"] == {"dses": 1, "gold": 0, "predicted": 0}


def test_attitude_accuracy():
    report = attitude_scores(GOLD, PRED, GIVEN)
    # given: G1 right, G2 wrong (sentiment-neg for arguing-pos), G3 unknown, G4 right
    assert report["gold_dse_given"] == {
        "matched": 3,
        "accuracy": pytest.approx(2 / 3),
        "majority": pytest.approx(2 / 3),
        "majority_class": "sentiment-neg",
    }
    # matched: G1 and Q1 (arguing-pos: wrong); G3 and Q3 (unknown); G2 and G4 unmatched
    assert report["matched"] == {"matched": 1, "accuracy": 0.0, "majority": 1.0, "majority_class": "sentiment-neg"}
    assert "gold_dse_given" not in attitude_scores(GOLD, PRED)


def test_the_report_scores_what_is_predicted():
    report = role_report(GOLD, PRED, GIVEN, ("holder", "target"), attitude=True, documents=DOCUMENTS)
    assert set(report) == {"holder", "target", "attitude"}
    assert set(report["holder"]) == {"gold_dse_given", "end_to_end"}
    assert report["target"]["end_to_end"] == end_to_end_overlap(GOLD, PRED, "target", [True, True, False])
    assert report["holder"]["end_to_end"] == end_to_end_overlap(GOLD, PRED, "holder")  # holders: everywhere
    assert role_report(GOLD, PRED) == {"holder": {"end_to_end": end_to_end_overlap(GOLD, PRED, "holder")}}
    # without documents each sentence is its own: sentence 1's G3 has no targets read, so Q3 is not scored
    alone = role_report(GOLD, PRED, roles=("target",))["target"]["end_to_end"]
    assert alone["counts"]["predicted"] == 1


def test_frames_given_must_be_those_of_the_gold_dses():
    with pytest.raises(ValueError, match="sentence 0: the frames given are not those of the gold DSEs' spans"):
        given_overlap(GOLD, [GIVEN[0][:1], *GIVEN[1:]], "holder")
    with pytest.raises(ValueError, match="3 gold sentences but 2"):
        given_overlap(GOLD, GIVEN[:2], "holder")
    with pytest.raises(ValueError, match="3 gold sentences but 2 predicted"):
        end_to_end_overlap(GOLD, PRED[:2], "holder")


class FakePredictor:
    """A predictor of a DSE's holder, targets and attitude (no bundled model predicts the last two yet), as
    ``opinion_tagger.evaluation.scoring`` uses a ``SentenceTagger``: on the gold DSE spans it answers GIVEN, and
    it tags the DSEs of PRED."""

    types = ("DSE",)
    roles = ("holder", "target", "attitude")
    heads = object()
    config = SimpleNamespace(model=SimpleNamespace(frames=SimpleNamespace(both="keep", dse_intensity="intensity")))

    def predict_frames_given(self, words, given):
        from opinion_tagger.runtime.frame_heads import FramePrediction

        assert given == [{"DSE": [(f.start, f.end) for f in s if f.type == "DSE"]} for s in GOLD]

        def predictions(frames):
            out = [FramePrediction("DSE", f.start, f.end, "neutral", 0.9, "low", 0.8, f.holder, 0.7) for f in frames]
            for p, f in zip(out, frames):
                p.attitude, p.targets = f.attitude, f.targets
            return out

        out = []
        for w, p, g in zip(words, PRED, GIVEN):
            tags = ["O"] * len(w)
            for f in p:
                tags[f.start : f.end] = ["B-DSE"] + ["I-DSE"] * (f.end - f.start - 1)
            out.append(({"DSE": (tags, [1.0] * len(w))}, predictions(p), predictions(g)))
        return out


def gold_sentences() -> list[Sentence]:
    out = []
    for k, (frames, doc) in enumerate(zip(GOLD, DOCUMENTS)):
        words = [f"w{i}" for i in range(12)]
        tags = ["O"] * 12
        for f in frames:
            if f.type == "DSE":
                tags[f.start : f.end] = ["B-DSE"] + ["I-DSE"] * (f.end - f.start - 1)
        tokens = [Token(w, 3 * i, 3 * i + 2) for i, w in enumerate(words)]
        out.append(Sentence(tokens, {"DSE": tags}, doc, k, " ".join(words), frames=frames))
    return out


def test_evaluation_scores_and_prints_targets_and_attitudes_when_predicted(capsys):
    from opinion_tagger.cli.evaluate import print_roles
    from opinion_tagger.evaluation.scoring import predict_with_roles

    tags, frames, roles = predict_with_roles(FakePredictor(), gold_sentences())
    assert tags["DSE"][0][2:4] == ["B-DSE", "I-DSE"] and set(frames) == {"DSE"}
    assert roles == role_report(GOLD, PRED, GIVEN, ("holder", "target"), attitude=True, documents=DOCUMENTS)
    print_roles(roles)
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split() == ["holder", "gold", "given", "binary", "66.67", "100.00", "80.00", "2", "3"]
    assert [line.split()[:-5] for line in lines[1:9]] == [  # before P, R, F1 and the counts
        [role, *setting.split(), metric]
        for role in ("holder", "target")
        for setting in ("gold given", "end to end")
        for metric in ("binary", "proportional")
    ]
    assert lines[10].split() == ["attitude", "gold", "given", "66.67", "66.67", "3"]
    assert lines[11].split() == ["attitude", "matched", "0.00", "100.00", "1"]
    # a predictor of holders only: no target or attitude rows
    holders = FakePredictor()
    holders.roles = ("holder",)
    assert set(predict_with_roles(holders, gold_sentences())[2]) == {"holder"}
