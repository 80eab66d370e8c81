"""The recurrent layers and output heads of a network as ONNX's own operators (``RNN``, ``LSTM``, ``GRU``).

A traced Keras recurrent layer becomes an ONNX ``Loop`` that runs a small graph per time step; ONNX
Runtime runs its native kernels instead, which compute the input projections of every time step in one
matrix product and keep no per-step graph: faster, and a graph without loops can be fused further
(``opinion_tagger.export.onnx_export``).  The translation is exact (the same functions of the same weights):

- Elman (``SimpleRNN``): ``h = act(x W + h U + b)`` -> ``RNN`` with W = kernelᵀ, R = recurrentᵀ, B = [b, 0];
- LSTM: Keras's gates in the order input, forget, cell, output -> ONNX's input, output, forget, cell;
  sigmoid and tanh as both use them;
- GRU with ``reset_after`` (Keras's default, cuDNN's form) -> ``GRU`` with ``linear_before_reset=1``,
  gates update, reset, candidate in both.

Each ``Bidirectional`` layer becomes one bidirectional operator given each sentence's length (padding,
word id 0, comes last), so the backward direction starts at a sentence's last word, as Keras's masked
backward layer does; outputs at padding positions are not used.  Dropout is the identity when tagging.
"""

from __future__ import annotations

import numpy as np

NATIVE_CELLS = ("elman", "lstm", "gru")  # cells with an ONNX operator; others are traced whole
_ACTIVATIONS = {"relu": "Relu", "tanh": "Tanh", "sigmoid": "Sigmoid"}


def _direction_weights(cell, kind: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One direction's (W, R, B) in ONNX's layout from a Keras cell."""
    kernel, recurrent = np.asarray(cell.kernel), np.asarray(cell.recurrent_kernel)
    h = recurrent.shape[0]
    bias = np.asarray(cell.bias) if cell.use_bias else None
    if kind == "elman":
        b = np.concatenate([bias if bias is not None else np.zeros(h, np.float32), np.zeros(h, np.float32)])
        return kernel.T, recurrent.T, b
    if kind == "lstm":
        order = [0, 3, 1, 2]  # Keras i, f, c, o -> ONNX i, o, f, c

        def gates(a):
            return np.concatenate([a[..., g * h : (g + 1) * h] for g in order], axis=-1)

        b = np.concatenate(
            [gates(bias) if bias is not None else np.zeros(4 * h, np.float32), np.zeros(4 * h, np.float32)]
        )
        return gates(kernel).T, gates(recurrent).T, b
    if not cell.reset_after:
        raise ValueError("a GRU without reset_after has no ONNX form here")
    b = bias.reshape(-1) if bias is not None else np.zeros(6 * h, np.float32)  # [input biases, recurrent biases]
    return kernel.T, recurrent.T, b


def _activation(cell, kind: str) -> list[str]:
    if kind != "elman":
        return []
    import keras

    name = keras.activations.serialize(cell.activation)
    name = name if isinstance(name, str) else name.get("config", {}).get("name", name.get("class_name"))
    if name not in _ACTIVATIONS:
        raise ValueError(f"activation {name!r} has no ONNX RNN form")
    return [_ACTIVATIONS[name]] * 2


def recurrent_graph(net, config, features: str, words: str) -> tuple[list, list, list]:
    """The nodes, initializers and outputs that take ``features`` [B, T, D] (the traced part's output) and the
    word ids ``words`` [B, T] to one output per type: [B, T, 3] probabilities (softmax heads) or emission
    scores (CRF heads); with frame heads, first the recurrent states ``states`` [B, T, 2H]."""
    from onnx import TensorProto, numpy_helper
    from onnx import helper as oh

    op = {"elman": "RNN", "lstm": "LSTM", "gru": "GRU"}[config.model.recurrent.cell]
    nodes, inits = [], []

    def const(name: str, value) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    nodes += [
        oh.make_node("Equal", [words, const("rnn/zero", np.array(0, np.int32))], ["rnn/padding"]),
        oh.make_node("Not", ["rnn/padding"], ["rnn/real"]),
        oh.make_node("Cast", ["rnn/real"], ["rnn/real_int"], to=TensorProto.INT32),
        oh.make_node(
            "ReduceSum", ["rnn/real_int", const("rnn/axis1", np.array([1], np.int64))], ["rnn/lengths"], keepdims=0
        ),
        oh.make_node("Transpose", [features], ["rnn/x0"], perm=[1, 0, 2]),
    ]  # time major
    x = "rnn/x0"
    merged = const("rnn/merged_shape", np.array([0, 0, -1], np.int64))
    for k in range(1, config.model.recurrent.depth + 1):
        layer = net.get_layer(f"birnn_{k}")
        cells = [layer.forward_layer.cell, layer.backward_layer.cell]
        w, r, b = (
            np.stack(a).astype(np.float32)
            for a in zip(*(_direction_weights(c, config.model.recurrent.cell) for c in cells))
        )
        p = f"birnn_{k}/onnx_"
        extra: dict[str, int | list[str]] = {"linear_before_reset": 1} if config.model.recurrent.cell == "gru" else {}
        acts = _activation(cells[0], config.model.recurrent.cell)
        if acts:
            extra["activations"] = acts
        nodes += [
            oh.make_node(
                op,
                [x, const(p + "W", w), const(p + "R", r), const(p + "B", b), "rnn/lengths"],
                [f"{p}y"],
                hidden_size=int(r.shape[-1]),
                direction="bidirectional",
                **extra,
            ),
            oh.make_node("Transpose", [f"{p}y"], [f"{p}t"], perm=[0, 2, 1, 3]),  # [T, B, 2, H]
            oh.make_node("Reshape", [f"{p}t", merged], [f"{p}x"]),
        ]  # forward then backward, as Keras's concat
        x = f"{p}x"
    nodes.append(oh.make_node("Transpose", [x], ["rnn/output"], perm=[1, 0, 2]))
    outputs = []
    if config.model.frames.enabled:  # the states the frame heads read (opinion_tagger.runtime.frame_heads)
        nodes.append(oh.make_node("Identity", ["rnn/output"], ["states"]))
        outputs.append(oh.make_tensor_value_info("states", TensorProto.FLOAT, [None, None, None]))
    for t in config.types:
        dense = net.get_layer(f"{t}_emissions" if config.model.head.output == "crf" else t)
        kernel, bias = (np.asarray(v) for v in (dense.kernel, dense.bias))
        z = f"{t}/onnx_logits" if config.model.head.output != "crf" else t
        nodes += [
            oh.make_node("MatMul", ["rnn/output", const(f"{t}/onnx_kernel", kernel)], [f"{t}/onnx_product"]),
            oh.make_node("Add", [f"{t}/onnx_product", const(f"{t}/onnx_bias", bias)], [z]),
        ]
        if config.model.head.output != "crf":
            nodes.append(oh.make_node("Softmax", [z], [t], axis=-1))
        outputs.append(oh.make_tensor_value_info(t, TensorProto.FLOAT, [None, None, int(kernel.shape[-1])]))
    return nodes, inits, outputs
