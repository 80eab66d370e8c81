"""One configuration object for a tagger: its network and its training, in blocks that show the model.

    TaggerConfig
      task                      dse | ese | joint (one network, one head per type)
      model
        embeddings              word vectors: GloVe or random, their size, fine-tuning, the vocabulary
        encoder                 a pretrained sub-word encoder (opinion_tagger.encoders), frozen or fine-tuned
        recurrent               the bidirectional recurrent stack: cell, depth, size, dropout
        head                    softmax per token or a linear-chain CRF, per type
        auxiliary               heads for MPQA's other annotations, trained beside the types, not output
        frames                  heads for each span's polarity and intensity and each DSE's holder
      training                  the trainer, seed, batches, epochs, precision, initialisation
        optimizer, schedule, stopping, distillation
        fast                    options only the fast (JAX) trainer implements

A field has one name, its dotted path: ``model.recurrent.cell``, ``training.optimizer.learning_rate``.  A
configuration is written nested (``{"model": {"recurrent": {"cell": "lstm"}}}``), by paths
(``{"model.recurrent.cell": "lstm"}``) or both mixed, in a bundle's ``config.json``, an experiment's YAML, a
result, ``opinion-tagger train --config``; it is saved nested, with its ``version`` (2).  The version 1 form,
every field at the top level under a flat name of its own, is read by ``opinion_tagger.config.legacy`` alone.

The blocks are pydantic (v2) models: frozen, no unknown key, each value of its field's type as written
(``"false"`` is not a boolean) and within its range; the checks that span fields follow.  pydantic is already
installed with spaCy, a core dependency, so it adds nothing to install.  A configuration that is not one raises
ConfigError (a TaggerError and a ValueError): one line naming the field by its path and the value.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator
from pydantic.fields import FieldInfo

from opinion_tagger.cells import CELLS as CELL_SPECS
from opinion_tagger.cells import budget_units
from opinion_tagger.config import legacy
from opinion_tagger.config.blocks import (
    BUDGET_PARAMETERS,
    BUDGETS,
    CELLS,
    FEATURES,
    GLOVE_DIM,
    INITS,
    LR_SCHEDULES,
    OPTIMIZERS,
    OUTPUTS,
    PRECISIONS,
    TABLE_CELLS,
    TASKS,
    TRAINERS,
    ModelConfig,
    OneOf,
    TrainingConfig,
)
from opinion_tagger.encoders import ENCODERS, Encoder
from opinion_tagger.errors import ConfigError
from opinion_tagger.sentences import AUXILIARY_TYPES

VERSION = 2  # 1: every field at the top level under a flat name (opinion_tagger.config.legacy)
__all__ = [
    "BUDGETS",
    "CELLS",
    "FEATURES",
    "INITS",
    "LR_SCHEDULES",
    "OPTIMIZERS",
    "OUTPUTS",
    "PRECISIONS",
    "TASKS",
    "TRAINERS",
    "VERSION",
    "FAST_ONLY",
    "FIELDS",
    "ConfigError",
    "TaggerConfig",
    "check_value",
    "given_fields",
]

# Options the fast (JAX) trainer alone implements, with their neutral values.
FAST_ONLY = {
    "training.fast.loss_sum": False,
    "training.fast.output_lr_scale": 1.0,
    "training.fast.lr_decay": 1.0,
    "training.fast.l2": 0.0,
    "training.fast.activation_l2": 0.0,
    "training.stopping.eval_every": 1,
}
# The fields that may change when training continues from a bundle: the training block's, and the dropout
# rates (the network stays).
_TRAINING_TOO = ("model.recurrent.input_dropout", "model.recurrent.dropout")


class TaggerConfig(BaseModel):
    """Model and training of a tagger.  ``from_dict`` reads one (nested, by paths, or version 1), ``to_dict``
    gives its nested form, ``replace`` a copy with fields changed by path."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    task: Annotated[str, OneOf(tuple(TASKS))] = Field(
        default="dse", description="what is tagged: dse, ese, or joint (one network, a head per type)"
    )
    model: ModelConfig = ModelConfig()
    training: TrainingConfig = TrainingConfig()

    def __init__(self, **data: Any) -> None:  # TaggerConfig(task=...): the one-line error of from_dict too
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise ConfigError("; ".join(_message(e) for e in exc.errors())) from None

    @model_validator(mode="after")
    def _fields_agree(self) -> TaggerConfig:
        problems = list(_problems(self))
        if problems:
            raise ValueError("; ".join(problems))
        return self

    # ------------------------------------------------------------------ derived
    @property
    def types(self) -> tuple[str, ...]:
        return TASKS[self.task]

    @property
    def auxiliary_types(self) -> tuple[str, ...]:
        """The auxiliary heads' types (``opinion_tagger.corpus.auxiliary``), in the order given."""
        types = self.model.auxiliary.types
        return tuple(t.strip().upper() for t in types.split(",")) if types else ()

    @property
    def trained_types(self) -> tuple[str, ...]:
        """Every head training fits: the tagged types, then the auxiliary ones."""
        return self.types + self.auxiliary_types

    @property
    def encoder(self) -> Encoder:
        """The registry entry of the sub-word encoder (ValueError for a configuration without one)."""
        if self.model.encoder.name is None:
            raise ValueError("config: no encoder")
        return ENCODERS[self.model.encoder.name]

    @property
    def hidden_size(self) -> int:
        r = self.model.recurrent
        if r.depth == 0:
            return 0
        if r.hidden is not None:
            return r.hidden
        budget = str(r.budget)  # a budget when hidden is None (checked)
        if r.cell not in TABLE_CELLS:
            return budget_units(r.cell, r.depth, BUDGET_PARAMETERS[budget], r.factors)
        return BUDGETS[budget][r.depth - 1]

    @property
    def cell_activation(self) -> str | None:
        """The nonlinearity the cell runs with (None for lstm and gru, which fix theirs)."""
        r = self.model.recurrent
        return r.activation if r.activation is not None else CELL_SPECS[r.cell].activation

    @property
    def word_dim(self) -> int:
        """The size of a word vector: GloVe's 50, or ``model.embeddings.dim`` for random vectors."""
        e = self.model.embeddings
        return GLOVE_DIM if e.features == "glove" else e.dim

    # ------------------------------------------------------------------ forms
    def to_dict(self) -> dict[str, Any]:
        """The nested form with its version (``config.json``, results)."""
        return {"version": VERSION, **self.model_dump()}

    def dotted(self) -> dict[str, Any]:
        """Every field by its path, in the order of the blocks."""
        return {path: self.at(path) for path in FIELDS}

    def at(self, path: str) -> Any:
        """The value of the field at ``path`` (``config.at("model.recurrent.cell")``)."""
        if path not in FIELDS:
            raise ConfigError(_unknown(path))
        value: Any = self
        for name in path.split("."):
            value = getattr(value, name)
        return value

    def training_fields(self) -> dict[str, Any]:
        """The fields, by path, that may change when training continues from a bundle (the training block's,
        and the dropout rates: the network stays)."""
        return {p: v for p, v in self.dotted().items() if p.startswith("training.") or p in _TRAINING_TOO}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TaggerConfig:
        """A configuration from its nested form, from paths (``{"model.recurrent.cell": "lstm"}``), or both
        mixed, the fields not given at their defaults; a dictionary with ``version: 1``, or without a version
        and with flat names, is of version 1 (``opinion_tagger.config.legacy``).  ConfigError naming the field."""
        values = given_fields(data)
        try:
            return cls.model_validate(nest(values))
        except ValidationError as exc:
            raise ConfigError("; ".join(_message(e) for e in exc.errors())) from None

    def replace(self, changes: Mapping[str, Any] | None = None, /, **more: Any) -> TaggerConfig:
        """A copy with fields changed, given by path (nested blocks too): ``config.replace({"training.seed":
        2})``, ``config.replace(task="joint")``, ``config.replace(other.training_fields())``."""
        values = self.dotted()
        for path, value in dotted_items({**(changes or {}), **more}):
            if path not in values:
                raise ConfigError(_unknown(path))
            values[path] = value
        return TaggerConfig.from_dict(values)

    def save(self, path: str | Path) -> None:
        from opinion_tagger.storage import atomic_write_text

        atomic_write_text(path, json.dumps(self.to_dict(), indent=2) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> TaggerConfig:
        try:
            return cls.from_dict(json.loads(Path(path).read_text()))
        except ConfigError as exc:
            raise ConfigError(f"{path}: {exc}") from None


def _problems(c: TaggerConfig) -> Iterator[str]:
    """What fields that are each valid say against one another, each naming its fields by path."""
    yield from _network_problems(c)
    yield from _training_problems(c)


def _network_problems(c: TaggerConfig) -> Iterator[str]:
    enc, r = c.model.encoder, c.model.recurrent
    allowed = CELL_SPECS[r.cell].activations
    if r.activation is not None and r.activation not in allowed:
        takes = f"it takes {' or '.join(allowed)}" if allowed else "the cell has its own: leave it unset"
        yield f"model.recurrent.activation: {_shown(r.activation)} is not for cell {r.cell} ({takes})"
    if r.factors is not None and r.cell != "mrnn":
        yield f"model.recurrent.factors: {r.factors} is for cell mrnn, not {r.cell}"
    if r.decay_init is not None and r.cell != "irlm":
        yield f"model.recurrent.decay_init: {r.decay_init} is for cell irlm, not {r.cell}"
    if r.depth == 0 and not enc.name:
        yield "model.recurrent.depth: 0 (no recurrent layer) needs an encoder (model.encoder.name)"
    if r.hidden is None and r.budget is None:
        yield f"model.recurrent: give hidden units (hidden) or a budget ({', '.join(BUDGETS)})"
    if enc.name and not enc.fine_tune and not ENCODERS[enc.name].frozen_vectors:
        yield f"model.encoder.name: {enc.name} is read inside the network (model.encoder.fine_tune: true)"
    if enc.fine_tune and not enc.name:
        yield "model.encoder.fine_tune: true needs an encoder (model.encoder.name)"
    if enc.lora_rank and not enc.fine_tune:
        yield f"model.encoder.lora_rank: {enc.lora_rank} needs model.encoder.fine_tune: true"
    if enc.fine_tune and enc.pooling != "first":
        yield f"model.encoder.pooling: {_shown(enc.pooling)}: a fine-tuned encoder reads each word's first wordpiece"
    f = c.model.frames
    if f.holder_context and f.context_holder:
        yield (
            "model.frames.holder_context: the holder pointer reads its own view or the targets' (context_holder), "
            "not both"
        )


def _training_problems(c: TaggerConfig) -> Iterator[str]:
    m, t = c.model, c.training
    d = t.distillation
    if (d.teacher is not None) != (d.weight > 0):
        yield (
            f"training.distillation: a teacher and a weight above 0 go together (teacher {_shown(d.teacher)}, "
            f"weight {d.weight})"
        )
    if d.copies and d.teacher is None:
        yield f"training.distillation.copies: {d.copies} needs a teacher (training.distillation.teacher)"
    aux = c.auxiliary_types
    if not all(a in AUXILIARY_TYPES for a in aux) or len(set(aux)) != len(aux):
        yield (
            f"model.auxiliary.types: {_shown(m.auxiliary.types)} must name distinct types among "
            f"{', '.join(AUXILIARY_TYPES)}"
        )
    if aux and t.trainer != "keras":
        yield "model.auxiliary.types: auxiliary heads need training.trainer: keras"
    if aux and d.teacher is not None:
        yield "model.auxiliary.types: auxiliary heads and distillation do not go together (a teacher tags none)"
    # frame heads with trainer: fast or distillation copies describe a network trained so and heads fitted on it
    # afterwards (--heads-only); the trainers refuse to train such heads themselves
    if t.trainer == "keras":
        changed = [f"{p}: {_shown(c.at(p))}" for p, neutral in FAST_ONLY.items() if c.at(p) != neutral]
        if changed:
            yield f"{', '.join(changed)} need{'s' if len(changed) == 1 else ''} training.trainer: fast"
    else:
        if m.head.output != "softmax" or m.encoder.name or m.recurrent.depth == 0:
            yield "training.trainer: fast trains recurrent taggers with softmax output on word features (no encoder)"
        if t.precision != "float32":
            yield f"training.precision: {t.precision} needs training.trainer: keras"


# ---------------------------------------------------------------------- paths
def _leaves(cls: type[BaseModel], prefix: str = "") -> Iterator[tuple[str, FieldInfo]]:
    for name, f in cls.model_fields.items():
        if isinstance(f.annotation, type) and issubclass(f.annotation, BaseModel):
            yield from _leaves(f.annotation, f"{prefix}{name}.")
        else:
            yield prefix + name, f


FIELDS: dict[str, FieldInfo] = dict(_leaves(TaggerConfig))
"""Every field by its path, in the order of the blocks, with its pydantic description (type, default)."""


def check_value(path: str, value: Any) -> Any:
    """``value`` as the field at ``path`` takes it, alone (its type and range; not the checks across fields);
    ConfigError naming the field otherwise."""
    if path not in FIELDS:
        raise ConfigError(_unknown(path))
    f = FIELDS[path]
    kind: Any = Annotated[(f.annotation, *f.metadata)] if f.metadata else f.annotation
    try:
        return TypeAdapter(kind).validate_python(value, strict=True)
    except ValidationError as exc:
        raise ConfigError("; ".join(_message(e, path) for e in exc.errors())) from None


def given_fields(data: Mapping[str, Any]) -> dict[str, Any]:
    """The fields a configuration gives, by path, however it is written: nested, by paths or both, or of
    version 1 (migrated); ConfigError for a field given twice or a version not read here."""
    if not isinstance(data, Mapping):
        raise ConfigError(f"a configuration is an object of fields, not {_shown(data)}")
    data = dict(data)
    version = data.pop("version", None)
    if version == 1 or (version is None and legacy.is_flat(data)):
        data = legacy.migrate(data)
    elif version is not None and version != VERSION:
        raise ConfigError(f"version: {_shown(version)} is not supported (this version reads 1 and {VERSION})")
    out: dict[str, Any] = {}
    for path, value in dotted_items(data):
        if path in out:
            raise ConfigError(f"{path}: given twice")
        out[path] = value
    return out


def dotted_items(data: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(path, value) of every value in a configuration written nested, by paths or both (an empty block as
    one value, ``{}``)."""
    for key, value in data.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            yield from dotted_items(value, path + ".")
        else:
            yield path, value


def nest(values: Mapping[str, Any]) -> dict[str, Any]:
    """The nested form of fields given by path; ConfigError for a block also given as a value."""
    out: dict[str, Any] = {}
    for path, value in values.items():
        names = str(path).split(".")
        where = out
        for k, name in enumerate(names[:-1]):
            where = where.setdefault(name, {})
            if not isinstance(where, dict):
                raise ConfigError(f"{'.'.join(names[: k + 1])}: given as a value and as a block")
        leaf = names[-1]
        if isinstance(value, Mapping):  # an empty block: its fields' defaults
            value = where.get(leaf, {})
        elif isinstance(where.get(leaf), dict):
            raise ConfigError(f"{path}: given as a value and as a block")
        where[leaf] = value
    return out


# ---------------------------------------------------------------------- messages
_REASONS = {
    "bool_type": "is not a boolean (true or false)",
    "int_type": "is not an integer",
    "float_type": "is not a number",
    "string_type": "is not a string",
    "model_type": "is not a block of fields",
    "model_attributes_type": "is not a block of fields",
    "greater_than": "must be greater than {gt}",
    "greater_than_equal": "must be {ge} or more",
    "less_than": "must be less than {lt}",
    "less_than_equal": "must be {le} or less",
}


def _shown(value: Any) -> str:
    """A value as a configuration file writes it: ``"false"``, ``32``, ``true``, ``null``."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _message(error: Any, where: str = "") -> str:
    """One pydantic error as one clause: the field's path (below ``where``), the value, what is wrong."""
    path = ".".join(str(p) for p in (*(where.split(".") if where else ()), *error["loc"]))
    kind = error["type"]
    if kind == "value_error":  # the checks across fields, which name theirs
        return str(error["msg"]).removeprefix("Value error, ")
    if kind == "extra_forbidden":
        return _unknown(path)
    reason = _REASONS.get(kind, "")
    ctx = {k: f"{v:g}" if isinstance(v, float) else v for k, v in error.get("ctx", {}).items()}
    reason = reason.format(**ctx) if reason else str(error["msg"])
    return f"{path}: {_shown(error.get('input'))} {reason}"


def _unknown(path: str) -> str:
    """The message for a key that is no field, with the field meant where one is near."""
    leaf = path.rsplit(".", 1)[-1]
    near = [p for p in FIELDS if p.rsplit(".", 1)[-1] == leaf] or difflib.get_close_matches(path, FIELDS, 1, 0.8)
    return f"{path}: unknown field" + (f" (did you mean {' or '.join(near)}?)" if near else "")
