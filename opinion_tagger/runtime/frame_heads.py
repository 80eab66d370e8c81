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
  start probability.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from opinion_tagger.config import TaggerConfig
from opinion_tagger.errors import BundleError
from opinion_tagger.sentences import HOLDER_CLASSES, INTENSITIES, POLARITIES, Frame

STATES = "states"  # the network's output of the recurrent states, in a bundle with frame heads
LENGTHS = "lengths"  # frames.onnx's input of each sentence's length
HOLDER = "DSE_holder"  # the holder pointer's layer
FRAMES_FILE = "frames.onnx"  # the heads in a bundle
MASKED = -1e9  # the score of a padding token
# the longest holder span the runtime outputs, in tokens (99.4% of the holders of the MPQA reader's spans are
# at most 16 tokens long)
MAX_HOLDER_WIDTH = 16


def polarity_classes(config: TaggerConfig) -> tuple[str, ...]:
    """The polarity head's classes: POLARITIES, without ``both`` when it is read as neutral (``model.frames.both``)."""
    return POLARITIES if config.model.frames.both == "keep" else tuple(p for p in POLARITIES if p != "both")


def intensity_classes() -> tuple[str, ...]:
    return INTENSITIES


def frame_outputs(config: TaggerConfig) -> tuple[str, ...]:
    """The training network's frame outputs, by name (and frames.onnx's)."""
    names = tuple(f"{t}_{head}" for t in config.types for head in ("polarity", "intensity"))
    return names + ((f"{HOLDER}_start", f"{HOLDER}_end") if "DSE" in config.types else ())


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
        """What the heads predict of a DSE's roles (``opinion_tagger.evaluation.roles``): its holder."""
        return ("holder",) if "DSE" in self.config.types else ()

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
        for t in self.config.types:
            feed[f"{t}_spans"] = np.asarray(spans.get(t, ()), dtype=np.int64).reshape(-1, 3)
        names = [o.name for o in self.session.get_outputs()]
        return dict(zip(names, self.session.run(names, feed)))

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
