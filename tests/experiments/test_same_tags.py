"""experiments/same_tags.py: two records of the bundled models' predictions compared (spans and frames identical,
probabilities within a tolerance)."""

import copy

from experiments.same_tags import compare

RECORD = {
    "sentences": 2,
    "sha256": "abc",
    "models": {
        "m": {
            "spans": [{"DSE": [[1, 2, "DSE"]]}, {"DSE": []}],
            "probabilities": [{"DSE": [[0.9, 0.05, 0.05], [0.1, 0.8, 0.1]]}, {"DSE": [[1.0, 0.0, 0.0]]}],
            "frames": [[["DSE", 1, 2, "negative", "high", "writer", 0.7, 0.6, 0.9]], []],
        }
    },
}


def test_equal_records_are_the_same_and_a_changed_span_or_probability_differs():
    assert compare(RECORD, copy.deepcopy(RECORD), 1e-4) == [
        "m: same: spans differ in 0 of 2 sentences, largest probability difference 0.00e+00, "
        "frames differ in 0 sentences, largest frame score difference 0.00e+00"
    ]
    close = copy.deepcopy(RECORD)
    close["models"]["m"]["probabilities"][0]["DSE"][0][0] += 5e-5
    close["models"]["m"]["frames"][0][0][6] += 5e-5
    assert compare(RECORD, close, 1e-4)[0].startswith("m: same:")
    moved = copy.deepcopy(RECORD)
    moved["models"]["m"]["spans"][1]["DSE"] = [[0, 1, "DSE"]]
    assert compare(RECORD, moved, 1e-4)[0].startswith("m: DIFFERS: spans differ in 1 of 2 sentences")
    holder = copy.deepcopy(RECORD)
    holder["models"]["m"]["frames"][0][0][5] = "implicit"
    assert "frames differ in 1 sentences" in compare(RECORD, holder, 1e-4)[0]
    assert compare(RECORD, {**RECORD, "sha256": "other"}, 1e-4) == ["the records are of different sentences"]
