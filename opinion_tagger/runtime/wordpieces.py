"""Words -> an encoder's wordpieces, the same for training (Keras) and tagging (ONNX Runtime).

Each word is split alone by the encoder's own WordPiece tokenizer (its ``tokenizer.json`` in Hugging Face
``tokenizers``: BERT normalisation, lower-cased), the sentence framed by the encoder's first and last
special tokens and cut to 512 wordpieces; each word keeps the span of its pieces, and the network reads
each word's first wordpiece.  What differs between encoders (special tokens, padding id, segment ids)
comes from the registry (``opinion_tagger.encoders``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from opinion_tagger.encoders import DEFAULT, ENCODERS, MAX_PIECES, Encoder
from opinion_tagger.errors import TaggerError
from opinion_tagger.runtime.batching import bucket_length


def read_tokenizer(file: Path, hint: str):
    """A ``tokenizer.json`` in Hugging Face ``tokenizers``, without truncation or padding; a damaged file is
    one line naming it and ``hint`` (how to put it right)."""
    from tokenizers import Tokenizer

    try:
        tokenizer = Tokenizer.from_file(str(file))
    except Exception as exc:  # tokenizers raises its own exception type for a damaged file
        raise TaggerError(f"{file}: cannot read the tokenizer ({str(exc).splitlines()[0]}): {hint}") from None
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def load_tokenizer(enc: Encoder, path: Path | None = None):
    """The encoder's WordPiece tokenizer, from its base weights' folder (``path``: another folder)."""
    from opinion_tagger.runtime.base_weights import locate

    return read_tokenizer((path or locate(enc)) / "tokenizer.json", f"{enc.download} --force")


class WordPieces:
    """Words -> an encoder's wordpieces (MiniLM: ``[CLS] pieces... [SEP]``; MPNet: ``<s> pieces... </s>``, no
    segment ids), at most 512, each word keeping the span of its pieces (a word cut off by truncation keeps
    none)."""

    def __init__(self, encoder: Encoder | str = DEFAULT, tokenizer=None, cache: bool = True):
        """``encoder``: a registry entry or its name; ``tokenizer``: a ``tokenizers.Tokenizer`` (default: the
        encoder's, loaded when first needed); ``cache``: keep each sentence's wordpieces (training reads the
        same sentences every epoch; tagging a stream of new text should not)."""
        self.encoder = ENCODERS[encoder] if isinstance(encoder, str) else encoder
        self.specials, self.pad_id, self.segments = self.encoder.specials, self.encoder.pad_id, self.encoder.segments
        self._tokenizer, self._keep = tokenizer, cache
        self._cache: dict[tuple[str, ...], tuple[list[int], list[tuple[int, int]]]] = {}

    @property
    def tokenizer(self):
        if self._tokenizer is None:
            self._tokenizer = self._load_tokenizer()
        return self._tokenizer

    def _load_tokenizer(self):
        return load_tokenizer(self.encoder)

    def like(self, cache: bool = True) -> WordPieces:
        """Another ``WordPieces`` of the same encoder and tokenizer, with its own cache."""
        return WordPieces(self.encoder, self.tokenizer, cache)

    def _special(self):
        self._cls, self._sep, self._unk = (self.tokenizer.token_to_id(t) for t in self.specials)

    def pieces(self, words: Sequence[str]) -> list[list[int]]:
        """Wordpiece ids of each word (an unknown or empty word gets [UNK])."""
        if not hasattr(self, "_unk"):
            self._special()
        ids = self.tokenizer.encode_batch(list(words), add_special_tokens=False) if words else []
        return [e.ids or [self._unk] for e in ids]

    def sequence(self, words: Sequence[str]) -> tuple[list[int], list[tuple[int, int]]]:
        """The sentence's wordpiece ids and each word's (start, end) in them; cached."""
        key = tuple(words)
        if key in self._cache:
            return self._cache[key]
        out = self._assemble(self.pieces(words))
        if self._keep:
            self._cache[key] = out
        return out

    def prepare(self, sentences: Sequence[Sequence[str]]) -> None:
        """Cache the wordpieces of many sentences, whatever ``cache`` says (for a tagger's call on a batch of
        sentences).  Each word is encoded alone, as ``pieces`` does, so each distinct word is encoded once, all
        in one call of the tokenizer (which spreads it over the cores)."""
        todo = [w for w in dict.fromkeys(map(tuple, sentences)) if w not in self._cache]
        words = list(dict.fromkeys(w for s in todo for w in s))
        ids = dict(zip(words, self.pieces(words)))  # also looks up [CLS]/[SEP]
        for s in todo:
            self._cache[s] = self._assemble([ids[w] for w in s])

    def _assemble(self, pieces: list[list[int]]) -> tuple[list[int], list[tuple[int, int]]]:
        """Each word's wordpiece ids -> the sentence's, between [CLS] and [SEP] and cut to ``MAX_PIECES``, and
        each word's (start, end) in them."""
        flat, spans = [self._cls], []
        for p in pieces:
            a = min(len(flat), MAX_PIECES - 1)
            spans.append((a, min(len(flat) + len(p), MAX_PIECES - 1)))
            flat.extend(p)
        return flat[: MAX_PIECES - 1] + [self._sep], spans

    def longest(self, sentences: Sequence[Sequence[str]]) -> int:
        """The most wordpieces of a sentence of the batch, [CLS] and [SEP] included."""
        return max((len(self.sequence(w)[0]) for w in sentences), default=2)

    def batch(
        self, sentences: Sequence[Sequence[str]], shape: tuple[int, int] | None = None, length: int | None = None
    ) -> tuple[dict[str, np.ndarray], list[list[tuple[int, int]]]]:
        """Backbone inputs for a batch (``token_ids``, ``segment_ids`` unless ``segments`` is off, ``padding_mask``,
        and ``word_starts`` [rows, words]: each word's first wordpiece, 0 for padding and
        truncated words), plus each sentence's word spans.  ``shape`` (rows, words) pads
        to the word-id array's shape; ``length`` fixes the wordpiece length."""
        seqs = [self.sequence(w) for w in sentences]
        rows, n_words = shape or (len(seqs), max((len(w) for w in sentences), default=1))
        length = length or min(bucket_length(max((len(s) for s, _ in seqs), default=2)), MAX_PIECES)
        token_ids = np.full((rows, length), self.pad_id, dtype="int32")
        mask = np.zeros((rows, length), dtype="int32")
        starts = np.zeros((rows, n_words), dtype="int32")
        for k, (flat, spans) in enumerate(seqs):
            token_ids[k, : len(flat)] = flat
            mask[k, : len(flat)] = 1
            firsts = [a if a < b else 0 for a, b in spans[:n_words]]
            starts[k, : len(firsts)] = firsts
        segments = {"segment_ids": np.zeros_like(token_ids)} if self.segments else {}
        return (
            {"token_ids": token_ids, **segments, "padding_mask": mask, "word_starts": starts},
            [spans for _, spans in seqs],
        )


def word_pieces(encoder: Encoder | str, tokenizer=None, cache: bool = True) -> WordPieces:
    """The ``WordPieces`` of a fine-tuned encoder (``model.encoder.name``)."""
    return WordPieces(encoder, tokenizer, cache)
