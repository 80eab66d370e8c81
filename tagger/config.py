"""One configuration object for a tagger: its network, features and training.

It is saved in every model bundle (``config.json``) and in every experiment
result, and its defaults are what ``opinion-tagger train --help`` shows.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, fields
from pathlib import Path

# Hidden units per direction for the paper's parameter budgets, depth 1..5
# (Irsoy & Cardie 2014, solved for 300-d inputs).
BUDGETS = {"24k": (36, 29, 25, 22, 21), "200k": (200, 125, 100, 86, 77)}
TASKS = {"dse": ("DSE",), "ese": ("ESE",), "joint": ("DSE", "ESE")}
CELLS = ("elman", "lstm", "gru")
OUTPUTS = ("softmax", "crf")
FEATURES = ("glove", "random")
OPTIMIZERS = ("adam", "sgd")
LR_SCHEDULES = ("constant", "cosine")
TRAINERS = ("keras", "fast")
INITS = ("keras", "uniform")
# Training options that only the fast (JAX) trainer implements, with their neutral values.
FAST_ONLY = {"loss_sum": False, "output_lr_scale": 1.0, "lr_decay": 1.0, "l2": 0.0,
             "activation_l2": 0.0, "eval_every": 1}


@dataclass
class TaggerConfig:
    # --- what is tagged
    task: str = "dse"  # dse | ese | joint (one network, one output head per type)
    # --- network
    cell: str = "elman"  # elman (ReLU simple RNN, the paper) | lstm | gru
    depth: int = 3  # bidirectional layers; each reads both directions of the one below (0: contextual only)
    budget: str | None = "200k"  # 24k | 200k: the paper's hidden sizes per depth
    hidden: int | None = None  # hidden units per direction (overrides budget)
    output: str = "softmax"  # softmax per token (the paper) | crf (linear chain)
    input_dropout: float = 0.2
    dropout: float = 0.2  # between recurrent layers and before the output
    # --- word features
    features: str = "glove"  # glove (GloVe 6B 50-d) | random
    embedding_dim: int = 50  # for random embeddings (GloVe fixes 50)
    fine_tune: bool = False  # update pretrained vectors during training
    glove_vocab: int = 20000  # most frequent GloVe words always in the vocabulary
    min_count: int = 1  # training-word frequency to get its own trainable vector
    contextual: str | None = None  # None | minilm: MiniLM-L6 vectors concatenated to word vectors | mpnet:
    # MPNet-base (all-mpnet-base-v2), fine-tuned only (opinion-tagger download --encoder mpnet)
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
        return BUDGETS[self.budget][self.depth - 1]

    def validate(self) -> None:
        def check(ok, msg):
            if not ok:
                raise ValueError(f"config: {msg}")

        check(self.task in TASKS, f"task must be one of {', '.join(TASKS)}, got {self.task!r}")
        check(self.cell in CELLS, f"cell must be one of {', '.join(CELLS)}, got {self.cell!r}")
        check(0 <= self.depth <= 5, f"depth must be 1..5 (0 with contextual features), got {self.depth}")
        check(self.depth > 0 or self.contextual, "depth 0 (no recurrent layer) needs contextual features")
        check(self.hidden is not None or self.budget in BUDGETS,
              f"give hidden units or a budget ({', '.join(BUDGETS)}), got budget {self.budget!r}")
        check(self.hidden is None or self.hidden > 0, f"hidden must be positive, got {self.hidden}")
        check(self.output in OUTPUTS, f"output must be one of {', '.join(OUTPUTS)}, got {self.output!r}")
        check(self.features in FEATURES, f"features must be one of {', '.join(FEATURES)}, got {self.features!r}")
        check(self.contextual in (None, "minilm", "mpnet"),
              f"contextual must be minilm, mpnet or none, got {self.contextual!r}")
        check(self.contextual != "mpnet" or self.context_fine_tune,
              "contextual: mpnet is read inside the network (context_fine_tune: true)")
        check(self.context_pooling in ("first", "mean"), "context_pooling must be first or mean")
        check(not self.context_fine_tune or self.contextual, "context_fine_tune needs contextual: minilm or mpnet")
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
