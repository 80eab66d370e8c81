"""``SentenceTagger``: a loaded model that tags tokenised sentences.

It batches sentences of similar lengths within a budget of words or wordpieces, makes the network's inputs,
runs the network (any ``opinion_tagger.runtime.network.Network``: ONNX Runtime by default, the Keras back
end as a plug-in) and decodes its outputs into BIO tags with a confidence per word (a CRF's Viterbi path and
marginals, or a softmax's likeliest tags); with frame heads, the frames of the spans it tagged
(``predict_frames``: the heads, ``frames.onnx`` in ONNX Runtime, on the states the network outputs and the spans
decoded, ``opinion_tagger.runtime.frame_heads``).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from opinion_tagger.config import TaggerConfig
from opinion_tagger.errors import TaggerError
from opinion_tagger.runtime.batching import budget_batches, decode_tag_rows, encode_words, network_inputs
from opinion_tagger.runtime.bio import spans_from_bio
from opinion_tagger.runtime.bundle import load_bundle_files
from opinion_tagger.runtime.decoding import marginals_batch, viterbi_batch
from opinion_tagger.runtime.frame_heads import STATES, FrameHeads, FramePrediction
from opinion_tagger.runtime.network import DEFAULT_BACKEND, DEFAULT_PRECISION, Network, load_network
from opinion_tagger.runtime.vocabulary import Vocabulary
from opinion_tagger.runtime.wordpieces import WordPieces, word_pieces


class SentenceTagger:
    # at most this many wordpieces (padding included) in a batch of the MiniLM encoder, beside the batch size:
    # long sentences come in smaller batches (budgets from 1,024 to 4,096 tag alike on a CPU; very large
    # batches more slowly: experiments/README.md)
    piece_budget = 4096
    # at most this many words (padding included) in a batch of a network on word vectors: the recurrent
    # operators also run over padding, so batches of similar lengths cost less than batches of a fixed number
    # of sentences (experiments/README.md)
    word_budget = 512

    def __init__(
        self,
        network: Network,
        vocab: Vocabulary,
        config: TaggerConfig,
        meta: dict | None = None,
        heads: FrameHeads | None = None,
    ):
        self.network, self.vocab, self.config, self.meta = network, vocab, config, meta or {}
        self.heads = heads  # the frame heads of a model that has them (``predict_frames``)
        # the wordpieces of a fine-tuned encoder (made when first needed; training sets one that caches)
        self.pieces: WordPieces | None = None

    @property
    def types(self) -> tuple[str, ...]:
        return self.config.types

    @classmethod
    def load(
        cls,
        path: str | Path,
        backend: str = DEFAULT_BACKEND,
        threads: int | None = None,
        precision: str = DEFAULT_PRECISION,
    ) -> SentenceTagger:
        """Load a bundle, checked (``load_bundle_files``); ``backend``: ``onnx`` (ONNX Runtime, the default) or a
        plug-in's name (``keras``: the ``train`` extra).  ``threads``: the runtime's threads (default: the cores
        this process may use, or ``$OPINION_TAGGER_THREADS``).  ``precision``: ``fp32`` (the default) or
        ``bf16`` (OpenVINO, a CPU with native bf16, the ``bf16`` extra)."""
        path = Path(path)
        vocab, config, meta = load_bundle_files(path)
        heads = FrameHeads.load(path, config) if config.model.frames.enabled else None
        return cls(load_network(path, config, vocab, meta, backend, threads, precision), vocab, config, meta, heads)

    def lift_budgets(self) -> None:
        """Batches of ``batch_size`` sentences whatever their length, the word and wordpiece budgets lifted: for
        a GPU, where a long batch costs little more than a short one."""
        self.piece_budget = self.word_budget = sys.maxsize

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

    def predict_frames(
        self, sentences: Sequence[Sequence[str]], batch_size: int = 64
    ) -> list[tuple[dict[str, tuple[list[str], list[float]]], list[FramePrediction]]]:
        """``predict``'s result for each sentence, with the frames of its spans (each type's spans in order):
        the frame heads run on the states of the spans just tagged."""
        return [(tags, frames) for tags, frames, _ in self._frames(sentences, None, batch_size)]

    def predict_frames_given(
        self,
        sentences: Sequence[Sequence[str]],
        given: Sequence[dict[str, Sequence[tuple[int, int]]]],
        batch_size: int = 64,
    ) -> list[tuple[dict[str, tuple[list[str], list[float]]], list[FramePrediction], list[FramePrediction]]]:
        """``predict_frames``'s result for each sentence and, third, the frames of the spans ``given`` for it
        (``{type: [(start, end), ...]}``, e.g. its gold spans; each type's in the order given), from the same pass
        of the network: the frame heads run on the states of any spans."""
        if len(given) != len(sentences):
            raise ValueError(f"{len(sentences)} sentences but spans given for {len(given)}")
        return self._frames(sentences, given, batch_size)

    @property
    def roles(self) -> tuple[str, ...]:
        """What the frame heads predict of a DSE's roles (``FrameHeads.roles``; none without heads)."""
        return self.heads.roles if self.heads is not None else ()

    def _frames(self, sentences, given, batch_size: int) -> list:
        """(tags, the frames of the spans tagged, the frames of the spans given or []) for each sentence: per batch,
        the tags decoded, then one run of the heads on the batch's states and every span."""
        heads = self.heads
        if heads is None:
            raise TaggerError("this model has no frame heads (its configuration's frames are off)")
        results: list[tuple] = [None] * len(sentences)  # type: ignore[list-item]
        for batch, lengths, out in self._batches(sentences, batch_size):
            decoded = {t: self._decode(out[t], lengths, t) for t in self.types}
            tags = [{t: decoded[t][row] for t in self.types} for row in range(len(batch))]
            requests = []  # (row, type, start, end, given?)
            for row, i in enumerate(batch):
                for t in self.types:
                    requests += [(row, t, a, b, False) for a, b, _ in spans_from_bio(tags[row][t][0])]
                    requests += [(row, t, a, b, True) for a, b in (given[i].get(t, []) if given is not None else [])]
            requests = [r for r in requests if r[3] > r[2]]
            frames = heads.predict(out[STATES], lengths, [r[:4] for r in requests]) if requests else []
            found: list[tuple[list, list]] = [([], []) for _ in batch]
            for (row, *_, on_given), frame in zip(requests, frames):
                found[row][on_given].append(frame)
            for row, i in enumerate(batch):
                results[i] = (tags[row], *found[row])
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
        if self.config.model.head.output != "crf":
            raise TaggerError(f"the {self.config.model.head.output} head has no CRF scores")
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

    def _wordpieces(self) -> WordPieces | None:
        """For a network that reads wordpieces: a ``WordPieces`` that keeps them for one ``predict`` call."""
        if not self.config.model.encoder.fine_tune:
            return None
        if self.pieces is None:  # the tokenizer, loaded when first needed
            self.pieces = word_pieces(self.config.encoder, cache=False)
        return self.pieces.like(cache=True)

    def _inputs(self, ids: np.ndarray, words: Sequence[Sequence[str]], pieces: WordPieces | None = None):
        """The network's inputs for a batch."""
        if pieces is not None:
            if self.network.fixed_lengths:
                return network_inputs(ids, words, pieces=pieces)
            # no padding beyond the longest sentence
            return {"words": ids, **pieces.batch(words, ids.shape, length=pieces.longest(words))[0]}
        if self.config.model.encoder.name:  # frozen encoder vectors, which only the Keras back end makes
            return self.network.frozen_inputs(ids, words)  # type: ignore[attr-defined]
        return ids

    def _probabilities(self, scores: np.ndarray, lengths: list[int], typ: str) -> np.ndarray:
        """A batch's outputs [B, T, 3] for one type -> each word's tag probabilities (a CRF's marginals)."""
        if self.config.model.head.output == "crf":
            return marginals_batch(scores, lengths, *self.network.crf_params(typ))
        return scores

    def _decode(self, scores: np.ndarray, lengths: list[int], typ: str) -> list[tuple[list[str], list[float]]]:
        """A batch's scores [B, T, 3] for one type -> each row's (tags, confidences), ``lengths[b]`` long."""
        if self.config.model.head.output == "crf":
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
