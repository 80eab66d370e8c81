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

It is saved in every model bundle (``config.json``) and in every experiment result, with its ``version``.
Every leaf field also has a flat name, the name of its ``opinion-tagger train`` option and of a key of an
experiment's ``model:`` block (``cell``, ``context_lora_rank``, ``lr_schedule``, ...): the form the
configuration had before blocks, version 1, which ``from_dict`` migrates and ``flat`` gives back.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from opinion_tagger.cells import CELLS as CELL_SPECS
from opinion_tagger.cells import budget_units
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
    TrainingConfig,
    _block,
    _field,
)
from opinion_tagger.encoders import ENCODERS, Encoder
from opinion_tagger.sentences import AUXILIARY_TYPES

VERSION = 2  # 1: every field at the top level (bundles and results written before the blocks)
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
    "DIGEST_LATER",
    "FAST_ONLY",
    "LEAVES",
    "TaggerConfig",
]


def _leaves(cls, path: tuple[str, ...] = ()):
    """(flat name, path of attribute names, dataclass field) of every leaf field below ``cls``."""
    for f in fields(cls):
        if f.metadata.get("block"):
            yield from _leaves(f.default_factory, (*path, f.name))
        else:
            yield f.metadata.get("flat") or f.name, (*path, f.name), f


# Options the fast (JAX) trainer alone implements, by flat name, with their neutral values.
FAST_ONLY = {
    "loss_sum": False,
    "output_lr_scale": 1.0,
    "lr_decay": 1.0,
    "l2": 0.0,
    "activation_l2": 0.0,
    "eval_every": 1,
}
# Version 1 fields added after bundles recorded the sha256 of their configuration (model.onnx, meta.json), with
# the values that mean "as before": left out of that digest at these values (``runtime.bundle.config_digest``).
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


@dataclass
class TaggerConfig:
    """Model and training of a tagger; every leaf field is an option of ``opinion-tagger train``
    (``opinion_tagger.cli.options`` makes them from the metadata here)."""

    task: str = _field("dse", "what is tagged: dse, ese, or joint (one network, a head per type)", choices=tuple(TASKS))
    model: ModelConfig = _block(ModelConfig)
    training: TrainingConfig = _block(TrainingConfig)

    def __post_init__(self):
        self.validate()

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
        if r.cell not in TABLE_CELLS:
            return budget_units(r.cell, r.depth, BUDGET_PARAMETERS[str(r.budget)], r.factors)
        return BUDGETS[str(r.budget)][r.depth - 1]  # validate(): a budget when hidden is None

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

    # ------------------------------------------------------------------ checks
    def validate(self) -> None:
        def check(ok, msg):
            if not ok:
                raise ValueError(f"config: {msg}")

        flat = self.flat()
        for name, value in flat.items():  # each choice-limited field within its choices
            choices = LEAVES[name][1].metadata.get("choices")
            if choices is not None and value is not None and value not in choices:
                shown = ", ".join(map(str, choices)) if not isinstance(choices, range) else "0..5"
                check(False, f"{name} must be one of {shown}, got {value!r}")
        m, t = self.model, self.training
        e, enc, r = m.embeddings, m.encoder, m.recurrent
        allowed = CELL_SPECS[r.cell].activations
        check(
            r.activation is None or r.activation in allowed,
            f"activation of cell {r.cell} must be {' or '.join(allowed) or 'left unset'}, got {r.activation!r}",
        )
        check(
            r.factors is None or (r.cell == "mrnn" and r.factors > 0),
            f"factors (positive) is for cell mrnn, got {r.factors!r} (cell {r.cell})",
        )
        check(
            r.decay_init is None or (r.cell == "irlm" and -1 < r.decay_init < 1),
            f"decay_init (in (-1, 1)) is for cell irlm, got {r.decay_init!r} (cell {r.cell})",
        )
        check(r.depth > 0 or enc.name, "depth 0 (no recurrent layer) needs contextual features")
        check(
            r.hidden is not None or r.budget in BUDGETS,
            f"give hidden units or a budget ({', '.join(BUDGETS)}), got budget {r.budget!r}",
        )
        check(r.hidden is None or r.hidden > 0, f"hidden must be positive, got {r.hidden}")
        check(
            enc.name is None or enc.fine_tune or ENCODERS[enc.name].frozen_vectors,
            f"contextual: {enc.name} is read inside the network (context_fine_tune: true)",
        )
        check(not enc.fine_tune or enc.name, "context_fine_tune needs a contextual encoder")
        check(0 <= enc.lora_rank <= 256, f"context_lora_rank must be 0..256, got {enc.lora_rank}")
        check(not enc.lora_rank or enc.fine_tune, "context_lora_rank needs context_fine_tune")
        check(
            not enc.fine_tune or enc.pooling == "first",
            "a fine-tuned encoder reads each word's first wordpiece (context_pooling: first)",
        )
        check(0 <= r.input_dropout < 1 and 0 <= r.dropout < 1, "dropout must be in [0, 1)")
        o, stop, d, fast = t.optimizer, t.stopping, t.distillation, t.fast
        check(t.batch_size > 0 and stop.max_epochs > 0 and o.learning_rate > 0, "sizes must be positive")
        check(e.dim > 0 and e.glove_vocab >= 0, "embedding sizes must be positive")
        check(t.init_scale > 0, "init_scale must be positive")
        check(t.o_weight > 0 and fast.output_lr_scale > 0, "o_weight and output_lr_scale must be positive")
        check(0 < fast.lr_decay <= 1, f"lr_decay must be in (0, 1], got {fast.lr_decay}")
        check(fast.l2 >= 0 and fast.activation_l2 >= 0 and o.clipnorm >= 0, "penalties and clipnorm must be >= 0")
        check(stop.eval_every >= 1 and stop.patience >= 0, "eval_every must be >= 1 and patience >= 0")
        check(0 <= d.weight <= 1, f"distill_weight must be in [0, 1], got {d.weight}")
        check((d.teacher is not None) == (d.weight > 0), "a teacher and distill_weight above 0 go together")
        check(d.copies >= 0, f"distill_copies must be >= 0, got {d.copies}")
        check(not d.copies or d.teacher is not None, "distill_copies needs a teacher")
        check(0 <= d.noise <= 1, f"distill_noise must be in [0, 1], got {d.noise}")
        aux = self.auxiliary_types
        check(
            all(a in AUXILIARY_TYPES for a in aux) and len(set(aux)) == len(aux),
            f"auxiliary takes distinct types among {', '.join(AUXILIARY_TYPES)}, got {m.auxiliary.types!r}",
        )
        check(not aux or t.trainer == "keras", "auxiliary heads need trainer: keras")
        check(
            not aux or d.teacher is None,
            "auxiliary heads and distillation do not go together (a teacher tags no auxiliary type)",
        )
        check(m.auxiliary.weight > 0, f"auxiliary_weight must be positive, got {m.auxiliary.weight}")
        # frame heads with trainer: fast or distill_copies describe a network trained so and heads fitted on it
        # afterwards (--heads-only); the trainers refuse to train such heads themselves
        check(m.frames.weight > 0 and m.frames.units > 0, "frame_weight and frame_units must be positive")
        if t.trainer == "keras":
            changed = sorted(k for k, v in FAST_ONLY.items() if flat[k] != v)
            check(not changed, f"{', '.join(changed)} need trainer: fast")
        else:
            check(
                m.head.output == "softmax" and not enc.name and r.depth > 0,
                "trainer fast trains recurrent taggers with softmax output on word features (no contextual)",
            )
            check(t.precision == "float32", f"precision {t.precision} needs trainer: keras")

    # ------------------------------------------------------------------ forms
    def to_dict(self) -> dict[str, Any]:
        """The nested form with its version (``config.json``, results)."""
        return {"version": VERSION, **dataclasses.asdict(self)}

    def flat(self) -> dict[str, Any]:
        """Every leaf by its flat name (version 1's form: option names, experiments' keys)."""
        out = {}
        for name, path, _ in _leaves(TaggerConfig):
            value: Any = self
            for attr in path:
                value = getattr(value, attr)
            out[name] = value
        return out

    def training_fields(self) -> dict[str, Any]:
        """The flat fields that may change when training continues from a bundle (the training block's, and the
        dropout rates: the network stays)."""
        return {
            k: v for k, v in self.flat().items() if LEAVES[k][0][0] == "training" or k in ("dropout", "input_dropout")
        }

    @classmethod
    def from_dict(cls, data: dict) -> TaggerConfig:
        """A configuration from its nested form (``version`` 2) or from flat names (version 1, and experiments'
        ``model:`` blocks); ValueError naming an unknown key."""
        data = dict(data)
        version = data.pop("version", 1 if not any(k in data for k in ("model", "training")) else VERSION)
        if version == 1:
            return cls.from_flat(data)
        if version != VERSION:
            raise ValueError(f"config: version {version!r} is not supported (this version reads 1 and {VERSION})")
        return _build(cls, data, ())

    @classmethod
    def from_flat(cls, data: dict) -> TaggerConfig:
        """A configuration from flat names (unknown names refused); the rest at their defaults."""
        unknown = sorted(set(data) - set(LEAVES))
        if unknown:
            raise ValueError(f"config: unknown keys {', '.join(unknown)}")
        nested: dict = {}
        for name, value in data.items():
            path = LEAVES[name][0]
            block = nested
            for attr in path[:-1]:
                block = block.setdefault(attr, {})
            block[path[-1]] = value
        return _build(cls, nested, ())

    @classmethod
    def of(cls, **flat: Any) -> TaggerConfig:
        """A configuration from flat names given as arguments: ``TaggerConfig.of(cell="lstm", hidden=64)``."""
        return cls.from_flat(flat)

    def replace(self, **changes) -> TaggerConfig:
        """A copy with fields changed, given by their flat names."""
        return TaggerConfig.from_flat({**self.flat(), **changes})

    def save(self, path: str | Path) -> None:
        from opinion_tagger.storage import atomic_write_text

        atomic_write_text(path, json.dumps(self.to_dict(), indent=2) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> TaggerConfig:
        return cls.from_dict(json.loads(Path(path).read_text()))


def _build(cls, data: dict, path: tuple[str, ...]):
    """``cls`` from a nested dict (missing fields at their defaults; unknown keys refused, by their path)."""
    if not isinstance(data, dict):
        raise ValueError(f"config: {'.'.join(path)} must be an object, got {type(data).__name__}")
    known = {f.name: f for f in fields(cls)}
    unknown = sorted(set(data) - set(known))
    if unknown:
        where = ".".join(path)
        raise ValueError(f"config: unknown keys {', '.join((where + '.' if where else '') + k for k in unknown)}")
    values = {}
    for name, value in data.items():
        f = known[name]
        values[name] = _build(f.default_factory, value, (*path, name)) if f.metadata.get("block") else value
    return cls(**values)


# flat name -> (path of attribute names, field)
LEAVES: dict[str, tuple[tuple[str, ...], dataclasses.Field]] = {n: (p, f) for n, p, f in _leaves(TaggerConfig)}
FLAT_NAMES = tuple(LEAVES)
