"""The language check: a record whose text looks like another language than English carries a warning (JSONL,
CoNLL, HTML, Parquet, the Python API, the spaCy component) and standard error counts such records in one line;
English text and short texts never get one; ``--lang-check off`` / ``lang_check=False`` turn it off."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from opinion_tagger import OpinionTagger, TaggedDocument
from opinion_tagger.cli import main
from opinion_tagger.tagging.formats import Writer, conll_lines
from opinion_tagger.tagging.language import MIN_LETTERS, detect, summary_line

ROOT = Path(__file__).resolve().parents[2]

GERMAN = (
    "Das Essen war schrecklich und der Kellner war unhöflich. Wir haben eine Stunde gewartet, "
    "bevor jemand unsere Bestellung aufgenommen hat. Ich komme nie wieder in dieses Restaurant."
)
SPANISH = (
    "La comida estaba fría y el camarero fue muy grosero con nosotros. Esperamos casi una hora "
    "y nadie nos pidió disculpas. No volveremos nunca a este restaurante."
)
FRENCH = "Le film était beaucoup trop long et les acteurs ne semblaient pas du tout convaincus par leurs rôles."
ENGLISH = [
    "Officials said the plan was, as usual, daylight robbery, and critics called it a whitewash.",
    "The minister praised the report, but critics called it a whitewash.",
    # few function words: English all the same
    "Terrible service, awful food, rude staff, never again!!! Absolutely disgusting experience overall.",
    "BREAKING: Senate passes budget bill 52-48 after marathon overnight session in Washington",
    "The CEO of Siemens AG met Herr Müller and Frau Schneider in München yesterday to discuss the merger.",
    "Wow. Just wow. Amazing performance tonight #blessed #concert #NYC #music #live",
]
SHORT = ["Das ist gut.", "La comida estaba fría.", "Merci beaucoup!", "ok", "Qué horror, de verdad."]


def tokens(text: str) -> list[str]:
    from opinion_tagger.tokenize import tokenize

    return [t.text for t in tokenize(text)]


@pytest.fixture(scope="module")
def ot():
    return OpinionTagger.load("fast")


# --------------------------------------------------------------------------- the detector
@pytest.mark.parametrize("text, code", [(GERMAN, "de"), (SPANISH, "es"), (FRENCH, "fr")])
def test_text_in_another_language_is_named(text, code):
    found = detect(tokens(text))
    assert found is not None and found.code == code and found.confidence >= 0.9
    assert detect(tokens(text)) == found  # deterministic


@pytest.mark.parametrize("text", ENGLISH)
def test_english_text_gets_no_warning(text):
    assert detect(tokens(text)) is None


@pytest.mark.parametrize("text", SHORT)
def test_short_texts_are_never_judged(text):
    assert sum(len(t) for t in tokens(text) if t.isalpha()) < MIN_LETTERS
    assert detect(tokens(text)) is None


def test_text_without_words_gets_no_warning():
    assert detect(tokens("12,345.67 + 89 = 12,434.67; 2024/25: 3.5% -> 4.1%, 17:30-18:45 " * 5)) is None


def test_the_summary_line_counts_records_by_language():
    assert summary_line({}) is None and summary_line({"de": 0}) is None
    assert summary_line({"de": 1}).startswith("1 record looks like German (de); the models are trained on English")
    line = summary_line({"es": 1, "de": 3, "xx": 1})
    assert line.startswith("3 records look like German (de), 1 like Spanish (es), 1 like xx (xx); the models")


# --------------------------------------------------------------------------- the Python API and the records
def test_the_python_api_sets_language_and_warning(ot):
    doc = ot.tag(GERMAN)
    assert doc.language == "de" and "German (de)" in doc.warning and "trained on English" in doc.warning
    english = ot.tag(ENGLISH[0])
    assert english.language is None and english.warning is None
    docs = list(ot.tag_many([("a", SPANISH), ("b", ENGLISH[1]), ("c", ""), ("d", SHORT[0])]))
    assert [d.language for d in docs] == ["es", None, None, None] and docs[2].error == "empty text"


def test_lang_check_false_turns_it_off():
    quiet = OpinionTagger.load("fast", lang_check=False)
    doc = quiet.tag(GERMAN)
    assert doc.language is None and doc.warning is None and "warning" not in doc.to_dict()


def test_an_html_page_is_judged_whole_on_the_words_it_shows(ot):
    page = "<html><head><title>English title</title></head><body>" + "".join(
        f"<p>{s}.</p>" for s in GERMAN.split(". ")
    )  # each block alone is too short to judge, the page is not
    doc = ot.tag(page, html=True)
    assert doc.language == "de"
    english = ot.tag(
        f"<p>{ENGLISH[0]}</p><script>var x = 'Das Essen war schrecklich und unhöflich';</script>", html=True
    )
    assert english.warning is None


def test_the_jsonl_record_carries_the_warning_after_the_id(ot):
    rec = ot.tag(GERMAN, id="g").to_dict()
    assert list(rec)[:4] == ["id", "language", "warning", "text"] and rec["language"] == "de"
    assert set(ot.tag(ENGLISH[0]).to_dict()) == {"id", "text", "sentences", "spans"}  # English: as it always was
    back = TaggedDocument.from_dict(json.loads(json.dumps(rec)))
    assert (back.language, back.warning) == (rec["language"], rec["warning"]) and back.to_dict() == rec


def test_corrected_tags_keep_the_warning(ot):
    from opinion_tagger.tagging.documents import apply_tags

    doc = ot.tag(SPANISH)
    fixed = apply_tags(doc, [dict(t.tags) for s in doc.sentences for t in s.tokens])
    assert (fixed.language, fixed.warning) == (doc.language, doc.warning)


def test_conll_and_html_show_the_warning(ot):
    doc = ot.tag(GERMAN, id="g")
    lines = conll_lines(doc).splitlines()
    assert lines[:2] == ["# id = g", f"# warning = {doc.warning}"]
    assert not any(line.startswith("# warning") for line in conll_lines(ot.tag(ENGLISH[0])).splitlines())
    import io

    out = io.StringIO()
    writer = Writer("html", out)
    writer.document(doc)
    writer.close()
    assert '<p class="warning"' in out.getvalue() and "German (de)" in out.getvalue()


def test_parquet_rows_have_language_and_warning_columns(ot):
    import pyarrow as pa

    from opinion_tagger.engines.partitions import parquet_row, parquet_schema

    rows = [{"error": None, **parquet_row(ot.tag(t, id=str(k)).to_dict())} for k, t in enumerate([GERMAN, ENGLISH[0]])]
    table = pa.Table.from_pylist(rows, schema=parquet_schema(ot.types, ot.frames)).to_pylist()
    assert table[0]["language"] == "de" and "German" in table[0]["warning"]
    assert table[1]["language"] is None and table[1]["warning"] is None


def test_a_ray_partition_counts_its_records_by_language(ot, tmp_path):
    """What --engine ray's summary line adds up: each partition's records by language, kept in its done record
    so that a restarted run counts the partitions finished before."""
    from opinion_tagger.engines.partitions import tag_partition

    files = []
    for name, text in (("a.txt", GERMAN), ("b.txt", ENGLISH[0]), ("c.txt", SPANISH), ("d.txt", GERMAN)):
        (tmp_path / name).write_text(text, encoding="utf-8")
        files.append({"path": str(tmp_path / name)})
    out = tmp_path / "out"
    out.mkdir()
    counts = tag_partition(ot, {"index": 0, "kind": "files", "items": files}, out, "jsonl", 10_000)
    assert counts["languages"] == {"de": 2, "es": 1}
    assert json.loads((out / "part-00000.done.json").read_text())["languages"] == {"de": 2, "es": 1}
    assert ["warning" in json.loads(line) for line in (out / "part-00000.jsonl").read_text().splitlines()] == [
        True,
        False,
        True,
        True,
    ]


def test_the_spacy_component_puts_the_warning_in_the_span_groups_attrs():
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("opinion_tagger", config={"model": "fast"})
    group = nlp(GERMAN).spans["opinions"]
    assert group.attrs["language"] == "de" and "German" in group.attrs["warning"]
    assert "warning" not in nlp(ENGLISH[0]).spans["opinions"].attrs


# --------------------------------------------------------------------------- the command line
@pytest.fixture
def mixed(tmp_path):
    path = tmp_path / "mixed.jsonl"
    texts = [("en", ENGLISH[0]), ("de1", GERMAN), ("es", SPANISH), ("short", SHORT[0]), ("de2", GERMAN.lower())]
    path.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in texts), encoding="utf-8")
    return path


@pytest.mark.parametrize("workers", ["1", pytest.param("2", marks=pytest.mark.integration)])  # 2: worker processes
def test_tag_warns_in_the_records_and_in_one_line(mixed, capsys, workers):
    assert main(["tag", "--model", "fast", "--quiet", "--input", str(mixed), "--workers", workers]) == 0
    out, err = capsys.readouterr()
    records = [json.loads(line) for line in out.splitlines()]
    assert [r.get("language") for r in records] == [None, "de", "es", None, "de"]
    assert all(("warning" in r) == (r["id"] in ("de1", "es", "de2")) for r in records)
    assert err.splitlines() == [
        "tagged 5 records, 0 errors",
        "opinion-tagger: warning: 2 records look like German (de), 1 like Spanish (es); the models are trained "
        "on English, so their spans may be missing or wrong (--lang-check off hides this)",
    ]


@pytest.mark.integration
def test_lang_check_off_writes_the_records_as_before(mixed, capsys):
    assert main(["tag", "--model", "fast", "--quiet", "--input", str(mixed), "--lang-check", "off"]) == 0
    out, err = capsys.readouterr()
    assert "warning" not in out and "language" not in out
    assert err == "tagged 5 records, 0 errors\n"


@pytest.mark.integration
def test_english_input_never_loads_the_detector():
    """The detector's model takes a while to load: English prose (at least ENGLISH_SHARE of its words such as
    "the", "of", "which") and short text never reach it."""
    code = (
        "from opinion_tagger import OpinionTagger\n"
        "from opinion_tagger.tagging import language\n"
        "ot = OpinionTagger.load('fast')\n"
        f"docs = list(ot.tag_many({[*ENGLISH[:2], ENGLISH[4], *SHORT]!r}))\n"
        "assert not any(d.warning for d in docs)\n"
        "print(language._identifier.cache_info().currsize)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0 and done.stdout == "0\n", done.stderr


def test_a_missing_detector_is_one_line_that_names_the_option(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "py3langid", None)  # as if it were not installed
    assert main(["tag", "--model", "fast", "--quiet", ENGLISH[0]]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "py3langid" in err and "--lang-check off" in err, err
    assert main(["tag", "--model", "fast", "--quiet", "--lang-check", "off", ENGLISH[0]]) == 0


def test_a_detector_that_cannot_load_is_one_line(monkeypatch, capsys):
    from py3langid.langid import LanguageIdentifier

    from opinion_tagger.tagging import language

    def damaged(*args, **kwargs):
        raise EOFError("Compressed file ended before the end-of-stream marker was reached")

    language._identifier.cache_clear()
    monkeypatch.setattr(LanguageIdentifier, "from_model_file", classmethod(damaged))
    try:
        assert main(["tag", "--model", "fast", "--quiet", GERMAN]) == 2
    finally:
        language._identifier.cache_clear()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "py3langid" in err and "--lang-check off" in err, err
