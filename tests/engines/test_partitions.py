"""Partitioned tagging without an engine: planning, reading slices, restart bookkeeping."""

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opinion_tagger.engines.partitions import (
    expand_inputs,
    finished,
    partition_records,
    plan_partitions,
    prepare,
    tag_partition,
)
from opinion_tagger.errors import TaggerError
from opinion_tagger.tagging.inputs import check_text, read_records


def _as_tuples(records):
    return [(r.id, r.text, r.error) for r in records]


def test_jsonl_slices_keep_offsets_and_line_numbers(tmp_path):
    f = tmp_path / "a.jsonl"
    lines = [b'{"text": "one"}\n', b"\n", b'{"text": "three", "id": "x"}\n', b"{bad\n", b'{"text": "five"}']
    f.write_bytes(b"".join(lines))
    parts = plan_partitions([f], 2)
    # hand-computed: lines 1-2 from byte 0, lines 3-4 from byte 17, line 5 from byte 17 + 29 + 5
    assert [(p["offset"], p["end"], p["first_line"], p["lines"]) for p in parts] == [
        (0, 17, 1, 2),
        (17, 51, 3, 2),
        (51, 67, 5, 1),
    ]
    got = [r for p in parts for r in partition_records(p, 1000)]
    bad_json = "invalid JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"
    assert _as_tuples(got) == [
        (f"{f}:1", "one", None),
        (f"{f}:2", None, "blank line"),
        ("x", "three", None),
        (f"{f}:4", None, bad_json),
        (f"{f}:5", "five", None),
    ]


LINE = st.one_of(
    st.builds(lambda t: json.dumps({"text": t}), st.text(max_size=12)),
    st.builds(lambda t, i: json.dumps({"text": t, "id": i}), st.text(min_size=1, max_size=8), st.integers(0, 99)),
    st.just(""),
    st.just("{not json"),
    st.just('{"id": 3}'),
    st.just("[1, 2]"),
    st.just('{"text": "' + "long " * 300 + '"}'),  # over the 1,200-byte line limit of max_chars=50
)


@settings(max_examples=60, deadline=None)
@given(lines=st.lists(LINE, max_size=25), size=st.integers(1, 7), final_newline=st.booleans())
def test_jsonl_partitions_read_exactly_what_the_local_reader_reads(tmp_path_factory, lines, size, final_newline):
    f = tmp_path_factory.mktemp("j") / "in.jsonl"
    f.write_text("\n".join(lines) + ("\n" if final_newline and lines else ""), encoding="utf-8")
    parts = plan_partitions(expand_inputs([str(f)]), size, max_chars=50)
    assert all(p["lines"] <= size for p in parts)
    got = [r for p in parts for r in partition_records(p, 50)]
    assert _as_tuples(got) == _as_tuples(read_records(inputs=[str(f)], max_chars=50))


@settings(max_examples=30, deadline=None)
@given(
    texts=st.lists(st.one_of(st.none(), st.text(max_size=10)), min_size=1, max_size=30),
    group=st.integers(1, 9),
    size=st.integers(1, 11),
    with_ids=st.booleans(),
)
def test_parquet_partitions_cover_every_row_once(tmp_path_factory, texts, group, size, with_ids):
    f = tmp_path_factory.mktemp("p") / "in.parquet"
    cols = {"text": texts, **({"id": [f"r{k}" if k % 3 else None for k in range(len(texts))]} if with_ids else {})}
    pq.write_table(pa.table(cols), f, row_group_size=group)
    got = [r for p in plan_partitions([f], size) for r in partition_records(p, 50)]
    assert len(got) == len(texts)
    for k, (rec, text) in enumerate(zip(got, texts)):
        assert rec.id == (f"r{k}" if with_ids and k % 3 else f"{f}:{k + 1}")
        if text is None:
            assert rec.error == "text must be a string, not NoneType"
        else:  # the local engine's gate, as for any other source
            assert (rec.text, rec.error) == (check_text(rec.id, text, 50).text, check_text(rec.id, text, 50).error)


def test_inputs_that_name_nothing_become_error_records(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "t.parquet").write_bytes(b"not parquet")
    pq.write_table(pa.table({"body": ["x"]}), tmp_path / "nocol.parquet")
    items = expand_inputs(
        [str(tmp_path / "empty"), str(tmp_path / "nope.txt"), str(tmp_path / "*.csv"), str(tmp_path / "*.parquet")]
    )
    recs = [r for p in plan_partitions(items, 10) for r in partition_records(p, 100)]
    assert [(r.id, r.error.split(" (")[0]) for r in recs] == [
        (str(tmp_path / "empty"), "directory holds no files"),
        (str(tmp_path / "nope.txt"), "no such file or directory"),
        (str(tmp_path / "*.csv"), "no file matches this pattern"),
        (str(tmp_path / "nocol.parquet"), 'a Parquet file with a "text" column is expected'),
        (str(tmp_path / "t.parquet"), "not a readable Parquet file"),
    ]
    with pytest.raises(TaggerError, match="standard input"):
        expand_inputs(["-"])
    pq.write_table(pa.table({"text": pa.array([], pa.string())}), tmp_path / "none.parquet")
    assert [
        (r.id, r.error) for p in plan_partitions([tmp_path / "none.parquet"], 5) for r in partition_records(p, 9)
    ] == [(str(tmp_path / "none.parquet"), "empty file: no records")]
    opts = {"model": "m", "backend": "numpy", "format": "jsonl", "max_chars": 100, "partition_size": 5}
    with pytest.raises(TaggerError, match="inside the input directory"):
        prepare(tmp_path / "empty" / "out", [str(tmp_path)], opts)


def test_plain_text_files_are_grouped_in_order(tmp_path):
    for name in ("b.txt", "a.txt", "c.txt", ".hidden"):
        (tmp_path / name).write_text("Some text.")
    parts = plan_partitions(expand_inputs([str(tmp_path)]), 2)
    assert [[i["path"] for i in p["items"]] for p in parts] == [
        [str(tmp_path / "a.txt"), str(tmp_path / "b.txt")],
        [str(tmp_path / "c.txt")],
    ]
    assert [p["index"] for p in parts] == [0, 1]


def test_plan_is_kept_for_the_same_inputs_and_refused_for_others(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.txt").write_text("Some text.")
    out = tmp_path / "out"
    opts = {"model": "m", "backend": "numpy", "format": "jsonl", "max_chars": 100, "partition_size": 5}
    first = prepare(out, [str(tmp_path / "in")], opts)
    assert prepare(out, [str(tmp_path / "in")], opts) == first
    assert finished(out, first[0], "jsonl") is None
    (out / "part-00000.done.json").write_text(json.dumps({"file": "part-00000.jsonl", "bytes": 3}))
    (out / "part-00000.jsonl").write_text("abc")
    assert finished(out, first[0], "jsonl") is not None
    (out / "part-00000.jsonl").write_text("ab")  # truncated: not finished
    assert finished(out, first[0], "jsonl") is None
    with pytest.raises(TaggerError, match="other inputs or options"):
        prepare(out, [str(tmp_path / "in")], {**opts, "partition_size": 6})
    (tmp_path / "in" / "a.txt").write_text("Other text, same name.")
    with pytest.raises(TaggerError, match="other inputs or options"):
        prepare(out, [str(tmp_path / "in")], opts)


def test_tag_partition_writes_the_local_records_and_a_done_record(tmp_path):
    from opinion_tagger.tagging.tagger import OpinionTagger

    ot = OpinionTagger.load()
    f = tmp_path / "in.jsonl"
    texts = ["Officials said it.", "She fears the worst.", "Rain fell."]
    f.write_text(
        "\n".join(
            [
                json.dumps({"id": "a", "text": texts[0]}),
                "{bad",
                json.dumps({"text": texts[1]}),
                json.dumps({"id": "d", "text": texts[2]}),
            ]
        )
        + "\n"
    )
    part = plan_partitions([f], 3)[1]  # lines 4-4
    assert (part["first_line"], part["lines"]) == (4, 1)
    part = plan_partitions([f], 4)[0]
    counts = tag_partition(ot, part, tmp_path, "jsonl", 1000, chunk=2)
    lines = (tmp_path / "part-00000.jsonl").read_text(encoding="utf-8").splitlines()
    local = [
        ot.tag(texts[0], id="a").to_dict(),
        {
            "id": f"{f}:2",
            "error": "invalid JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
        },
        ot.tag(texts[1], id=f"{f}:3").to_dict(),
        ot.tag(texts[2], id="d").to_dict(),
    ]
    assert [json.loads(x) for x in lines] == local
    assert (counts["records"], counts["errors"]) == (4, 1)
    assert counts["tokens"] == sum(len(s["tokens"]) for r in local if "error" not in r for s in r["sentences"])
    done = finished(tmp_path, part, "jsonl")
    assert done["bytes"] == (tmp_path / "part-00000.jsonl").stat().st_size and done["records"] == 4
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "part-00000.done.json", "part-00000.jsonl"]


def test_a_holder_goes_to_the_parquet_column_of_its_kind():
    """parquet_row: a DSE's holder as words in ``holder``, as a class in ``holder_class``, none in neither; spans
    without a holder and records without spans unchanged; the rows fit the frames schema."""
    from opinion_tagger.engines.partitions import parquet_row, parquet_schema

    frame = {"polarity": "negative", "polarity_score": 0.7, "intensity": "high", "intensity_score": 0.5}
    words = {"start": 0, "end": 9, "text": "Officials"}
    spans = [
        {
            "type": "DSE",
            "start": 10,
            "end": 14,
            "text": "said",
            "score": 0.9,
            **frame,
            "holder": words,
            "holder_score": 0.8,
        },
        {
            "type": "DSE",
            "start": 20,
            "end": 25,
            "text": "fears",
            "score": 0.6,
            **frame,
            "holder": "writer",
            "holder_score": 0.4,
        },
        {
            "type": "DSE",
            "start": 30,
            "end": 34,
            "text": "says",
            "score": 0.5,
            **frame,
            "holder": None,
            "holder_score": 0.3,
        },
        {"type": "ESE", "start": 40, "end": 47, "text": "robbery", "score": 0.7, **frame},
    ]
    row = parquet_row({"id": "a", "text": "t", "sentences": [], "spans": spans})
    assert [(s.get("holder"), s.get("holder_class")) for s in row["spans"]] == [
        (words, None),
        (None, "writer"),
        (None, None),
        (None, None),
    ]
    assert row["spans"][3] == spans[3]  # an ESE has no holder columns of its own
    assert parquet_row({"id": "b", "error": "empty text"}) == {"id": "b", "error": "empty text"}
    table = pa.Table.from_pylist([{"error": None, **row}], schema=parquet_schema(("DSE", "ESE"), frames=True))
    back = table.to_pylist()[0]["spans"]
    assert back[0]["holder"] == words and back[1]["holder_class"] == "writer" and back[3]["holder_score"] is None


def test_parquet_has_the_attitude_and_target_columns_of_every_model_with_frame_heads(tmp_path):
    """A DSE's attitude, its score and its targets (a list of structs) as columns; the same schema whether or not
    the model predicts them (null then), as the holder's columns are for every model with frame heads."""
    from role_frames import TEXT, role_tagger

    from opinion_tagger.engines.partitions import parquet_row, parquet_schema

    f = tmp_path / "in.jsonl"
    f.write_text(json.dumps({"id": "r", "text": TEXT}) + "\n" + json.dumps({"id": "e", "text": ""}) + "\n")
    (part,) = plan_partitions([f], 10)
    tag_partition(role_tagger(), part, tmp_path, "parquet", 1000)
    table = pq.read_table(tmp_path / "part-00000.parquet")
    schema = parquet_schema(("DSE", "ESE"), frames=True)
    assert table.schema == schema
    span = schema.field("spans").type.value_type
    assert [span.field(k).name for k in range(span.num_fields)][-6:] == [
        "holder",
        "holder_class",
        "holder_score",
        "attitude",
        "attitude_score",
        "targets",
    ]
    target = pa.list_(
        pa.struct([("start", pa.int64()), ("end", pa.int64()), ("text", pa.string()), ("score", pa.float64())])
    )
    assert span.field("targets").type == target and span.field("attitude_score").type == pa.float64()
    rows = table.to_pylist()
    assert [(s["text"], s["attitude"], s["attitude_score"], s["targets"]) for s in rows[0]["spans"]] == [
        ("dislike", "sentiment-neg", 0.8, [{"start": 31, "end": 44, "text": "parking rules", "score": 0.9}]),
        ("sadly", None, None, None),  # an ESE
        ("shrugged", None, 0.45, []),  # no attitude, no target
    ]
    assert rows[1]["error"] == "empty text" and rows[1]["spans"] is None
    without = {"type": "DSE", "start": 0, "end": 4, "text": "said", "score": 0.9, "polarity": "neutral"}
    without |= {"polarity_score": 0.5, "intensity": "low", "intensity_score": 0.5, "holder": None, "holder_score": 0.4}
    row = {"error": None, **parquet_row({"id": "a", "text": "said", "sentences": [], "spans": [without]})}
    (back,) = pa.Table.from_pylist([row], schema=schema).to_pylist()[0]["spans"]
    assert (back["attitude"], back["attitude_score"], back["targets"]) == (None, None, None)
