"""Sentences into the network's arrays and back: word ids padded to a few lengths, batches of similar
lengths within a budget, the network's inputs, and tag ids decoded into valid BIO tags."""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from opinion_tagger.errors import TaggerError
from opinion_tagger.runtime.vocabulary import Vocabulary

# The tag inventory of each type: index 0 is O.
TAG_NAMES = ("O", "B", "I")


LENGTH_BUCKETS = (8, 16, 24, 32, 48, 64, 96, 128, 192, 256)
# Fewer, coarser buckets: fewer shapes to compile (each a long compilation for MPNet on an accelerator) for
# more padding.  Padding is masked, so the results do not change (tests/training/test_training.py).
BUCKETS_VARIABLE = "OPINION_TAGGER_LENGTH_BUCKETS"


@lru_cache(maxsize=1)
def length_buckets() -> tuple[int, ...]:
    """The padded lengths: ``LENGTH_BUCKETS``, or the comma-separated increasing lengths (each a multiple of
    8, at most 256) in the environment variable ``OPINION_TAGGER_LENGTH_BUCKETS``."""
    text = os.environ.get(BUCKETS_VARIABLE, "").strip()
    if not text:
        return LENGTH_BUCKETS
    try:
        buckets = tuple(int(b) for b in text.split(","))
    except ValueError:
        buckets = ()
    if not buckets or list(buckets) != sorted(set(buckets)) or any(b % 8 or not 0 < b <= 256 for b in buckets):
        raise TaggerError(
            f"{BUCKETS_VARIABLE}={text!r}: expected increasing multiples of 8 up to 256, such as 16,32,64,128,256"
        )
    return buckets


def bucket_length(n: int) -> int:
    """Pad lengths to a few fixed sizes, so a compiled graph is reused."""
    for b in length_buckets():
        if n <= b:
            return b
    return ((n + 127) // 128) * 128


def encode_words(vocab: Vocabulary, sentences: Sequence[Sequence[str]], length: int | None = None) -> np.ndarray:
    length = length or bucket_length(max((len(s) for s in sentences), default=1))
    out = np.zeros((len(sentences), length), dtype="int32")
    for k, s in enumerate(sentences):
        out[k, : len(s)] = vocab.ids(s)[:length]
    return out


def encode_tags(tag_lists: Sequence[Sequence[str]], length: int) -> np.ndarray:
    """Typed or untyped BIO tags -> 0 (O), 1 (B), 2 (I), padded with 0."""
    out = np.zeros((len(tag_lists), length), dtype="int32")
    code = {"O": 0, "B": 1, "I": 2}
    for k, tags in enumerate(tag_lists):
        out[k, : len(tags)] = [code[t[0]] for t in tags[:length]]
    return out


def decode_tags(ids: Sequence[int], typ: str) -> list[str]:
    """0/1/2 -> O/B-typ/I-typ as valid IOB2: an I that follows O (or starts the
    sentence), which a per-token softmax can output, begins a span and becomes B
    (the span it marks is unchanged; the overlap metrics read it the same way)."""
    return decode_tag_rows(np.asarray(ids, dtype=np.int64).reshape(1, -1), [len(ids)], typ)[0]


def decode_tag_rows(ids: np.ndarray, lengths: Sequence[int], typ: str) -> list[list[str]]:
    """``decode_tags`` of each row of a [B, T] array, ``lengths[b]`` long (whole arrays: a batch at once)."""
    prev = np.zeros_like(ids)
    prev[:, 1:] = ids[:, :-1]
    fixed = np.where((ids == 2) & (prev == 0), 1, ids)  # B and I are both non-zero: the fix never changes prev
    names = np.array(["O", f"{TAG_NAMES[1]}-{typ}", f"{TAG_NAMES[2]}-{typ}"], dtype=object)[fixed]
    return [names[b, :n].tolist() for b, n in enumerate(lengths)]


def batches(lengths: Sequence[int], batch_size: int, rng: np.random.Generator | None = None) -> list[list[int]]:
    """Length-bucketed batches of sentence indices: sentences sorted by length,
    cut into batches; with ``rng`` the order within ties and of batches is shuffled."""
    idx = np.arange(len(lengths))
    if rng is not None:
        idx = rng.permutation(idx)
    order = sorted(map(int, idx), key=lambda i: lengths[i])
    out = [list(order[i : i + batch_size]) for i in range(0, len(order), batch_size)]
    if rng is not None:
        out = [out[i] for i in rng.permutation(len(out))]
    return out


def budget_batches(lengths: Sequence[int], budget: int, max_rows: int) -> list[list[int]]:
    """Batches of sentence indices sorted by length, each at most ``max_rows`` sentences and, padded to
    its longest, at most ``budget`` positions (a longer sentence alone makes a batch of one)."""
    out: list[list[int]] = []
    batch: list[int] = []
    for i in sorted(range(len(lengths)), key=lambda i: lengths[i]):
        if batch and (len(batch) >= max_rows or (len(batch) + 1) * lengths[i] > budget):
            out.append(batch)
            batch = []
        batch.append(i)
    if batch:
        out.append(batch)
    return out


def pad_context(vectors: Sequence[np.ndarray], shape: tuple[int, int]) -> np.ndarray:
    """Per-sentence [n_words, D] feature arrays -> one zero-padded [B, T, D] array."""
    dim = vectors[0].shape[1] if len(vectors) else 0
    out = np.zeros((shape[0], shape[1], dim), dtype="float32")
    for k, v in enumerate(vectors):
        n = min(len(v), shape[1])
        out[k, :n] = v[:n]
    return out


def network_inputs(
    ids: np.ndarray, words: Sequence[Sequence[str]], context: Sequence[np.ndarray] | None = None, pieces=None
):
    """What the network reads for a batch: the word-id array alone, or a dict that
    adds frozen contextual vectors (``context``: one [n_words, D] array per sentence)
    or a fine-tuned encoder's wordpiece inputs (``pieces``: a ``opinion_tagger.runtime.wordpieces.WordPieces``).
    ``ids`` may have more rows than ``words`` (padding rows)."""
    if context is not None:
        return {"words": ids, "context": pad_context(context, ids.shape)}
    if pieces is not None:
        return {"words": ids, **pieces.batch(words, ids.shape)[0]}
    return ids
