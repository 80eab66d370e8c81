"""Model bundles: a directory that holds everything needed to tag text.

    model.keras   the network (Keras 3 format; loaded with safe_mode=True)
    config.json   the TaggerConfig
    vocab.txt     the vocabulary, one word a line (index = line number)
    meta.json     format version, tag types, training record and scores

No pickle anywhere; a missing or corrupt part raises BundleError naming the path.
"""

from __future__ import annotations

import json
from pathlib import Path

from tagger.config import TaggerConfig
from tagger.errors import BundleError
from tagger.features import Vocabulary

FORMAT_VERSION = 1
FILES = ("model.keras", "config.json", "vocab.txt", "meta.json")


def save_bundle(path: str | Path, model, vocab: Vocabulary, config: TaggerConfig, meta: dict) -> Path:
    """Write a bundle.  ``model`` should be uncompiled (no optimizer state)."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    model.save(path / "model.keras")
    config.save(path / "config.json")
    vocab.save(path / "vocab.txt")
    import tagger

    meta = {"format_version": FORMAT_VERSION, "tagger_version": tagger.__version__,
            "types": list(config.types), **meta}
    (path / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    return path


def load_bundle(path: str | Path):
    """(keras model, Vocabulary, TaggerConfig, meta dict) from a bundle directory."""
    path = Path(path)
    if not path.is_dir():
        raise BundleError(f"{path}: model bundle not found (expected a directory with {', '.join(FILES)})")
    for name in FILES:
        if not (path / name).is_file():
            raise BundleError(f"{path / name}: missing from the model bundle")
    try:
        meta = json.loads((path / "meta.json").read_text())
        config = TaggerConfig.load(path / "config.json")
    except (ValueError, TypeError) as exc:
        raise BundleError(f"{path}: corrupt bundle metadata: {exc}") from None
    if meta.get("format_version") != FORMAT_VERSION:
        raise BundleError(f"{path / 'meta.json'}: bundle format {meta.get('format_version')!r} "
                          f"is not supported (expected {FORMAT_VERSION})")
    vocab = Vocabulary.load(path / "vocab.txt")
    import keras

    import tagger.model  # noqa: F401  (registers the custom layers)

    try:
        model = keras.models.load_model(path / "model.keras", compile=False, safe_mode=True)
    except Exception as exc:  # keras raises many types for a damaged file
        raise BundleError(f"{path / 'model.keras'}: cannot load the model: {str(exc).splitlines()[0]}") from None
    emb = model.get_layer("embedding")
    if emb.vocab_size != len(vocab):
        raise BundleError(f"{path}: vocab.txt has {len(vocab)} words but the model expects {emb.vocab_size}")
    return model, vocab, config, meta
