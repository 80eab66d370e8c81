"""The frame heads as an ONNX graph of their own, ``frames.onnx``, which the runtime runs in ONNX Runtime
(``opinion_tagger.runtime.frame_heads``).

The heads cannot be part of ``model.onnx``: they run on the spans that decoding finds (a CRF's Viterbi path, a
softmax's likeliest tags) after the network's pass, or on spans given (gold spans, for scoring), so they are a
second, small graph that takes the network's recurrent states and the spans.  Its inputs: ``states`` [B, T, D]
(the network's output ``states`` for a batch), ``lengths`` [B] (each sentence's words; padding after them) and per
type ``{type}_spans`` [N, 3] (the batch row, first token and end token of each span, int64).  Its outputs, per type:
``{type}_polarity`` [N, P] and ``{type}_intensity`` [N, I], softmax probabilities; for DSEs ``DSE_holder_start``
[N, 3 + T] (writer, implicit, none, then each token) and ``DSE_holder_end`` [N, T], padding tokens at zero; with
``model.frames.roles``, ``DSE_attitude`` [N, A] and ``DSE_targets`` [N, T, 3] (the tags O, B, I per token).  The
functions are the Keras heads' (``opinion_tagger.model.frame_heads``) on a span's mean state; the weights are
initializers named as the Keras heads' weights (``DSE_holder/start_tokens``), which training reads back to
continue from a bundle.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from opinion_tagger.config import TaggerConfig
from opinion_tagger.runtime.frame_heads import (
    ATTITUDE,
    CONTEXT,
    DISTANCE_BUCKETS,
    FRAMES_FILE,
    HOLDER,
    HOLDER_CONTEXT,
    LENGTHS,
    MASKED,
    SIDE,
    STATES,
    TARGETS,
    FrameHeads,
    context_readers,
    frame_inputs,
    frame_outputs,
    has_roles,
    head_names,
    holder_context,
)

OPSET = 17


class _Graph:
    """Nodes and initializers under construction; each method adds a node and returns its output's name."""

    def __init__(self):
        self.nodes: list = []
        self.inits: list = []

    def const(self, name: str, value) -> str:
        from onnx import numpy_helper

        self.inits.append(numpy_helper.from_array(np.array(value), name))  # (a scalar stays one)
        return name

    def op(self, kind: str, inputs: list[str], out: str, **attrs) -> str:
        return self.multi(kind, inputs, [out], **attrs)[0]

    def multi(self, kind: str, inputs: list[str], outs: list[str], **attrs) -> list[str]:
        """A node of several outputs."""
        from onnx import helper

        self.nodes.append(helper.make_node(kind, inputs, outs, **attrs))
        return outs


def _pooled(g: _Graph, t: str, positions: str) -> tuple[str, str]:
    """The mean state of each span of ``t`` [N, D], and each span's row of the batch [N]."""
    from onnx import TensorProto

    spans, p = f"{t}_spans", f"{t}/frames/"
    row, start, end = (
        g.op("Gather", [spans, g.const(f"{p}column_{k}", np.array(k, np.int64))], f"{p}{n}", axis=1)
        for k, n in enumerate(("row", "start", "end"))
    )
    axis1 = g.const(f"{p}axis1", np.array([1], np.int64))
    after_start = g.op("GreaterOrEqual", [positions, g.op("Unsqueeze", [start, axis1], f"{p}start_u")], f"{p}ge")
    before_end = g.op("Less", [positions, g.op("Unsqueeze", [end, axis1], f"{p}end_u")], f"{p}lt")
    inside = g.op("Cast", [g.op("And", [after_start, before_end], f"{p}inside")], f"{p}inside_f", to=TensorProto.FLOAT)
    count = g.op("ReduceSum", [inside, axis1], f"{p}count", keepdims=1)
    count = g.op("Max", [count, g.const(f"{p}one", np.array(1.0, np.float32))], f"{p}count_1")
    weights = g.op("Unsqueeze", [g.op("Div", [inside, count], f"{p}weights"), axis1], f"{p}weights_u")  # [N, 1, T]
    rows = g.op("Gather", [STATES, row], f"{p}states", axis=0)  # [N, T, D]
    pooled = g.op("Squeeze", [g.op("MatMul", [weights, rows], f"{p}pooled_u"), axis1], f"{p}pooled")
    return pooled, row


def _places(g: _Graph, positions: str) -> str:
    """Each token's place relative to each DSE span [N, T] (``relative_places``)."""
    p, spans = "DSE/places/", "DSE_spans"
    axis1 = g.const(f"{p}axis1", np.array([1], np.int64))
    start, end = (
        g.op(
            "Unsqueeze",
            [g.op("Gather", [spans, g.const(f"{p}column_{k}", np.array(k, np.int64))], f"{p}{n}", axis=1), axis1],
            f"{p}{n}_u",
        )
        for k, n in ((1, "start"), (2, "end"))
    )
    table = g.const(f"{p}table", DISTANCE_BUCKETS)
    zero, top = g.const(f"{p}zero", np.array(0, np.int64)), g.const(f"{p}top", np.array(len(DISTANCE_BUCKETS) - 1))
    one, after_base = g.const(f"{p}one", np.array(1, np.int64)), g.const(f"{p}after", np.array(1 + SIDE, np.int64))
    last = g.op("Sub", [end, one], f"{p}last")

    def bucket(a: str, b: str, name: str) -> str:  # the bucket of the distance a - b
        distance = g.op("Clip", [g.op("Sub", [a, b], f"{p}{name}_d"), zero, top], f"{p}{name}_clipped")
        return g.op("Gather", [table, distance], f"{p}{name}_bucket", axis=0)

    before = g.op("Add", [bucket(start, positions, "before"), one], f"{p}before")
    after = g.op("Add", [bucket(positions, last, "after"), after_base], f"{p}after_place")
    outside = g.op("Where", [g.op("GreaterOrEqual", [positions, end], f"{p}past"), after, zero], f"{p}outside")
    return g.op("Where", [g.op("Less", [positions, start], f"{p}ahead"), before, outside], "DSE/places")


def _hidden(g: _Graph, view: str, pooled: str, row: str, places: str | None, arrays: dict, prefix: str) -> str:
    """``tanh(h_k U + s V + P[r] + b)`` [N, T, A] of the scorer ``prefix`` (``DSE_holder/start_``) on ``view``: the
    batch's states [B, T, D] (``STATES``, gathered by each span's row) or a DSE's own states per span [N, T, D]."""
    p = f"{prefix}frames/"
    axis1 = g.const(f"{p}axis1", np.array([1], np.int64))
    w = {k: g.const(f"{prefix}{k}", arrays[f"{prefix}{k}"]) for k in ("tokens", "span", "bias")}
    tokens = g.op("MatMul", [view, w["tokens"]], f"{p}t")
    tokens = g.op("Gather", [tokens, row], f"{p}tokens", axis=0) if view == STATES else tokens
    span = g.op("Unsqueeze", [g.op("MatMul", [pooled, w["span"]], f"{p}s"), axis1], f"{p}span")
    total = g.op("Add", [g.op("Add", [tokens, span], f"{p}sum"), w["bias"]], f"{p}total")
    if places is not None:
        table = g.const(f"{prefix}places", arrays[f"{prefix}places"])
        total = g.op("Add", [total, g.op("Gather", [table, places], f"{p}places", axis=0)], f"{p}placed")
    return g.op("Tanh", [total], f"{p}hidden")


def _lstm_weights(g: _Graph, arrays: dict, prefix: str) -> tuple[str, str, str]:
    """ONNX's W [2, 4C, A], R [2, 4C, C] and B [2, 8C] of a Keras bidirectional LSTM whose weights (its
    initializers, named as Keras names them) are under ``prefix``: Keras's gates i, f, c, o reordered to ONNX's i,
    o, f, c in the graph, so that the initializers stay the Keras weights."""
    p = f"{prefix}onnx_"
    four = arrays[f"{prefix}lstm/forward_lstm/lstm_cell/bias"].shape[0]
    zeros = g.const(f"{p}zeros", np.zeros(four, np.float32))
    axis0 = g.const(f"{p}axis0", np.array([0], np.int64))

    def gates(name: str, axis: int) -> str:  # i, f, c, o -> i, o, f, c along ``axis``
        i, f, c, o = g.multi("Split", [name], [f"{name}_{k}" for k in "ifco"], axis=axis)  # four equal parts
        return g.op("Concat", [i, o, f, c], f"{name}_iofc", axis=axis)

    out = {}
    for d in ("forward", "backward"):
        cell = f"{prefix}lstm/{d}_lstm/lstm_cell/"
        kernel, recurrent, bias = (
            g.const(f"{cell}{w}", arrays[f"{cell}{w}"]) for w in ("kernel", "recurrent_kernel", "bias")
        )
        out[d, "W"] = g.op("Transpose", [gates(kernel, 1)], f"{p}{d}_W", perm=[1, 0])
        out[d, "R"] = g.op("Transpose", [gates(recurrent, 1)], f"{p}{d}_R", perm=[1, 0])
        out[d, "B"] = g.op("Concat", [gates(bias, 0), zeros], f"{p}{d}_B", axis=0)
    stacked = []
    for m in ("W", "R", "B"):
        both = [g.op("Unsqueeze", [out[d, m], axis0], f"{p}{d}_{m}_u") for d in ("forward", "backward")]
        stacked.append(g.op("Concat", both, f"{p}{m}", axis=0))
    return stacked[0], stacked[1], stacked[2]


def _context(g: _Graph, pooled: str, row: str, places: str | None, arrays: dict, layer: str = CONTEXT) -> str:
    """A DSE's own view of its sentence [N, T, 2C] (the layer ``layer``: ``model.frames.context`` or
    ``holder_context``): ONNX's bidirectional LSTM over the scorer's hidden layer, each DSE's sentence as long as its
    row's."""
    from onnx import TensorProto

    p = f"{layer}/frames/"
    hidden = _hidden(g, STATES, pooled, row, places, arrays, f"{layer}/")
    w, r, b = _lstm_weights(g, arrays, f"{layer}/")
    lengths = g.op("Cast", [g.op("Gather", [LENGTHS, row], f"{p}lengths")], f"{p}lengths_32", to=TensorProto.INT32)
    c = int(arrays[f"{layer}/lstm/forward_lstm/lstm_cell/recurrent_kernel"].shape[0])
    time_major = g.op("Transpose", [hidden], f"{p}x", perm=[1, 0, 2])
    y = g.op("LSTM", [time_major, w, r, b, lengths], f"{p}y", hidden_size=c, direction="bidirectional")  # [T, 2, N, C]
    batch_major = g.op("Transpose", [y], f"{p}y_t", perm=[2, 0, 1, 3])  # [N, T, 2, C]
    return g.op("Reshape", [batch_major, g.const(f"{p}shape", np.array([0, 0, -1], np.int64))], f"{p}view")


def _classify(g: _Graph, pooled: str, layer: str, arrays: dict, out: str) -> None:
    kernel = g.const(f"{layer}/kernel", arrays[f"{layer}/kernel"])
    bias = g.const(f"{layer}/bias", arrays[f"{layer}/bias"])
    logits = g.op("Add", [g.op("MatMul", [pooled, kernel], f"{out}/product"), bias], f"{out}/logits")
    g.op("Softmax", [logits], out, axis=-1)


def _holder(g: _Graph, view: str, pooled: str, row: str, positions: str, places: str | None, arrays: dict) -> None:
    """``DSE_holder_start`` and ``DSE_holder_end`` of the DSE spans."""
    p = f"{HOLDER}/frames/"
    axis1 = g.const(f"{p}axis1", np.array([1], np.int64))
    lengths = g.op("Unsqueeze", [g.op("Gather", [LENGTHS, row], f"{p}lengths"), axis1], f"{p}lengths_u")
    real = g.op("Less", [positions, lengths], f"{p}real")  # [N, T]: the span's sentence's words
    masked = g.const(f"{p}masked", np.array(MASKED, np.float32))

    def pointer(end: str) -> str:
        hidden = _hidden(g, view, pooled, row, places, arrays, f"{HOLDER}/{end}_")  # [N, T, U]
        v = g.const(f"{HOLDER}/{end}_v", arrays[f"{HOLDER}/{end}_v"])
        score = g.op("MatMul", [hidden, v], f"{p}{end}_score")  # [N, T]
        return g.op("Where", [real, score, masked], f"{p}{end}_masked")

    classes = g.op(
        "Add",
        [
            g.op("MatMul", [pooled, g.const(f"{HOLDER}/classes", arrays[f"{HOLDER}/classes"])], f"{p}classes_p"),
            g.const(f"{HOLDER}/classes_bias", arrays[f"{HOLDER}/classes_bias"]),
        ],
        f"{p}classes",
    )
    start = g.op("Concat", [classes, pointer("start")], f"{p}start_scores", axis=1)
    g.op("Softmax", [start], f"{HOLDER}_start", axis=-1)
    g.op("Softmax", [pointer("end")], f"{HOLDER}_end", axis=-1)


def _targets(g: _Graph, view: str, pooled: str, row: str, places: str | None, arrays: dict) -> None:
    """``DSE_targets`` [N, T, 3] of the DSE spans."""
    hidden = _hidden(g, view, pooled, row, places, arrays, f"{TARGETS}/")
    out = g.op("MatMul", [hidden, g.const(f"{TARGETS}/out", arrays[f"{TARGETS}/out"])], f"{TARGETS}/frames/out")
    logits = g.op("Add", [out, g.const(f"{TARGETS}/out_bias", arrays[f"{TARGETS}/out_bias"])], f"{TARGETS}/logits")
    g.op("Softmax", [logits], TARGETS, axis=-1)


def frames_model(arrays: dict[str, np.ndarray], config: TaggerConfig):
    """The ``onnx.ModelProto`` of the frame heads whose weights are ``arrays`` (``head_arrays``: the names of
    ``head_names``)."""
    from onnx import TensorProto, helper

    arrays = {k: np.asarray(arrays[k], dtype=np.float32) for k in head_names(config)}
    g = _Graph()
    steps = g.op(
        "Gather",
        [g.op("Shape", [STATES], "frames/shape"), g.const("frames/one_index", np.array(1, np.int64))],
        "frames/steps",
    )
    positions = g.op(
        "Range",
        [g.const("frames/zero", np.array(0, np.int64)), steps, g.const("frames/step", np.array(1, np.int64))],
        "frames/positions",
    )  # [T]
    for t in config.types:
        pooled, row = _pooled(g, t, positions)
        _classify(g, pooled, f"{t}_polarity", arrays, f"{t}_polarity")
        _classify(g, pooled, f"{t}_intensity", arrays, f"{t}_intensity")
        if t == "DSE":
            places = _places(g, positions) if config.model.frames.positions else None
            readers = context_readers(config)
            view = _context(g, pooled, row, places, arrays) if readers else STATES
            on = view if "holder" in readers else STATES
            if holder_context(config):
                on = _context(g, pooled, row, places, arrays, HOLDER_CONTEXT)
            _holder(g, on, pooled, row, positions, places, arrays)
            if has_roles(config):
                _classify(g, pooled, ATTITUDE, arrays, ATTITUDE)
                _targets(g, view, pooled, row, places, arrays)
    kinds = {STATES: (TensorProto.FLOAT, [None, None, None]), LENGTHS: (TensorProto.INT64, [None])}
    inputs = [
        helper.make_tensor_value_info(n, *kinds.get(n, (TensorProto.INT64, [None, 3]))) for n in frame_inputs(config)
    ]
    outputs = [
        helper.make_tensor_value_info(n, TensorProto.FLOAT, [None, None, None] if n == TARGETS else [None, None])
        for n in frame_outputs(config)
    ]
    graph = helper.make_graph(g.nodes, "frame_heads", inputs, outputs, g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="opinion-tagger")
    model.ir_version = 8  # what ONNX Runtime 1.17 reads
    return model


def frame_heads(arrays: dict[str, np.ndarray], config: TaggerConfig) -> FrameHeads:
    """The runtime's heads (ONNX Runtime) of a network being trained, from their weights."""
    return FrameHeads(frames_model(arrays, config).SerializeToString(), config, "the frame heads")


def write_frames(path: str | Path, arrays: dict[str, np.ndarray], config: TaggerConfig) -> Path:
    """Write ``frames.onnx`` (atomically) into the bundle folder ``path``."""
    import onnx

    from opinion_tagger.storage import atomic_path

    file = Path(path) / FRAMES_FILE
    with atomic_path(file) as tmp:
        onnx.save_model(frames_model(arrays, config), str(tmp))
    return file
