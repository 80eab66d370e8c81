"""TaggerConfig: every configuration recorded so far still loads; the train options come from its fields."""

import json
from pathlib import Path

import pytest

from opinion_tagger.cli import build_parser
from opinion_tagger.cli.options import FLAGS, config_from_args
from opinion_tagger.config import FIELDS, VERSION, TaggerConfig, dotted_items, legacy
from opinion_tagger.errors import TaggerError

ROOT = Path(__file__).resolve().parents[2]
# fields added after configurations were first recorded in the nested form
LATER = legacy.VERSION_2_FIELDS


def test_every_recorded_configuration_loads_in_its_nested_form():
    results = [json.loads(p.read_text()) for p in sorted((ROOT / "experiments" / "results").glob("*/fold*.json"))]
    configs = [r["config"] for r in results if r.get("kind", "rnn") == "rnn"]
    bundles = [json.loads(p.read_text()) for p in sorted((ROOT / "opinion_tagger" / "models").glob("*/config.json"))]
    assert len(configs) > 400 and len(bundles) == 3
    for c in configs + bundles:
        config = TaggerConfig.from_dict(c)
        written = config.dotted()
        recorded = dict(dotted_items(c))
        # recorded nested, with every field that existed then, as the configuration writes itself
        assert {p: written[p] for p in recorded if p != "version"} == {
            p: v for p, v in recorded.items() if p != "version"
        }
        assert set(written) - set(recorded) <= LATER  # and the fields added since, at their defaults
        assert all(written[p] == TaggerConfig().dotted()[p] for p in set(written) - set(recorded))
        assert TaggerConfig.from_dict(json.loads(json.dumps(config.to_dict()))) == config


def test_the_nested_form_shows_the_blocks_and_its_version():
    d = TaggerConfig().to_dict()
    assert d["version"] == VERSION and list(d) == ["version", "task", "model", "training"]
    assert list(d["model"]) == ["embeddings", "encoder", "recurrent", "head", "auxiliary", "frames"]
    assert list(d["training"])[-5:] == ["optimizer", "schedule", "stopping", "distillation", "fast"]
    assert d["model"]["recurrent"]["cell"] == "elman" and d["training"]["optimizer"]["learning_rate"] == 0.001
    with pytest.raises(ValueError, match=r"model\.recurrent\.cells: unknown field"):
        TaggerConfig.from_dict({"version": VERSION, "model": {"recurrent": {"cells": 2}}})
    with pytest.raises(ValueError, match="version: 3 is not supported"):
        TaggerConfig.from_dict({"version": 3})
    with pytest.raises(ValueError, match="celll: unknown field"):
        TaggerConfig.from_dict({"celll": "lstm"})
    c = TaggerConfig().replace(
        {"model.recurrent.cell": "lstm", "model.recurrent.hidden": 64, "training.optimizer.learning_rate": 0.5}
    )
    assert (c.model.recurrent.cell, c.hidden_size, c.training.optimizer.learning_rate) == ("lstm", 64, 0.5)


def test_every_field_is_a_train_option_with_its_default():
    train = build_parser()._subparsers._group_actions[0].choices["train"]
    by_flag = {s: a for a in train._actions for s in a.option_strings}
    for path, f in FIELDS.items():
        action = by_flag[FLAGS[path]]
        assert action.dest == path and action.default is None  # a field not given keeps the value underneath
        if f.default is not None:
            assert f"(default: {str(f.default).lower() if f.default in (True, False) else f.default})" in action.help
    assert by_flag["--lr"] is by_flag["--learning-rate"] and by_flag["--lr"].dest == "training.optimizer.learning_rate"
    assert (by_flag["--crf"].dest, by_flag["--crf"].const) == ("model.head.output", "crf")
    assert (by_flag["--no-jit"].dest, by_flag["--no-jit"].const) == ("training.jit_compile", False)
    training = set(TaggerConfig().training_fields())
    assert {"model.recurrent.input_dropout", "model.recurrent.dropout", "training.seed"} <= training
    assert "training.optimizer.learning_rate" in training and "model.recurrent.cell" not in training


def test_options_over_a_file_over_a_base(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("model: {recurrent: {cell: lstm, depth: 2}}\ntraining.optimizer.learning_rate: 0.01\n")
    parse = build_parser().parse_args
    args = parse(["train", "--out", "x", "--config", str(cfg), "--lr", "0.5", "--hidden", "7", "--crf", "--no-jit"])
    c = config_from_args(args, base={"task": "joint", "model.recurrent.depth": 1})
    r = c.model.recurrent
    assert (c.task, r.cell, r.depth, c.training.optimizer.learning_rate, r.hidden, r.budget) == (
        "joint",
        "lstm",
        2,
        0.5,
        7,
        None,
    )
    assert c.model.head.output == "crf" and c.training.jit_compile is False
    with pytest.raises(TaggerError, match="model.recurrent.depth: 9 must be 5 or less"):
        config_from_args(parse(["train", "--out", "x"]), base={"model.recurrent.depth": 9})
    with pytest.raises(TaggerError, match="config file not found"):
        config_from_args(parse(["train", "--out", "x", "--config", str(tmp_path / "none.yaml")]))
