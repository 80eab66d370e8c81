"""Hypothesis strategies for hostile input, shared by tests/tagging/test_hostile_input.py
and experiments/fuzz_batch.py: JSONL lines of arbitrary bytes and arbitrary JSON
values, and inputs for ``OpinionTagger.tag_many``.

A generated JSONL line comes with the id it declares (or None); the line
itself never holds a line feed, so line ``i`` of the file is record ``i``.
"""

from __future__ import annotations

import json

from hypothesis import strategies as st

# characters that have broken or could break tokenisers, JSON writers and terminals
SPECIAL = [
    "\ud800",
    "\udfff",
    "\udc80",
    "\x00",
    "\x01",
    "\x1b",
    "\x7f",
    "\x85",
    "\x9f",
    "\u200b",
    "\u200d",
    "\ufeff",
    "\u2028",
    "\u2029",
    "\ufffe",
    "\U0010ffff",
    "\r",
    "\n",
    "\t",
    "\x0b",
    "\x0c",
    " ",
    "\u0301",
    "\U0001f600",
    "said",
    "fears",
    ".",
    "...",
    '"',
    "\\",
    "<b>",
    "&",
]
WORDS = ["Officials", "said", "the", "plan", "was", "as", "usual", "daylight", "robbery", "fears", "."]
# texts that should be tagged (any character but surrogates, words the model knows) and hostile ones
plain_texts = st.lists(
    st.one_of(st.characters(exclude_categories=("Cs",)), st.sampled_from(WORDS + [" "] * 3)), min_size=3, max_size=40
).map("".join)
hostile_texts = st.lists(
    st.one_of(st.characters(exclude_categories=()), st.sampled_from(SPECIAL)), min_size=3, max_size=40
).map("".join)
texts = plain_texts | hostile_texts

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=12,
)


def _dump(obj, ascii_only: bool) -> bytes:
    """JSON as bytes; lone surrogates written as ``\\ud800`` escapes, or (not ascii_only)
    as the invalid UTF-8 bytes they would be."""
    return json.dumps(obj, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")


@st.composite
def jsonl_line(draw, index: int) -> tuple[bytes, str | None]:
    """One JSONL line (no line feed) and the id it declares."""
    kind = draw(st.sampled_from(["record"] * 4 + ["value", "bytes", "deep", "blank", "bom"]))
    if kind in ("record", "bom"):
        rid = draw(st.sampled_from([f"r{index}", None]))
        text = draw(st.one_of(plain_texts, plain_texts, hostile_texts, json_values))
        obj = {"text": text} if rid is None else {"id": rid, "text": text}
        line = _dump(obj, draw(st.booleans()))
        if kind == "bom":
            line = b"\xef\xbb\xbf" + line
    elif kind == "value":
        rid, line = None, _dump(draw(json_values.filter(lambda v: not isinstance(v, dict))), draw(st.booleans()))
    elif kind == "bytes":
        rid, line = None, draw(st.binary(max_size=80))
    elif kind == "deep":
        n = draw(st.integers(1, 5000))
        rid, line = None, draw(st.sampled_from([b"[" * n + b"]" * n, b'{"a":' * n + b"1" + b"}" * n, b"[" * n]))
    else:
        rid, line = None, draw(st.sampled_from([b"", b" ", b"\t \r", b"\xef\xbb\xbf", b"\x0b\x0c"]))
    return line.replace(b"\n", b" "), rid


@st.composite
def jsonl_files(draw, max_lines: int = 12) -> tuple[bytes, list[str | None]]:
    """A JSONL file's bytes and each line's declared id."""
    n = draw(st.integers(0, max_lines))
    lines = [draw(jsonl_line(i + 1)) for i in range(n)]
    data = b"\n".join(line for line, _ in lines) + (b"\n" if lines and draw(st.booleans()) else b"")
    return data, [rid for _, rid in lines]


def expected_records(data: bytes) -> int:
    """Records a JSONL file must give: one per line (the bytes between line feeds),
    one for a file with none."""
    lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    return max(lines, 1)


# inputs of OpinionTagger.tag_many: strings, (id, value) pairs, bytes, and values of no accepted shape
api_inputs = st.lists(
    st.one_of(texts, st.tuples(st.just("pair"), texts | json_values), st.binary(max_size=40), json_values), max_size=12
)


def api_records(values: list) -> list:
    """``api_inputs`` as tag_many takes them: pairs get the id ``pN`` (N: position)."""
    return [(f"p{n}", v[1]) if isinstance(v, tuple) else v for n, v in enumerate(values)]
