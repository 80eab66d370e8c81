"""Version 1 of the configuration: every field at the top level under a flat name of its own (``cell``,
``context_lora_rank``, ``lr_schedule``, ...), as bundles and results were written before the blocks.

This module alone knows those names: ``migrate`` turns such a dictionary into the nested form that
``TaggerConfig.from_dict`` reads (it calls it for a dictionary without ``version: 2`` whose keys are flat
names), and ``digest`` gives the sha256 that bundles record of the configuration their ``model.onnx`` was
exported from, which was computed over the flat names and is kept so, for the bundles written then.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from opinion_tagger.errors import ConfigError

# version 1 name -> the field's path
FLAT = {
    "task": "task",
    "cell": "model.recurrent.cell",
    "depth": "model.recurrent.depth",
    "budget": "model.recurrent.budget",
    "hidden": "model.recurrent.hidden",
    "output": "model.head.output",
    "activation": "model.recurrent.activation",
    "factors": "model.recurrent.factors",
    "decay_init": "model.recurrent.decay_init",
    "input_dropout": "model.recurrent.input_dropout",
    "dropout": "model.recurrent.dropout",
    "features": "model.embeddings.features",
    "embedding_dim": "model.embeddings.dim",
    "fine_tune": "model.embeddings.fine_tune",
    "glove_vocab": "model.embeddings.glove_vocab",
    "min_count": "model.embeddings.min_count",
    "contextual": "model.encoder.name",
    "context_pooling": "model.encoder.pooling",
    "context_fine_tune": "model.encoder.fine_tune",
    "context_lora_rank": "model.encoder.lora_rank",
    "auxiliary": "model.auxiliary.types",
    "auxiliary_weight": "model.auxiliary.weight",
    "frames": "model.frames.enabled",
    "frame_weight": "model.frames.weight",
    "frame_units": "model.frames.units",
    "frame_both": "model.frames.both",
    "frame_dse_intensity": "model.frames.dse_intensity",
    "frame_detach": "model.frames.detach",
    "optimizer": "training.optimizer.name",
    "learning_rate": "training.optimizer.learning_rate",
    "lr_schedule": "training.schedule.name",
    "momentum": "training.optimizer.momentum",
    "clipnorm": "training.optimizer.clipnorm",
    "batch_size": "training.batch_size",
    "max_epochs": "training.stopping.max_epochs",
    "patience": "training.stopping.patience",
    "seed": "training.seed",
    "precision": "training.precision",
    "jit_compile": "training.jit_compile",
    "trainer": "training.trainer",
    "loss_sum": "training.fast.loss_sum",
    "o_weight": "training.o_weight",
    "output_lr_scale": "training.fast.output_lr_scale",
    "lr_decay": "training.fast.lr_decay",
    "l2": "training.fast.l2",
    "activation_l2": "training.fast.activation_l2",
    "init": "training.init",
    "init_scale": "training.init_scale",
    "eval_every": "training.stopping.eval_every",
    "teacher": "training.distillation.teacher",
    "distill_weight": "training.distillation.weight",
    "distill_copies": "training.distillation.copies",
    "distill_noise": "training.distillation.noise",
}
# Fields added in version 2, which no version 1 configuration names (a version 1 configuration has their defaults)
VERSION_2_FIELDS = frozenset(
    {
        "model.frames.positions",
        "model.frames.context",
        "model.frames.context_holder",
        "model.frames.roles",
        "model.frames.holder_context",
        "training.distillation.style",
    }
)
# Version 1 fields added after bundles recorded the sha256 of their configuration (model.onnx, meta.json), with
# the values that mean "as before": left out of that digest at these values.
DIGEST_LATER = {
    "activation": None,
    "factors": None,
    "decay_init": None,
    "teacher": None,
    "distill_weight": 0.0,
    "distill_copies": 0,
    "distill_noise": 0.15,
    "auxiliary": None,
    "auxiliary_weight": 0.5,
    "precision": "float32",
    "frames": False,
    "frame_weight": 0.5,
    "frame_units": 64,
    "frame_both": "keep",
    "frame_dse_intensity": "intensity",
    "frame_detach": False,
}


def is_flat(data: Mapping[str, Any]) -> bool:
    """Whether a dictionary without ``version`` is of version 1: one of its keys is a flat name (``task``
    alone is both forms')."""
    return any(k in FLAT and k != "task" for k in data)


def migrate(data: Mapping[str, Any]) -> dict[str, Any]:
    """The nested form of a version 1 configuration (the fields it does not give stay out: their defaults);
    ConfigError naming the keys that are no version 1 field."""
    unknown = sorted(set(data) - set(FLAT))
    if unknown:
        raise ConfigError(f"{', '.join(unknown)}: not a field of a version 1 (flat) configuration")
    nested: dict[str, Any] = {}
    for name, value in data.items():
        *blocks, leaf = FLAT[name].split(".")
        where = nested
        for block in blocks:
            where = where.setdefault(block, {})
        where[leaf] = value
    return nested


def digest(stored: Mapping[str, Any], defaults: Mapping[str, Any]) -> str:
    """The sha256 of a configuration as a bundle records it: ``stored`` (its dictionary as config.json holds it,
    either version; its values as written, so an integer stays one) by flat names, sorted, with ``defaults``
    (the fields' defaults by path) for the fields it does not give, the fields of ``DIGEST_LATER`` left out at
    their neutral values."""
    stored = dict(stored)
    if stored.pop("version", 1) == 1 and is_flat(stored):
        stored = migrate(stored)
    fields = {}
    for name, path in FLAT.items():
        value: Any = stored
        for key in path.split("."):
            value = value.get(key, _MISSING) if isinstance(value, Mapping) else _MISSING
        value = defaults[path] if value is _MISSING else value
        if name not in DIGEST_LATER or value != DIGEST_LATER[name]:
            fields[name] = value
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()


_MISSING = object()
