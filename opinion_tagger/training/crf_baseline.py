"""The paper's CRF baseline: a linear-chain CRF (python-crfsuite) over standard
token features, one model per opinion type."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from opinion_tagger.sentences import Sentence


def _shape(w: str) -> str:
    out: list[str] = []
    for ch in w:
        c = "X" if ch.isupper() else "x" if ch.islower() else "d" if ch.isdigit() else ch
        if not out or out[-1] != c:
            out.append(c)
    return "".join(out)


def token_features(words: Sequence[str], pos: Sequence[str] | None, i: int) -> list[str]:
    """Word identity, prefixes/suffixes, shape and POS (where the data has it), in a ±2 window."""
    w = words[i]
    lw = w.lower()
    f = [
        "bias",
        f"w={lw}",
        f"suf3={lw[-3:]}",
        f"suf2={lw[-2:]}",
        f"pre3={lw[:3]}",
        f"shape={_shape(w)}",
        f"upper={w[:1].isupper()}",
        f"alpha={w.isalpha()}",
    ]
    if pos:
        f.append(f"pos={pos[i]}")
    for d in (-2, -1, 1, 2):
        j = i + d
        if 0 <= j < len(words):
            f.append(f"w[{d}]={words[j].lower()}")
            if pos:
                f.append(f"pos[{d}]={pos[j]}")
                if abs(d) == 1:
                    f.append(f"pos[{min(0, d)}:{max(0, d)}]={pos[min(i, j)]}|{pos[max(i, j)]}")
        else:
            f.append(f"w[{d}]=<{'s' if d < 0 else '/s'}>")
    return f


def sentence_features(s: Sentence) -> list[list[str]]:
    return [token_features(s.words, s.pos, i) for i in range(len(s))]


class CRFBaseline:
    def __init__(self, types: Sequence[str], c1: float = 0.1, c2: float = 0.01, max_iterations: int = 200):
        self.types, self.c1, self.c2, self.max_iterations = tuple(types), c1, c2, max_iterations
        self.dir = tempfile.TemporaryDirectory(prefix="crf-baseline-")
        self.train_seconds = 0.0

    def fit(self, sentences: Sequence[Sentence]) -> CRFBaseline:
        import pycrfsuite

        t0 = time.perf_counter()
        feats = [sentence_features(s) for s in sentences]
        for t in self.types:
            trainer = pycrfsuite.Trainer(verbose=False)
            for x, s in zip(feats, sentences):
                trainer.append(x, s.tags[t])
            trainer.set_params(
                {
                    "c1": self.c1,
                    "c2": self.c2,
                    "max_iterations": self.max_iterations,
                    "feature.possible_transitions": True,
                }
            )
            trainer.train(str(Path(self.dir.name) / f"{t}.crfsuite"))
        self.train_seconds = time.perf_counter() - t0
        return self

    def predict_tags(self, sentences: Sequence[Sentence]) -> dict[str, list[list[str]]]:
        import pycrfsuite

        out = {}
        for t in self.types:
            tagger = pycrfsuite.Tagger()
            tagger.open(str(Path(self.dir.name) / f"{t}.crfsuite"))
            out[t] = [list(tagger.tag(sentence_features(s))) if len(s) else [] for s in sentences]
            tagger.close()
        return out
