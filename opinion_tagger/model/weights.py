"""A Keras network's weights by path (``layer::weight``), NumPy arrays in a ``.npz`` without pickle: what a
bundle of a LoRA-tuned encoder stores (``weights.npz``) and its checkpoints keep (Keras's own files would merge
the adapters into the kernels).  A word-vector table of frozen GloVe rows is stored as those rows' indices, the
trained rows and the table's sha256 (``opinion_tagger.runtime.word_table``), and rebuilt from the GloVe
package when read."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from opinion_tagger.encoders import ENCODERS
from opinion_tagger.errors import BundleError
from opinion_tagger.runtime.vocabulary import Vocabulary
from opinion_tagger.runtime.word_table import TABLE, table_delta, table_from_delta


def _weight_key(variable) -> str:
    return variable.path.replace("/", "::")


def _encoder(model):
    """The network's fine-tuned encoder layer (named as the encoder registry names it)."""
    return next(layer for layer in model.layers if layer.name in ENCODERS)


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


def write_weights(model, file: Path, base: bool = True, vocab: Vocabulary | None = None) -> None:
    """``model_weights`` into ``file``; given the ``vocab``, a table of frozen GloVe rows is stored as
    ``table_delta``."""
    weights = model_weights(model, base)
    if vocab is not None and TABLE in weights and np.any(weights.get("embedding::frozen", 0) == 1):
        from opinion_tagger.runtime.vocabulary import glove

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
