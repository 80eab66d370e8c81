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
    DISTANCE_BUCKETS,
    FRAMES_FILE,
    HOLDER,
    LENGTHS,
    MASKED,
    SIDE,
    STATES,
    TARGETS,
    FrameHeads,
    frame_inputs,
    frame_outputs,
    has_roles,
    head_names,
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
        from onnx import helper

        self.nodes.append(helper.make_node(kind, inputs, [out], **attrs))
        return out


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


def _hidden(g: _Graph, pooled: str, row: str, places: str | None, arrays: dict, prefix: str) -> str:
    """``tanh(h_k U + s V + P[r] + b)`` [N, T, A] of the scorer ``prefix`` (``DSE_holder/start_``)."""
    p = f"{prefix}frames/"
    axis1 = g.const(f"{p}axis1", np.array([1], np.int64))
    w = {k: g.const(f"{prefix}{k}", arrays[f"{prefix}{k}"]) for k in ("tokens", "span", "bias")}
    tokens = g.op("Gather", [g.op("MatMul", [STATES, w["tokens"]], f"{p}t"), row], f"{p}tokens", axis=0)
    span = g.op("Unsqueeze", [g.op("MatMul", [pooled, w["span"]], f"{p}s"), axis1], f"{p}span")
    total = g.op("Add", [g.op("Add", [tokens, span], f"{p}sum"), w["bias"]], f"{p}total")
    if places is not None:
        table = g.const(f"{prefix}places", arrays[f"{prefix}places"])
        total = g.op("Add", [total, g.op("Gather", [table, places], f"{p}places", axis=0)], f"{p}placed")
    return g.op("Tanh", [total], f"{p}hidden")


def _classify(g: _Graph, pooled: str, layer: str, arrays: dict, out: str) -> None:
    kernel = g.const(f"{layer}/kernel", arrays[f"{layer}/kernel"])
    bias = g.const(f"{layer}/bias", arrays[f"{layer}/bias"])
    logits = g.op("Add", [g.op("MatMul", [pooled, kernel], f"{out}/product"), bias], f"{out}/logits")
    g.op("Softmax", [logits], out, axis=-1)


def _holder(g: _Graph, pooled: str, row: str, positions: str, places: str | None, arrays: dict) -> None:
    """``DSE_holder_start`` and ``DSE_holder_end`` of the DSE spans."""
    p = f"{HOLDER}/frames/"
    axis1 = g.const(f"{p}axis1", np.array([1], np.int64))
    lengths = g.op("Unsqueeze", [g.op("Gather", [LENGTHS, row], f"{p}lengths"), axis1], f"{p}lengths_u")
    real = g.op("Less", [positions, lengths], f"{p}real")  # [N, T]: the span's sentence's words
    masked = g.const(f"{p}masked", np.array(MASKED, np.float32))

    def pointer(end: str) -> str:
        hidden = _hidden(g, pooled, row, places, arrays, f"{HOLDER}/{end}_")  # [N, T, U]
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


def _targets(g: _Graph, pooled: str, row: str, places: str | None, arrays: dict) -> None:
    """``DSE_targets`` [N, T, 3] of the DSE spans."""
    hidden = _hidden(g, pooled, row, places, arrays, f"{TARGETS}/")
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
            _holder(g, pooled, row, positions, places, arrays)
            if has_roles(config):
                _classify(g, pooled, ATTITUDE, arrays, ATTITUDE)
                _targets(g, pooled, row, places, arrays)
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
