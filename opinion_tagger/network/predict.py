"""``Tagger``: a loaded model that tags tokenised sentences.

Two interchangeable back ends compute the network: ``onnx`` (the bundle's ``model.onnx`` in ONNX
Runtime, ``opinion_tagger.network.onnx_runtime``: no TensorFlow; how text is tagged and bundles evaluated) and
``keras`` (the trained Keras model; used in training, and for bundles without ``model.onnx``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from opinion_tagger.config import TaggerConfig
from opinion_tagger.errors import BundleError, TaggerError
from opinion_tagger.network.bundle import load_bundle_files, load_keras_model, onnx_supported, save_bundle
from opinion_tagger.network.decoding import marginals_batch, viterbi_batch
from opinion_tagger.network.features import (
    Vocabulary,
    bucket_length,
    budget_batches,
    decode_tag_rows,
    encode_words,
    network_inputs,
)

BACKENDS = ("onnx", "keras")  # "auto": onnx where the bundle has model.onnx, else keras
WORD_ALIGNED = ("words", "word_starts", "context")  # network inputs with one row per word


class KerasNetwork:
    def __init__(self, model, config: TaggerConfig):
        self.model, self.config = model, config
        self._fn: Callable[[Any], Any] | None = None

    def forward(self, inputs) -> dict[str, np.ndarray]:
        """``inputs``: the word-id array, or a dict of arrays (``features.network_inputs``)."""
        import keras

        if keras.backend.backend() != "tensorflow":  # jax compiles one function per input shape:
            return self._forward_padded(inputs)  # pad the words to a few lengths
        import tensorflow as tf

        if self._fn is None:
            spec = lambda a: tf.TensorSpec([None] * a.ndim, tf.as_dtype(a.dtype))
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
            inputs = (
                {k: pad(v) if k in WORD_ALIGNED else v for k, v in inputs.items()}
                if isinstance(inputs, dict)
                else pad(inputs)
            )
        out = self.model.predict_on_batch(inputs)
        return {t: np.asarray(out[t])[:, :n, :3] for t in self.config.types}

    def crf_params(self, typ: str):
        crf = self.model.get_layer(typ)
        return tuple(np.asarray(w) for w in (crf.transitions, crf.start, crf.end))


class Tagger:
    # at most this many wordpieces (padding included) in a batch of the MiniLM encoder, beside the batch size:
    # long sentences come in smaller batches.  On the 2-core CPU, budgets of 1,024 to 4,096 and batches of 32 or
    # 64 sentences tagged alike (4,500-4,800 tokens/s, medians of 3; single runs 4,400-6,000), batches of 256
    # sentences more slowly (4,100)
    piece_budget = 4096
    # at most this many words (padding included) in a batch of a network on word vectors: the recurrent
    # operators also run over padding, so batches of similar lengths cost less.  Tagging the 535 MPQA documents
    # in the local engine's chunks of 20,000 characters on one thread (experiments/README.md): 7.1 us a token
    # with budgets of 512 or 1,024 words, 10.5 with batches of 128 sentences, 7.7 with batches of 32
    word_budget = 512

    def __init__(self, network, vocab: Vocabulary, config: TaggerConfig, meta: dict | None = None, model=None):
        self.network, self.vocab, self.config, self.meta = network, vocab, config, meta or {}
        self.model = model  # the Keras model, when there is one
        self.encoder: Any = None  # contextual features (MiniLM), created when first needed

    @property
    def types(self) -> tuple[str, ...]:
        return self.config.types

    @classmethod
    def from_model(cls, model, vocab: Vocabulary, config: TaggerConfig, meta: dict | None = None) -> Tagger:
        return cls(KerasNetwork(model, config), vocab, config, meta, model)

    @classmethod
    def load(cls, path: str | Path, backend: str = "auto", threads: int | None = None) -> Tagger:
        """Load a bundle; ``backend`` "onnx" (ONNX Runtime, no TensorFlow import), "keras", or "auto"
        (default: onnx where the bundle has ``model.onnx``, else keras).  ``threads``: ONNX Runtime's
        threads (default: the cores this process may use, or ``$OPINION_TAGGER_THREADS``)."""
        if backend == "numpy":  # the NumPy runtime's name before ONNX Runtime replaced it
            backend = "onnx"
        if backend not in (*BACKENDS, "auto"):
            raise ValueError(f"backend must be one of {BACKENDS} or auto")
        vocab, config, meta = load_bundle_files(path)  # verified: both back ends run what config.json says
        if backend == "auto":
            backend = "onnx" if "onnx" in meta else "keras"
        if backend == "keras":
            return cls.from_model(load_keras_model(path), vocab, config, meta)
        if "onnx" not in meta:
            why = onnx_supported(config)
            raise BundleError(
                f"{path}: no model.onnx, "
                + (
                    f"the network cannot run in ONNX Runtime ({why}): use the keras backend"
                    if why
                    else f"add it with `opinion-tagger export-onnx {path}` (needs TensorFlow) or use the keras backend"
                )
            )
        from opinion_tagger.network.onnx_runtime import OnnxNetwork

        return cls(OnnxNetwork(path, meta["onnx"], threads), vocab, config, meta)

    def lift_budgets(self) -> None:
        """Batches of ``batch_size`` sentences whatever their length, the word and wordpiece budgets lifted: for
        a GPU, where a long batch costs little more than a short one."""
        self.piece_budget = self.word_budget = sys.maxsize

    def save(self, path: str | Path) -> Path:
        if self.model is None:
            raise BundleError("only a Keras-backed tagger can be saved")
        return save_bundle(path, self.model, self.vocab, self.config, self.meta)

    def predict(
        self, sentences: Sequence[Sequence[str]], batch_size: int = 64
    ) -> list[dict[str, tuple[list[str], list[float]]]]:
        """For each sentence (a list of words): ``{type: (tags, confidences)}``;
        confidence is the probability of the chosen tag (a CRF's marginal)."""
        results: list[dict] = [None] * len(sentences)  # type: ignore[list-item]
        for batch, lengths, out in self._batches(sentences, batch_size):
            decoded = {t: self._decode(out[t], lengths, t) for t in self.types}
            for row, i in enumerate(batch):
                results[i] = {t: decoded[t][row] for t in self.types}
        return results

    def distributions(
        self, sentences: Sequence[Sequence[str]], batch_size: int = 64, scores: bool = False
    ) -> list[dict[str, np.ndarray]]:
        """For each sentence: ``{type: [n_words, 3] array}``, each word's probabilities of O, B and I (a CRF's
        marginals), e.g. to average the models of an ensemble; with ``scores``, the network's outputs instead (a
        CRF's emission scores, to which ``crf_params`` adds its transition, start and end scores)."""
        results: list[dict] = [None] * len(sentences)  # type: ignore[list-item]
        for batch, lengths, out in self._batches(sentences, batch_size):
            probs = {t: out[t] if scores else self._probabilities(out[t], lengths, t) for t in self.types}
            for row, i in enumerate(batch):
                results[i] = {t: probs[t][row, : lengths[row]] for t in self.types}
        return results

    def crf_params(self, typ: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """A CRF head's transition [3, 3], start [3] and end [3] scores for ``typ``."""
        if self.config.output != "crf":
            raise TaggerError(f"the {self.config.output} head has no CRF scores")
        return self.network.crf_params(typ)

    def _batches(self, sentences: Sequence[Sequence[str]], batch_size: int):
        """(sentence indices, their lengths, the network's outputs) per batch; an all-empty batch has outputs of
        length 0."""
        lengths = [len(s) for s in sentences]
        pieces = self._wordpieces()
        if pieces is None:  # sentences of about the same length, at most word_budget words a batch
            groups = budget_batches(lengths, self.word_budget, batch_size)
        else:  # in wordpieces, at most piece_budget of them a batch
            pieces.prepare(sentences)
            groups = budget_batches([len(pieces.sequence(s)[0]) for s in sentences], self.piece_budget, batch_size)
        for batch in groups:
            words = [sentences[i] for i in batch]
            n = [lengths[i] for i in batch]
            if max(n) == 0:
                yield batch, n, {t: np.zeros((len(batch), 0, 3), dtype=np.float32) for t in self.types}
                continue
            ids = encode_words(self.vocab, words, length=max(n))
            yield batch, n, self.network.forward(self._inputs(ids, words, pieces))

    def _wordpieces(self):
        """For a network that reads wordpieces: a ``WordPieces`` that keeps them for one ``predict`` call."""
        if not self.config.context_fine_tune:
            return None
        from opinion_tagger.network.contextual import word_pieces

        if self.encoder is None:  # the tokenizer, loaded when first needed
            self.encoder = word_pieces(self.config.contextual, cache=False)
        return type(self.encoder)(self.encoder.tokenizer, cache=True)

    def _inputs(self, ids, words, pieces=None):
        """The network's inputs for a batch; contextual features are made here."""
        if pieces is not None:
            if self.model is None:  # ONNX Runtime needs no fixed lengths: no padding beyond the longest
                return {"words": ids, **pieces.batch(words, ids.shape, length=pieces.longest(words))[0]}
            return network_inputs(ids, words, pieces=pieces)
        if not self.config.contextual:
            return ids
        from opinion_tagger.network.contextual import MiniLMEncoder

        if self.encoder is None:  # created when first needed
            self.encoder = MiniLMEncoder(self.config.context_pooling)
        return network_inputs(ids, words, context=self.encoder.encode(words))

    def _probabilities(self, scores: np.ndarray, lengths: list[int], typ: str) -> np.ndarray:
        """A batch's outputs [B, T, 3] for one type -> each word's tag probabilities (a CRF's marginals)."""
        if self.config.output == "crf":
            return marginals_batch(scores, lengths, *self.network.crf_params(typ))
        return scores

    def _decode(self, scores: np.ndarray, lengths: list[int], typ: str) -> list[tuple[list[str], list[float]]]:
        """A batch's scores [B, T, 3] for one type -> each row's (tags, confidences), ``lengths[b]`` long."""
        if self.config.output == "crf":
            ids = np.zeros(scores.shape[:2], dtype=np.int64)
            for b, row in enumerate(viterbi_batch(scores, lengths, *self.network.crf_params(typ))):
                ids[b, : len(row)] = row
        else:
            ids = scores.argmax(-1)
        conf = np.take_along_axis(self._probabilities(scores, lengths, typ), ids[..., None], axis=-1)[..., 0]
        tags = decode_tag_rows(ids, lengths, typ)
        return [(row, conf[b, :n].tolist()) for b, (row, n) in enumerate(zip(tags, lengths))]

    def predict_tags(self, sentences: Sequence[Sequence[str]], batch_size: int = 64) -> dict[str, list[list[str]]]:
        """Tags only, per type: ``{"DSE": [[...], ...], ...}``."""
        preds = self.predict(sentences, batch_size)
        return {t: [p[t][0] for p in preds] for t in self.types}
