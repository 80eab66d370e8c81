"""``Tagger``: a loaded model that tags tokenised sentences."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from tagger.bundle import load_bundle, save_bundle
from tagger.config import TaggerConfig
from tagger.crf import marginals, viterbi
from tagger.features import Vocabulary, batches, decode_tags, encode_words


class Tagger:
    def __init__(self, model, vocab: Vocabulary, config: TaggerConfig, meta: dict | None = None):
        self.model, self.vocab, self.config, self.meta = model, vocab, config, meta or {}
        self._predict = None

    @property
    def types(self) -> tuple[str, ...]:
        return self.config.types

    @classmethod
    def load(cls, path: str | Path) -> "Tagger":
        return cls(*load_bundle(path))

    def save(self, path: str | Path) -> Path:
        return save_bundle(path, self.model, self.vocab, self.config, self.meta)

    def _forward(self, ids: np.ndarray) -> dict:
        if self._predict is None:
            import tensorflow as tf

            self._predict = tf.function(lambda x: self.model(x, training=False),
                                        input_signature=[tf.TensorSpec([None, None], tf.int32)])
        out = self._predict(ids)
        return {t: np.asarray(out[t]) for t in self.types}

    def predict(self, sentences: Sequence[Sequence[str]], batch_size: int = 64
                ) -> list[dict[str, tuple[list[str], list[float]]]]:
        """For each sentence (a list of words): ``{type: (tags, confidences)}``;
        confidence is the probability of the chosen tag (a CRF's marginal)."""
        results: list[dict] = [None] * len(sentences)  # type: ignore[list-item]
        lengths = [len(s) for s in sentences]
        for batch in batches(lengths, batch_size):
            words = [sentences[i] for i in batch]
            if max(len(w) for w in words) == 0:
                for i in batch:
                    results[i] = {t: ([], []) for t in self.types}
                continue
            out = self._forward(encode_words(self.vocab, words))
            for row, i in enumerate(batch):
                n = lengths[i]
                results[i] = {t: self._decode(out[t][row, :n], t) for t in self.types}
        return results

    def _decode(self, scores: np.ndarray, typ: str) -> tuple[list[str], list[float]]:
        if len(scores) == 0:
            return [], []
        if self.config.output == "crf":
            crf = self.model.get_layer(typ)
            trans, start, end = (np.asarray(w) for w in (crf.transitions, crf.start, crf.end))
            em = scores[:, : crf.n_tags]
            ids = viterbi(em, trans, start, end)
            probs = marginals(em, trans, start, end)
        else:
            ids = scores.argmax(-1).tolist()
            probs = scores
        conf = [float(probs[k, j]) for k, j in enumerate(ids)]
        return decode_tags(ids, typ), conf

    def predict_tags(self, sentences: Sequence[Sequence[str]], batch_size: int = 64) -> dict[str, list[list[str]]]:
        """Tags only, per type: ``{"DSE": [[...], ...], ...}``."""
        preds = self.predict(sentences, batch_size)
        return {t: [p[t][0] for p in preds] for t in self.types}
