"""TaggerConfig: every configuration recorded so far still loads; the train options come from its fields."""

import json
from dataclasses import fields
from pathlib import Path

import pytest

from opinion_tagger.cli import build_parser
from opinion_tagger.cli.options import config_from_args
from opinion_tagger.config import SECTIONS, TaggerConfig
from opinion_tagger.errors import TaggerError

ROOT = Path(__file__).resolve().parent.parent


def test_every_recorded_configuration_loads():
    results = [json.loads(p.read_text()) for p in sorted((ROOT / "experiments" / "results").glob("*/fold*.json"))]
    configs = [r["config"] for r in results if r.get("kind", "rnn") == "rnn"]
    bundles = sorted((ROOT / "opinion_tagger" / "models").glob("*/config.json"))
    assert len(configs) > 400 and bundles
    for c in configs:
        assert TaggerConfig.from_dict(c).to_dict().keys() == TaggerConfig().to_dict().keys()
    for b in bundles:
        TaggerConfig.load(b)


def test_every_field_is_a_train_option_with_its_default():
    train = build_parser()._subparsers._group_actions[0].choices["train"]
    by_dest = {a.dest: a for a in train._actions}
    for f in fields(TaggerConfig):
        assert f.metadata["section"] in SECTIONS
        action = by_dest[f.name]
        assert action.default is None  # a field not given keeps the value underneath (--config, a bundle)
        if "const" not in f.metadata and f.default is not None:
            assert f"(default: {f.default})" in action.help
    assert by_dest["learning_rate"].option_strings == ["--lr"]
    assert by_dest["output"].const == "crf" and by_dest["jit_compile"].const is False
    assert list(TaggerConfig().training_fields())[:2] == ["input_dropout", "dropout"]
    assert "cell" not in TaggerConfig().training_fields()


def test_options_over_a_file_over_a_base(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("model: {cell: lstm, depth: 2, learning_rate: 0.01}\n")
    parse = build_parser().parse_args
    args = parse(["train", "--out", "x", "--config", str(cfg), "--lr", "0.5", "--hidden", "7", "--crf", "--no-jit"])
    c = config_from_args(args, base={"task": "joint", "depth": 1})
    assert (c.task, c.cell, c.depth, c.learning_rate, c.hidden, c.budget) == ("joint", "lstm", 2, 0.5, 7, None)
    assert c.output == "crf" and c.jit_compile is False
    with pytest.raises(TaggerError, match="depth must be"):
        config_from_args(parse(["train", "--out", "x"]), base={"depth": 9})
    with pytest.raises(TaggerError, match="config file not found"):
        config_from_args(parse(["train", "--out", "x", "--config", str(tmp_path / "none.yaml")]))
