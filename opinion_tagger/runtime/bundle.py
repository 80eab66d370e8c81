"""Model bundles: a directory that holds everything needed to tag text.

    model.keras   the network (Keras 3 format; loaded with safe_mode=True), or
    weights.npz   for a model whose encoder was fine-tuned through LoRA adapters: only the
                  weights training changed (adapters, recurrent layers, heads, word vectors;
                  NumPy arrays, no pickle); the network is rebuilt from config.json and the
                  encoder's frozen base weights come from the pinned, sha256-checked package,
                  frozen GloVe rows from the GloVe package (checked against the table's sha256)
    model.onnx    the network for tagging, run by ONNX Runtime (``opinion_tagger.runtime.onnx_network``; written
                  by ``opinion_tagger.export.onnx_export``): the weights training changed (an adapted kernel
                  as its LoRA factors where those are smaller), the others (the encoder's base weights,
                  frozen GloVe rows) supplied from their packages when it loads
    frames.npz    with frame heads (configuration ``model.frames.enabled``): their weights, which the runtime runs
                  in NumPy on the states the network outputs (``opinion_tagger.runtime.frame_heads``; NumPy
                  arrays, no pickle)
    config.json   the TaggerConfig
    vocab.txt     the vocabulary, one word a line (index = line number)
    meta.json     format version, tag types, training record, scores, the ONNX graph's description
                  (``onnx``) and a manifest (size and sha256 of the other files)

No pickle anywhere.  This module reads and checks bundles, for every back end; the training stack writes them
(``opinion_tagger.export.bundle_writer``: every file atomically and meta.json last, so an interrupted save
leaves a bundle that does not load rather than a wrong one).  Loading checks the manifest, and the network
in model.keras (read as the JSON inside it, without Keras) against config.json (cell, depth, hidden size,
output heads, input features) and vocab.txt (vocabulary size).  A missing, corrupt or inconsistent part
raises BundleError, one line naming the file (and field).  A bundle written before manifests existed loads
with a BundleWarning; ``opinion-tagger export-onnx`` upgrades it.  A bundle without ``model.onnx`` (written
before it existed) is refused by the ONNX back end with the command that adds the file.
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

from opinion_tagger.config import TaggerConfig, legacy
from opinion_tagger.encoders import ENCODERS
from opinion_tagger.errors import BundleError, ConfigError
from opinion_tagger.runtime.frame_heads import FRAMES_FILE, STATES
from opinion_tagger.runtime.vocabulary import Vocabulary
from opinion_tagger.storage import manifest_problem

FORMAT_VERSION = 1
FILES = ("model.keras", "config.json", "vocab.txt", "meta.json")
HASHED = ("model.keras", "config.json", "vocab.txt")  # meta.json holds their manifest (and model.onnx's)
DELTA = "weights.npz"  # replaces model.keras in a bundle of a LoRA-tuned model
ONNX = "model.onnx"  # the network for tagging (ONNX Runtime), listed in meta.json's "onnx" entry
# what a bundle directory holds, as the error for a path that names none says it: not model.keras alone, which a
# bundle of a LoRA-tuned encoder lacks (its network is weights.npz), and model.onnx, which tagging runs
EXPECTED = "a directory with meta.json, config.json, vocab.txt and the network (model.onnx, model.keras or weights.npz)"


def network_file(config: TaggerConfig) -> str:
    """The file holding a bundle's network: ``weights.npz`` for a LoRA-tuned encoder, else ``model.keras``."""
    return DELTA if config.model.encoder.lora_rank else "model.keras"


def bundle_files(config_or_net: TaggerConfig | str, hashed: bool = False) -> tuple[str, ...]:
    net = config_or_net if isinstance(config_or_net, str) else network_file(config_or_net)
    names = HASHED if hashed else FILES
    return tuple(net if n == "model.keras" else n for n in names)


def extra_files(config: TaggerConfig) -> tuple[str, ...]:
    """The files a bundle of ``config`` has beside ``_files``: ``frames.npz``, the frame heads' weights."""
    return (FRAMES_FILE,) if config.model.frames.enabled else ()


def _cell_layers() -> dict[str, str]:
    """Keras layer class -> cell, for the cells that run in Keras's own layers."""
    from opinion_tagger.cells import CELLS

    return {c.keras_layer: name for name, c in CELLS.items() if c.keras_layer}


class BundleWarning(UserWarning):
    """A bundle that loads but cannot be verified (written before manifests)."""


def onnx_supported(config: TaggerConfig) -> str | None:
    """Why the network cannot run in ONNX Runtime, or None: frozen encoder vectors are computed outside the
    network, by the Keras encoder (``opinion_tagger.model.minilm.MiniLMEncoder``)."""
    if config.model.encoder.name and not config.model.encoder.fine_tune:
        return "its frozen encoder vectors come from the Keras encoder"
    return None


def read_json(file: Path) -> dict:
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


def read_config(file: Path, data: dict | None = None) -> TaggerConfig:
    """The configuration in ``file`` (or ``data``, its JSON already read); BundleError naming the file and the
    field."""
    try:
        return TaggerConfig.from_dict(read_json(file) if data is None else data)
    except ConfigError as exc:
        raise BundleError(f"{file}: {exc}") from None


def read_vocab(file: Path) -> Vocabulary:
    try:
        return Vocabulary.load(file)
    except UnicodeDecodeError:
        raise BundleError(f"{file}: not UTF-8 text") from None
    except ValueError as exc:
        raise BundleError(f"{file}: {exc}") from None


def _check_manifest(path: Path, meta: dict, names) -> None:
    manifest = meta["manifest"]
    hashed = bundle_files(network_name(path), hashed=True)
    if not isinstance(manifest, dict) or not set(hashed) <= set(manifest):
        raise BundleError(f"{path / 'meta.json'}: field manifest must list {', '.join(hashed)}")
    problem = manifest_problem(path, {n: manifest[n] for n in names})
    if problem:
        raise BundleError(f"{problem} (manifest in meta.json)")


def check_exists(path: Path) -> None:
    """BundleError naming ``path`` and the bundled models' names unless it is a folder."""
    if not path.is_dir():
        from opinion_tagger.paths import bundled_models

        raise BundleError(
            f"{path}: model bundle not found (expected {EXPECTED}, or a bundled model's name: "
            f"{', '.join(bundled_models())})"
        )


def load_bundle_files(path: str | Path, verify: bool = True):
    """(Vocabulary, TaggerConfig, meta) of a bundle, checking that every part is there, that
    the files are those the manifest lists and that the network matches config.json."""
    path = Path(path)
    check_exists(path)
    net = network_name(path)
    for name in bundle_files(net):
        if not (path / name).is_file():
            raise BundleError(f"{path / name}: missing from the model bundle")
    meta = _read_meta(path, verify)
    hashed = verify and "manifest" in meta
    if hashed:  # the network and vocabulary first: a truncated file is named as such
        _check_manifest(path, meta, (net, "vocab.txt"))
    stored = read_json(path / "config.json")
    config = read_config(path / "config.json", stored)
    vocab = read_vocab(path / "vocab.txt")
    if network_file(config) != net:
        raise BundleError(
            f"{path / 'config.json'}: field model.encoder.lora_rank asks for {network_file(config)} but the bundle "
            f"has {net}"
        )
    if net == "model.keras":  # a weights.npz bundle is checked weight by weight when it is loaded
        check_network(path, config, len(vocab))
    if hashed:  # an edit of config.json that the network check cannot see
        _check_manifest(path, meta, ("config.json",))
    for name in extra_files(config):
        if not (path / name).is_file():
            raise BundleError(f"{path / name}: missing from the model bundle (config.json has frame heads)")
        if hashed:
            _check_listed(path, meta, name)
    if "onnx" in meta:
        _check_onnx(path, stored, meta, verify)
    return vocab, config, meta


def _read_meta(path: Path, verify: bool) -> dict:
    """meta.json, of this format version; a warning when ``verify`` asks for a manifest it does not have."""
    meta = read_json(path / "meta.json")
    if meta.get("format_version") != FORMAT_VERSION:
        raise BundleError(
            f"{path / 'meta.json'}: bundle format {meta.get('format_version')!r} "
            f"is not supported (expected {FORMAT_VERSION})"
        )
    if verify and "manifest" not in meta:  # one line "<bundle>/meta.json:0: BundleWarning: no file manifest ..."
        warnings.warn_explicit(
            "no file manifest (a bundle of an older version): files not verified; "
            "opinion-tagger export-onnx upgrades it",
            BundleWarning,
            str(path / "meta.json"),
            0,
        )
    return meta


def _check_listed(path: Path, meta: dict, name: str) -> None:
    """``name`` listed in the manifest, and the file it lists."""
    if name not in meta["manifest"]:
        raise BundleError(f"{path / 'meta.json'}: field manifest must list {name}")
    _check_manifest(path, meta, (name,))


def _check_onnx(path: Path, stored: dict, meta: dict, verify: bool) -> None:
    """The ONNX graph that meta.json's ``onnx`` entry describes: there, listed in the manifest (when it has
    one), and exported from this config.json (``stored``: as the file holds it)."""
    if not isinstance(meta["onnx"], dict):
        raise BundleError(f"{path / 'meta.json'}: field onnx must be an object")
    if verify and meta["onnx"].get("config_sha256") not in (None, stored_digest(stored)):
        raise BundleError(
            f"{path / 'config.json'}: not the configuration model.onnx was exported from "
            "(its sha256 in meta.json's onnx entry differs)"
        )
    if not (path / ONNX).is_file():
        raise BundleError(f"{path / ONNX}: missing from the model bundle (meta.json describes it)")
    if verify and "manifest" in meta:
        _check_listed(path, meta, ONNX)


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
    net = network_shape(path / "model.keras")
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
    fields = {
        "task types": "task",
        "cell": "model.recurrent.cell",
        "depth": "model.recurrent.depth",
        "hidden size": "model.recurrent.hidden/budget",
        "output": "model.head.output",
        "contextual": "model.encoder.name",
        "context_fine_tune": "model.encoder.fine_tune",
        "embedding dim": "model.embeddings.features/dim",
        "frames": "model.frames.enabled",
    }
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


def network_name(path: Path) -> str:
    return DELTA if (path / DELTA).is_file() and not (path / "model.keras").is_file() else "model.keras"


def config_digest(config: TaggerConfig) -> str:
    """The sha256 of a configuration: what ``model.onnx`` was exported from (``opinion_tagger.config.legacy.digest``:
    computed as bundles have recorded it since before the configuration's blocks, so that theirs still match)."""
    return stored_digest(config.to_dict())


def stored_digest(stored: dict) -> str:
    """The sha256 of a configuration as config.json stores it (either version, its values as written)."""
    return legacy.digest(stored, TaggerConfig().dotted())
