"""A bundle's Keras network rebuilt from the weights in its ``model.onnx``: how training continues from a bundle
without training state (``model.keras``, ``weights.npz``), such as the bundled models, and how ``--backend keras``
loads one.

The network is built from config.json (a fine-tuned encoder's base weights from their pinned package, as for
``weights.npz``) and each weight is taken from the initializer the export named by the weight's Keras path
(``opinion_tagger.export.onnx_export``), undoing what the export changed:

- recurrent layers and heads written as ONNX's own operators (``opinion_tagger.export.onnx_recurrent``):
  ``birnn_k/onnx_W``, ``_R`` and ``_B`` back into each direction's kernel, recurrent kernel and bias (an LSTM's
  gates back into Keras's order), ``T/onnx_kernel`` and ``_bias`` into a type's head;
- a CRF's transition, start and end scores: from meta.json's ``onnx`` entry;
- external weights: the encoder's base weights are the package's, as built; a word-vector table of GloVe rows is
  rebuilt from the GloVe package and ``glove_rows.npz`` (``opinion_tagger.runtime.word_table``, checked by sha256);
- a LoRA-adapted kernel stored as its factors (``kernel/lora_a``, ``kernel/lora_b``, the base kernel external):
  those adapters, exactly;
- a LoRA-adapted kernel stored merged, W + A B alpha / rank (where the factors are not the smaller: MiniLM's query
  and value kernels at rank 64): the frozen kernel W stays the package's and the adapters are rebuilt from
  D = merged - W, the first components of its singular value decomposition split evenly between A and B so that
  A B alpha / rank = D (to float rounding); components beyond D's rank (MiniLM's 32 output columns a head, rank 64)
  start as fresh adapters do (A random, B zero).  The network computes what model.onnx computes, but the factors
  are not those training found, so training continues on another path than it would from ``weights.npz``.

Encoder weights that model.onnx leaves out because no output reads them (the unused pooler) keep their package
values; any other weight missing from the graph, or of another shape, raises BundleError naming model.onnx.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from opinion_tagger.config import TaggerConfig
from opinion_tagger.errors import BundleError, TaggerError
from opinion_tagger.runtime.bundle import ONNX, RECURRENT_OPERATORS, read_config, read_json, read_vocab
from opinion_tagger.runtime.frame_heads import FRAMES_FILE, head_names
from opinion_tagger.runtime.word_table import GLOVE_SOURCE, external_table

LSTM_TO_KERAS = [0, 2, 3, 1]  # ONNX's LSTM gates i, o, f, c -> Keras's i, f, c, o
CRF_SCORES = ("transitions", "start", "end")


def _by_id(*pairs) -> dict:
    """``{id(variable): (variable, value)}``: Keras variables overload ``==``, so they are no dict keys."""
    return {id(v): (v, value) for v, value in pairs}


def initializers(file: Path) -> dict[str, np.ndarray]:
    """The weights stored in an ONNX file, by name (external ones left out)."""
    import onnx
    from onnx import numpy_helper

    try:
        proto = onnx.load(str(file), load_external_data=False)
    except Exception as exc:  # onnx raises protobuf's own errors for a damaged file
        raise BundleError(f"{file}: cannot read the network: {str(exc).splitlines()[0]}") from None
    return {
        t.name: numpy_helper.to_array(t)
        for t in proto.graph.initializer
        if t.data_location != onnx.TensorProto.EXTERNAL
    }


def bundle_head_arrays(path: str | Path, config: TaggerConfig) -> dict[str, np.ndarray]:
    """The frame heads' weights of a bundle (``head_arrays``' names): its ``frames.onnx``'s initializers."""
    file = Path(path) / FRAMES_FILE
    arrays = initializers(file)
    missing = sorted(set(head_names(config)) - set(arrays))
    if missing:
        raise BundleError(f"{file}: no weight {missing[0]} of the frame heads")
    return {k: arrays[k] for k in head_names(config)}


def _gates(a: np.ndarray, order: list[int]) -> np.ndarray:
    """``a``'s last axis as 4 gate blocks, put in ``order``."""
    h = a.shape[-1] // 4
    return np.concatenate([a[..., g * h : (g + 1) * h] for g in order], axis=-1)


def _recurrent_weights(cell, kind: str, w: np.ndarray, r: np.ndarray, b: np.ndarray) -> dict:
    """One direction's Keras weights (variable -> value) from its ONNX W, R and B (``_direction_weights``'s
    inverse)."""
    kernel, recurrent = w.T, r.T
    h = recurrent.shape[0]
    bias = b[:h] if kind == "elman" else b.reshape(tuple(cell.bias.shape)) if kind == "gru" else b[: 4 * h]
    if kind == "lstm":
        kernel, recurrent, bias = (_gates(a, LSTM_TO_KERAS) for a in (kernel, recurrent, bias))
    out = _by_id((cell.kernel, kernel), (cell.recurrent_kernel, recurrent))
    if cell.use_bias:
        out |= _by_id((cell.bias, bias))
    return out


def _native_weights(model, config: TaggerConfig, values: dict) -> dict:
    """The recurrent layers' and heads' weights, where the export wrote them as ONNX operators."""
    out: dict = {}
    for k in range(1, config.model.recurrent.depth + 1):
        layer = model.get_layer(f"birnn_{k}")
        w, r, b = (_take(values, f"birnn_{k}/onnx_{x}") for x in "WRB")
        for d, cell in enumerate((layer.forward_layer.cell, layer.backward_layer.cell)):
            out |= _recurrent_weights(cell, config.model.recurrent.cell, w[d], r[d], b[d])
    for t in config.types:
        dense = model.get_layer(f"{t}_emissions" if config.model.head.output == "crf" else t)
        out |= _by_id((dense.kernel, _take(values, f"{t}/onnx_kernel")), (dense.bias, _take(values, f"{t}/onnx_bias")))
    return out


def _take(values: dict, name: str) -> np.ndarray:
    if name not in values:
        raise BundleError(f"holds no weight {name}")
    return values.pop(name)


def split_delta(delta: np.ndarray, a: np.ndarray, b: np.ndarray, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """LoRA factors (A, B) of the shapes of ``a`` ([..., r]) and ``b`` ([r, n]) with A B ``scale`` = ``delta``
    ([..., n]): D's leading singular components, each split evenly; ``a``'s own values (fresh adapters) for the
    components beyond them, with B's rows zero."""
    rank, n = b.shape
    flat = delta.reshape(-1, n).astype(np.float64)
    u, s, vt = np.linalg.svd(flat, full_matrices=False)
    k = min(rank, len(s))
    root = np.sqrt(s[:k] / scale)
    new_a = a.reshape(-1, rank).astype(np.float64).copy()
    new_b = np.zeros((rank, n))
    new_a[:, :k], new_b[:k] = u[:, :k] * root, root[:, None] * vt[:k]
    return new_a.reshape(a.shape).astype(np.float32), new_b.astype(np.float32)


def _lora_weights(model, values: dict) -> dict:
    """The adapters of each LoRA-adapted kernel (its frozen kernel stays the package's)."""
    out: dict = {}
    for layer in model._flatten_layers(include_self=False, recursive=True):
        if not getattr(layer, "lora_enabled", False):
            continue
        path, scale = layer._kernel.path, layer.lora_alpha / layer.lora_rank
        a, b = np.asarray(layer.lora_kernel_a), np.asarray(layer.lora_kernel_b)
        if f"{path}/lora_a" in values:  # the factors themselves
            factors = values.pop(f"{path}/lora_a"), values.pop(f"{path}/lora_b")
            out |= _by_id((layer.lora_kernel_a, factors[0]), (layer.lora_kernel_b, factors[1]))
            values.pop(f"{path}/lora_scale", None)
        elif path in values:  # merged: W + A B scale
            delta = values.pop(path) - np.asarray(layer._kernel)
            new_a, new_b = split_delta(delta, a, b, scale)
            out |= _by_id((layer.lora_kernel_a, new_a), (layer.lora_kernel_b, new_b))
        out |= _by_id((layer._kernel, None))  # the package's, as built
    return out


def model_from_onnx(path: str | Path):
    """The Keras network of the bundle in ``path`` (checked by ``load_bundle_files``), its weights those of its
    model.onnx."""
    from opinion_tagger.model.network import build_model

    path = Path(path)
    file = path / ONNX
    meta = read_json(path / "meta.json").get("onnx")
    if not isinstance(meta, dict) or not file.is_file():
        raise BundleError(f"{path}: neither training state (model.keras, weights.npz) nor model.onnx")
    config, vocab = read_config(path / "config.json"), read_vocab(path / "vocab.txt")
    try:  # a fine-tuned encoder comes from the pinned base weights: one line naming what is missing or damaged
        model = build_model(config, len(vocab), config.word_dim, pretrained=bool(config.model.encoder.fine_tune))
    except TaggerError as exc:
        raise BundleError(f"{path}: {exc}") from None
    values = initializers(file)
    for name, entry in meta.get("externals", {}).items():
        if entry.get("source") == GLOVE_SOURCE:
            values[name] = external_table(path, entry)
    try:
        assigned = _assignments(model, config, meta, values)
    except BundleError as exc:
        raise BundleError(f"{file}: {exc}") from None
    for v, value in assigned.values():
        if value is None:
            continue
        if tuple(value.shape) != tuple(v.shape):
            raise BundleError(f"{file}: weight {v.path} has shape {tuple(value.shape)}, the network {tuple(v.shape)}")
        v.assign(value)
    return model


def _assignments(model, config: TaggerConfig, meta: dict, values: dict) -> dict:
    """Each weight of ``model`` (by id: the variable and its value, None to keep it) from model.onnx's ``values``
    and ``meta``, its entry in meta.json; BundleError for a weight the graph does not hold."""
    assigned = _lora_weights(model, values)
    if config.model.recurrent.cell in RECURRENT_OPERATORS.values() and config.model.recurrent.depth:
        assigned |= _native_weights(model, config, values)
    if config.model.head.output == "crf":
        for t in config.types:
            crf, scores = model.get_layer(t), meta.get("crf", {}).get(t, {})
            assigned |= _by_id(*((getattr(crf, k), np.asarray(scores.get(k, []), np.float32)) for k in CRF_SCORES))
    encoder = set()
    if config.model.encoder.fine_tune:
        encoder = {id(v) for v in model.get_layer(config.model.encoder.name).weights}
    for v in model.weights:
        if id(v) in assigned:
            continue
        if v.path in values:
            assigned |= _by_id((v, values[v.path]))
        elif id(v) not in encoder:  # an encoder's weight that no output reads keeps the package's value
            raise BundleError(f"holds no weight {v.path} of the network config.json describes")
    return assigned
