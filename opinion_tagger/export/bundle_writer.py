"""Writing model bundles (the training stack): the Keras network, its configuration and vocabulary, the
network exported to ONNX, and meta.json with the manifest of every file, written last.

The format and its checks are ``opinion_tagger.runtime.bundle``'s; every file is written atomically and
meta.json last, so an interrupted save leaves a bundle that does not load rather than a wrong one.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np

from opinion_tagger.config import TaggerConfig
from opinion_tagger.encoders import weights_sha256
from opinion_tagger.errors import BundleError
from opinion_tagger.model.keras_backend import load_keras_model
from opinion_tagger.model.weights import write_weights
from opinion_tagger.runtime.bundle import (
    DELTA,
    FORMAT_VERSION,
    ONNX,
    BundleWarning,
    bundle_files,
    extra_files,
    load_bundle_files,
    network_file,
    network_name,
    onnx_supported,
    read_json,
)
from opinion_tagger.runtime.frame_heads import FRAMES_FILE
from opinion_tagger.runtime.vocabulary import Vocabulary
from opinion_tagger.runtime.word_table import GLOVE_ROWS
from opinion_tagger.storage import atomic_path, atomic_write_text, fsync_dir, make_manifest


def save_bundle(
    path: str | Path,
    model,
    vocab: Vocabulary,
    config: TaggerConfig,
    meta: dict,
    onnx: bool = True,
    frame_heads: dict[str, np.ndarray] | None = None,
) -> Path:
    """Write a bundle.  ``model`` should be uncompiled (no optimizer state).  ``onnx``: also export the
    network to ``model.onnx`` for tagging (on the TensorFlow back end; elsewhere ``add_onnx`` in a
    TensorFlow process does it).  ``frame_heads``: the weights of the frame heads of a configuration that has
    them (``opinion_tagger.model.frame_heads.head_arrays``), written to ``frames.npz``."""
    if config.model.frames.enabled and frame_heads is None:
        raise BundleError(f"{path}: a network with frame heads needs their weights (frame_heads)")
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    (path / "meta.json").unlink(missing_ok=True)  # until the new one is written, the bundle is incomplete
    fsync_dir(path)
    net = network_file(config)
    for stale in {"model.keras", DELTA, ONNX} - {net}:
        (path / stale).unlink(missing_ok=True)
    with atomic_path(path / net) as tmp:
        if net == DELTA:
            write_weights(model, tmp, base=False, vocab=vocab)
        else:
            model.save(tmp)
    atomic_write_text(path / "config.json", json.dumps(config.to_dict(), indent=2) + "\n")
    vocab.save(path / "vocab.txt")
    (path / FRAMES_FILE).unlink(missing_ok=True)
    if frame_heads is not None and config.model.frames.enabled:
        with atomic_path(path / FRAMES_FILE) as tmp, open(tmp, "wb") as fh:
            np.savez(fh, **frame_heads)  # type: ignore[arg-type]  # numpy's stub: a key might be allow_pickle
    import keras

    import opinion_tagger

    meta = {k: v for k, v in meta.items() if k not in ("onnx", "manifest")}
    names = bundle_files(net, hashed=True) + extra_files(config)
    later = onnx and not onnx_supported(config) and keras.backend.backend() != "tensorflow"
    if onnx and not onnx_supported(config) and not later:
        from opinion_tagger.export.onnx_export import export_onnx

        meta["onnx"] = export_onnx(model, config, vocab, path, delta=net == DELTA and _has_delta(path / DELTA))
        names += (ONNX,)
    meta = {
        "format_version": FORMAT_VERSION,
        "tagger_version": opinion_tagger.__version__,
        "types": list(config.types),
        **meta,
        "manifest": make_manifest(path, names),
    }
    if net == DELTA:
        enc = config.encoder
        meta["base_weights"] = {
            "package": enc.weights.record,
            "file": "model.safetensors",
            "sha256": weights_sha256(enc),
        }
    atomic_write_text(path / "meta.json", json.dumps(meta, indent=2) + "\n")
    if later:  # trained on another Keras back end (JAX): the export runs in a TensorFlow process
        _add_onnx_elsewhere(path)
    return path


def _add_onnx_elsewhere(path: Path) -> None:
    import os
    import subprocess
    import sys

    env = {**os.environ, "KERAS_BACKEND": "tensorflow", "TF_CPP_MIN_LOG_LEVEL": "3"}
    code = "import sys; from opinion_tagger.export.bundle_writer import add_onnx; add_onnx(sys.argv[1])"
    done = subprocess.run([sys.executable, "-c", code, str(path)], env=env, capture_output=True, text=True)
    if done.returncode:
        reason = (done.stderr.strip().splitlines() or ["no output"])[-1]
        warnings.warn(
            f"{path}: model.onnx not written ({reason}); the bundle tags on the Keras back end until "
            f"`opinion-tagger export-onnx {path}` adds it",
            BundleWarning,
            stacklevel=2,
        )


def _has_delta(file: Path) -> bool:
    with np.load(file, allow_pickle=False) as data:
        return GLOVE_ROWS in data.files


def add_onnx(path: str | Path) -> Path:
    """Export the network of a bundle to ``model.onnx`` and add it to meta.json (a TensorFlow process;
    the bundle is checked first and its other files stay as they are)."""
    path = Path(path)
    vocab, config, meta = load_bundle_files(path)
    reason = onnx_supported(config)
    if reason:
        raise BundleError(f"{path}: cannot run in ONNX Runtime: {reason}")
    from opinion_tagger.export.onnx_export import export_onnx

    net = network_name(path)
    meta["onnx"] = export_onnx(
        load_keras_model(path), config, vocab, path, delta=net == DELTA and _has_delta(path / DELTA)
    )
    meta["manifest"] = make_manifest(path, bundle_files(net, hashed=True) + extra_files(config) + (ONNX,))
    atomic_write_text(path / "meta.json", json.dumps(meta, indent=2) + "\n")
    return path


def add_manifest(path: str | Path) -> Path:
    """Upgrade a bundle written without a manifest: check it, then rewrite meta.json with
    the manifest of its files (all other content kept)."""
    path = Path(path)
    _, config, _ = load_bundle_files(path, verify=False)
    meta = read_json(path / "meta.json")
    extra = (ONNX,) if "onnx" in meta and (path / ONNX).is_file() else ()
    meta["manifest"] = make_manifest(path, bundle_files(network_name(path), hashed=True) + extra_files(config) + extra)
    atomic_write_text(path / "meta.json", json.dumps(meta, indent=2) + "\n")
    return path
