"""Writing model bundles (the training stack): the network's training state (``model.keras``, or ``weights.npz``
for a LoRA-tuned encoder), its configuration and vocabulary, the network exported to ONNX (with
``glove_rows.npz`` where its word vectors are GloVe's), and meta.json with the manifest of every file, written last.

The format and its checks are ``opinion_tagger.runtime.bundle``'s; every file is written atomically and
meta.json last, so an interrupted save leaves a bundle that does not load rather than a wrong one.
``drop_training_state`` leaves what tagging reads (the bundled models ship so); training then continues from
model.onnx's weights (``opinion_tagger.model.onnx_weights``).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np

from opinion_tagger.config import TaggerConfig
from opinion_tagger.encoders import weights_sha256
from opinion_tagger.errors import BundleError
from opinion_tagger.export.frames_export import write_frames
from opinion_tagger.model.keras_backend import load_keras_model
from opinion_tagger.model.weights import write_weights
from opinion_tagger.runtime.bundle import (
    DELTA,
    FORMAT_VERSION,
    HASHED,
    KERAS,
    LEGACY_FRAMES,
    ONNX,
    TRAINING_STATE,
    BundleWarning,
    extra_files,
    load_bundle_files,
    onnx_supported,
    read_config,
    read_json,
    training_state,
    training_state_file,
    verify_file,
)
from opinion_tagger.runtime.frame_heads import FRAMES_FILE
from opinion_tagger.runtime.vocabulary import Vocabulary
from opinion_tagger.runtime.word_table import GLOVE_ROWS, ROWS_FILE, TABLE
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
    them (``opinion_tagger.model.frame_heads.head_arrays``), written as ``frames.onnx``."""
    if config.model.frames.enabled and frame_heads is None:
        raise BundleError(f"{path}: a network with frame heads needs their weights (frame_heads)")
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    (path / "meta.json").unlink(missing_ok=True)  # until the new one is written, the bundle is incomplete
    fsync_dir(path)
    state = training_state_file(config)
    for stale in {KERAS, DELTA, ONNX, ROWS_FILE, FRAMES_FILE, LEGACY_FRAMES} - {state}:
        (path / stale).unlink(missing_ok=True)
    with atomic_path(path / state) as tmp:
        if state == DELTA:
            write_weights(model, tmp, base=False, vocab=vocab)
        else:
            model.save(tmp)
    atomic_write_text(path / "config.json", json.dumps(config.to_dict(), indent=2) + "\n")
    vocab.save(path / "vocab.txt")
    if frame_heads is not None and config.model.frames.enabled:
        write_frames(path, frame_heads, config)
    rows = state == DELTA and _write_glove_rows(path)
    import keras

    import opinion_tagger

    meta = {k: v for k, v in meta.items() if k not in ("onnx", "manifest")}
    later = onnx and not onnx_supported(config) and keras.backend.backend() != "tensorflow"
    if onnx and not onnx_supported(config) and not later:
        from opinion_tagger.export.onnx_export import export_onnx

        meta["onnx"] = export_onnx(model, config, vocab, path, table_file=ROWS_FILE if rows else None)
    meta = {
        "format_version": FORMAT_VERSION,
        "tagger_version": opinion_tagger.__version__,
        "types": list(config.types),
        **meta,
        "manifest": make_manifest(path, bundle_files(path, config, meta)),
    }
    if config.model.encoder.lora_rank:
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


def bundle_files(path: Path, config: TaggerConfig, meta: dict) -> tuple[str, ...]:
    """The files of the bundle in ``path`` that its manifest lists: its training state, configuration and
    vocabulary, the frame heads' weights, and model.onnx (where meta.json describes it) with the GloVe rows its
    table is rebuilt from."""
    state = training_state(path)
    names = ((state,) if state else ()) + HASHED + extra_files(config)
    if "onnx" in meta:
        names += (ONNX,) + ((ROWS_FILE,) if (path / ROWS_FILE).is_file() else ())
    return names


def _write_glove_rows(path: Path) -> bool:
    """Write ``glove_rows.npz`` from the bundle's ``weights.npz`` where that holds its word-vector table as GloVe
    rows (``opinion_tagger.runtime.word_table.table_delta``): the rows model.onnx's table is rebuilt from."""
    with np.load(path / DELTA, allow_pickle=False) as data:
        rows = {k: data[k] for k in data.files if k.startswith(f"{TABLE}::")}
    if GLOVE_ROWS not in rows:
        return False
    with atomic_path(path / ROWS_FILE) as tmp, open(tmp, "wb") as fh:
        np.savez_compressed(fh, **rows)
    return True


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


def add_onnx(path: str | Path) -> Path:
    """Export the network of a bundle to ``model.onnx`` and add it to meta.json (a TensorFlow process;
    the bundle is checked first and its other files stay as they are)."""
    path = Path(path)
    frames_to_onnx(path)
    vocab, config, meta = load_bundle_files(path)
    reason = onnx_supported(config)
    if reason:
        raise BundleError(f"{path}: cannot run in ONNX Runtime: {reason}")
    from opinion_tagger.export.onnx_export import export_onnx

    model = load_keras_model(path)
    rows = (path / ROWS_FILE).is_file() or (training_state(path) == DELTA and _write_glove_rows(path))
    meta["onnx"] = export_onnx(model, config, vocab, path, table_file=ROWS_FILE if rows else None)
    meta["manifest"] = make_manifest(path, bundle_files(path, config, meta))
    atomic_write_text(path / "meta.json", json.dumps(meta, indent=2) + "\n")
    return path


def frames_to_onnx(path: Path) -> None:
    """A bundle written before ``frames.onnx``: its frame heads' ``frames.npz`` (checked by the manifest) becomes
    ``frames.onnx``, in the manifest in its place."""
    if not (path / LEGACY_FRAMES).is_file() or (path / FRAMES_FILE).is_file():
        return
    config, meta = read_config(path / "config.json"), read_json(path / "meta.json")
    if isinstance(meta.get("manifest"), dict):
        verify_file(path, LEGACY_FRAMES)
    with np.load(path / LEGACY_FRAMES, allow_pickle=False) as data:
        write_frames(path, {k: data[k] for k in data.files}, config)
    if isinstance(meta.get("manifest"), dict):
        del meta["manifest"][LEGACY_FRAMES]
        meta["manifest"] |= make_manifest(path, [FRAMES_FILE])
    atomic_write_text(path / "meta.json", json.dumps(meta, indent=2) + "\n")
    (path / LEGACY_FRAMES).unlink()


def add_manifest(path: str | Path) -> Path:
    """Upgrade a bundle written without a manifest: check it, then rewrite meta.json with
    the manifest of its files (all other content kept)."""
    path = Path(path)
    _, config, _ = load_bundle_files(path, verify=False)
    meta = read_json(path / "meta.json")
    meta["manifest"] = make_manifest(path, bundle_files(path, config, meta))
    atomic_write_text(path / "meta.json", json.dumps(meta, indent=2) + "\n")
    return path


def drop_training_state(path: str | Path) -> Path:
    """Remove the bundle's training state (``model.keras``, ``weights.npz``), leaving what tagging reads, each
    file in the manifest; training continues from model.onnx's weights then.  A bundle whose model.onnx rebuilds
    its word-vector table from ``weights.npz`` (written before ``glove_rows.npz``) gets that file first; one
    without model.onnx is refused (its training state is its only network)."""
    path = Path(path)
    _, config, meta = load_bundle_files(path)
    if "onnx" not in meta:
        raise BundleError(f"{path}: no model.onnx: add it first (opinion-tagger export-onnx {path})")
    for entry in meta["onnx"].get("externals", {}).values():
        if entry.get("file") == DELTA:  # the table's rows, written beside model.onnx
            if not (path / ROWS_FILE).is_file() and not _write_glove_rows(path):
                raise BundleError(f"{path / DELTA}: holds no GloVe rows for model.onnx's word vectors")
            entry["file"] = ROWS_FILE
    names = tuple(n for n in bundle_files(path, config, meta) if n not in TRAINING_STATE)
    meta["manifest"] = make_manifest(path, names)
    atomic_write_text(path / "meta.json", json.dumps(meta, indent=2) + "\n")
    for name in TRAINING_STATE:  # after meta.json: an interrupted removal leaves a bundle that tags
        (path / name).unlink(missing_ok=True)
    fsync_dir(path)
    return path
