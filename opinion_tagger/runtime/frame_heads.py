"""The frame heads at tagging time (docs/frames.md): a tagged span's polarity and intensity and a DSE's holder,
from the states the network outputs (``states``, [B, T, D]), run by ONNX Runtime from the bundle's ``frames.onnx``.

The heads are a graph of their own, not part of ``model.onnx``: they run on the spans that decoding finds (a CRF's
Viterbi path, a softmax's likeliest tags) after the network's pass, or on spans given, so the runtime decodes a
batch's tags first and then runs ``frames.onnx`` once on the batch's states and all its spans (written by
``opinion_tagger.export.frames_export``, whose docstring gives its inputs and outputs).  Its functions are the
Keras heads' (``opinion_tagger.model.frame_heads``):

- a span's representation s: the mean of its tokens' states;
- polarity and intensity: ``softmax(s K + b)``, the likeliest class and its probability;
- the holder: the start distribution ``softmax([s W + c, v . tanh(h_k U + s V + b) for each token k])`` over
  the classes writer, implicit, none and the tokens; a class, or a token i, whose span ends at the token j
  in [i, i + MAX_HOLDER_WIDTH) that the end pointer scores highest (decoded here, in NumPy).  Its score: the
  start probability.  With ``model.frames.positions`` each token's score adds a learnt vector ``P[r]`` of its
  place r relative to the span inside the tanh (``relative_places``: inside it, or how far before or after it);
- with ``model.frames.roles``, a DSE's attitude type: ``softmax(s K + b)`` over ATTITUDE_TYPES; and its targets:
  for each token a tag O, B or I, ``softmax(tanh(h_k U + s V + P[r] + b) W + c)``, decoded as the spans of the
  likeliest tags (an I after an O begins a span), each scored by the mean probability of its tokens' tags.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from opinion_tagger.config import TaggerConfig
from opinion_tagger.errors import BundleError
from opinion_tagger.sentences import ATTITUDE_TYPES, HOLDER_CLASSES, INTENSITIES, POLARITIES, Frame

STATES = "states"  # the network's output of the recurrent states, in a bundle with frame heads
LENGTHS = "lengths"  # frames.onnx's input of each sentence's length
HOLDER = "DSE_holder"  # the holder pointer's layer
ATTITUDE = "DSE_attitude"  # the attitude type's layer and output
TARGETS = "DSE_targets"  # the target tagger's layer and output
CONTEXT = "DSE_context"  # the layer of a DSE's own view of its sentence (``model.frames.context``)
HOLDER_CONTEXT = "DSE_holder_context"  # the holder pointer's own view of it (``model.frames.holder_context``)
LSTM_WEIGHTS = tuple(
    f"lstm/{d}_lstm/lstm_cell/{w}" for d in ("forward", "backward") for w in ("kernel", "recurrent_kernel", "bias")
)
TARGET_TAGS = ("O", "B", "I")
FRAMES_FILE = "frames.onnx"  # the heads in a bundle
MASKED = -1e9  # the score of a padding token
# the longest holder span the runtime outputs, in tokens (99.4% of the holders of the MPQA reader's spans are
# at most 16 tokens long)
MAX_HOLDER_WIDTH = 16
# a token's place relative to a span: 0 inside it; at distance d before it (d = 1: adjacent), 1 +
# DISTANCE_BUCKETS[d]; after it, 1 + SIDE + DISTANCE_BUCKETS[d]; distances beyond the table take its last bucket
DISTANCE_BUCKETS = np.array([0, 0, 1, 2, 3, 4, 4, 5, 5, 5, 6, 6, 6, 6, 6, 7], dtype=np.int64)
SIDE = int(DISTANCE_BUCKETS.max()) + 1  # places on either side of a span
PLACES = 1 + 2 * SIDE  # 17 places


def relative_places(start: int, end: int, length: int) -> np.ndarray:
    """Each token's place relative to the span [start, end) of a sentence of ``length`` tokens (the NumPy form
    of the heads' computation: tests hold the Keras and ONNX forms to it)."""
    k = np.arange(length)
    top = len(DISTANCE_BUCKETS) - 1
    before = 1 + DISTANCE_BUCKETS[np.clip(start - k, 0, top)]
    after = 1 + SIDE + DISTANCE_BUCKETS[np.clip(k - end + 1, 0, top)]
    return np.where(k < start, before, np.where(k >= end, after, 0))


def polarity_classes(config: TaggerConfig) -> tuple[str, ...]:
    """The polarity head's classes: POLARITIES, without ``both`` when it is read as neutral (``model.frames.both``)."""
    return POLARITIES if config.model.frames.both == "keep" else tuple(p for p in POLARITIES if p != "both")


def intensity_classes() -> tuple[str, ...]:
    return INTENSITIES


def frame_outputs(config: TaggerConfig) -> tuple[str, ...]:
    """The training network's frame outputs, by name (and frames.onnx's)."""
    names = tuple(f"{t}_{head}" for t in config.types for head in ("polarity", "intensity"))
    names += (f"{HOLDER}_start", f"{HOLDER}_end") if "DSE" in config.types else ()
    return names + ((ATTITUDE, TARGETS) if has_roles(config) else ())


def has_roles(config: TaggerConfig) -> bool:
    """Whether the heads predict a DSE's attitude and targets."""
    return config.model.frames.roles and "DSE" in config.types


def context_readers(config: TaggerConfig) -> tuple[str, ...]:
    """The heads that read a DSE's own view of its sentence (``model.frames.context``): the target tagger (with
    roles) and, with ``model.frames.context_holder``, the holder pointer."""
    frames = config.model.frames
    if not frames.context or "DSE" not in config.types:
        return ()
    return (("holder",) if frames.context_holder else ()) + (("targets",) if has_roles(config) else ())


def holder_context(config: TaggerConfig) -> bool:
    """Whether the holder pointer reads a view of its own (``model.frames.holder_context``)."""
    return bool(config.model.frames.holder_context) and "DSE" in config.types


def context_layers(config: TaggerConfig) -> dict[str, int]:
    """The layers of a DSE's views of its sentence, with their LSTM's units a direction: ``DSE_context`` (read by
    ``context_readers``) and ``DSE_holder_context`` (``holder_context``)."""
    frames = config.model.frames
    out = {CONTEXT: frames.context} if context_readers(config) else {}
    return out | ({HOLDER_CONTEXT: frames.holder_context} if holder_context(config) else {})


def frame_inputs(config: TaggerConfig) -> tuple[str, ...]:
    """frames.onnx's inputs: the states, the sentences' lengths and each type's spans."""
    return (STATES, LENGTHS, *(f"{t}_spans" for t in config.types))


def head_names(config: TaggerConfig) -> dict[str, tuple[int, ...]]:
    """Each weight of the heads, ``layer/weight``, with the number of its columns (None: any)."""
    n_pol, n_int = len(polarity_classes(config)), len(intensity_classes())
    out: dict[str, tuple[int, ...]] = {}
    for t in config.types:
        out |= {f"{t}_polarity/kernel": (n_pol,), f"{t}_polarity/bias": (n_pol,)}
        out |= {f"{t}_intensity/kernel": (n_int,), f"{t}_intensity/bias": (n_int,)}
    if "DSE" in config.types:
        units = config.model.frames.units
        for end in ("start", "end"):
            out |= {f"{HOLDER}/{end}_{w}": (units,) for w in ("tokens", "span", "bias", "v")}
        out |= {f"{HOLDER}/classes": (len(HOLDER_CLASSES),), f"{HOLDER}/classes_bias": (len(HOLDER_CLASSES),)}
        if config.model.frames.positions:
            out |= {f"{HOLDER}/{end}_places": (units,) for end in ("start", "end")}
    if has_roles(config):
        units, n = config.model.frames.units, len(TARGET_TAGS)
        out |= {f"{ATTITUDE}/kernel": (len(ATTITUDE_TYPES),), f"{ATTITUDE}/bias": (len(ATTITUDE_TYPES),)}
        out |= {f"{TARGETS}/{w}": (units,) for w in ("tokens", "span", "bias")}
        out |= {f"{TARGETS}/out": (n,), f"{TARGETS}/out_bias": (n,)}
        if config.model.frames.positions:
            out[f"{TARGETS}/places"] = (units,)
    for layer, units_a_direction in context_layers(config).items():
        units, four = config.model.frames.units, 4 * units_a_direction
        out |= {f"{layer}/{w}": (units,) for w in ("tokens", "span", "bias")}
        out |= {f"{layer}/{w}": (four,) for w in LSTM_WEIGHTS}
        if config.model.frames.positions:
            out[f"{layer}/places"] = (units,)
    return out


@dataclass
class FramePrediction:
    """A tagged span's predicted frame: token range [start, end), the likeliest values and their probabilities;
    ``holder`` (DSEs): a token range (i, j) of the sentence, ``writer``, ``implicit`` or ``none``."""

    type: str
    start: int
    end: int
    polarity: str
    polarity_score: float
    intensity: str
    intensity_score: float
    holder: tuple[int, int] | str | None = None
    holder_score: float | None = None
    attitude: str | None = None  # a DSE's attitude type (ATTITUDE_TYPES) and its probability
    attitude_score: float | None = None
    targets: tuple[tuple[int, int], ...] | None = None  # a DSE's targets: token ranges, in token order
    target_scores: tuple[float, ...] | None = None  # each target's score

    @property
    def frame(self) -> Frame:
        """As a corpus frame (``opinion_tagger.evaluation.frames`` and ``.roles`` score these)."""
        return Frame(
            self.type,
            self.start,
            self.end,
            self.polarity,
            self.intensity,
            None,
            self.holder,
            self.attitude,
            self.targets,
        )


def target_spans(probabilities: np.ndarray) -> list[tuple[int, int, float]]:
    """The targets (start, end, score) of a DSE from its tokens' tag probabilities [n, 3] (O, B, I): the spans of
    the likeliest tags, an I after an O beginning one; a span's score is the mean probability of its tags."""
    tags = probabilities.argmax(-1)
    out: list[tuple[int, int, float]] = []
    start = None
    for k in range(len(tags) + 1):
        tag = TARGET_TAGS[tags[k]] if k < len(tags) else "O"
        if start is not None and tag != "I":
            out.append((start, k, float(probabilities[np.arange(start, k), tags[start:k]].mean())))
            start = None
        if tag == "B" or (tag == "I" and start is None):
            start = k
    return out


Request = tuple[int, str, int, int]  # (batch row, type, start, end): a span whose frame is asked for


class FrameHeads:
    """The heads of a bundle (``frames.onnx``), or of a network being trained (the same graph, in memory:
    ``opinion_tagger.export.frames_export.frame_heads``), in an ONNX Runtime session."""

    def __init__(self, model: bytes | str | Path, config: TaggerConfig, where: str = FRAMES_FILE):
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.log_severity_level = 3
        options.intra_op_num_threads = 1  # small products: a thread pool costs more than it gains
        options.inter_op_num_threads = 1
        source = model if isinstance(model, bytes) else str(model)
        try:
            self.session = ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own exception types for a damaged file
            raise BundleError(f"{where}: cannot load the frame heads: {str(exc).splitlines()[0]}") from None
        inputs = sorted(i.name for i in self.session.get_inputs())
        outputs = sorted(o.name for o in self.session.get_outputs())
        if inputs != sorted(frame_inputs(config)) or outputs != sorted(frame_outputs(config)):
            raise BundleError(
                f"{where}: not the frame heads of config.json's types {', '.join(config.types)} "
                f"(inputs {', '.join(inputs)}; outputs {', '.join(outputs)})"
            )
        self.config = config
        self.polarities, self.intensities = polarity_classes(config), intensity_classes()

    @property
    def roles(self) -> tuple[str, ...]:
        """What the heads predict of a DSE's roles (``opinion_tagger.evaluation.roles``): its holder and, with
        ``model.frames.roles``, its targets and attitude type."""
        if "DSE" not in self.config.types:
            return ()
        return ("holder", "target", "attitude") if has_roles(self.config) else ("holder",)

    @classmethod
    def load(cls, bundle: str | Path, config: TaggerConfig) -> FrameHeads:
        file = Path(bundle) / FRAMES_FILE
        return cls(file, config, str(file))

    def run(
        self, states: np.ndarray, lengths: Sequence[int], spans: dict[str, Sequence[tuple[int, int, int]]]
    ) -> dict[str, np.ndarray]:
        """The heads' outputs (``frame_output_names``) for each type's ``spans`` (batch row, start, end) of a
        batch's ``states`` [B, T, D] whose sentences are ``lengths`` long."""
        feed = {
            STATES: np.ascontiguousarray(states, dtype=np.float32),
            LENGTHS: np.asarray(lengths, dtype=np.int64).reshape(-1),
        }
        none = set()  # types without spans: one stand-in span each, its outputs dropped (ONNX Runtime's LSTM
        # operator does not take an empty batch)
        for t in self.config.types:
            given = np.asarray(spans.get(t, ()), dtype=np.int64).reshape(-1, 3)
            if not len(given):
                none.add(t)
                given = np.array([[0, 0, 1]], dtype=np.int64)
            feed[f"{t}_spans"] = given
        names = [o.name for o in self.session.get_outputs()]
        out = dict(zip(names, self.session.run(names, feed)))
        return {k: v[:0] if k.split("_")[0] in none else v for k, v in out.items()}

    def predict(self, states: np.ndarray, lengths: Sequence[int], requests: Sequence[Request]) -> list[FramePrediction]:
        """The frame of each span of ``requests`` (batch row, type, start, end) of a batch's ``states`` [B, T, D],
        in their order (an empty span has none): one run of the heads for the whole batch."""
        by_type: dict[str, list[int]] = {}
        for k, (_, t, i, j) in enumerate(requests):
            if j > i:
                by_type.setdefault(t, []).append(k)
        if not by_type:
            return []
        out = self.run(
            states, lengths, {t: [(requests[k][0], *requests[k][2:]) for k in ks] for t, ks in by_type.items()}
        )
        found: dict[int, FramePrediction] = {}
        for t, ks in by_type.items():
            pol, inten = out[f"{t}_polarity"], out[f"{t}_intensity"]
            for r, k in enumerate(ks):
                row, _, i, j = requests[k]
                p, q = int(pol[r].argmax()), int(inten[r].argmax())
                f = FramePrediction(
                    t, i, j, self.polarities[p], float(pol[r, p]), self.intensities[q], float(inten[r, q])
                )
                if t == "DSE":
                    self._holder(f, out[f"{HOLDER}_start"][r], out[f"{HOLDER}_end"][r], lengths[row])
                    if ATTITUDE in out:
                        a = int(out[ATTITUDE][r].argmax())
                        f.attitude, f.attitude_score = ATTITUDE_TYPES[a], float(out[ATTITUDE][r, a])
                        targets = target_spans(out[TARGETS][r, : lengths[row]])
                        f.targets = tuple((i, j) for i, j, _ in targets)
                        f.target_scores = tuple(score for _, _, score in targets)
                found[k] = f
        return [found[k] for k in sorted(found)]

    @staticmethod
    def _holder(f: FramePrediction, start: np.ndarray, end: np.ndarray, n: int) -> None:
        k = int(start.argmax())
        f.holder_score = float(start[k])
        if k < len(HOLDER_CLASSES):
            f.holder = HOLDER_CLASSES[k]
            return
        i = k - len(HOLDER_CLASSES)
        f.holder = (i, i + int(end[i : min(n, i + MAX_HOLDER_WIDTH)].argmax()) + 1)

    def apply(self, states: np.ndarray, spans: Sequence[tuple[int, int]], typ: str) -> list[FramePrediction]:
        """The frames of one sentence's spans [start, end) of ``typ`` from its states [n_words, D]."""
        states = np.asarray(states, dtype=np.float32)
        return self.predict(states[None], [len(states)], [(0, typ, i, j) for i, j in spans])
