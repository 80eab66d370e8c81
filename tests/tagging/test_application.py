"""Tagging text: the Python API, the inputs (error records), every output format, the tag CLI."""

import io
import json
import re
from pathlib import Path

import pytest

from opinion_tagger import OpinionTagger, TaggedDocument
from opinion_tagger.cli import main
from opinion_tagger.config import TaggerConfig
from opinion_tagger.corpus import MPQACorpus, mpqa_sentences
from opinion_tagger.tagging.documents import apply_tags
from opinion_tagger.tagging.formats import Writer, brat_ann, conll_lines, render_html
from opinion_tagger.tagging.inputs import read_records, records_from_bytes
from opinion_tagger.training.run import train


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    from conftest import make_sample

    root = make_sample.write_sample(tmp_path_factory.mktemp("data") / "mpqa")
    sents = list(mpqa_sentences(MPQACorpus(root)))
    out = tmp_path_factory.mktemp("model") / "joint"
    cfg = TaggerConfig.from_dict(
        {
            "task": "joint",
            "model.recurrent.cell": "elman",
            "model.recurrent.depth": 1,
            "model.recurrent.hidden": 16,
            "model.embeddings.features": "random",
            "model.embeddings.dim": 16,
            "model.recurrent.input_dropout": 0,
            "model.recurrent.dropout": 0,
            "training.optimizer.learning_rate": 0.03,
            "training.batch_size": 4,
            "training.stopping.max_epochs": 40,
            "training.stopping.patience": 40,
            "training.jit_compile": False,
        }
    )
    train(cfg, sents, sents, out, progress=False)
    return out


@pytest.fixture(scope="module")
def ot(model_dir):
    return OpinionTagger.load(model_dir)


TEXT = "Officials said the vote was as usual a daylight robbery.\n\nRain fell on Tuesday."


@pytest.mark.integration
def test_tag_returns_offsets_into_the_input(ot):
    doc = ot.tag(TEXT, id="d1")
    assert doc.id == "d1" and len(doc.sentences) == 2
    for s in doc.sentences:
        for t in s.tokens:
            assert TEXT[t.start : t.end] == t.text
            assert set(t.tags) == {"DSE", "ESE"}
    assert doc.spans, "the tiny model learnt 'said' as a DSE"
    for sp in doc.spans:
        assert TEXT[sp.start : sp.end] == sp.text and 0.0 <= sp.score <= 1.0
    assert ("DSE", "said") in {(s.type, s.text) for s in doc.spans}


@pytest.mark.integration
def test_tag_many_streams_in_order(ot):
    texts = [f"Officials said thing number {k}." for k in range(10)] + ["Rain fell."]
    docs = list(ot.tag_many(((str(k), t) for k, t in enumerate(texts)), chunk=3))
    assert [d.id for d in docs] == [str(k) for k in range(11)]
    assert [d.text for d in docs] == texts


@pytest.mark.integration
def test_dict_roundtrip_and_corrections(ot):
    doc = ot.tag(TEXT)
    back = TaggedDocument.from_dict(json.loads(json.dumps(doc.to_dict())))
    assert back.to_dict() == doc.to_dict()
    tags = [dict(t.tags) for s in doc.sentences for t in s.tokens]
    tags = [{"DSE": "O", "ESE": "O"} for _ in tags]
    tags[-2] = {"DSE": "O", "ESE": "B-ESE"}  # "Tuesday"
    fixed = apply_tags(doc, tags)
    assert [(s.type, s.text, s.score) for s in fixed.spans] == [("ESE", "Tuesday", 1.0)]
    with pytest.raises(ValueError, match="not a DSE tag"):
        apply_tags(doc, [{"DSE": "B-ESE", "ESE": "O"}] * len(tags))


def test_error_records(tmp_path):
    (tmp_path / "empty.txt").write_text("   \n")
    (tmp_path / "binary.txt").write_bytes(b"\x00\x01\x02 data")
    (tmp_path / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    (tmp_path / "ok.txt").write_text("Fine text.")
    (tmp_path / "recs.jsonl").write_text(
        '{"id": "a", "text": "Hello."}\nnot json\n{"text": 5}\n' + json.dumps({"text": "x" * 1_000_000}) + "\n"
    )
    recs = list(read_records(inputs=[str(tmp_path), str(tmp_path / "missing.txt")]))
    by_id = {r.id.split("/")[-1]: r for r in recs}
    assert by_id["empty.txt"].error == "empty text"
    assert "binary" in by_id["binary.txt"].error
    assert "UTF-8" in by_id["latin1.txt"].error
    assert by_id["ok.txt"].text == "Fine text."
    assert by_id["a"].text == "Hello."
    assert "invalid JSON" in by_id["recs.jsonl:2"].error
    assert '"text"' in by_id["recs.jsonl:3"].error
    assert "over-long" in by_id["recs.jsonl:4"].error
    assert "no such file" in by_id["missing.txt"].error
    assert len(recs) == 9  # every input record yields a record
    assert records_from_bytes("u.txt", b"")[0].error == "empty text"


@pytest.mark.integration
def test_formats(ot):
    doc = ot.tag('He said <script>alert("x")</script> & left.', id="<b>id</b>")
    page = render_html(doc)
    assert "<script" not in page and "</script" not in page
    assert "&lt;/script&gt; &amp; left." in page
    conll = conll_lines(doc)
    assert conll.startswith("# id = <b>id</b>\n# text = He said")
    first = conll.splitlines()[2].split("\t")
    assert first[:3] == ["He", "0", "2"] and len(first) == 5
    for line in brat_ann(doc).splitlines():
        tid, typ_span, text = line.split("\t")
        typ, start, end = typ_span.split(" ")
        assert doc.text[int(start) : int(end)] == text and typ in ("DSE", "ESE")


def _marks_around(page: str) -> dict[str, set]:
    """For each piece of text in ``page``, the classes of the <mark>s around it."""
    from html.parser import HTMLParser

    class Marks(HTMLParser):
        def __init__(self):
            super().__init__()
            self.open, self.found = [], {}

        def handle_starttag(self, tag, attrs):
            if tag == "mark":
                self.open.append(dict(attrs)["class"])

        def handle_endtag(self, tag):
            if tag == "mark":
                self.open.pop()

        def handle_data(self, data):
            self.found.setdefault(data, set()).update(self.open)

    parser = Marks()
    parser.feed(page)
    return parser.found


def test_html_output_shows_both_types_on_a_word_in_both():
    from opinion_tagger import TaggedSpan
    from opinion_tagger.tagging.formats import HTML_HEAD

    text = 'They "strongly condemned" <script>x</script> it.'
    doc = TaggedDocument(
        '<i id="x">',
        text,
        spans=[
            TaggedSpan("DSE", 5, 24, text[5:24], 0.9),
            TaggedSpan("ESE", 6, 14, text[6:14], 0.7),
            TaggedSpan("ESE", 26, 34, text[26:34], 0.5),
        ],
    )
    page = render_html(doc)
    marks = _marks_around(page)
    assert marks["strongly"] == {"dse", "ese"} and marks[" condemned"] == {"dse"} and marks["<script>"] == {"ese"}
    assert "<script>" not in page and "&lt;script&gt;" in page and "&quot;" in page
    assert 'title="DSE 0.90"' in page and 'title="ESE 0.70"' in page
    # a DSE is a background, an ESE an underline: one never hides the other; the legend says so
    css = dict(re.findall(r"mark\.(\w+) \{ ([^}]*) \}", HTML_HEAD))
    assert css["dse"].startswith("background") and "border-bottom" in css["ese"] and "background" not in css["ese"]
    legend = _marks_around(HTML_HEAD[HTML_HEAD.index('<p class="legend">') :])
    assert legend["DSE"] == {"dse"} and legend["ESE"] == {"ese"} and legend["both"] == {"dse", "ese"}
    out = io.StringIO()
    writer = Writer("html", out)
    writer.document(doc)
    writer.error("<b>bad</b>", "invalid <JSON>")
    writer.close()
    assert "<h2>&lt;i id=&quot;x&quot;&gt;</h2>" in out.getvalue() and "&lt;b&gt;bad&lt;/b&gt;" in out.getvalue()
    assert "invalid &lt;JSON&gt;" in out.getvalue()


def test_brat_fragments_across_lines():
    from opinion_tagger import TaggedSpan

    doc = TaggedDocument("x", "a b\nc d", spans=[TaggedSpan("ESE", 2, 5, "b\nc", 0.5)])
    assert brat_ann(doc) == "T1\tESE 2 3;4 5\tb c\n"


@pytest.mark.integration
def test_cli_tag_formats_and_exit_status(model_dir, tmp_path, capsys):
    inp = tmp_path / "in.jsonl"
    inp.write_text('{"id": "r1", "text": "Officials said no."}\n{"id": "r2", "text": ""}\n')
    out = tmp_path / "out.jsonl"
    rc = main(["tag", "--model", str(model_dir), "--input", str(inp), "--out", str(out), "--quiet"])
    assert rc == 1  # one record failed
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [x["id"] for x in lines] == ["r1", "r2"]
    assert lines[1] == {"id": "r2", "error": "empty text"}
    assert set(lines[0]) == {"id", "text", "sentences", "spans"}
    tok = lines[0]["sentences"][0]["tokens"][0]
    assert set(tok) == {"text", "start", "end", "DSE", "ESE"}
    assert "r2: empty text" in capsys.readouterr().err

    assert main(["tag", "--model", str(model_dir), "Rain fell.", "--format", "conll", "--quiet"]) == 0
    assert capsys.readouterr().out.startswith("# id = arg:0\n# text = Rain fell.\nRain\t0\t4\tO\tO\n")
    html_out = tmp_path / "o.html"
    assert (
        main(
            ["tag", "--model", str(model_dir), "<i>x</i> said.", "--format", "html", "--out", str(html_out), "--quiet"]
        )
        == 0
    )
    page = html_out.read_text()
    assert page.startswith("<!DOCTYPE html>") and "<i>" not in page and "</i>" not in page
    assert "&lt;i&gt;x&lt;/i&gt; said." in re.sub(r"</?mark[^>]*>", "", page)
    brat = tmp_path / "brat"
    assert (
        main(
            ["tag", "--model", str(model_dir), "Officials said no.", "--format", "brat", "--out", str(brat), "--quiet"]
        )
        == 0
    )
    assert (brat / "arg_0.txt").read_text() == "Officials said no."
    assert main(["tag", "--model", str(model_dir), "x", "--format", "brat"]) == 2  # needs --out


@pytest.mark.integration
def test_keras_and_numpy_backends_agree_on_text(model_dir):
    a = OpinionTagger.load(model_dir, backend="onnx").tag(TEXT).to_dict()
    b = OpinionTagger.load(model_dir, backend="keras").tag(TEXT).to_dict()
    assert [s["tokens"] for s in a["sentences"]] == [s["tokens"] for s in b["sentences"]]
    assert [(s["type"], s["start"], s["end"]) for s in a["spans"]] == [
        (s["type"], s["start"], s["end"]) for s in b["spans"]
    ]


def test_stdin_plain_text_and_overlong(tmp_path):
    import io

    recs = list(read_records(inputs=["-"], stdin=io.BytesIO(b"Plain text\nover two lines.\n")))
    assert [(r.id, r.text) for r in recs] == [("stdin", "Plain text\nover two lines.\n")]
    recs = list(read_records(inputs=["-"], max_chars=10, stdin=io.BytesIO(b"x" * 5000)))
    assert recs[0].error.startswith("over-long input")
    recs = list(read_records(inputs=["-"], stdin=io.BytesIO(b'{"id": 7, "text": "A."}\n{"text": "B."}\n')))
    assert [(r.id, r.text) for r in recs] == [("7", "A."), ("stdin:2", "B.")]


@pytest.mark.integration
def test_top_level_import_is_light_and_exports_the_api():
    # ``import opinion_tagger`` (done by every subpackage) must not load spaCy, ONNX Runtime, TensorFlow or a
    # network; the names of ``__all__`` are imported on first use, still without spaCy or ONNX Runtime
    import subprocess
    import sys

    code = (
        "import sys, opinion_tagger; "
        "libs = lambda: [m for m in ('spacy', 'onnxruntime', 'tensorflow', 'keras') if m in sys.modules]; "
        "print(libs() + [m for m in sys.modules if m == 'opinion_tagger.tagging.tagger']); "
        "from opinion_tagger import *; print(libs()); "
        "from opinion_tagger.tagging.tagger import OpinionTagger as O; print(OpinionTagger is O); "
        "print(sorted(opinion_tagger.__all__))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[:3] == ["[]", "[]", "True"]
    assert eval(out[3]) == sorted(
        [
            "BundleError",
            "InvalidText",
            "OpinionTagger",
            "SpanFrame",
            "TaggedDocument",
            "TaggedSentence",
            "TaggedSpan",
            "TaggedToken",
            "TaggerError",
            "__version__",
        ]
    )
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        import opinion_tagger

        opinion_tagger.nothing  # noqa: B018


def test_the_package_is_typed():
    import opinion_tagger

    assert (Path(opinion_tagger.__file__).parent / "py.typed").is_file()
