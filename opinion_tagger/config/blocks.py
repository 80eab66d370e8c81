"""The blocks of a configuration (``opinion_tagger.config.TaggerConfig``): the model's (embeddings, encoder,
recurrent stack, head, auxiliary heads, frame heads) and training's (optimizer, schedule, stopping,
distillation, the fast trainer's options), as pydantic models that check each field's type and range.

Every block is frozen, refuses a key it does not have, and takes each value as it is written (strict: the
string ``"false"`` is not a boolean, ``"32"`` not an integer; an integer stands for a real number).  A field
is named by its path from the top, ``model.recurrent.cell`` or ``training.optimizer.learning_rate``, the same
in YAML, JSON and Python; its ``description`` says what it does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from annotated_types import Ge, Gt, Le, Lt
from pydantic import BaseModel, ConfigDict, Field
from pydantic_core import PydanticCustomError, core_schema

from opinion_tagger.cells import ACTIVATIONS
from opinion_tagger.cells import CELLS as CELL_SPECS
from opinion_tagger.encoders import ENCODERS

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
COPY_STYLES = ("words", "genres")
TRAINERS = ("keras", "fast")
INITS = ("keras", "uniform")
PRECISIONS = ("float32", "mixed_bfloat16")
POOLINGS = ("first", "mean")
FRAME_BOTH = ("keep", "neutral")
DSE_INTENSITIES = ("intensity", "expression-intensity")


@dataclass(frozen=True)
class OneOf:
    """A string field's allowed values (``Annotated[str, OneOf(CELLS)]``): another is refused by name."""

    choices: tuple[str, ...]

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> core_schema.CoreSchema:
        return core_schema.no_info_after_validator_function(self.check, handler(source))

    def check(self, value: str) -> str:
        if value not in self.choices:
            raise PydanticCustomError("choice", "is not one of {choices}", {"choices": ", ".join(self.choices)})
        return value


Positive = Annotated[int, Gt(0)]
Count = Annotated[int, Ge(0)]
Rate = Annotated[float, Gt(0)]
Penalty = Annotated[float, Ge(0)]
Dropout = Annotated[float, Ge(0), Lt(1)]
Share = Annotated[float, Ge(0), Le(1)]


class Block(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


class Embeddings(Block):
    features: Annotated[str, OneOf(FEATURES)] = Field(
        default="glove", description="word vectors: glove (GloVe 6B 50-d) or random"
    )
    dim: Positive = Field(default=50, description="the size of random word vectors (GloVe's are 50)")
    fine_tune: bool = Field(default=False, description="update the pretrained word vectors")
    glove_vocab: Count = Field(default=20000, description="the most frequent GloVe words always in the vocabulary")
    min_count: Positive = Field(default=1, description="training-word frequency to get its own trainable vector")


class EncoderBlock(Block):
    name: Annotated[str, OneOf(tuple(ENCODERS))] | None = Field(
        default=None,
        description="a pretrained sub-word encoder (the train extra): minilm (MiniLM-L6; frozen vectors, or "
        "fine-tuned) or mpnet (MPNet-base, fine-tuned only; opinion-tagger download --encoder mpnet)",
    )
    fine_tune: bool = Field(
        default=False,
        description="train the encoder with the tagger instead of using frozen vectors (first wordpiece; use a "
        "small learning rate such as 5e-5)",
    )
    lora_rank: Annotated[int, Ge(0), Le(256)] = Field(
        default=0,
        description="with a fine-tuned encoder: train low-rank (LoRA) adapters of this rank on the encoder's "
        "attention instead of all its weights; the bundle then holds only what training changed",
    )
    pooling: Annotated[str, OneOf(POOLINGS)] = Field(
        default="first", description="a word's vector from its wordpieces (frozen vectors)"
    )


class Recurrent(Block):
    cell: Annotated[str, OneOf(CELLS)] = Field(
        default="elman", description="elman, lstm, gru, mrnn (multiplicative RNN), irlm (impulse-response units)"
    )
    # bidirectional layers; each reads both directions of the one below (0: encoder only)
    depth: Annotated[int, Ge(0), Le(5)] = Field(default=3, description="recurrent layers, 0..5; 0 only with an encoder")
    budget: Annotated[str, OneOf(tuple(BUDGETS))] | None = Field(
        default="200k",
        description="the paper's hidden sizes per depth; mrnn, irlm: the units nearest its parameter count",
    )
    hidden: Positive | None = Field(default=None, description="hidden units per direction (instead of the budget)")
    # None: the cell's own; lstm, gru fix theirs
    activation: Annotated[str, OneOf(ACTIVATIONS)] | None = Field(
        default=None,
        description="the nonlinearity of elman (relu, tanh) and mrnn, what irlm layers output "
        "(default: the cell's own: elman relu, mrnn tanh, irlm linear)",
    )
    factors: Positive | None = Field(
        default=None, description="mrnn: factor units per direction (default: the hidden size)"
    )
    decay_init: Annotated[float, Gt(-1), Lt(1)] | None = Field(
        default=None,
        description="irlm: every unit's decay starts here, in (-1, 1) (default: drawn as init draws weights)",
    )
    input_dropout: Dropout = Field(default=0.2, description="dropout on the word features")
    dropout: Dropout = Field(default=0.2, description="dropout between recurrent layers and before the heads")


class Head(Block):
    output: Annotated[str, OneOf(OUTPUTS)] = Field(
        default="softmax", description="softmax per token, or a linear-chain CRF per type"
    )


class Auxiliary(Block):
    types: str | None = Field(
        default=None,
        description="train heads for MPQA's other annotations beside the tagged types, comma-separated: "
        "AGENT, TARGET, ATTITUDE, OSE (objective speech events); their tags are not output",
    )
    weight: Rate = Field(default=0.5, description="loss weight of each auxiliary head")


class Frames(Block):
    """Opinion frames (docs/frames.md): heads on the recurrent states that give each span its polarity and
    intensity (a softmax on the mean of its states) and each DSE its holder (a pointer over the sentence's
    tokens, or writer, implicit, none) and, with ``roles``, its attitude type and its targets (a tag O, B or I
    per token), trained from the gold spans."""

    enabled: bool = Field(
        default=False,
        description="also predict each span's polarity and intensity and each DSE's holder (data: mpqa or reference)",
    )
    weight: Rate = Field(default=0.5, description="loss weight of each frame head")
    units: Positive = Field(default=64, description="units of the holder pointer's scoring layer")
    both: Annotated[str, OneOf(FRAME_BOTH)] = Field(
        default="keep", description="MPQA's polarity both: a class of its own (keep) or read as neutral"
    )
    dse_intensity: Annotated[str, OneOf(DSE_INTENSITIES)] = Field(
        default="intensity",
        description="what a DSE's intensity head learns: MPQA's intensity or its expression-intensity",
    )
    detach: bool = Field(
        default=False,
        description="the heads learn on the states without training them (no gradient from the heads' losses "
        "into the network that tags)",
    )
    positions: bool = Field(
        default=False,
        description="the holder pointer (and the target tagger) also see each token's distance to the span",
    )
    context: Count = Field(
        default=0,
        description="units a direction of a bidirectional LSTM run over a DSE's sentence for its targets (with roles; "
        "0: none, the target tagger reads the states)",
    )
    context_holder: bool = Field(
        default=False,
        description="with context, the holder pointer reads the DSE's own view of its sentence too",
    )
    roles: bool = Field(
        default=False,
        description="also predict each DSE's attitude type and its targets (data with attitudes: MPQA's "
        "attitude subset, ULA)",
    )
    holder_context: Count = Field(
        default=0,
        description="units a direction of the holder pointer's own bidirectional LSTM over a DSE's sentence, which "
        "it reads instead of the states (0: none; apart from the targets' context, unlike context_holder)",
    )


class ModelConfig(Block):
    embeddings: Embeddings = Embeddings()
    encoder: EncoderBlock = EncoderBlock()
    recurrent: Recurrent = Recurrent()
    head: Head = Head()
    auxiliary: Auxiliary = Auxiliary()
    frames: Frames = Frames()


class Optimizer(Block):
    name: Annotated[str, OneOf(OPTIMIZERS)] = Field(
        default="adam", description="adam, or sgd with momentum (the paper)"
    )
    learning_rate: Rate = Field(default=0.001, description="peak learning rate")
    momentum: Annotated[float, Ge(0), Lt(1)] = Field(default=0.9, description="sgd's momentum")
    clipnorm: Penalty = Field(default=5.0, description="largest norm of each weight's gradient (0: no clipping)")


class Schedule(Block):
    name: Annotated[str, OneOf(LR_SCHEDULES)] = Field(
        default="constant", description="cosine: warm-up over the first tenth of the epochs, then decay to zero"
    )


class Stopping(Block):
    max_epochs: Positive = Field(default=30, description="epochs at most")
    # evaluations count once the dev F1 has risen above 0 (an all-O network trains on)
    patience: Count = Field(
        default=5,
        description="dev evaluations without a better dev proportional F1 before stopping, counted once the dev "
        "F1 is above 0; 0: never stop",
    )
    eval_every: Positive = Field(
        default=1, description="epochs between dev evaluations (patience counts these; fast trainer)"
    )


class Distillation(Block):
    teacher: str | None = Field(
        default=None,
        description="a bundle whose tag probabilities (a CRF's marginals) the student also learns from, trained "
        "on no dev or test document of the run ({fold} in the path: the run's fold); both trainers",
    )
    weight: Share = Field(
        default=0.0, description="the teacher's share of each token's loss, in [0, 1] (gold's: the rest)"
    )
    copies: Count = Field(
        default=0,
        description="this many noisy copies of each training sentence join the training data, tagged by the "
        "teacher alone (its likeliest tag per word as gold, its probabilities as the soft targets)",
    )
    noise: Share = Field(
        default=0.15,
        description="words: the share of a copy's words replaced by words drawn from the training text; genres: "
        "the rate at which a filler of speech comes before a word",
    )
    style: Annotated[str, OneOf(COPY_STYLES)] = Field(
        default="words",
        description="how a copy differs from its sentence: words (some words replaced by others of the text) or "
        "genres (rewritten as other genres write: transcribed speech's lower case without punctuation, fillers, "
        "first and second person for third)",
    )


class FastOptions(Block):
    """The authors' released recipe (oir/deep-recurrent, drnt.cpp), which the fast (JAX) trainer implements."""

    loss_sum: bool = Field(default=False, description="sum token losses over a batch instead of averaging them")
    output_lr_scale: Rate = Field(default=1.0, description="learning-rate multiplier of the output layer")
    lr_decay: Annotated[float, Gt(0), Le(1)] = Field(
        default=1.0, description="learning rate multiplied by this after every update, in (0, 1]"
    )
    l2: Penalty = Field(default=0.0, description="L2 penalty on network weights, l2/2 ||w||^2 per batch")
    activation_l2: Penalty = Field(default=0.0, description="L2 penalty on hidden activations per batch")


class TrainingConfig(Block):
    # keras: train_on_batch | fast: JAX (softmax, word features)
    trainer: Annotated[str, OneOf(TRAINERS)] = Field(
        default="keras",
        description="fast: a JAX training loop (softmax output, word features; the fast extra), the only one with "
        "the options of training.fast and eval_every",
    )
    seed: Count = Field(default=1, description="random seed")
    batch_size: Positive = Field(default=32, description="sentences a batch")
    # the saved network is float32 either way
    precision: Annotated[str, OneOf(PRECISIONS)] = Field(
        default="float32",
        description="mixed_bfloat16: train with bfloat16 products and float32 weights (the output layers "
        "float32); the saved network computes in float32",
    )
    # XLA on the TensorFlow backend (the JAX backend always compiles)
    jit_compile: bool = Field(
        default=True,
        description="compile the training step with XLA",
    )
    # keras: Glorot / orthogonal / zero biases
    init: Annotated[str, OneOf(INITS)] = Field(
        default="keras",
        description="uniform: every recurrent and output weight from U(-init_scale, init_scale), as the authors' code",
    )
    init_scale: Rate = Field(default=0.01, description="range of init uniform")
    o_weight: Rate = Field(default=1.0, description="loss weight of tokens whose gold tag is O (both trainers)")
    optimizer: Optimizer = Optimizer()
    schedule: Schedule = Schedule()
    stopping: Stopping = Stopping()
    distillation: Distillation = Distillation()
    fast: FastOptions = FastOptions()
