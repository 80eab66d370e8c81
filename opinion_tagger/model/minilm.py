"""MiniLM-L6 (sentence-transformers/all-MiniLM-L6-v2) in Keras: the encoder inside a network, and frozen
vectors per word.

The weights come from the pinned package (``opinion_tagger.runtime.base_weights``) and are loaded with
keras-hub's ``BertBackbone.from_preset`` (no torch, no hub download).  Fine-tuned (``model.encoder.fine_tune``), the
encoder is a layer of the network (``opinion_tagger.model.network``).  Frozen, each sentence's words are split
into wordpieces, the sentence is encoded once, and each word gets the vector of its first wordpiece (or the
mean of its wordpieces); ``MiniLMEncoder`` caches the vectors per sentence, in memory and optionally on disk
(float16), since the same corpus is encoded for every fold.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from opinion_tagger.encoders import MINILM
from opinion_tagger.errors import TaggerError
from opinion_tagger.runtime.base_weights import locate
from opinion_tagger.runtime.wordpieces import WordPieces

TRAIN_HINT = "pip install 'opinion-tagger[train]'"


def minilm_path() -> Path:
    """The folder of the pinned MiniLM-L6 weights, for Keras (training): keras-hub must be installed too."""
    try:
        import keras_hub  # noqa: F401
    except ImportError:
        raise TaggerError(
            f"the MiniLM-L6 encoder in Keras needs keras-hub, which is not installed: {TRAIN_HINT}"
        ) from None
    return locate(MINILM)


def build_encoder(weights: bool = True, name: str = MINILM.name):
    """MiniLM-L6's ``BertBackbone``; ``weights=False`` builds the architecture only (to be filled from a saved
    model)."""
    path = minilm_path()  # first: it names a missing package or damaged file in one line
    import keras_hub

    return keras_hub.models.BertBackbone.from_preset(str(path), load_weights=weights, name=name)


def sentence_key(words: Sequence[str]) -> str:
    return hashlib.sha1("\x1f".join(words).encode("utf-8")).hexdigest()


class MiniLMEncoder:
    """Frozen MiniLM-L6 vectors per word, cached per sentence."""

    dim = MINILM.width

    def __init__(self, pooling: str = "first", cache_file: str | Path | None = None, batch_size: int = 32):
        if pooling not in ("first", "mean"):
            raise ValueError("pooling must be first or mean")
        self.pooling, self.batch_size = pooling, batch_size
        self.cache_file = Path(cache_file) if cache_file else None
        self.cache: dict[str, np.ndarray] = {}
        self._backbone = None
        self.wordpieces = WordPieces(MINILM)
        if self.cache_file and self.cache_file.is_file():
            with np.load(self.cache_file, allow_pickle=False) as data:
                self.cache = {k: data[k] for k in data.files}

    def _load(self):
        if self._backbone is None:
            self._backbone = build_encoder()
        return self._backbone

    def _encode_batch(self, batch: list[Sequence[str]]) -> list[np.ndarray]:
        backbone = self._load()
        inputs, spans = self.wordpieces.batch(batch, length=self.wordpieces.longest(batch))  # no padding beyond it
        inputs.pop("word_starts")
        hidden = np.asarray(backbone(inputs, training=False)["sequence_output"], dtype="float32")
        result = []
        for k, word_spans in enumerate(spans):
            vecs = np.zeros((len(word_spans), self.dim), dtype="float32")
            for w, (a, b) in enumerate(word_spans):
                if a < b:  # a word cut off by truncation keeps zeros
                    vecs[w] = hidden[k, a] if self.pooling == "first" else hidden[k, a:b].mean(0)
            result.append(vecs)
        return result

    def encode(self, sentences: Sequence[Sequence[str]], progress: bool = False) -> list[np.ndarray]:
        """One [n_words, 384] float32 array per sentence."""
        keys = [f"{self.pooling}:{sentence_key(s)}" for s in sentences]
        todo = sorted(
            {k: i for i, k in enumerate(keys) if k not in self.cache and len(sentences[i])}.values(),
            key=lambda i: len(sentences[i]),
        )
        if todo:
            from tqdm.auto import tqdm

            for start in tqdm(
                range(0, len(todo), self.batch_size), disable=not progress, desc="MiniLM", unit="batch", leave=False
            ):
                idx = todo[start : start + self.batch_size]
                for i, vec in zip(idx, self._encode_batch([sentences[i] for i in idx])):
                    self.cache[keys[i]] = vec.astype("float16")
            if self.cache_file:
                self.save()
        return [
            self.cache[k].astype("float32") if len(s) else np.zeros((0, self.dim), "float32")
            for k, s in zip(keys, sentences)
        ]

    def save(self) -> None:
        if self.cache_file is None:
            raise ValueError("no cache file to save to (give the encoder a cache_file)")
        self.cache_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.cache_file.with_suffix(".tmp.npz")
        np.savez(tmp, **self.cache)  # type: ignore[arg-type]  # numpy's stub: a key might be allow_pickle
        tmp.replace(self.cache_file)
