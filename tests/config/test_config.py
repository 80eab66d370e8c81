"""TaggerConfig: every configuration recorded so far still loads; the train options come from its fields."""

import json
from pathlib import Path

import pytest

from opinion_tagger.cli import build_parser
from opinion_tagger.cli.options import config_from_args
from opinion_tagger.config import LEAVES, VERSION, TaggerConfig
from opinion_tagger.errors import TaggerError

ROOT = Path(__file__).resolve().parents[2]


def test_every_recorded_configuration_loads_and_migrates_without_loss():
    results = [json.loads(p.read_text()) for p in sorted((ROOT / "experiments" / "results").glob("*/fold*.json"))]
    configs = [r["config"] for r in results if r.get("kind", "rnn") == "rnn"]
    bundles = [json.loads(p.read_text()) for p in sorted((ROOT / "opinion_tagger" / "models").glob("*/config.json"))]
    assert len(configs) > 400 and len(bundles) == 3
    for c in configs + bundles:
        config = TaggerConfig.from_dict(c)
        if "version" not in c:  # version 1: flat; every field it recorded comes back as it was
            flat = config.flat()
            assert {k: flat[k] for k in c} == c
        assert TaggerConfig.from_dict(json.loads(json.dumps(config.to_dict()))) == config


def test_the_nested_form_shows_the_blocks_and_its_version():
    d = TaggerConfig().to_dict()
    assert d["version"] == VERSION and list(d) == ["version", "task", "model", "training"]
    assert list(d["model"]) == ["embeddings", "encoder", "recurrent", "head", "auxiliary", "frames"]
    assert list(d["training"])[-5:] == ["optimizer", "schedule", "stopping", "distillation", "fast"]
    assert d["model"]["recurrent"]["cell"] == "elman" and d["training"]["optimizer"]["learning_rate"] == 0.001
    with pytest.raises(ValueError, match=r"unknown keys model\.recurrent\.cells"):
        TaggerConfig.from_dict({"version": VERSION, "model": {"recurrent": {"cells": 2}}})
    with pytest.raises(ValueError, match="version 3 is not supported"):
        TaggerConfig.from_dict({"version": 3})
    with pytest.raises(ValueError, match="unknown keys celll"):
        TaggerConfig.from_dict({"celll": "lstm"})
    c = TaggerConfig().replace(cell="lstm", hidden=64, learning_rate=0.5)
    assert (c.model.recurrent.cell, c.hidden_size, c.training.optimizer.learning_rate) == ("lstm", 64, 0.5)


def test_every_field_is_a_train_option_with_its_default():
    train = build_parser()._subparsers._group_actions[0].choices["train"]
    by_dest = {a.dest: a for a in train._actions}
    for name, (_, f) in LEAVES.items():
        action = by_dest[name]
        assert action.default is None  # a field not given keeps the value underneath (--config, a bundle)
        if "const" not in f.metadata and f.default is not None:
            assert f"(default: {f.default})" in action.help
    assert by_dest["learning_rate"].option_strings == ["--lr"]
    assert by_dest["output"].const == "crf" and by_dest["jit_compile"].const is False
    assert {"input_dropout", "dropout", "seed", "learning_rate"} <= set(TaggerConfig().training_fields())
    assert "cell" not in TaggerConfig().training_fields()


def test_options_over_a_file_over_a_base(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("model: {cell: lstm, depth: 2, learning_rate: 0.01}\n")
    parse = build_parser().parse_args
    args = parse(["train", "--out", "x", "--config", str(cfg), "--lr", "0.5", "--hidden", "7", "--crf", "--no-jit"])
    c = config_from_args(args, base={"task": "joint", "depth": 1})
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
    with pytest.raises(TaggerError, match="depth must be"):
        config_from_args(parse(["train", "--out", "x"]), base={"depth": 9})
    with pytest.raises(TaggerError, match="config file not found"):
        config_from_args(parse(["train", "--out", "x", "--config", str(tmp_path / "none.yaml")]))
