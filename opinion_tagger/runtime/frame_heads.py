"""The frame heads in NumPy (docs/frames.md): a tagged span's polarity and intensity and a DSE's holder, from
the states the network outputs (``states``, [B, T, D]) and the heads' weights in the bundle (``frames.npz``).

The functions are the Keras heads' (``opinion_tagger.model.frame_heads``), on one sentence's states:

- a span's representation s: the mean of its tokens' states;
- polarity and intensity: ``softmax(s K + b)``, the likeliest class and its probability;
- the holder: the start distribution ``softmax([s W + c, v . tanh(h_k U + s V + b) for each token k])`` over
  the classes writer, implicit, none and the tokens; a class, or a token i, whose span ends at the token j
  in [i, i + MAX_HOLDER_WIDTH) that the end pointer scores highest.  Its score: the start probability.
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
HOLDER = "DSE_holder"  # the holder pointer's layer
FRAMES_FILE = "frames.npz"  # the heads' weights in a bundle
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
    """The training network's frame outputs, by name."""
    names = tuple(f"{t}_{head}" for t in config.types for head in ("polarity", "intensity"))
    return names + ((f"{HOLDER}_start", f"{HOLDER}_end") if "DSE" in config.types else ())


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
    attitude: str | None = None  # a DSE's attitude type and target token spans: no head predicts them yet
    targets: tuple[tuple[int, int], ...] | None = None

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


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


class FrameHeads:
    """The heads of a bundle (or of a network being trained), run on one sentence's states at a time."""

    def __init__(self, arrays: dict[str, np.ndarray], config: TaggerConfig, where: str = FRAMES_FILE):
        expected = head_names(config)
        missing = sorted(set(expected) - set(arrays))
        if missing:
            raise BundleError(f"{where}: no weight {missing[0]} of the frame heads")
        for name, (n,) in expected.items():
            if arrays[name].shape[-1] != n:
                raise BundleError(f"{where}: {name} has {arrays[name].shape[-1]} columns, the configuration {n}")
        self.w = {k: np.asarray(arrays[k], dtype=np.float32) for k in expected}
        self.config = config
        self.polarities, self.intensities = polarity_classes(config), intensity_classes()

    @property
    def roles(self) -> tuple[str, ...]:
        """What the heads predict of a DSE's roles (``opinion_tagger.evaluation.roles``): its holder."""
        return ("holder",) if "DSE" in self.config.types else ()

    @classmethod
    def load(cls, bundle: str | Path, config: TaggerConfig) -> FrameHeads:
        file = Path(bundle) / FRAMES_FILE
        try:
            with np.load(file, allow_pickle=False) as data:
                arrays = {k: data[k] for k in data.files}
        except (OSError, ValueError) as exc:
            raise BundleError(f"{file}: cannot read the frame heads: {exc}") from None
        return cls(arrays, config, str(file))

    def _classify(self, pooled: np.ndarray, name: str, classes: Sequence[str]) -> list[tuple[str, float]]:
        probs = softmax(pooled @ self.w[f"{name}/kernel"] + self.w[f"{name}/bias"])
        best = probs.argmax(-1)
        return [(classes[k], float(probs[r, k])) for r, k in enumerate(best)]

    def _pointer(self, states: np.ndarray, pooled: np.ndarray, end: str) -> np.ndarray:
        w = {k: self.w[f"{HOLDER}/{end}_{k}"] for k in ("tokens", "span", "bias", "v")}
        hidden = np.tanh((states @ w["tokens"])[None] + (pooled @ w["span"])[:, None] + w["bias"])
        return hidden @ w["v"]  # [S, T]

    def holder_distributions(self, states: np.ndarray, pooled: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The start [S, 3 + T] and end [S, T] probabilities of the spans' holders."""
        classes = pooled @ self.w[f"{HOLDER}/classes"] + self.w[f"{HOLDER}/classes_bias"]
        start = softmax(np.concatenate([classes, self._pointer(states, pooled, "start")], axis=-1))
        return start, softmax(self._pointer(states, pooled, "end"))

    def apply(self, states: np.ndarray, spans: Sequence[tuple[int, int]], typ: str) -> list[FramePrediction]:
        """The frames of one sentence's spans [start, end) of ``typ`` from its states [n_words, D]."""
        if not spans:
            return []
        states = np.asarray(states, dtype=np.float32)
        pooled = np.stack([states[i:j].mean(0) for i, j in spans])
        pol = self._classify(pooled, f"{typ}_polarity", self.polarities)
        inten = self._classify(pooled, f"{typ}_intensity", self.intensities)
        out = [FramePrediction(typ, i, j, *p, *q) for (i, j), p, q in zip(spans, pol, inten)]
        if typ == "DSE":
            start, end = self.holder_distributions(states, pooled)
            n = len(states)
            for f, s_row, e_row in zip(out, start, end):
                k = int(s_row.argmax())
                f.holder_score = float(s_row[k])
                if k < len(HOLDER_CLASSES):
                    f.holder = HOLDER_CLASSES[k]
                    continue
                i = k - len(HOLDER_CLASSES)
                f.holder = (i, i + int(e_row[i : min(n, i + MAX_HOLDER_WIDTH)].argmax()) + 1)
        return out
