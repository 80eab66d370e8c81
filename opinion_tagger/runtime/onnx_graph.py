"""What an ONNX file declares, read without the onnx package or ONNX Runtime: its graph's inputs and outputs
(names and shapes), its initializers' shapes and its top-level operators, so that a bundle's ``model.onnx`` can be
checked against its config.json before any back end loads it (``opinion_tagger.runtime.bundle``).

A reader of the protocol-buffer wire format for the few fields of ONNX's ``ModelProto`` it needs (field numbers
from onnx.proto3); every other field, weights' data included, is skipped by its length, so reading costs one pass
over the file's records.  A file that is not such a protocol buffer raises ValueError.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

# field numbers (onnx.proto3)
_MODEL_GRAPH = 7
_GRAPH_NODE, _GRAPH_INITIALIZER, _GRAPH_INPUT, _GRAPH_OUTPUT = 1, 5, 11, 12
_NODE_OUTPUT, _NODE_OP_TYPE, _NODE_ATTRIBUTE = 2, 4, 5
_ATTRIBUTE_NAME, _ATTRIBUTE_INT = 1, 3
_TENSOR_DIMS, _TENSOR_NAME = 1, 8
_VALUE_NAME, _VALUE_TYPE = 1, 2
_TYPE_TENSOR, _TENSOR_TYPE_SHAPE, _SHAPE_DIM, _DIM_VALUE = 1, 2, 1, 1

Shape = tuple[int | None, ...]  # None: a dimension the graph leaves open


@dataclass
class Operator:
    type: str
    outputs: tuple[str, ...]
    ints: dict[str, int] = field(default_factory=dict)  # its integer attributes


@dataclass
class GraphSignature:
    inputs: dict[str, Shape]
    outputs: dict[str, Shape]
    initializers: dict[str, Shape]
    operators: list[Operator]


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if i >= len(buf):
            raise ValueError("truncated")
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, i
        shift += 7
        if shift > 63:
            raise ValueError("a varint longer than 10 bytes")


def _fields(buf: bytes, start: int, end: int):
    """(field number, wire type, value) of each record in ``buf[start:end]``: an int for a varint, the
    (start, end) of a length-delimited record's bytes, None for a fixed-width one."""
    i = start
    while i < end:
        tag, i = _varint(buf, i)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            value, i = _varint(buf, i)
            yield number, wire, value
        elif wire == 2:
            n, i = _varint(buf, i)
            if i + n > end:
                raise ValueError("a record runs past its end")
            yield number, wire, (i, i + n)
            i += n
        elif wire in (1, 5):
            i += 8 if wire == 1 else 4
            yield number, wire, None
        else:
            raise ValueError(f"wire type {wire}")
    if i != end:
        raise ValueError("a record runs past its end")


def _text(buf: bytes, span: tuple[int, int]) -> str:
    return buf[span[0] : span[1]].decode("utf-8", "replace")


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def _nested(buf: bytes, span: tuple[int, int], number: int) -> tuple[int, int] | None:
    """The last length-delimited record ``number`` inside ``span`` (protocol buffers: the last one wins)."""
    found = None
    for n, wire, value in _fields(buf, *span):
        if n == number and wire == 2:
            found = value
    return found


def _value_info(buf: bytes, span: tuple[int, int]) -> tuple[str, Shape]:
    name = ""
    shape: Shape = ()
    for n, wire, value in _fields(buf, *span):
        if n == _VALUE_NAME and wire == 2:
            name = _text(buf, value)
        elif n == _VALUE_TYPE and wire == 2:
            tensor = _nested(buf, value, _TYPE_TENSOR)
            dims = tensor and _nested(buf, tensor, _TENSOR_TYPE_SHAPE)
            if dims:
                shape = tuple(_dimension(buf, v) for k, w, v in _fields(buf, *dims) if k == _SHAPE_DIM and w == 2)
    return name, shape


def _dimension(buf: bytes, span: tuple[int, int]) -> int | None:
    value = None
    for n, wire, v in _fields(buf, *span):
        if n == _DIM_VALUE and wire == 0:
            value = _signed(v)
    return value if value is not None and value > 0 else None


def _initializer(buf: bytes, span: tuple[int, int]) -> tuple[str, Shape]:
    name, dims = "", []
    for n, wire, value in _fields(buf, *span):
        if n == _TENSOR_NAME and wire == 2:
            name = _text(buf, value)
        elif n == _TENSOR_DIMS and wire == 0:
            dims.append(_signed(value))
        elif n == _TENSOR_DIMS and wire == 2:  # packed
            i, end = value
            while i < end:
                d, i = _varint(buf, i)
                dims.append(_signed(d))
    return name, tuple(dims)


def _operator(buf: bytes, span: tuple[int, int]) -> Operator:
    op, outputs, ints = "", [], {}
    for n, wire, value in _fields(buf, *span):
        if n == _NODE_OP_TYPE and wire == 2:
            op = _text(buf, value)
        elif n == _NODE_OUTPUT and wire == 2:
            outputs.append(_text(buf, value))
        elif n == _NODE_ATTRIBUTE and wire == 2:
            name, number = "", None
            for k, w, v in _fields(buf, *value):
                if k == _ATTRIBUTE_NAME and w == 2:
                    name = _text(buf, v)
                elif k == _ATTRIBUTE_INT and w == 0:
                    number = _signed(v)
            if name and number is not None:
                ints[name] = number
    return Operator(op, tuple(outputs), ints)


def parse_signature(buf: bytes) -> GraphSignature:
    """The signature of the ONNX model serialised in ``buf``; ValueError when it is not one."""
    graph = _nested(buf, (0, len(buf)), _MODEL_GRAPH)
    if graph is None:
        raise ValueError("no graph")
    sig = GraphSignature({}, {}, {}, [])
    for n, wire, value in _fields(buf, *graph):
        if wire != 2:
            continue
        if n == _GRAPH_INPUT:
            name, shape = _value_info(buf, value)
            sig.inputs[name] = shape
        elif n == _GRAPH_OUTPUT:
            name, shape = _value_info(buf, value)
            sig.outputs[name] = shape
        elif n == _GRAPH_INITIALIZER:
            name, shape = _initializer(buf, value)
            sig.initializers[name] = shape
        elif n == _GRAPH_NODE:
            sig.operators.append(_operator(buf, value))
    for name in sig.initializers:  # an initializer may also be listed as an input (IR version 3)
        sig.inputs.pop(name, None)
    return sig


def read_signature(file: Path) -> GraphSignature:
    """The signature of the ONNX file ``file``; ValueError when it is not one, OSError when it cannot be read."""
    return parse_signature(Path(file).read_bytes())
