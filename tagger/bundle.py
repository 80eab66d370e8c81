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


def load_bundle_files(path: str | Path):
    """(Vocabulary, TaggerConfig, meta) of a bundle, checking that every part is there."""
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
    return Vocabulary.load(path / "vocab.txt"), config, meta


def _keras_config(file: Path) -> str:
    """The architecture JSON inside a ``.keras`` file ('' when unreadable; loading then reports it)."""
    import zipfile

    try:
        with zipfile.ZipFile(file) as z:
            return z.read("config.json").decode("utf-8", "replace")
    except (OSError, KeyError, zipfile.BadZipFile):
        return ""


def load_keras_model(path: str | Path, vocab_size: int):
    """The bundle's Keras model, loaded in safe mode (no arbitrary code)."""
    import keras

    import tagger.model  # noqa: F401  (registers the custom layers)

    path = Path(path)
    if '"BertBackbone"' in _keras_config(path / "model.keras"):
        try:
            import keras_hub  # noqa: F401  (registers the fine-tuned encoder's layers)
        except ImportError:
            raise BundleError(f"{path}: this model contains the MiniLM encoder; "
                              "pip install -e '.[contextual]'") from None
    try:
        model = keras.models.load_model(path / "model.keras", compile=False, safe_mode=True)
    except Exception as exc:  # keras raises many types for a damaged file
        raise BundleError(f"{path / 'model.keras'}: cannot load the model: {str(exc).splitlines()[0]}") from None
    if model.get_layer("embedding").vocab_size != vocab_size:
        raise BundleError(f"{path}: vocab.txt has {vocab_size} words but the model expects "
                          f"{model.get_layer('embedding').vocab_size}")
    return model
