"""A new network's vocabulary and starting word vectors (training).

With GloVe features the vocabulary holds every training word that GloVe has, the ``glove_vocab`` most
frequent GloVe words, and any ``extra_words`` a caller wants covered (words only, never labels); training
words without a GloVe vector get a trainable vector of their own when ``fine_tune`` is on or features are
random, and share the unknown vector otherwise.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import numpy as np

from opinion_tagger.config import TaggerConfig
from opinion_tagger.runtime.vocabulary import PAD, UNK, Vocabulary, glove, normalize


def build_vocabulary(
    config: TaggerConfig, training_words: Iterable[str], extra_words: Iterable[str] = ()
) -> Vocabulary:
    counts = Counter(normalize(w) for w in training_words)
    words: dict[str, None] = {PAD: None, UNK: None}
    if config.model.embeddings.features == "glove":
        index, _ = glove()
        by_rank = sorted(index, key=index.__getitem__)[: config.model.embeddings.glove_vocab]
        for w in by_rank:
            words.setdefault(w, None)
        for w in list(counts) + [normalize(w) for w in extra_words]:
            if w in index:
                words.setdefault(w, None)
    if config.model.embeddings.features == "random" or config.model.embeddings.fine_tune:
        for w, n in counts.items():
            if n >= config.model.embeddings.min_count:
                words.setdefault(w, None)
    return Vocabulary(list(words))


def initial_embeddings(config: TaggerConfig, vocab: Vocabulary) -> tuple[np.ndarray, np.ndarray]:
    """The starting embedding matrix and a 0/1 mask of rows that have a pretrained
    vector (those stay frozen unless ``fine_tune``)."""
    rng = np.random.default_rng(config.training.seed)
    dim = config.word_dim
    matrix = rng.normal(0.0, 0.1, size=(len(vocab), dim)).astype("float32")
    matrix[0] = 0.0
    pretrained = np.zeros(len(vocab), dtype="float32")
    if config.model.embeddings.features == "glove":
        index, vectors = glove()
        rows = [(i, index[w]) for i, w in enumerate(vocab.words) if w in index]
        if rows:
            ours, theirs = map(np.array, zip(*rows))
            order = np.argsort(theirs)
            matrix[ours[order]] = vectors[theirs[order]]
            pretrained[ours] = 1.0
    return matrix, pretrained
