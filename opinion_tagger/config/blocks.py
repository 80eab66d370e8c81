"""The blocks of a configuration (``opinion_tagger.config.TaggerConfig``): the model's (embeddings, encoder,
recurrent stack, head, auxiliary heads, frame heads) and training's (optimizer, schedule, stopping,
distillation, the fast trainer's options), each field with its flat name and its ``opinion-tagger train``
option."""

from __future__ import annotations

from dataclasses import dataclass, field

from opinion_tagger.cells import ACTIVATIONS
from opinion_tagger.cells import CELLS as CELL_SPECS
from opinion_tagger.encoders import ENCODERS
from opinion_tagger.sentences import AUXILIARY_TYPES

# Hidden units per direction for the paper's parameter budgets, depth 1..5
# (Irsoy & Cardie 2014, solved for 300-d inputs).
# Elman, LSTM and GRU take these sizes (the results run so far did); the other cells the units whose
# recurrent parameters come nearest the budget's count (opinion_tagger.cells.budget_units).
BUDGETS = {"24k": (36, 29, 25, 22, 21), "200k": (200, 125, 100, 86, 77)}
TABLE_CELLS = ("elman", "lstm", "gru")
BUDGET_PARAMETERS = {"24k": 24_000, "200k": 200_000}
TASKS = {"dse": ("DSE",), "ese": ("ESE",), "joint": ("DSE", "ESE")}
CELLS = tuple(CELL_SPECS)
OUTPUTS = ("softmax", "crf")
FEATURES = ("glove", "random")
GLOVE_DIM = 50  # the size of a GloVe 6B 50-d vector
OPTIMIZERS = ("adam", "sgd")
LR_SCHEDULES = ("constant", "cosine")
TRAINERS = ("keras", "fast")
INITS = ("keras", "uniform")
PRECISIONS = ("float32", "mixed_bfloat16")
FRAME_BOTH = ("keep", "neutral")
DSE_INTENSITIES = ("intensity", "expression-intensity")


def _field(default, help: str = "", name: str = "", recipe: bool = False, **option):
    """A configuration field: its default, its flat name (``name``; default: the field's own), its
    ``opinion-tagger train`` option (``help``; ``option``: ``flag`` when not ``--flat-name``, ``const`` for a
    flag without a value, ``choices``, ``metavar``, ``type``, ``exclusive``: the name of a group of mutually
    exclusive options) and whether the option belongs to the authors' recipe group (``recipe``)."""
    return field(default=default, metadata={"flat": name, "help": help, "recipe": recipe, **option})


def _block(cls):
    return field(default_factory=cls, metadata={"block": True})


@dataclass
class Embeddings:
    features: str = _field("glove", choices=FEATURES)  # glove (GloVe 6B 50-d) | random
    dim: int = _field(50, "the size of random word vectors (GloVe's are 50)", name="embedding_dim")
    fine_tune: bool = _field(False, "update the pretrained word vectors", const=True)
    glove_vocab: int = _field(20000, "the most frequent GloVe words always in the vocabulary")
    min_count: int = _field(1, "training-word frequency to get its own trainable vector")


@dataclass
class EncoderBlock:
    name: str | None = _field(  # None | a registry encoder
        None,
        "a pretrained sub-word encoder (the train extra): minilm (MiniLM-L6; frozen vectors, or fine-tuned) or "
        "mpnet (MPNet-base, fine-tuned only; opinion-tagger download --encoder mpnet)",
        name="contextual",
        choices=tuple(ENCODERS),
    )
    fine_tune: bool = _field(
        False,
        "train the encoder with the tagger instead of using frozen vectors (first wordpiece; use a small --lr "
        "such as 5e-5)",
        name="context_fine_tune",
        flag="--fine-tune-context",
        const=True,
    )
    lora_rank: int = _field(
        0,
        "with --fine-tune-context: train low-rank (LoRA) adapters of rank R on the encoder's attention instead "
        "of all its weights; the bundle then holds only what training changed",
        name="context_lora_rank",
        flag="--lora-rank",
        metavar="R",
    )
    pooling: str = _field(
        "first",
        "a word's vector from its wordpieces (frozen vectors)",
        name="context_pooling",
        choices=("first", "mean"),
    )


@dataclass
class Recurrent:
    cell: str = _field(
        "elman", "elman, lstm, gru, mrnn (multiplicative RNN), irlm (impulse-response units)", choices=CELLS
    )
    depth: int = _field(  # bidirectional layers; each reads both directions of the one below (0: encoder only)
        3, "recurrent layers; 0 only with --contextual", choices=range(0, 6), metavar="0..5"
    )
    budget: str | None = _field(  # 24k | 200k: the paper's hidden sizes per depth
        "200k",
        "the paper's hidden sizes per depth; mrnn, irlm: the units nearest its parameter count",
        choices=tuple(BUDGETS),
        exclusive="size",
    )
    hidden: int | None = _field(None, "hidden units per direction (instead of --budget)", type=int, exclusive="size")
    activation: str | None = _field(  # None: the cell's own; lstm and gru have theirs
        None,
        "the nonlinearity of elman (relu, tanh) and mrnn, what irlm layers output "
        "(default: the cell's own: elman relu, mrnn tanh, irlm linear)",
        choices=ACTIVATIONS,
    )
    factors: int | None = _field(None, "mrnn: factor units per direction (default: the hidden size)", type=int)
    decay_init: float | None = _field(
        None, "irlm: every unit's decay starts here, in (-1, 1) (default: drawn as --init draws weights)", type=float
    )
    input_dropout: float = _field(0.2, "dropout on the word features")
    dropout: float = _field(0.2, "dropout between recurrent layers and before the heads")


@dataclass
class Head:
    output: str = _field("softmax", "linear-chain CRF output", flag="--crf", const="crf")  # softmax | crf


@dataclass
class Auxiliary:
    types: str | None = _field(
        None,
        "train heads for MPQA's other annotations beside the tagged types, comma-separated: "
        f"{', '.join(AUXILIARY_TYPES)} (objective speech events); their tags are not output",
        name="auxiliary",
        metavar="TYPES",
    )
    weight: float = _field(0.5, "loss weight of each auxiliary head", name="auxiliary_weight")


@dataclass
class Frames:
    """Opinion frames (docs/frames.md): heads on the recurrent states that give each span its polarity and
    intensity (a softmax on the mean of its states) and each DSE its holder (a pointer over the sentence's
    tokens, or writer, implicit, none), trained from the gold spans."""

    enabled: bool = _field(
        False,
        "also predict each span's polarity and intensity and each DSE's holder (data: mpqa or reference)",
        name="frames",
        const=True,
    )
    weight: float = _field(0.5, "loss weight of each frame head", name="frame_weight")
    units: int = _field(64, "units of the holder pointer's scoring layer", name="frame_units")
    both: str = _field(
        "keep",
        "MPQA's polarity both: a class of its own (keep) or read as neutral",
        name="frame_both",
        choices=FRAME_BOTH,
    )
    dse_intensity: str = _field(
        "intensity",
        "what a DSE's intensity head learns: MPQA's intensity or its expression-intensity",
        name="frame_dse_intensity",
        choices=DSE_INTENSITIES,
    )
    detach: bool = _field(
        False,
        "the heads learn on the states without training them (no gradient from the heads' losses into the "
        "network that tags)",
        name="frame_detach",
        const=True,
    )


@dataclass
class ModelConfig:
    embeddings: Embeddings = _block(Embeddings)
    encoder: EncoderBlock = _block(EncoderBlock)
    recurrent: Recurrent = _block(Recurrent)
    head: Head = _block(Head)
    auxiliary: Auxiliary = _block(Auxiliary)
    frames: Frames = _block(Frames)


@dataclass
class Optimizer:
    name: str = _field("adam", "adam, or sgd with momentum (the paper)", name="optimizer", choices=OPTIMIZERS)
    learning_rate: float = _field(0.001, "peak learning rate", flag="--lr")
    momentum: float = _field(0.9, "sgd's momentum")
    clipnorm: float = _field(5.0, "largest norm of each weight's gradient (0: no clipping)")


@dataclass
class Schedule:
    name: str = _field(
        "constant",
        "cosine: warm-up over the first tenth of --max-epochs, then decay to zero",
        name="lr_schedule",
        choices=LR_SCHEDULES,
    )


@dataclass
class Stopping:
    max_epochs: int = _field(30, "epochs at most")
    patience: int = _field(  # they count once the dev F1 has risen above 0 (an all-O network trains on)
        5,
        "dev evaluations without a better dev proportional F1 before stopping, counted once the dev F1 "
        "is above 0; 0: never stop",
    )
    eval_every: int = _field(1, "epochs between dev evaluations (--patience counts these; fast trainer)", recipe=True)


@dataclass
class Distillation:
    teacher: str | None = _field(
        None,
        "distillation (both trainers): a bundle whose tag probabilities (a CRF's marginals) the student also learns "
        "from, trained on no dev or test document of the run ({fold} in the path: the run's fold)",
        metavar="BUNDLE",
    )
    weight: float = _field(
        0.0,
        "distillation: the teacher's share of each token's loss, in [0, 1] (gold's: the rest)",
        name="distill_weight",
    )
    copies: int = _field(
        0,
        "distillation: this many noisy copies of each training sentence join the training data, tagged by the "
        "teacher alone (its likeliest tag per word as gold, its probabilities as the soft targets)",
        name="distill_copies",
    )
    noise: float = _field(
        0.15,
        "distillation: the share of a copy's words replaced by words drawn from the training text",
        name="distill_noise",
    )


@dataclass
class FastOptions:
    """The authors' released recipe (oir/deep-recurrent, drnt.cpp), which the fast (JAX) trainer implements."""

    loss_sum: bool = _field(False, "sum token losses over a batch instead of averaging them", const=True, recipe=True)
    output_lr_scale: float = _field(1.0, "learning-rate multiplier of the output layer", recipe=True)
    lr_decay: float = _field(1.0, "learning rate multiplied by this after every update", recipe=True)
    l2: float = _field(0.0, "L2 penalty on network weights, l2/2 ||w||^2 per batch", recipe=True)
    activation_l2: float = _field(0.0, "L2 penalty on hidden activations per batch", recipe=True)


@dataclass
class TrainingConfig:
    trainer: str = _field(  # keras (Keras train_on_batch loop) | fast (JAX loop; softmax output, word features)
        "keras",
        "fast: a JAX training loop (softmax output, word features; the fast extra), the only one with the "
        "options of this group but --o-weight",
        choices=TRAINERS,
        recipe=True,
    )
    seed: int = _field(1, "random seed")
    batch_size: int = _field(32, "sentences a batch")
    precision: str = _field(  # float32 | mixed_bfloat16 (Keras trainer; the saved network is float32 either way)
        "float32",
        "mixed_bfloat16: train with bfloat16 products and float32 weights (the output layers float32); "
        "the saved network computes in float32",
        choices=PRECISIONS,
    )
    jit_compile: bool = _field(  # XLA on the TensorFlow backend (the JAX backend always compiles)
        True, "do not compile the training step with XLA", flag="--no-jit", const=False
    )
    init: str = _field(  # keras (Glorot / orthogonal / zero biases) | uniform: U(-init_scale, init_scale)
        "keras",
        "uniform: every recurrent and output weight from U(-init_scale, init_scale), as the authors' code",
        choices=INITS,
    )
    init_scale: float = _field(0.01, "range of --init uniform", recipe=True)
    o_weight: float = _field(1.0, "loss weight of tokens whose gold tag is O (both trainers)", recipe=True)
    optimizer: Optimizer = _block(Optimizer)
    schedule: Schedule = _block(Schedule)
    stopping: Stopping = _block(Stopping)
    distillation: Distillation = _block(Distillation)
    fast: FastOptions = _block(FastOptions)
