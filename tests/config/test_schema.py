"""The typed configuration: each bad value named by its field's path, the version 1 form migrated, the nested
form round-tripped, one flag per field, and every configuration the project keeps read by the schema."""

import json
from pathlib import Path

import numpy as np
import pytest

from opinion_tagger.cli import build_parser
from opinion_tagger.cli.options import ALIASES, FLAGS, config_from_args, flag_of
from opinion_tagger.config import FIELDS, VERSION, TaggerConfig, legacy
from opinion_tagger.errors import BundleError, ConfigError, TaggerError
from opinion_tagger.runtime.bundle import read_config

ROOT = Path(__file__).resolve().parents[2]


def refused(data) -> str:
    with pytest.raises(ConfigError) as exc:
        TaggerConfig.from_dict(data)
    assert isinstance(exc.value, TaggerError) and isinstance(exc.value, ValueError)
    message = str(exc.value)
    assert "\n" not in message  # one line, no pydantic dump
    return message


@pytest.mark.parametrize(
    "data, message",
    [
        ({"model": {"frames": {"enabled": "false"}}}, 'model.frames.enabled: "false" is not a boolean (true or false)'),
        ({"model.frames.enabled": 0}, "model.frames.enabled: 0 is not a boolean (true or false)"),
        ({"training": {"batch_size": "32"}}, 'training.batch_size: "32" is not an integer'),
        ({"training.seed": True}, "training.seed: true is not an integer"),
        ({"model.recurrent.hidden": 3.0}, "model.recurrent.hidden: 3.0 is not an integer"),
        ({"training.optimizer.learning_rate": "1e-3"}, 'training.optimizer.learning_rate: "1e-3" is not a number'),
        ({"model.encoder.name": 3}, "model.encoder.name: 3 is not a string"),
        ({"model": {"recurrent": 3}}, "model.recurrent: 3 is not a block of fields"),
    ],
)
def test_a_value_of_the_wrong_type_is_named_by_its_field(data, message):
    assert refused(data) == message


@pytest.mark.parametrize(
    "data, message",
    [
        ({"model.recurrent.dropout": 1.0}, "model.recurrent.dropout: 1.0 must be less than 1"),
        ({"model.recurrent.input_dropout": -0.1}, "model.recurrent.input_dropout: -0.1 must be 0 or more"),
        ({"training.batch_size": 0}, "training.batch_size: 0 must be greater than 0"),
        ({"model.recurrent.depth": 6}, "model.recurrent.depth: 6 must be 5 or less"),
        ({"model.encoder.lora_rank": 300}, "model.encoder.lora_rank: 300 must be 256 or less"),
        ({"training.fast.lr_decay": 0}, "training.fast.lr_decay: 0 must be greater than 0"),
        ({"training.distillation.weight": 1.5}, "training.distillation.weight: 1.5 must be 1 or less"),
        (
            {"model.recurrent.cell": "transformer"},
            'model.recurrent.cell: "transformer" is not one of elman, lstm, gru, mrnn, irlm',
        ),
        ({"training.optimizer.name": "rmsprop"}, 'training.optimizer.name: "rmsprop" is not one of adam, sgd'),
        ({"model.encoder.name": "bert"}, 'model.encoder.name: "bert" is not one of minilm, mpnet'),
        ({"task": "both"}, 'task: "both" is not one of dse, ese, joint'),
        (  # every problem of the dictionary, on one line
            {"model.recurrent.dropout": 1, "training.fast.lr_decay": 0},
            "model.recurrent.dropout: 1 must be less than 1; training.fast.lr_decay: 0 must be greater than 0",
        ),
        # the checks across fields name theirs
        ({"model.encoder.lora_rank": 8}, "model.encoder.lora_rank: 8 needs model.encoder.fine_tune: true"),
        ({"model.recurrent.factors": 4}, "model.recurrent.factors: 4 is for cell mrnn, not elman"),
        ({"training.fast.l2": 0.5}, "training.fast.l2: 0.5 needs training.trainer: fast"),
    ],
)
def test_a_value_out_of_range_is_named_by_its_field(data, message):
    assert refused(data) == message


def test_unknown_fields_and_versions_are_named():
    assert refused({"version": 2, "cell": "lstm"}) == "cell: unknown field (did you mean model.recurrent.cell?)"
    assert refused({"model": {"recurrent": {"cel": "lstm"}}}) == (
        "model.recurrent.cel: unknown field (did you mean model.recurrent.cell?)"
    )
    assert refused({"model.recurrent.cell": "lstm", "model": {"recurrent": {"cell": "gru"}}}) == (
        "model.recurrent.cell: given twice"
    )
    assert refused({"version": 3}) == "version: 3 is not supported (this version reads 1 and 2)"
    assert refused({"cell": "lstm", "colour": "red"}) == "colour: not a field of a version 1 (flat) configuration"
    assert refused([1, 2]) == "a configuration is an object of fields, not [1, 2]"


def test_a_bundle_names_its_config_file_and_the_field(tmp_path):
    file = tmp_path / "config.json"
    file.write_text('{"version": 2, "training": {"batch_size": "32"}}')
    with pytest.raises(BundleError) as exc:
        read_config(file)
    assert str(exc.value) == f'{file}: training.batch_size: "32" is not an integer'


FLAT = {
    "task": "joint",
    "cell": "lstm",
    "depth": 1,
    "budget": None,
    "hidden": 64,
    "embedding_dim": 20,
    "features": "random",
    "contextual": "minilm",
    "context_fine_tune": True,
    "context_lora_rank": 8,
    "output": "crf",
    "frames": True,
    "frame_detach": True,
    "optimizer": "adam",
    "learning_rate": 0.002,
    "lr_schedule": "cosine",
    "max_epochs": 5,
    "seed": 3,
    "clipnorm": 0,
}
NESTED = {
    "task": "joint",
    "model": {
        "recurrent": {"cell": "lstm", "depth": 1, "budget": None, "hidden": 64},
        "embeddings": {"dim": 20, "features": "random"},
        "encoder": {"name": "minilm", "fine_tune": True, "lora_rank": 8},
        "head": {"output": "crf"},
        "frames": {"enabled": True, "detach": True},
    },
    "training": {
        "optimizer": {"name": "adam", "learning_rate": 0.002, "clipnorm": 0},
        "schedule": {"name": "cosine"},
        "stopping": {"max_epochs": 5},
        "seed": 3,
    },
}


def test_a_version_1_configuration_migrates_to_the_nested_form():
    assert legacy.migrate(FLAT) == NESTED
    # version 1 named every field there was
    assert set(legacy.FLAT.values()) == set(FIELDS) - legacy.VERSION_2_FIELDS
    config = TaggerConfig.from_dict(FLAT)  # no version, flat names: version 1
    assert config == TaggerConfig.from_dict({"version": 1, **FLAT}) == TaggerConfig.from_dict(NESTED)
    r, enc = config.model.recurrent, config.model.encoder
    assert (r.cell, r.hidden, config.hidden_size, enc.name, enc.lora_rank, config.word_dim) == (
        "lstm",
        64,
        64,
        "minilm",
        8,
        20,
    )
    assert config.training.optimizer.clipnorm == 0.0 and isinstance(config.training.optimizer.clipnorm, float)
    assert config.model.frames.units == 64 and config.training.distillation.noise == 0.15  # not given: defaults
    assert TaggerConfig.from_dict({"task": "ese"}) == TaggerConfig().replace(task="ese")  # task: both forms'


def test_the_nested_form_round_trips():
    config = TaggerConfig.from_dict(NESTED)
    saved = json.loads(json.dumps(config.to_dict()))
    assert saved["version"] == VERSION and list(saved) == ["version", "task", "model", "training"]
    assert saved["model"]["recurrent"] == {
        "cell": "lstm",
        "depth": 1,
        "budget": None,
        "hidden": 64,
        "activation": None,
        "factors": None,
        "decay_init": None,
        "input_dropout": 0.2,
        "dropout": 0.2,
    }
    assert TaggerConfig.from_dict(saved) == config and TaggerConfig.from_dict(saved).to_dict() == saved
    by_path = config.dotted()
    assert list(by_path) == list(FIELDS) and by_path["training.optimizer.learning_rate"] == 0.002
    assert TaggerConfig.from_dict(by_path) == config and config.at("model.encoder.lora_rank") == 8
    changed = config.replace({"model.encoder.lora_rank": 16, "training": {"seed": 4}})
    assert (changed.model.encoder.lora_rank, changed.training.seed, changed.task) == (16, 4, "joint")
    assert config.model.encoder.lora_rank == 8  # frozen: replace gives a copy
    with pytest.raises(ConfigError, match=r"^lora_rank: unknown field \(did you mean model.encoder.lora_rank\?\)"):
        config.replace(lora_rank=16)


def test_each_field_has_one_flag_by_one_rule():
    assert flag_of(["a.size", "b.size", "b.rate_of_x"]) == {
        "a.size": "--a-size",
        "b.size": "--b-size",
        "b.rate_of_x": "--rate-of-x",
    }
    assert {p: FLAGS[p] for p in ("task", "model.recurrent.cell", "training.stopping.max_epochs")} == {
        "task": "--task",
        "model.recurrent.cell": "--cell",
        "training.stopping.max_epochs": "--max-epochs",
    }
    assert {p: FLAGS[p] for p in FIELDS if p.endswith((".fine_tune", ".name", ".weight"))} == {
        "model.embeddings.fine_tune": "--embeddings-fine-tune",
        "model.encoder.name": "--encoder-name",
        "model.encoder.fine_tune": "--encoder-fine-tune",
        "model.auxiliary.weight": "--auxiliary-weight",
        "model.frames.weight": "--frames-weight",
        "training.optimizer.name": "--optimizer-name",
        "training.schedule.name": "--schedule-name",
        "training.distillation.weight": "--distillation-weight",
    }
    assert set(FLAGS) == set(FIELDS) and len(set(FLAGS.values())) == len(FIELDS)  # one flag each, no two alike
    train = build_parser()._subparsers._group_actions[0].choices["train"]
    owner = {}
    for action in train._actions:
        for flag in action.option_strings:
            assert flag not in owner, flag  # no flag for two options
            owner[flag] = action.dest
    for path, flag in FLAGS.items():
        assert owner[flag] == path
    for flag, target in ALIASES.items():  # each earlier flag sets an existing field, under a name no field has
        assert owner[flag] == (target if isinstance(target, str) else target[0]) and flag not in FLAGS.values()
    assert all(f.json_schema_extra is None for f in FIELDS.values())  # no option metadata in the schema


def test_earlier_flags_and_derived_flags_give_the_same_configuration():
    parse = build_parser().parse_args
    old = ["--lr", "0.01", "--crf", "--no-jit", "--fine-tune", "--contextual", "minilm", "--fine-tune-context"]
    new = ["--learning-rate", "0.01", "--output", "crf", "--no-jit-compile", "--embeddings-fine-tune"]
    new += ["--encoder-name", "minilm", "--encoder-fine-tune"]
    a = config_from_args(parse(["train", "--out", "x", *old]))
    b = config_from_args(parse(["train", "--out", "x", *new]))
    assert a == b and a.model.head.output == "crf" and a.training.jit_compile is False
    assert a.model.encoder.fine_tune and a.model.embeddings.fine_tune and a.training.optimizer.learning_rate == 0.01


def test_a_bad_value_in_a_config_file_names_the_file_and_the_field(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("model:\n  frames: {enabled: 'false'}\n")
    args = build_parser().parse_args(["train", "--out", "x", "--config", str(cfg)])
    with pytest.raises(TaggerError) as exc:
        config_from_args(args)
    assert str(exc.value) == f'{cfg}: model.frames.enabled: "false" is not a boolean (true or false)'


def as_written(stored: dict) -> dict:
    """A recorded configuration as the configuration writes it now, without the version 2 fields added since
    that the record does not give (at their defaults)."""
    written = TaggerConfig.from_dict(stored).to_dict()
    defaults = TaggerConfig().dotted()
    for path in legacy.VERSION_2_FIELDS:
        *blocks, leaf = path.split(".")
        block, kept = written, stored
        for name in blocks:
            block, kept = block[name], kept.get(name, {})
        if leaf not in kept:
            assert block.pop(leaf) == defaults[path]
    return written


def test_every_configuration_the_project_keeps_loads_with_the_schema():
    """The bundled models' config.json, every experiment's configuration and every result's: in the nested form
    (results and bundles: with every field, as the configuration writes itself)."""
    from experiments.cross_validation import load_experiments

    bundles = sorted((ROOT / "opinion_tagger" / "models").glob("*/config.json"))
    assert len(bundles) == 3
    for file in bundles:
        stored = json.loads(file.read_text())
        assert as_written(stored) == stored, file
        meta = json.loads((file.parent / "meta.json").read_text())
        for copy in (meta["config"], meta["training"].get("epoch_selection", {}).get("config")):
            assert copy is None or as_written(copy) == copy, file
    experiments = [e for f in sorted((ROOT / "experiments" / "configs").rglob("*.yaml")) for e in load_experiments(f)]
    assert len(experiments) > 200
    for e in experiments:
        assert e.kind == "crf" or isinstance(e.config(), TaggerConfig)
        assert not set(e.fields) & (set(legacy.FLAT) - {"task"}), e.name  # by path, no flat name
    results = sorted((ROOT / "experiments" / "results").rglob("*.json"))
    stored = [(p, json.loads(p.read_text())) for p in results]
    configs = [(p, r["config"]) for p, r in stored if isinstance(r, dict) and "config" in r and r.get("kind") != "crf"]
    assert len(configs) > 600
    for p, c in configs:
        assert as_written(c) == c, p
    for p in sorted((ROOT / "experiments" / "results").rglob("*.npz")):
        with np.load(p) as kept:
            c = json.loads(str(kept["config"]))
        assert as_written(c) == c, p
