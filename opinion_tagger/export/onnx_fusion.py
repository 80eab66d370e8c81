"""Fusions of an exported graph that ONNX Runtime does not make itself.

tf2onnx writes a Keras ``LayerNormalization`` as the thirteen operators of TensorFlow's moments: the
mean and the variance as ``GlobalAveragePool`` (or ``ReduceMean``) over the last axis, then
``x * g + (-mean * g + beta)`` with ``g = gamma / sqrt(variance + epsilon)``.  ONNX Runtime's own
layer-norm fusion does not know that form, so every encoder layer made about a dozen passes over its
activations.  ``fuse_layer_norms`` puts one ``LayerNormalization`` operator (opset 17) in each such
place, with the same tags and confidences within 2e-6; the network then tags faster (experiments/README.md).
"""

from __future__ import annotations

import numpy as np


def fuse_layer_norms(model) -> int:
    """Replace each layer normalisation written as moments in ``model`` (an ``onnx.ModelProto``, changed in
    place) by a ``LayerNormalization`` node over the last axis; return how many.  A subgraph that differs
    in any way from that form is left as it is; so is a ``GlobalAveragePool`` (which averages every axis
    after the second) over a tensor whose rank is not known to be 3."""
    import onnx
    from onnx import helper, numpy_helper

    graph = model.graph
    inferred = onnx.shape_inference.infer_shapes(model).graph
    rank3 = {
        v.name
        for v in [*inferred.value_info, *inferred.input]
        if v.type.tensor_type.HasField("shape") and len(v.type.tensor_type.shape.dim) == 3
    }
    users: dict[str, list] = {}
    for node in graph.node:
        for name in dict.fromkeys(node.input):  # a node that reads a value twice (x * x) uses it once
            users.setdefault(name, []).append(node)
    constants = {t.name: t for t in graph.initializer}
    removed: set[int] = set()
    added: list = []
    for mean in graph.node:
        if mean.op_type not in ("GlobalAveragePool", "ReduceMean") or id(mean) in removed:
            continue
        if mean.op_type == "GlobalAveragePool" and mean.input[0] not in rank3:
            continue
        found = _moments(mean, users, constants)
        if found is None:
            continue
        nodes, x, gamma, beta, epsilon, out = found
        k = len(added) // 3
        shape = f"layer_norm_fusion/{k}/shape"
        graph.initializer.append(numpy_helper.from_array(np.array([-1], dtype=np.int64), shape))
        added += [
            helper.make_node("Reshape", [gamma, shape], [f"layer_norm_fusion/{k}/gamma"]),
            helper.make_node("Reshape", [beta, shape], [f"layer_norm_fusion/{k}/beta"]),
            helper.make_node(
                "LayerNormalization",
                [x, f"layer_norm_fusion/{k}/gamma", f"layer_norm_fusion/{k}/beta"],
                [out],
                axis=-1,
                epsilon=epsilon,
                name=f"layer_norm_fusion/{k}",
            ),
        ]
        removed |= {id(n) for n in nodes}
    if added:
        kept = [n for n in graph.node if id(n) not in removed]
        del graph.node[:]
        graph.node.extend(topological(kept + added, graph))
    return len(added) // 3


def _moments(mean, users: dict, constants: dict):
    """The moments subgraph that starts at ``mean``: (its nodes, x, gamma, beta, epsilon, output name), or
    None."""
    from onnx import numpy_helper

    def only(name: str, op: str, inputs: list[str] | None = None):
        found = [n for n in users.get(name, []) if n.op_type == op and (inputs is None or list(n.input) == inputs)]
        return found[0] if len(found) == 1 else None

    def other(node, name: str) -> str | None:
        rest = [i for i in node.input if i != name]
        return rest[0] if len(rest) == 1 else None

    x, m = mean.input[0], mean.output[0]
    if mean.op_type == "ReduceMean" and not _last_axis(mean):
        return None
    neg = only(m, "Neg")
    diff = only(m, "Sub", [x, m])
    square = diff and only(diff.output[0], "Mul", [diff.output[0], diff.output[0]])
    var = square and only(square.output[0], mean.op_type)
    if not (neg and var) or (var.op_type == "ReduceMean" and not _last_axis(var)):
        return None
    shifted = only(var.output[0], "Add")
    eps_name = shifted and other(shifted, var.output[0])
    if eps_name not in constants:
        return None
    root = only(shifted.output[0], "Sqrt")
    inverse = root and only(root.output[0], "Reciprocal")
    scale = inverse and only(inverse.output[0], "Mul")
    if not scale:
        return None
    gamma = other(scale, inverse.output[0])
    scaled_x = only(scale.output[0], "Mul", [x, scale.output[0]]) or only(scale.output[0], "Mul", [scale.output[0], x])
    scaled_mean = only(scale.output[0], "Mul", [neg.output[0], scale.output[0]]) or only(
        scale.output[0], "Mul", [scale.output[0], neg.output[0]]
    )
    shift = scaled_mean and only(scaled_mean.output[0], "Add")
    beta = shift and other(shift, scaled_mean.output[0])
    total = scaled_x and shift and only(scaled_x.output[0], "Add")
    if not (gamma and beta and total) or set(total.input) != {scaled_x.output[0], shift.output[0]}:
        return None
    nodes = [mean, neg, diff, square, var, shifted, root, inverse, scale, scaled_x, scaled_mean, shift, total]
    inner = {o for n in nodes for o in n.output} - {total.output[0]}
    if any(u not in nodes for o in inner for u in users.get(o, [])):
        return None  # an intermediate value is used elsewhere: it must stay
    epsilon = numpy_helper.to_array(constants[eps_name]).reshape(-1)
    if epsilon.size != 1:
        return None
    return nodes, x, gamma, beta, float(epsilon[0]), total.output[0]


def _last_axis(node) -> bool:
    """A ``ReduceMean`` over the last axis that keeps it (opset 17: the axes are an attribute)."""
    attrs = {a.name: a for a in node.attribute}
    keep = attrs["keepdims"].i if "keepdims" in attrs else 1
    return "axes" in attrs and list(attrs["axes"].ints) == [-1] and keep == 1


def topological(nodes: list, graph) -> list:
    """``nodes`` in an order where each comes after the nodes that make its inputs (ONNX requires it)."""
    ready = {i.name for i in graph.input} | {t.name for t in graph.initializer} | {""}
    made_by = {o: n for n in nodes for o in n.output}
    order, seen = [], set()
    for start in nodes:
        stack = [(start, False)]
        while stack:
            node, expanded = stack.pop()
            if id(node) in seen:
                continue
            if expanded:
                seen.add(id(node))
                order.append(node)
                continue
            stack.append((node, True))
            for name in node.input:
                if name not in ready and name in made_by and id(made_by[name]) not in seen:
                    stack.append((made_by[name], False))
    return order
