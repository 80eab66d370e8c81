"""Hostile input never stops tagging: one output record per input record,
whatever its bytes, on the command line, in the Python API and in the Streamlit page."""

import io
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from streamlit.testing.v1 import AppTest

from experiments.hostile_inputs import api_inputs, api_records, expected_records, jsonl_files
from opinion_tagger import InvalidText, OpinionTagger
from opinion_tagger.cli import main
from opinion_tagger.tagging.inputs import MAX_DEPTH, check_text, printable_id, read_records, records_from_bytes

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_MODEL = str(ROOT / "opinion_tagger" / "models" / "fast")


@pytest.fixture(scope="module")
def ot():
    return OpinionTagger.load()


# ----------------------------------------------------------------- the text gate
def test_check_text_refuses_what_cannot_be_tagged():
    assert check_text("x", "\ud800").error == "not valid Unicode: lone surrogate U+D800 at character 0"
    assert check_text("x", "ab\udfffc").error == "not valid Unicode: lone surrogate U+DFFF at character 2"
    assert check_text("x", "a\x00b").error == "binary data (NUL character at 1), not text"
    assert check_text("x", b"a\x00b").error == "binary data (NUL bytes), not text"
    assert check_text("x", b"caf\xe9").error == "not valid UTF-8 (byte 3)"
    assert check_text("x", 7).error == "text must be a string, not int"
    for blank in ("", " \n\t", "\u200b", "\ufeff\u200d ", "\x1b\x7f", "\u2028"):
        assert check_text("x", blank).error == "empty text", repr(blank)
    assert check_text("x", "abcdef", max_chars=5).error == "over-long input: 6 characters (limit: --max-chars 5)"


def test_check_text_normalises_control_characters_keeping_offsets():
    rec = check_text("x", "a\x1bb\tc\r\nd\x85e\x0cf")
    assert rec.text == "a b\tc\r\nd e f"
    assert check_text("x", b"\xef\xbb\xbfHi.").text == "Hi."  # byte-order mark dropped
    assert check_text("x", "\u200bHi").text == "\u200bHi"  # format characters stay: offsets unchanged


def test_ids_are_printable():
    assert printable_id("a\nb\ud800") == "a\\nb\\ud800"
    assert check_text("bad\udcff.txt", "ok").id == "bad\\udcff.txt"


# ----------------------------------------------------------------- JSONL rules
def test_jsonl_rules_blank_lines_bom_depth():
    data = (
        b'\xef\xbb\xbf{"id": "a", "text": "First."}\n'
        b"   \n"
        b'\xef\xbb\xbf{"id": "b", "text": "After a BOM mid-file."}\n'
        + b"[" * 3000
        + b"]" * 3000
        + b"\n"
        + b"[" * MAX_DEPTH
        + b"]" * MAX_DEPTH
        + b"\n"
        + b'{"id": "z", "text": "\\u200b"}\n'
        b'{"id": "s", "text": "\\ud800 lone"}\n'
        b'{"id": 1' + b"0" * 5000 + b', "text": "big id"}\n'
        b"\n"
    )
    recs = records_from_bytes("f.jsonl", data)
    assert [(r.id, r.text, r.error) for r in recs] == [
        ("a", "First.", None),
        ("f.jsonl:2", None, "blank line"),
        ("b", "After a BOM mid-file.", None),
        ("f.jsonl:4", None, f"invalid JSON: nested deeper than {MAX_DEPTH} levels"),
        ("f.jsonl:5", None, 'a JSON object with a string "text" field is expected'),  # deep enough is parsed
        ("z", None, "empty text"),
        ("s", None, "not valid Unicode: lone surrogate U+D800 at character 0"),
        ("f.jsonl:8", None, recs[7].error),
        ("f.jsonl:9", None, "blank line"),
    ]
    assert recs[7].error.startswith("invalid JSON: Exceeds the limit")
    assert [(r.id, r.error) for r in records_from_bytes("e.jsonl", b"")] == [("e.jsonl", "empty file: no records")]


def test_overlong_lines_are_skipped_without_reading_them_whole():
    data = b'{"text": "' + b"x" * 100_000 + b'"}\n{"text": "Short."}\n'
    recs = list(read_records(inputs=["-"], max_chars=100, stdin=io.BytesIO(data)))
    assert [(r.id, r.text) for r in recs] == [("stdin:1", None), ("stdin:2", "Short.")]
    assert recs[0].error == "over-long line: 100012 characters (limit: --max-chars 100)"


# ----------------------------------------------------------------------------------- error records say what is wrong
def test_invalid_json_reason_is_whole_with_line_and_column():
    recs = records_from_bytes("f.jsonl", b'{"id": "a", "text": "tab\there"}\n{"text": "ok",}\n')
    assert [r.error for r in recs] == [
        "invalid JSON: Invalid control character at: line 1 column 25 (char 24)",
        "invalid JSON: Expecting property name enclosed in double quotes: line 1 column 15 (char 14)",
    ]


def test_record_with_an_id_but_no_text_keeps_its_id():
    recs = records_from_bytes("f.jsonl", b'{"id": "doc-7"}\n{"id": 8, "text": null}\n{"text": 5}\n[1]\n')
    assert [(r.id, r.error) for r in recs] == [
        ("doc-7", 'a JSON object with a string "text" field is expected'),
        ("8", 'a JSON object with a string "text" field is expected'),
        ("f.jsonl:3", 'a JSON object with a string "text" field is expected'),
        ("f.jsonl:4", 'a JSON object with a string "text" field is expected'),
    ]


def test_overlong_records_are_reported_in_characters_naming_max_chars(tmp_path):
    big = '{"text": "' + "é" * 1_000_000 + '"}\n'  # 2,000,013 bytes, 1,000,012 characters
    (tmp_path / "big.jsonl").write_text(big + '{"text": "Short."}\n', encoding="utf-8")
    (tmp_path / "big.txt").write_text("x" * 900_000, encoding="utf-8")
    recs = list(read_records(inputs=[str(tmp_path)], max_chars=200_000))
    assert [r.error for r in recs] == [
        "over-long line: 1000012 characters (limit: --max-chars 200000)",
        None,
        "over-long input: 900000 bytes, more than 200000 characters (limit: --max-chars 200000)",
    ]
    recs = list(read_records(inputs=["-"], max_chars=10, stdin=io.BytesIO(b"x" * 5000)))
    assert recs[0].error == "over-long input: more than 10 characters (limit: --max-chars 10)"
    assert check_text("x", "y" * 11, max_chars=10).error == "over-long input: 11 characters (limit: --max-chars 10)"


def test_stdin_with_bom_is_still_jsonl():
    recs = list(read_records(inputs=["-"], stdin=io.BytesIO(b'\xef\xbb\xbf{"id": "a", "text": "A."}\n')))
    assert [(r.id, r.text) for r in recs] == [("a", "A.")]


# ----------------------------------------------------------------- the Python API
def test_api_tag_raises_a_clear_error_and_tag_many_keeps_going(ot):
    with pytest.raises(InvalidText, match="lone surrogate U\\+D800"):
        ot.tag("\ud800", id="x")
    with pytest.raises(ValueError, match="empty text"):
        ot.tag("\u200b")
    docs = list(ot.tag_many(["Fine.", ("x", "\ud800"), ("y", None), 42, "Also fine."], chunk=2))
    assert [(d.id, d.error) for d in docs] == [
        ("0", None),
        ("x", "not valid Unicode: lone surrogate U+D800 at character 0"),
        ("y", "text must be a string, not NoneType"),
        ("3", "expected a string or an (id, text) pair, not int"),
        ("4", None),
    ]
    assert docs[1].to_dict() == {"id": "x", "error": "not valid Unicode: lone surrogate U+D800 at character 0"}


@pytest.mark.integration
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values=api_inputs)
def test_property_api_one_document_per_input(ot, values):
    records = api_records(values)
    docs = list(ot.tag_many(iter(records), chunk=3))
    assert len(docs) == len(records)
    for n, (rec, doc) in enumerate(zip(records, docs)):
        want = printable_id(str(rec[0])) if isinstance(rec, (tuple, list)) and len(rec) == 2 else str(n)
        assert doc.id == want
        assert not doc.error or "internal error" not in doc.error
        json.dumps(doc.to_dict(), ensure_ascii=False).encode("utf-8")  # every output can be written
        text = rec[1] if isinstance(rec, (tuple, list)) and len(rec) == 2 else rec
        if doc.error is None:
            assert isinstance(text, (str, bytes)) and (len(doc.text) == len(text) or isinstance(text, bytes))
            for s in doc.sentences:
                for t in s.tokens:
                    assert doc.text[t.start : t.end] == t.text


# ----------------------------------------------------------------- the command line
def test_cli_surrogate_record_loses_nothing(tmp_path, capsys):
    inp = tmp_path / "in.jsonl"
    inp.write_text(
        '{"id": "a", "text": "Officials said no."}\n{"id": "x", "text": "\\ud800"}\n{"id": "b", "text": "Rain fell."}\n'
    )
    out = tmp_path / "out.jsonl"
    assert main(["tag", "--input", str(inp), "--out", str(out), "--quiet", "--chunk", "2"]) == 1
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [x["id"] for x in lines] == ["a", "x", "b"]
    assert lines[1] == {"id": "x", "error": "not valid Unicode: lone surrogate U+D800 at character 0"}
    err = capsys.readouterr().err
    assert "tagged 2 records, 1 error" in err and "Traceback" not in err


_tmp = Path(tempfile.mkdtemp(prefix="hostile-"))


@pytest.mark.integration
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sample=jsonl_files())
@example(sample=(b"", [None]))  # one blank line without its line feed is an empty file (found 2026-11-27)
def test_property_cli_batch_one_output_line_per_input_line(sample):
    data, declared = sample
    inp, out = _tmp / "in.jsonl", _tmp / "out.jsonl"
    inp.write_bytes(data)
    rc = main(["tag", "--model", DEFAULT_MODEL, "--input", str(inp), "--out", str(out), "--quiet", "--chunk", "4"])
    lines = [json.loads(x) for x in out.read_text(encoding="utf-8").split("\n")[:-1]]  # U+2028 is no line end
    assert len(lines) == expected_records(data)
    assert rc == (1 if any("error" in x for x in lines) else 0)
    # an empty file's one (error) record is the file's; a line's is the line's or its own id
    ids = [(f"{inp}:{i}", rid) for i, rid in enumerate(declared, 1)] if data else [(str(inp),)]
    for x, allowed in zip(lines, ids):
        assert x["id"] in allowed
        assert "internal error" not in x.get("error", "")


# ----------------------------------------------------------------- the Streamlit page
@pytest.mark.integration
def test_page_hostile_upload_shows_messages_not_a_traceback(tmp_path, monkeypatch):
    monkeypatch.setenv("OPINION_TAGGER_PROJECT", str(tmp_path / "p.sqlite"))
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=120)
    at.session_state["_annotator_chosen"] = "tester"  # the name this browser session chose (app.CHOSEN)
    at.run()
    data = (
        b'{"id": "ok", "text": "Officials said no."}\n{"id": "x", "text": "\\ud800"}\n'
        + b"[" * 5000
        + b"]" * 5000
        + b"\n\n"
        + b'{"id": "zw", "text": "\\u200b"}\n'
    )
    at.file_uploader(key="uploads").set_value(("hostile.jsonl", data, "application/jsonl"))
    next(b for b in at.button if b.label == "Import").click().run()
    assert not at.exception
    warnings = [w.value.replace("\\", "") for w in at.warning]  # shown with markdown escaped
    assert warnings == [
        "Not imported: x: not valid Unicode: lone surrogate U+D800 at character 0",
        f"Not imported: hostile.jsonl:3: invalid JSON: nested deeper than {MAX_DEPTH} levels",
        "Not imported: hostile.jsonl:4: blank line",
        "Not imported: zw: empty text",
    ]
    from opinion_tagger.annotation.store import Project

    with Project(tmp_path / "p.sqlite") as p:
        assert [d.name for d in p.documents()] == ["ok"]
