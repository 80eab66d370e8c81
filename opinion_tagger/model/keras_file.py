"""A bundle's ``model.keras`` (training state) read as the JSON inside it, without Keras: the network it holds
in TaggerConfig's terms, checked against config.json and vocab.txt before Keras loads it
(``opinion_tagger.model.keras_backend.load_keras_model``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from opinion_tagger.cells import CELLS
from opinion_tagger.config import TaggerConfig
from opinion_tagger.encoders import ENCODERS
from opinion_tagger.errors import BundleError
from opinion_tagger.runtime.bundle import KERAS
from opinion_tagger.runtime.frame_heads import STATES


def _cell_layers() -> dict[str, str]:
    """Keras layer class -> cell, for the cells that run in Keras's own layers."""
    return {c.keras_layer: name for name, c in CELLS.items() if c.keras_layer}


def keras_config_json(file: Path) -> str:
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
        arch = json.loads(keras_config_json(file) or "null")["config"]
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
    frames = STATES in heads  # the recurrent states, output for the frame heads
    heads = [h for h in heads if h != STATES]
    try:
        inner = rnns[0]["config"]["layer"] if rnns else None
        if (
            inner and inner["class_name"] == "RNN"
        ):  # a RecurrentCell (opinion_tagger.model.network) in Keras's RNN layer
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
            "contextual": next(
                (name for name in ENCODERS if name in layers), next(iter(ENCODERS)) if "context" in layers else None
            ),
            "context_fine_tune": any(name in layers for name in ENCODERS),
            "frames": frames,
            "embedding dim": embedding["dim"],
            "vocab_size": embedding["vocab_size"],
        }
    except (KeyError, TypeError, IndexError):
        raise BundleError(f"{file}: not a network of this tagger (no embedding or recurrent layer config)") from None


def check_network(path: str | Path, config: TaggerConfig, vocab_size: int) -> None:
    """Refuse a bundle whose model.keras is not the network that config.json and vocab.txt describe."""
    path = Path(path)
    net = network_shape(path / KERAS)
    expected = {
        "task types": sorted(config.types),
        "cell": config.model.recurrent.cell if config.model.recurrent.depth else None,
        "depth": config.model.recurrent.depth,
        "hidden size": config.hidden_size,
        "output": config.model.head.output,
        "contextual": config.model.encoder.name,
        "context_fine_tune": config.model.encoder.fine_tune,
        "embedding dim": config.word_dim,
        "frames": config.model.frames.enabled,
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
