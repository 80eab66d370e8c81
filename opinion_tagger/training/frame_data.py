"""The frame heads' inputs and targets for a batch (``opinion_tagger.model.frame_heads``): each sentence's gold
spans (teacher forcing) and their polarity, intensity and holder as class ids and, with ``model.frames.roles``,
a DSE's attitude type and its targets as a tag per token (O, B, I); -1 where the corpus gives no value (or the
row pads the batch).  A DSE's targets may nest or overlap; the tags keep the longest and then those that overlap
none kept before (``target_tags``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from opinion_tagger.config import TaggerConfig
from opinion_tagger.errors import TaggerError
from opinion_tagger.runtime.frame_heads import (
    ATTITUDE,
    HOLDER,
    TARGETS,
    has_roles,
    intensity_classes,
    polarity_classes,
)
from opinion_tagger.sentences import ATTITUDE_TYPES, HOLDER_CLASSES, Frame, Sentence

SPAN_BUCKETS = 4  # spans per sentence padded to a power of two, at least this: few shapes to compile


def span_rows(n: int) -> int:
    """Rows of span inputs for a batch whose most spans in a sentence are ``n``."""
    return max(SPAN_BUCKETS, 1 << max(n - 1, 0).bit_length())


def check_frames(sentences: Sequence[Sentence]) -> None:
    """Frame heads learn from sentences with frames (``opinion_tagger.corpus.frames``)."""
    missing = sum(s.frames is None for s in sentences)
    if missing:
        raise TaggerError(
            f"frame heads learn from the frames of the spans, which {missing} of {len(sentences)} training "
            "sentences lack: train on --data mpqa or reference"
        )


def holder_targets(frame: Frame, length: int) -> tuple[int, int]:
    """(start, end) targets of a DSE's holder: a class id, or 3 + its first token and its last token."""
    h = frame.holder
    if isinstance(h, str) and h in HOLDER_CLASSES:
        return HOLDER_CLASSES.index(h), -1
    if isinstance(h, tuple) and h[1] <= length:
        return len(HOLDER_CLASSES) + h[0], h[1] - 1
    return -1, -1


def target_tags(frame: Frame, length: int) -> np.ndarray:
    """The tag ids (0: O, 1: B, 2: I) of a DSE's targets over the ``length`` words of its sentence, -1 for all
    when its targets were not read; nested or overlapping targets: the longest first, then each that overlaps
    none of those kept (the earlier first among equals)."""
    if frame.targets is None:
        return np.full(length, -1, dtype="int32")
    tags = np.zeros(length, dtype="int32")
    for i, j in sorted(frame.targets, key=lambda s: (s[0] - s[1], s[0])):
        j = min(j, length)
        if i < j and not tags[i:j].any():
            tags[i], tags[i + 1 : j] = 1, 2
    return tags


def frame_batch(
    config: TaggerConfig, sentences: Sequence[Sentence], idx: Sequence[int], rows: int, length: int
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """(span inputs, targets) of the batch of ``sentences[idx]``, ``rows`` rows (padding rows have no spans) of
    ``length`` words: per type ``{type}_spans`` [rows, S, 2] and the targets of ``frame_outputs``."""
    polarity = {c: k for k, c in enumerate(polarity_classes(config))}
    if config.model.frames.both == "neutral":
        polarity["both"] = polarity["neutral"]
    intensity = {c: k for k, c in enumerate(intensity_classes())}
    expression = config.model.frames.dse_intensity == "expression-intensity"
    inputs: dict[str, np.ndarray] = {}
    targets: dict[str, np.ndarray] = {}
    for t in config.types:
        frames = [[f for f in (sentences[i].frames or []) if f.type == t and f.end <= length] for i in idx]
        n = span_rows(max((len(f) for f in frames), default=0))
        spans = np.zeros((rows, n, 2), dtype="int32")
        ys = {k: np.full((rows, n), -1, dtype="int32") for k in ("polarity", "intensity", "start", "end", "attitude")}
        targets_of = np.full((rows, n, length), -1, dtype="int32")
        attitude = {c: k for k, c in enumerate(ATTITUDE_TYPES)}
        for r, row in enumerate(frames):
            for s, f in enumerate(row):
                spans[r, s] = (f.start, f.end)
                ys["polarity"][r, s] = polarity.get(f.polarity or "", -1)
                value = f.expression_intensity if t == "DSE" and expression else f.intensity
                ys["intensity"][r, s] = intensity.get(value or "", -1)
                if t == "DSE":
                    ys["start"][r, s], ys["end"][r, s] = holder_targets(f, length)
                    ys["attitude"][r, s] = attitude.get(f.attitude or "", -1)
                    words = min(len(sentences[idx[r]]), length)
                    targets_of[r, s, :words] = target_tags(f, words)
        inputs[f"{t}_spans"] = spans
        targets[f"{t}_polarity"], targets[f"{t}_intensity"] = ys["polarity"], ys["intensity"]
        if t == "DSE":
            targets[f"{HOLDER}_start"], targets[f"{HOLDER}_end"] = ys["start"], ys["end"]
            if has_roles(config):
                targets[ATTITUDE], targets[TARGETS] = ys["attitude"], targets_of
    return inputs, targets
