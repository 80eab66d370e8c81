"""The report's section on a DSE's roles (experiments/roles_report.py): the ten folds' rows and mean from a
role_folds result, the bundled models' fold-0 rows beside the published figures, the dev study's rows."""

import json

from experiments.roles_report import roles_section


def _scores(b: float, p: float) -> dict:
    return {"binary": {"f1": b}, "proportional": {"f1": p}}


def test_the_section_gives_each_fold_the_mean_and_the_bundles(tmp_path):
    folds = {
        "features": "pretrained: GloVe and MPNet-base (a configuration, no recurrent layer, untrained)",
        "variant": "context-64",
        "epochs": 10,
        "commit": "0123456789abcdef+dirty",
        "seconds": 600.0,
        "folds": [
            {
                "fold": 0,
                "test_documents": 23,
                "holder": _scores(0.8, 0.7),
                "target": _scores(0.75, 0.65),
                "attitude": {"accuracy": 0.6, "majority": 0.25},
            }
        ],
        "mean": {
            "holder": {"binary": {"mean": 0.8, "sd": 0.0}, "proportional": {"mean": 0.7, "sd": 0.0}},
            "target": {"binary": {"mean": 0.75, "sd": 0.0}, "proportional": {"mean": 0.65, "sd": 0.0}},
            "attitude": {"accuracy": 0.6, "majority": 0.25, "gain": 0.35},
        },
    }
    (tmp_path / "results" / "role-folds").mkdir(parents=True)
    (tmp_path / "results" / "role-folds" / "pretrained.json").write_text(json.dumps(folds))
    bundle = tmp_path / "models" / "m"
    bundle.mkdir(parents=True)
    roles = {r: {"gold_dse_given": _scores(0.9, 0.8)} for r in ("holder", "target")}
    (bundle / "meta.json").write_text(json.dumps({"scores": {"fold0_test_roles": roles}}))
    lines = roles_section(tmp_path / "results", tmp_path / "models")
    heading = "### Ten folds on the attitude documents: pretrained GloVe and MPNet-base, heads `context-64`, 10 epochs"
    assert heading in lines
    assert "| 0 | 23 | 80.00 / 70.00 | 75.00 / 65.00 | 60.00 (25.00) |" in lines
    mean = "| mean ± sd | | 80.00 ± 0.00 / 70.00 ± 0.00 | 75.00 ± 0.00 / 65.00 ± 0.00 | 60.00 (25.00; +35.00) |"
    assert mean in lines
    assert any(line.startswith("| `m` (bundled) | 90.00 / 80.00 | 90.00 / 80.00 |") for line in lines)
    assert any("at commit 0123456789+dirty" in line for line in lines)
    assert roles_section(tmp_path / "nothing", tmp_path / "models") == []


def _dev_run(data: str, **variant) -> dict:
    return {
        "features": "pretrained: GloVe and MPNet-base (a configuration, no recurrent layer, untrained)",
        "train": {"fold": 0, "documents": "attitude"},
        "dev": {"data": data, "documents": 108 if data == "news" else 48},
        "epochs": 10,
        "commit": "fedcba9876543210",
        "variants": {"context-64": variant},
    }


def test_a_dev_study_gives_a_row_per_variant_and_epoch_and_names_its_dev_set(tmp_path):
    at = {"holder": _scores(0.8, 0.7), "target": _scores(0.7, 0.6), "attitude": {"accuracy": 0.6, "majority": 0.3}}
    later = {**at, "holder": _scores(0.85, 0.75)}
    (tmp_path / "role-folds-dev").mkdir()
    (tmp_path / "role-folds-dev" / "a.json").write_text(json.dumps(_dev_run("ULA", **at)))
    news = _dev_run("news", **later, by_epoch={"10": later, "5": at})  # as JSON sorts the keys
    news["recipe"] = {"learning_rate": 0.002, "ema": 0.999}
    (tmp_path / "role-folds-dev" / "b.json").write_text(json.dumps(news))
    lines = roles_section(tmp_path)
    assert "### Role heads on pretrained GloVe and MPNet-base: dev study on the ULA documents" in lines
    averaged = "pretrained GloVe and MPNet-base, the weights' moving average (momentum 0.999)"
    assert f"### Role heads on {averaged}: dev study on fold 0's dev documents" in lines
    assert "| context-64 | 10 | 80.00 / 70.00 | 70.00 / 60.00 | 60.00 (30.00) |" in lines  # the ULA run
    assert "| context-64 | 5 | 80.00 / 70.00 | 70.00 / 60.00 | 60.00 (30.00) |" in lines  # the news run, by epoch
    assert "| context-64 | 10 | 85.00 / 75.00 | 70.00 / 60.00 | 60.00 (30.00) |" in lines
    assert lines.index("| context-64 | 5 | 80.00 / 70.00 | 70.00 / 60.00 | 60.00 (30.00) |") < lines.index(
        "| context-64 | 10 | 85.00 / 75.00 | 70.00 / 60.00 | 60.00 (30.00) |"
    )  # epochs in order
    text = "\n".join(lines)
    assert "scored on the 108 dev documents of fold 0 in the attitude subset" in text
    assert "trained on fold 0's train documents (those of the attitude subset)" in text
    assert "scored on the 48 ULA documents" in text
