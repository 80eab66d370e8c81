"""One configuration object for a tagger: its network, features and training.

It is saved in every model bundle (``config.json``) and in every experiment
result, and its defaults are what ``opinion-tagger train --help`` shows.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, fields
from pathlib import Path

from tagger.network.cells import budget_units
from tagger.network.cells import CELLS as CELL_SPECS

# Hidden units per direction for the paper's parameter budgets, depth 1..5
# (Irsoy & Cardie 2014, solved for 300-d inputs).
# Elman, LSTM and GRU take these sizes (the results run so far did); the other cells the units whose
# recurrent parameters come nearest the budget's count (tagger.network.cells.budget_units).
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
# Fields added after bundles recorded the sha256 of their configuration (model.onnx, meta.json), with the
# values that mean "as before": left out of that digest at these values (onnx_export.config_digest).
LATER_FIELDS = {"activation": None, "factors": None, "decay_init": None}
# Training options that only the fast (JAX) trainer implements, with their neutral values.
FAST_ONLY = {"loss_sum": False, "output_lr_scale": 1.0, "lr_decay": 1.0, "l2": 0.0,
             "activation_l2": 0.0, "eval_every": 1}


@dataclass
class TaggerConfig:
    # --- what is tagged
    task: str = "dse"  # dse | ese | joint (one network, one output head per type)
    # --- network
    cell: str = "elman"  # elman (ReLU simple RNN, the paper) | lstm | gru | mrnn (multiplicative) | irlm (impulse
    # response; tagger.network.cells)
    depth: int = 3  # bidirectional layers; each reads both directions of the one below (0: contextual only)
    budget: str | None = "200k"  # 24k | 200k: the paper's hidden sizes per depth (mrnn, irlm: nearest its parameters)
    hidden: int | None = None  # hidden units per direction (overrides budget)
    output: str = "softmax"  # softmax per token (the paper) | crf (linear chain)
    activation: str | None = None  # elman's and mrnn's nonlinearity, what irlm's layers output: relu | tanh |
    # linear (not elman); None: the cell's own (elman relu, mrnn tanh, irlm linear); lstm and gru have theirs
    factors: int | None = None  # mrnn: factor units per direction (None: the hidden size)
    decay_init: float | None = None  # irlm: every unit's decay d starts here, in (-1, 1) (None: drawn as --init says)
    input_dropout: float = 0.2
    dropout: float = 0.2  # between recurrent layers and before the output
    # --- word features
    features: str = "glove"  # glove (GloVe 6B 50-d) | random
    embedding_dim: int = 50  # for random embeddings (GloVe fixes 50)
    fine_tune: bool = False  # update pretrained vectors during training
    glove_vocab: int = 20000  # most frequent GloVe words always in the vocabulary
    min_count: int = 1  # training-word frequency to get its own trainable vector
    contextual: str | None = None  # None | minilm: MiniLM-L6 vectors concatenated to word vectors
    context_pooling: str = "first"  # first | mean wordpiece of a word (frozen vectors only)
    context_fine_tune: bool = False  # train the MiniLM encoder with the tagger (else frozen, cached vectors)
    context_lora_rank: int = 0  # >0: fine-tune the encoder through LoRA adapters of this rank (bundle: changes only)
    # --- training
    optimizer: str = "adam"  # adam | sgd (with momentum, the paper)
    learning_rate: float = 0.001
    lr_schedule: str = "constant"  # constant | cosine (warm-up over the first tenth of max_epochs, then decay)
    momentum: float = 0.9
    clipnorm: float = 5.0  # largest norm of each weight's gradient (0: no clipping)
    batch_size: int = 32
    max_epochs: int = 30
    patience: int = 5  # dev evaluations without a better dev proportional F1 before stopping (0: never stop);
    # they count once the dev F1 has risen above 0 (a network still tagging everything O trains on)
    seed: int = 1
    jit_compile: bool = True  # XLA on the TensorFlow backend (the JAX backend always compiles)
    init: str = "keras"  # keras (Glorot / orthogonal / zero biases) | uniform: U(-init_scale, init_scale), the authors'
    init_scale: float = 0.01
    # --- the authors' released recipe (oir/deep-recurrent, drnt.cpp); the fast trainer implements these
    trainer: str = "keras"  # keras (Keras train_on_batch loop) | fast (JAX loop; softmax output, word features)
    o_weight: float = 1.0  # loss weight of tokens whose gold tag is O (the authors: 0.5)
    loss_sum: bool = False  # sum token losses over the batch (the authors) instead of averaging over tokens
    output_lr_scale: float = 1.0  # learning-rate multiplier of the output layer (the authors: 0.1)
    lr_decay: float = 1.0  # learning rate multiplied by this after every update (the authors: 0.999)
    l2: float = 0.0  # penalty l2/2 * ||w||^2 per batch on recurrent and output weights and biases (the authors: 1e-4)
    activation_l2: float = 0.0  # penalty activation_l2/2 * ||h||^2 per batch on hidden activations (the authors: 1e-4)
    eval_every: int = 1  # epochs between dev evaluations (the authors: 5)

    def __post_init__(self):
        self.validate()

    @property
    def types(self) -> tuple[str, ...]:
        return TASKS[self.task]

    @property
    def hidden_size(self) -> int:
        if self.depth == 0:
            return 0
        if self.hidden is not None:
            return self.hidden
        if self.cell not in TABLE_CELLS:
            return budget_units(self.cell, self.depth, BUDGET_PARAMETERS[self.budget], self.factors)
        return BUDGETS[self.budget][self.depth - 1]

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
        check(self.activation is None or self.activation in allowed,
              f"activation of cell {self.cell} must be {' or '.join(allowed) or 'left unset'}, got {self.activation!r}")
        check(self.factors is None or (self.cell == "mrnn" and self.factors > 0),
              f"factors (positive) is for cell mrnn, got {self.factors!r} (cell {self.cell})")
        check(self.decay_init is None or (self.cell == "irlm" and -1 < self.decay_init < 1),
              f"decay_init (in (-1, 1)) is for cell irlm, got {self.decay_init!r} (cell {self.cell})")
        check(0 <= self.depth <= 5, f"depth must be 1..5 (0 with contextual features), got {self.depth}")
        check(self.depth > 0 or self.contextual, "depth 0 (no recurrent layer) needs contextual features")
        check(self.hidden is not None or self.budget in BUDGETS,
              f"give hidden units or a budget ({', '.join(BUDGETS)}), got budget {self.budget!r}")
        check(self.hidden is None or self.hidden > 0, f"hidden must be positive, got {self.hidden}")
        check(self.output in OUTPUTS, f"output must be one of {', '.join(OUTPUTS)}, got {self.output!r}")
        check(self.features in FEATURES, f"features must be one of {', '.join(FEATURES)}, got {self.features!r}")
        check(self.contextual in (None, "minilm"), f"contextual must be minilm or none, got {self.contextual!r}")
        check(self.context_pooling in ("first", "mean"), "context_pooling must be first or mean")
        check(not self.context_fine_tune or self.contextual, "context_fine_tune needs contextual: minilm")
        check(0 <= self.context_lora_rank <= 256, f"context_lora_rank must be 0..256, got {self.context_lora_rank}")
        check(not self.context_lora_rank or self.context_fine_tune, "context_lora_rank needs context_fine_tune")
        check(not self.context_fine_tune or self.context_pooling == "first",
              "a fine-tuned encoder reads each word's first wordpiece (context_pooling: first)")
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
        if self.trainer == "keras":
            changed = sorted(k for k, v in FAST_ONLY.items() if getattr(self, k) != v)
            check(not changed, f"{', '.join(changed)} need trainer: fast")
        else:
            check(self.output == "softmax" and not self.contextual and self.depth > 0,
                  "trainer fast trains recurrent taggers with softmax output on word features (no contextual)")

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "TaggerConfig":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"config: unknown keys {', '.join(unknown)}")
        return cls(**data)

    def replace(self, **changes) -> "TaggerConfig":
        return dataclasses.replace(self, **changes)

    def save(self, path: str | Path) -> None:
        from tagger.storage import atomic_write_text

        atomic_write_text(path, json.dumps(self.to_dict(), indent=2) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> "TaggerConfig":
        return cls.from_dict(json.loads(Path(path).read_text()))
