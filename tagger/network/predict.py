"""``Tagger``: a loaded model that tags tokenised sentences.

Two interchangeable back ends compute the network: ``keras`` (the trained
Keras model; used in training and evaluation) and ``numpy`` (an exact NumPy
forward pass, ``tagger.network.runtime``, that avoids importing TensorFlow; the
default for tagging text).
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from tagger.config import TaggerConfig
from tagger.errors import BundleError
from tagger.network.bundle import load_bundle_files, load_keras_model, save_bundle
from tagger.network.decoding import marginals, viterbi
from tagger.network.features import Vocabulary, batches, bucket_length, decode_tags, encode_words, network_inputs

BACKENDS = ("numpy", "keras")  # "auto": numpy where the network allows it (no MiniLM encoder), else keras
WORD_ALIGNED = ("words", "word_starts", "context")  # network inputs with one row per word


class KerasNetwork:
    def __init__(self, model, config: TaggerConfig):
        self.model, self.config = model, config
        self._fn = None

    def forward(self, inputs) -> dict[str, np.ndarray]:
        """``inputs``: the word-id array, or a dict of arrays (``features.network_inputs``)."""
        import keras

        if keras.backend.backend() != "tensorflow":  # jax compiles one function per input shape:
            return self._forward_padded(inputs)  # pad the words to a few lengths
        import tensorflow as tf

        if self._fn is None:
            spec = (lambda a: tf.TensorSpec([None] * a.ndim, tf.as_dtype(a.dtype)))
            sig = {k: spec(v) for k, v in inputs.items()} if isinstance(inputs, dict) else spec(inputs)
            self._fn = tf.function(lambda x: self.model(x, training=False), input_signature=[sig])
        out = self._fn(inputs)
        return {t: np.asarray(out[t])[..., :3] for t in self.config.types}

    def _forward_padded(self, inputs) -> dict[str, np.ndarray]:
        words = inputs["words"] if isinstance(inputs, dict) else inputs
        n = words.shape[1]
        extra = bucket_length(n) - n

        def pad(a):
            return np.pad(a, [(0, 0), (0, extra)] + [(0, 0)] * (a.ndim - 2))

        if extra:  # padding words are masked (id 0), so the real words' outputs do not change
            inputs = ({k: pad(v) if k in WORD_ALIGNED else v for k, v in inputs.items()}
                      if isinstance(inputs, dict) else pad(inputs))
        out = self.model.predict_on_batch(inputs)
        return {t: np.asarray(out[t])[:, :n, :3] for t in self.config.types}

    def crf_params(self, typ: str):
        crf = self.model.get_layer(typ)
        return tuple(np.asarray(w) for w in (crf.transitions, crf.start, crf.end))


class Tagger:
    def __init__(self, network, vocab: Vocabulary, config: TaggerConfig, meta: dict | None = None, model=None):
        self.network, self.vocab, self.config, self.meta = network, vocab, config, meta or {}
        self.model = model  # the Keras model, when there is one
        self.encoder = None  # contextual features (MiniLM), created when first needed

    @property
    def types(self) -> tuple[str, ...]:
        return self.config.types

    @classmethod
    def from_model(cls, model, vocab: Vocabulary, config: TaggerConfig, meta: dict | None = None) -> "Tagger":
        return cls(KerasNetwork(model, config), vocab, config, meta, model)

    @classmethod
    def load(cls, path: str | Path, backend: str = "keras") -> "Tagger":
        """Load a bundle; ``backend`` "keras" (default), "numpy" (no TensorFlow import) or "auto" (numpy
        unless the network has a MiniLM encoder)."""
        if backend not in (*BACKENDS, "auto"):
            raise ValueError(f"backend must be one of {BACKENDS} or auto")
        vocab, config, meta = load_bundle_files(path)  # verified: both back ends run what config.json says
        if backend == "auto":
            backend = "keras" if config.contextual else "numpy"
        if backend == "keras":
            return cls.from_model(load_keras_model(path), vocab, config, meta)
        if config.contextual:
            raise BundleError(f"{path}: a model with contextual features runs on the keras backend only")
        from tagger.network.runtime import NumpyNetwork, read_keras_weights

        return cls(NumpyNetwork(config, read_keras_weights(Path(path) / "model.keras")), vocab, config, meta)

    def save(self, path: str | Path) -> Path:
        if self.model is None:
            raise BundleError("only a Keras-backed tagger can be saved")
        return save_bundle(path, self.model, self.vocab, self.config, self.meta)

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
            ids = encode_words(self.vocab, words, length=max(len(w) for w in words))
            out = self.network.forward(self._inputs(ids, words))
            for row, i in enumerate(batch):
                n = lengths[i]
                results[i] = {t: self._decode(out[t][row, :n], t) for t in self.types}
        return results

    def _inputs(self, ids, words):
        """The network's inputs for a batch; contextual features are made here."""
        if not self.config.contextual:
            return ids
        from tagger.network.contextual import MiniLMEncoder, WordPieces

        if self.encoder is None:  # created when first needed
            fine_tuned = self.config.context_fine_tune
            self.encoder = WordPieces(cache=False) if fine_tuned else MiniLMEncoder(self.config.context_pooling)
        if isinstance(self.encoder, WordPieces):
            return network_inputs(ids, words, pieces=self.encoder)
        return network_inputs(ids, words, context=self.encoder.encode(words))

    def _decode(self, scores: np.ndarray, typ: str) -> tuple[list[str], list[float]]:
        if len(scores) == 0:
            return [], []
        if self.config.output == "crf":
            trans, start, end = self.network.crf_params(typ)
            ids = viterbi(scores, trans, start, end)
            probs = marginals(scores, trans, start, end)
        else:
            ids = scores.argmax(-1).tolist()
            probs = scores
        conf = [float(probs[k, j]) for k, j in enumerate(ids)]
        return decode_tags(ids, typ), conf

    def predict_tags(self, sentences: Sequence[Sequence[str]], batch_size: int = 64) -> dict[str, list[list[str]]]:
        """Tags only, per type: ``{"DSE": [[...], ...], ...}``."""
        preds = self.predict(sentences, batch_size)
        return {t: [p[t][0] for p in preds] for t in self.types}
