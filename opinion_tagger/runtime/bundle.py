"""Model bundles: a directory that holds a trained model.

What tagging reads (the runtime; ONNX Runtime runs the network):

    meta.json       format version, tag types, training record, scores, the ONNX graph's description (``onnx``)
                    and a manifest (size and sha256 of the other files)
    config.json     the TaggerConfig
    vocab.txt       the vocabulary, one word a line (index = line number)
    model.onnx      the network (``opinion_tagger.runtime.onnx_network``; written by
                    ``opinion_tagger.export.onnx_export``): the weights training changed (an adapted kernel as its
                    LoRA factors where those are smaller), the others (the encoder's base weights, frozen GloVe
                    rows) supplied from their packages when it loads
    glove_rows.npz  where the word-vector table's frozen rows are GloVe's vectors (a LoRA-tuned encoder's bundle):
                    each word's GloVe row and the rows training changed (``opinion_tagger.runtime.word_table``),
                    from which the table of model.onnx is rebuilt and checked by sha256
    frames.onnx     with frame heads (configuration ``model.frames.enabled``): the heads, a second graph that ONNX
                    Runtime runs on the states the network outputs and the spans decoded
                    (``opinion_tagger.runtime.frame_heads``)

Training state, which training reads to continue (optional: ``train`` writes it, the bundled models leave it out,
the runtime never reads it; without it, training continues from model.onnx's weights):

    model.keras     the Keras network (Keras 3 format, loaded with safe_mode=True), or
    weights.npz     for a model whose encoder was fine-tuned through LoRA adapters: only the weights training
                    changed (adapters, recurrent layers, heads, word vectors; NumPy arrays, no pickle); the network
                    is rebuilt from config.json and the encoder's frozen base weights come from the pinned,
                    sha256-checked package, frozen GloVe rows from the GloVe package

No pickle anywhere.  This module reads and checks bundles, for every back end; the training stack writes them
(``opinion_tagger.export.bundle_writer``: every file atomically and meta.json last, so an interrupted save
leaves a bundle that does not load rather than a wrong one) and reads their training state
(``opinion_tagger.model.keras_backend``).  Loading checks the manifest of every file tagging reads, and the
graph in model.onnx (read as what it declares, ``opinion_tagger.runtime.onnx_graph``, without loading it) against
config.json (inputs, outputs, cell, depth, hidden size, output heads, word vectors) and vocab.txt (vocabulary
size).  A missing, corrupt or inconsistent part raises BundleError, one line naming the file (and field).  A
bundle written before manifests existed loads with a BundleWarning; ``opinion-tagger export-onnx`` upgrades it.
A bundle without ``model.onnx`` (written before it existed) is refused by the ONNX back end with the command that
adds the file from its training state.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

from opinion_tagger.config import TaggerConfig, legacy
from opinion_tagger.encoders import ENCODERS
from opinion_tagger.errors import BundleError, ConfigError
from opinion_tagger.runtime.frame_heads import FRAMES_FILE, STATES
from opinion_tagger.runtime.onnx_graph import GraphSignature, read_signature
from opinion_tagger.runtime.vocabulary import Vocabulary
from opinion_tagger.storage import manifest_problem

FORMAT_VERSION = 1
FILES = ("config.json", "vocab.txt", "meta.json")  # every bundle has these
HASHED = ("config.json", "vocab.txt")  # meta.json holds their manifest (and that of the others present)
ONNX = "model.onnx"  # the network for tagging (ONNX Runtime), described by meta.json's "onnx" entry
KERAS = "model.keras"  # training state: the Keras network
DELTA = "weights.npz"  # training state of a LoRA-tuned model: the weights training changed
TRAINING_STATE = (KERAS, DELTA)
# what a bundle directory holds, as the error for a path that names none says it
EXPECTED = "a directory with meta.json, config.json, vocab.txt and model.onnx"
LEGACY_FRAMES = "frames.npz"  # the frame heads' weights, as bundles held them before frames.onnx
RECURRENT_OPERATORS = {"RNN": "elman", "LSTM": "lstm", "GRU": "gru"}  # ONNX's recurrent operators, by cell


def training_state_file(config: TaggerConfig) -> str:
    """The file of training state a bundle of ``config`` is written with: ``weights.npz`` for a LoRA-tuned
    encoder, else ``model.keras``."""
    return DELTA if config.model.encoder.lora_rank else KERAS


def training_state(path: Path) -> str | None:
    """The training state a bundle holds (``model.keras`` or ``weights.npz``), or None."""
    return next((name for name in TRAINING_STATE if (Path(path) / name).is_file()), None)


def extra_files(config: TaggerConfig) -> tuple[str, ...]:
    """The files a bundle of ``config`` has beside ``FILES`` and its network: ``frames.onnx``, the frame heads."""
    return (FRAMES_FILE,) if config.model.frames.enabled else ()


def external_files(onnx_meta: dict) -> tuple[str, ...]:
    """The bundle's files that model.onnx's external weights are rebuilt from (``glove_rows.npz``)."""
    externals = onnx_meta.get("externals", {})
    return tuple(sorted({e["file"] for e in externals.values() if isinstance(e, dict) and "file" in e}))


def tagging_files(config: TaggerConfig, meta: dict) -> tuple[str, ...]:
    """The files of a bundle that tagging reads beside meta.json: each listed in its manifest."""
    onnx = (ONNX, *external_files(meta["onnx"])) if isinstance(meta.get("onnx"), dict) else ()
    return HASHED + tuple(dict.fromkeys(onnx + extra_files(config)))


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
    problem = manifest_problem(path, {n: meta["manifest"][n] for n in names})
    if problem:
        raise BundleError(f"{problem} (manifest in meta.json)")


def _check_listed(path: Path, meta: dict, name: str) -> None:
    """``name`` listed in the manifest, and the file it lists."""
    if name not in meta["manifest"]:
        raise BundleError(f"{path / 'meta.json'}: field manifest must list {name}")
    _check_manifest(path, meta, (name,))


def verify_file(path: str | Path, name: str) -> None:
    """The bundle's file ``name`` (e.g. its training state, which the runtime does not read) against the
    manifest, where the bundle has one: BundleError naming the file when it is not the file listed."""
    path = Path(path)
    meta = read_json(path / "meta.json")
    if isinstance(meta.get("manifest"), dict):
        _check_listed(path, meta, name)


def check_exists(path: Path) -> None:
    """BundleError naming ``path`` and the bundled models' names unless it is a folder."""
    if not path.is_dir():
        from opinion_tagger.paths import bundled_models

        raise BundleError(
            f"{path}: model bundle not found (expected {EXPECTED}, or a bundled model's name: "
            f"{', '.join(bundled_models())})"
        )


def load_bundle_files(path: str | Path, verify: bool = True):
    """(Vocabulary, TaggerConfig, meta) of a bundle, checking that every part tagging reads is there, that the
    files are those the manifest lists and that the network in model.onnx matches config.json and vocab.txt.
    Training state (model.keras, weights.npz) is neither needed nor read."""
    path = Path(path)
    check_exists(path)
    for name in FILES:
        if not (path / name).is_file():
            raise BundleError(f"{path / name}: missing from the model bundle")
    meta = _read_meta(path, verify)
    has_onnx = "onnx" in meta
    if has_onnx and not isinstance(meta["onnx"], dict):
        raise BundleError(f"{path / 'meta.json'}: field onnx must be an object")
    if has_onnx and not (path / ONNX).is_file():
        raise BundleError(f"{path / ONNX}: missing from the model bundle (meta.json describes it)")
    if not has_onnx and training_state(path) is None:  # nothing to tag with, nor to export model.onnx from
        raise BundleError(f"{path / ONNX}: missing from the model bundle")
    hashed = verify and "manifest" in meta
    if hashed:  # the network and vocabulary first: a truncated file is named as such
        required = HASHED + ((ONNX,) if has_onnx else ())
        manifest = meta["manifest"]
        if not isinstance(manifest, dict) or not set(required) <= set(manifest):
            raise BundleError(f"{path / 'meta.json'}: field manifest must list {', '.join(required)}")
        _check_manifest(path, meta, ("vocab.txt", ONNX) if has_onnx else ("vocab.txt",))
    stored = read_json(path / "config.json")
    config = read_config(path / "config.json", stored)
    vocab = read_vocab(path / "vocab.txt")
    if has_onnx:
        check_graph(path, config, len(vocab), meta["onnx"])
    if hashed:  # an edit of config.json that the graph check cannot see
        _check_manifest(path, meta, ("config.json",))
    for name in tagging_files(config, meta)[len(HASHED) :]:
        if not (path / name).is_file():
            why = "config.json has frame heads" if name == FRAMES_FILE else "model.onnx's weights are rebuilt from it"
            if name == FRAMES_FILE and (path / LEGACY_FRAMES).is_file():
                why = f"written before it: `opinion-tagger export-onnx {path}` writes it from {LEGACY_FRAMES}"
            raise BundleError(f"{path / name}: missing from the model bundle ({why})")
        if hashed and name != ONNX:
            _check_listed(path, meta, name)
    if has_onnx and verify and meta["onnx"].get("config_sha256") not in (None, stored_digest(stored)):
        raise BundleError(
            f"{path / 'config.json'}: not the configuration model.onnx was exported from "
            "(its sha256 in meta.json's onnx entry differs)"
        )
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


def input_names(config: TaggerConfig) -> list[str]:
    """The network's inputs (``opinion_tagger.runtime.batching.network_inputs``), sorted: the word ids, and a
    fine-tuned encoder's wordpieces (without segment ids for an encoder that reads none)."""
    names = ["words"]
    if config.model.encoder.fine_tune:
        names += ["token_ids", "padding_mask", "word_starts"] + (["segment_ids"] if config.encoder.segments else [])
    return sorted(names)


def graph_shape(sig: GraphSignature, onnx_meta: dict) -> dict:
    """What the network in an ONNX graph is, in TaggerConfig's terms (and its vocabulary size, or None where
    the graph has no word-vector table): from the graph's inputs, outputs, recurrent operators and word-vector
    table, and the CRF scores and external weights meta.json's ``onnx`` entry records for it."""
    recurrent = [op for op in sig.operators if op.type in RECURRENT_OPERATORS]
    heads = [name for name in sig.outputs if name != STATES]
    crf = onnx_meta.get("crf") or {}
    sources = {e.get("source") for e in onnx_meta.get("externals", {}).values() if isinstance(e, dict)}
    table = sig.initializers.get("embedding/table")
    return {
        "task types": sorted(heads),
        "frames": STATES in sig.outputs,
        "inputs": sorted(sig.inputs),
        "contextual": next((name for name in ENCODERS if name in sources), None),
        "cell": RECURRENT_OPERATORS[recurrent[0].type] if recurrent else None,
        "depth": len(recurrent),
        "hidden size": recurrent[0].ints.get("hidden_size") if recurrent else None,
        "output": "crf" if heads and all(h in crf for h in heads) else "softmax",
        "embedding dim": table[1] if table and len(table) == 2 else None,
        "vocab_size": table[0] if table and len(table) == 2 else None,
        "widths": {name: sig.outputs[name][-1] if sig.outputs[name] else None for name in heads},
    }


def check_graph(path: Path, config: TaggerConfig, vocab_size: int, onnx_meta: dict) -> None:
    """Refuse a bundle whose model.onnx is not the network that config.json and vocab.txt describe."""
    file = path / ONNX
    try:
        sig = read_signature(file)
    except OSError as exc:
        raise BundleError(f"{file}: cannot read: {exc.strerror}") from None
    except ValueError as exc:
        raise BundleError(f"{file}: not an ONNX model ({exc})") from None
    net = graph_shape(sig, onnx_meta)
    for name, width in net["widths"].items():  # O, B, I first (a traced CRF head may output more)
        if width is not None and width < 3:
            raise BundleError(f"{file}: output {name} has {width} values a word, not one per tag (O, B, I)")
    depth = config.model.recurrent.depth
    expected: dict = {
        "task types": sorted(config.types),
        "frames": config.model.frames.enabled,
        "inputs": input_names(config),
        "output": config.model.head.output,
    }
    if net["contextual"] is not None:  # a fine-tuned encoder's base weights that model.onnx reads
        expected["contextual"] = config.model.encoder.name
    # a cell with an ONNX operator is one (a layer each); another cell's steps are traced whole, without one
    if config.model.recurrent.cell in RECURRENT_OPERATORS.values() or net["cell"] is not None:
        expected["cell"] = config.model.recurrent.cell if depth else None
    if net["cell"] is not None and net["cell"] == expected.get("cell"):
        expected |= {"depth": depth, "hidden size": config.hidden_size}
    if net["embedding dim"] is not None:
        expected["embedding dim"] = config.word_dim
    fields = {
        "task types": "task",
        "inputs": "model.encoder.name/fine_tune",
        "contextual": "model.encoder.name",
        "cell": "model.recurrent.cell",
        "depth": "model.recurrent.depth",
        "hidden size": "model.recurrent.hidden/budget",
        "output": "model.head.output",
        "frames": "model.frames.enabled",
        "embedding dim": "model.embeddings.features/dim",
    }
    for key, want in expected.items():
        if net[key] != want:
            raise BundleError(
                f"{path / 'config.json'}: field {fields.get(key, key)} gives {key} {want!r} "
                f"but model.onnx has {net[key]!r}"
            )
    if net["vocab_size"] is not None and net["vocab_size"] != vocab_size:
        raise BundleError(
            f"{path / 'vocab.txt'}: {vocab_size} words but model.onnx's embedding has {net['vocab_size']} rows"
        )


def config_digest(config: TaggerConfig) -> str:
    """The sha256 of a configuration: what ``model.onnx`` was exported from (``opinion_tagger.config.legacy.digest``:
    computed as bundles have recorded it since before the configuration's blocks, so that theirs still match)."""
    return stored_digest(config.to_dict())


def stored_digest(stored: dict) -> str:
    """The sha256 of a configuration as config.json stores it (either version, its values as written)."""
    return legacy.digest(stored, TaggerConfig().dotted())
