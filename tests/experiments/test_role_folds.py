"""Ten folds of the role heads (experiments/role_folds.py): the mean over the folds, and the results of processes
that each ran some of the folds merged into one."""

import json

import pytest

from experiments.role_folds import fold_mean, merge


def _fold(k: int, holder: float, target: float, accuracy: float, majority: float) -> dict:
    scores = {
        "holder": {"binary": {"f1": holder}, "proportional": {"f1": holder - 0.1}},
        "target": {"binary": {"f1": target}, "proportional": {"f1": target - 0.1}},
    }
    return {"fold": k, "seconds": 10.0, **scores, "attitude": {"accuracy": accuracy, "majority": majority}}


def test_the_mean_of_the_folds_with_its_spread_and_the_attitudes_gain():
    mean = fold_mean([_fold(0, 0.8, 0.7, 0.6, 0.3), _fold(1, 0.9, 0.7, 0.7, 0.2)])
    assert mean["holder"]["binary"] == {"mean": 0.85, "sd": 0.05}
    assert mean["holder"]["proportional"] == {"mean": 0.75, "sd": 0.05}
    assert mean["target"]["binary"] == {"mean": 0.7, "sd": 0.0}
    assert mean["attitude"] == {"accuracy": 0.65, "majority": 0.25, "gain": 0.4}


def _run(tmp_path, name: str, folds: list[dict], **setting) -> str:
    run = {"variant": "context-64", "epochs": 10, "commit": "abc", "seconds": 100.0, "folds": folds, **setting}
    path = tmp_path / name
    path.write_text(json.dumps({**run, "mean": fold_mean(folds)}))
    return path


def test_merged_runs_give_every_fold_in_order_and_the_mean_over_all(tmp_path):
    a = _run(tmp_path, "a.json", [_fold(5, 0.9, 0.7, 0.7, 0.2)])
    b = _run(tmp_path, "b.json", [_fold(0, 0.8, 0.7, 0.6, 0.3)])
    merged = merge([a, b])
    assert [f["fold"] for f in merged["folds"]] == [0, 5]
    assert merged["mean"]["holder"]["binary"] == {"mean": 0.85, "sd": 0.05}
    assert merged["seconds"] == 200.0 and merged["processes"] == 2


def test_runs_of_another_setting_or_a_fold_twice_are_refused(tmp_path):
    a = _run(tmp_path, "a.json", [_fold(0, 0.8, 0.7, 0.6, 0.3)])
    other = _run(tmp_path, "b.json", [_fold(1, 0.8, 0.7, 0.6, 0.3)], epochs=30)
    with pytest.raises(SystemExit, match=r"b.json: not the setting of .*a.json \(epochs differ\)"):
        merge([a, other])
    again = _run(tmp_path, "c.json", [_fold(0, 0.8, 0.7, 0.6, 0.3)])
    with pytest.raises(SystemExit, match="a fold given twice"):
        merge([a, again])
