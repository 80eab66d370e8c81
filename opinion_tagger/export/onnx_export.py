"""Export a trained Keras network to ONNX, for tagging with ONNX Runtime (``opinion_tagger.runtime.onnx_network``).

Runs where the network was trained (it needs TensorFlow and tf2onnx); tagging never imports it.

The network is traced with every weight as a graph *input* (``model.stateless_call``), so the
converter folds no weight into another: each weight becomes one initializer named by its Keras
path (``minilm/transformer_layer_0/self_attention/query/kernel``), in Keras's own layout, and ONNX
Runtime folds what it can when it loads the file.  LoRA adapters are merged into their kernels
first (W + A B alpha / rank, which Keras computes at each call), so the traced graph has no adapters.
Where the unadapted kernel W is a tensor of the encoder's package and the factors are the smaller, the
file keeps the factors instead of the merged kernel: W is external and three nodes compute
W + (A B) alpha / rank from initializers alone, which ONNX Runtime folds into one constant when it
loads the file.  At rank 64 the factors of MPNet-base's query and value kernels are 9.4 MB, against
57 MB merged.

Not every weight is stored in ``model.onnx``; some are *external*, supplied when the session is
created (``SessionOptions.add_external_initializers``), so that a bundle keeps only what training
changed:

- an encoder's name (``minilm``, ``mpnet``): a weight equal to a tensor of the encoder's pinned base weights
  (``model.safetensors``, ``opinion_tagger.runtime.base_weights``), read as it is or transposed, then reshaped
  (checked value for value here; the file is checked by sha256 when loading);
- ``glove``: a word-vector table whose frozen rows are GloVe's, rebuilt from the GloVe package and
  the trained rows stored in the bundle's ``glove_rows.npz`` (``opinion_tagger.runtime.word_table``).

What the runtime needs to know (inputs, outputs, the externals, CRF transitions) is returned as a
dict that ``save_bundle`` puts into meta.json under ``onnx``.  A network with frame heads also outputs its
recurrent states (``states``), on which the runtime runs the heads (``opinion_tagger.runtime.frame_heads``).
"""

from __future__ import annotations

import logging
import warnings
from pathlib import Path

import numpy as np

from opinion_tagger.config import TaggerConfig
from opinion_tagger.encoders import Encoder
from opinion_tagger.errors import BundleError
from opinion_tagger.runtime.base_weights import locate
from opinion_tagger.runtime.bundle import config_digest
from opinion_tagger.runtime.frame_heads import STATES
from opinion_tagger.runtime.word_table import GLOVE_SOURCE

OPSET = 17
ONNX_FILE = "model.onnx"
EXTERNAL = "external"  # the location written for an external initializer's data (never read as a file)


def merged_weights(model) -> dict[str, np.ndarray]:
    """Every weight of ``model`` by its path, LoRA adapters merged into their kernels (and left out)."""
    out, adapters = {}, set()
    for layer in model._flatten_layers(include_self=False, recursive=True):
        if getattr(layer, "lora_enabled", False):
            out[layer._kernel.path] = np.asarray(layer.kernel)  # the property adds A B alpha / rank
            adapters |= {layer.lora_kernel_a.path, layer.lora_kernel_b.path}
    for v in model.weights:
        if v.path not in out and v.path not in adapters:
            out[v.path] = np.asarray(v)
    return out


def plain_model(model, config: TaggerConfig, vocab_size: int):
    """``model`` itself, or for a LoRA-tuned encoder the same network without adapters holding the merged
    kernels (the function is the same)."""
    if not config.model.encoder.lora_rank:
        return model
    from opinion_tagger.model.network import build_model

    dim = config.word_dim
    plain = build_model(config.replace({"model.encoder.lora_rank": 0}), vocab_size, dim, pretrained=False)
    weights = merged_weights(model)
    missing = [v.path for v in plain.weights if v.path not in weights]
    if missing:
        raise BundleError(f"cannot merge the LoRA adapters: the plain network has {missing[0]}, the trained one not")
    for v in plain.weights:
        v.assign(weights[v.path])
    return plain


def lora_factors(model) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, float]]:
    """Each LoRA-adapted kernel of ``model`` by its path: (the unadapted kernel W, A, B, alpha / rank)."""
    out = {}
    for layer in model._flatten_layers(include_self=False, recursive=True):
        if getattr(layer, "lora_enabled", False):
            out[layer._kernel.path] = (
                np.asarray(layer._kernel),
                np.asarray(layer.lora_kernel_a),
                np.asarray(layer.lora_kernel_b),
                layer.lora_alpha / layer.lora_rank,
            )
    return out


def _initializer(name: str, value: np.ndarray, external: bool = False):
    """An initializer holding ``value``, or, ``external``, one whose data the session is given when it is
    created (``SessionOptions.add_external_initializers``)."""
    import onnx

    tensor = onnx.numpy_helper.from_array(value, name=name)
    if external:
        tensor.ClearField("raw_data")
        tensor.data_location = onnx.TensorProto.EXTERNAL
        for k, v in (("location", EXTERNAL), ("offset", "0"), ("length", str(value.nbytes))):
            entry = tensor.external_data.add()
            entry.key, entry.value = k, v
    return tensor


def _lora_nodes(path: str, base: np.ndarray, a: np.ndarray, b: np.ndarray, scale: float) -> tuple[list, list]:
    """Nodes computing the adapted kernel ``path`` = W + (A B) scale as Keras does, from initializers:
    ``path/base`` (W, external), ``path/lora_a``, ``path/lora_b`` and ``path/lora_scale``."""
    from onnx import helper

    inits = [
        _initializer(f"{path}/base", base, external=True),
        _initializer(f"{path}/lora_a", a),
        _initializer(f"{path}/lora_b", b),
        _initializer(f"{path}/lora_scale", np.asarray(scale, dtype=np.float32)),
    ]
    nodes = [
        helper.make_node("MatMul", [f"{path}/lora_a", f"{path}/lora_b"], [f"{path}/lora_ab"]),
        helper.make_node("Mul", [f"{path}/lora_ab", f"{path}/lora_scale"], [f"{path}/lora_delta"]),
        helper.make_node("Add", [f"{path}/base", f"{path}/lora_delta"], [path]),
    ]
    return nodes, inits


def sample_inputs(config: TaggerConfig, vocab) -> tuple[dict | np.ndarray, list[list[str]]]:
    """Network inputs for two short sentences (the model must have been called once to be traced)."""
    from opinion_tagger.runtime.batching import encode_words, network_inputs

    words = [["The", "plan", "was", "robbery", "."], ["Officials", "said", "so", "."]]
    ids = encode_words(vocab, words, length=5)
    if config.model.encoder.fine_tune:
        from opinion_tagger.runtime.wordpieces import word_pieces

        return network_inputs(ids, words, pieces=word_pieces(config.encoder, cache=False)), words
    return ids, words


def _base_tensors(enc: Encoder) -> dict[str, np.ndarray]:
    """The tensors of the encoder's base weights (checked by sha256)."""
    from safetensors.numpy import load_file

    return load_file(str(locate(enc) / "model.safetensors"))


def match_base(weights: dict[str, np.ndarray], tensors: dict[str, np.ndarray], source: str) -> dict[str, dict]:
    """For each weight equal to a tensor of the ``source`` encoder's package (as it is, or transposed),
    reshaped: how to rebuild it."""

    def key(a: np.ndarray) -> tuple:  # independent of the order of the values (a transposed tensor's too)
        return (a.size, float(a.min(initial=np.inf)), float(a.max(initial=-np.inf)))

    by_key: dict[tuple, list[str]] = {}
    for name, t in tensors.items():
        if t.dtype == np.float32:
            by_key.setdefault(key(t), []).append(name)
    out = {}
    for path, w in weights.items():
        if w.dtype != np.float32 or w.size < 2:
            continue
        for name in by_key.get(key(w), []):
            t = tensors[name]
            for transpose in (False, True):
                if transpose and t.ndim != 2:
                    continue
                src = t.T if transpose else t
                if np.array_equal(np.reshape(src, w.shape), w):
                    out[path] = {"source": source, "tensor": name, "transpose": transpose, "shape": list(w.shape)}
                    break
            if path in out:
                break
    return out


def export_onnx(model, config: TaggerConfig, vocab, bundle: str | Path, table_file: str | None = None) -> dict:
    """Write ``bundle/model.onnx`` (atomically) for ``model``; return the ``onnx`` entry for meta.json.
    ``table_file``: the bundle's file that holds the word-vector table as GloVe rows (``table_delta``,
    ``glove_rows.npz``), so the table is external too."""
    import onnx
    import tensorflow as tf
    import tf2onnx
    from keras.src.export.tf2onnx_lib import patch_tf2onnx

    from opinion_tagger.export.onnx_fusion import fuse_layer_norms
    from opinion_tagger.export.onnx_recurrent import NATIVE_CELLS, recurrent_graph
    from opinion_tagger.storage import atomic_path

    net = plain_model(model, config, len(vocab))
    inputs, _ = sample_inputs(config, vocab)
    net(inputs, training=False)
    names = sorted(inputs) if isinstance(inputs, dict) else ["words"]
    native = config.model.recurrent.cell in NATIVE_CELLS
    if native:  # trace the layers below the recurrent ones; those and the heads are ONNX operators
        import keras

        traced = keras.Model(net.input, {"features": net.get_layer("input_dropout").output})
        outputs = ["features"]
    else:
        traced, outputs = net, list(config.types) + ([STATES] if config.model.frames.enabled else [])
    trainable, fixed = traced.trainable_variables, traced.non_trainable_variables
    variables = trainable + fixed
    paths = [v.path for v in variables]
    if len(set(paths)) != len(paths):
        raise BundleError("two weights of the network share a path")
    spec = [tf.TensorSpec([None, None], tf.int32, name=n) for n in names]
    spec += [tf.TensorSpec(v.shape, tf.as_dtype(v.dtype), name=f"weight_{k}") for k, v in enumerate(variables)]

    def forward(*args):
        data = dict(zip(names, args[: len(names)])) if isinstance(inputs, dict) else args[0]
        w = list(args[len(names) :])
        out, _ = traced.stateless_call(w[: len(trainable)], w[len(trainable) :], data, training=False)
        return {t: tf.identity(out[t], name=t) for t in outputs}

    fn = tf.function(forward, input_signature=spec)
    logging.getLogger("tf2onnx").setLevel(logging.WARNING)  # its progress is logged at INFO
    with warnings.catch_warnings():  # tf2onnx's own use of NumPy's deprecated names
        warnings.simplefilter("ignore", FutureWarning)
        patch_tf2onnx()
        proto, _ = tf2onnx.convert.from_function(fn, input_signature=spec, opset=OPSET)

    values = {p: np.asarray(v) for p, v in zip(paths, variables)}
    by_input = {f"weight_{k}": p for k, p in enumerate(paths)}
    externals, factored = {}, {}
    if config.model.encoder.fine_tune:
        source = config.encoder.name
        tensors = _base_tensors(config.encoder)
        externals = match_base(values, tensors, source)
        # where the factors are the smaller (not MiniLM's EinsumDense kernels at rank 64: A is 384 x 12 x r)
        factors = {
            p: f
            for p, f in lora_factors(model).items()
            if p in values and p not in externals and f[1].size + f[2].size < f[0].size
        }
        bases = match_base({f"{p}/base": f[0] for p, f in factors.items()}, tensors, source)
        externals.update(bases)
        factored = {p: f for p, f in factors.items() if f"{p}/base" in bases}
    if table_file:
        externals["embedding/table"] = {
            "source": GLOVE_SOURCE,
            "file": table_file,
            "shape": list(values["embedding/table"].shape),
        }
    graph = proto.graph
    used = _used_names(graph)
    kept_inputs, stored, lora_nodes = [], set(), []
    for inp in graph.input:
        name = inp.name.split(":")[0]
        if name not in by_input:
            kept_inputs.append(inp)
            continue
        if inp.name not in used:  # a weight the outputs do not need (the encoder's pooler)
            continue
        path = by_input[name]
        if path in factored:
            nodes, inits = _lora_nodes(path, *factored[path])
            lora_nodes.extend(nodes)
            graph.initializer.extend(inits)
            stored.add(f"{path}/base")
        else:
            stored.add(path)
            graph.initializer.append(_initializer(path, values[path], path in externals))
        _rename_uses(graph, inp.name, path)
    del graph.input[:]
    graph.input.extend(kept_inputs)
    for node in reversed(lora_nodes):  # before every node that reads their outputs
        graph.node.insert(0, node)
    externals = {k: e for k, e in externals.items() if k in stored}
    for out in graph.output:  # outputs are named by type (or "features")
        out.name = out.name.split(":")[0]
    if native:
        nodes, inits, heads = recurrent_graph(net, config, "features", "words")
        graph.node.extend(nodes)
        graph.initializer.extend(inits)
        del graph.output[:]
        graph.output.extend(heads)
    fuse_layer_norms(proto)  # ONNX Runtime does not fuse tf2onnx's form of a layer norm itself
    proto.producer_name = "opinion-tagger"
    file = Path(bundle) / ONNX_FILE
    with atomic_path(file) as tmp:
        onnx.save_model(proto, str(tmp))
    crf = {}
    if config.model.head.output == "crf":
        for t in config.types:
            layer = net.get_layer(t)
            crf[t] = {k: np.asarray(getattr(layer, k)).tolist() for k in ("transitions", "start", "end")}
    return {
        "file": ONNX_FILE,
        "opset": OPSET,
        "inputs": [i.name for i in kept_inputs],
        "outputs": list(config.types) + ([STATES] if config.model.frames.enabled else []),
        "externals": externals,
        "crf": crf,
        "config_sha256": config_digest(config),
    }


def _used_names(graph) -> set[str]:
    """Every name a node of ``graph`` or of its subgraphs reads."""
    out = set()
    for node in graph.node:
        out.update(node.input)
        for attr in node.attribute:
            for sub in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                out |= _used_names(sub)
    return out


def _rename_uses(graph, old: str, new: str) -> None:
    """Point every node input named ``old`` (in the graph and its subgraphs) at ``new``."""
    for node in graph.node:
        for i, name in enumerate(node.input):
            if name == old:
                node.input[i] = new
        for attr in node.attribute:
            for sub in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                _rename_uses(sub, old, new)
