"""HTML input: the visible text is tagged, every offset points into the HTML source, and plain text is tagged
as plain text."""

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from opinion_tagger import InvalidText, OpinionTagger
from opinion_tagger.cli import main
from opinion_tagger.tagging.html_input import tag_html, tag_records, visible_text
from opinion_tagger.tagging.inputs import Record, read_records

ROOT = Path(__file__).resolve().parents[2]
SNIPPET = "<p>The senator <b>strongly condemned</b> the decision.</p>"


class Marker:
    """A stand-in network: DSE on the words in ``dse``, ESE on those in ``ese`` (runs of them one span)."""

    types = ("DSE", "ESE")

    def __init__(self, dse=("condemned", "said"), ese=("AT&T", "daylight", "robbery")):
        self.words = {"DSE": set(dse), "ESE": set(ese)}

    def predict(self, sentences, batch_size=64):
        out = []
        for words in sentences:
            row = {}
            for typ in self.types:
                tags = [
                    ("I-" if k and words[k - 1] in self.words[typ] else "B-") + typ if w in self.words[typ] else "O"
                    for k, w in enumerate(words)
                ]
                row[typ] = (tags, [0.9] * len(words))
            out.append(row)
        return out


@pytest.fixture(scope="module")
def marked():
    return OpinionTagger(Marker())


@pytest.fixture(scope="module")
def ot():
    return OpinionTagger.load()


# ----------------------------------------------------------------- the visible text and its map
def test_visible_text_leaves_out_what_a_browser_does_not_show():
    source = (
        "<!DOCTYPE html><html><head><title>Title</title><style>p {color: red}</style></head>"
        "<body><h1>Head</h1><!-- note --><p>AT&amp;T said&nbsp;no,\n   x &lt; y</p>"
        "<script>var s = '<p>hidden</p>';</script><ul><li>one<li>two</ul>a<br>b<pre>  k\n l</pre></body></html>"
    )
    vis = visible_text(source)
    assert vis.text == "Head\nAT&T said\xa0no, x < y\none\ntwo\na\nb\n  k\n l"
    assert [vis.text[a:b] for a, b in vis.blocks] == [
        "Head",
        "AT&T said\xa0no, x < y",
        "one",
        "two",
        "a",
        "b",
        "  k\n l",
    ]
    amp = vis.text.index("&")
    assert source[vis.starts[amp] : vis.ends[amp]] == "&amp;"
    space = vis.text.index("no,") + 3  # a run of whitespace is one space from the whole run
    assert source[vis.starts[space] : vis.ends[space]] == "\n   "
    assert visible_text("<p> </p><script>x</script>").blocks == []


def test_malformed_markup_is_text_or_ignored_never_an_error():
    for source in ["a<![ b c", "x <![if IE]>y<![endif]> z", "<p>unclosed <b>bold", "a < b > c", "</", "&#xD800;&#0;"]:
        vis = visible_text(source)
        assert all(0 <= vis.starts[i] < vis.ends[i] <= len(source) for i in range(len(vis.text)))


def test_a_construct_the_parser_fails_on_becomes_text(monkeypatch):
    from html.parser import HTMLParser

    from opinion_tagger.tagging import html_input

    # without the project's override, Python's parser raises AssertionError on "<![ "
    monkeypatch.setattr(html_input._Parser, "parse_html_declaration", HTMLParser.parse_html_declaration)
    source = "a<![ b <p>c &amp; d</p>"
    vis = visible_text(source)
    assert vis.text == "a<![ b\nc & d"
    assert [source[vis.starts[i] : vis.ends[i]] for i in range(len(vis.text))][:4] == ["a", "<", "!", "["]


# ----------------------------------------------------------------- tagging
def test_spans_and_tokens_point_into_the_source(marked):
    source = "<div><p>Officials <i>said</i> that AT&amp;T was <b>daylight\n robbery</b>.</p></div>"
    doc = tag_html(marked, source, id="h")
    assert doc.text == source
    assert [(sp.type, sp.text) for sp in doc.spans] == [
        ("DSE", "said"),
        ("ESE", "AT&amp;T"),
        ("ESE", "daylight\n robbery"),
    ]
    for sp in doc.spans:
        assert source[sp.start : sp.end] == sp.text
    tokens = [t for s in doc.sentences for t in s.tokens]
    assert [t.text for t in tokens] == ["Officials", "said", "that", "AT&T", "was", "daylight", "robbery", "."]
    assert [source[t.start : t.end] for t in tokens][3] == "AT&amp;T"  # the word as shown, offsets into the source
    assert doc.to_dict()["text"] == source


def test_block_elements_break_sentences(marked):
    doc = tag_html(marked, "<h1>A headline</h1><p>officials said it</p><ul><li>one<li>two</ul>")
    assert [doc.text[s.start : s.end] for s in doc.sentences] == ["A headline", "officials said it", "one", "two"]


def test_html_without_visible_text_is_an_error_record(marked):
    docs = list(
        tag_records(marked, [("a", "<script>x()</script>"), ("b", "<p>\u200b</p>"), ("c", "<p>ok</p>")], html=True)
    )
    assert [(d.id, d.error) for d in docs] == [
        ("a", "empty text: no visible text in the HTML"),
        ("b", "empty text: no visible text in the HTML"),
        ("c", None),
    ]
    with pytest.raises(InvalidText, match="no visible text"):
        tag_html(marked, "<!-- nothing -->")


def test_plain_text_records_among_html_ones_are_tagged_as_tag_many_tags_them(ot):
    recs = [
        Record("a", "The <b>senator</b> said &amp; fears."),
        Record("b", error="blank line"),
        Record("c", "<p>Officials said it.</p><p>Two blocks.</p>", html=True),
        "Plain string.",
        ("d", "Rain fell."),
    ]
    plain = [recs[0], recs[1], recs[3], recs[4]]
    mixed = [d.to_dict() for d in tag_records(ot, recs, chunk=2)]
    assert [d.to_dict() for d in ot.tag_many(plain, chunk=2)] == [mixed[0], mixed[1], {**mixed[3], "id": "2"}, mixed[4]]
    assert mixed[3]["id"] == "3"  # a bare string's id is its place in the input, HTML records counted
    assert mixed[2]["text"] == "<p>Officials said it.</p><p>Two blocks.</p>"


def test_an_html_snippet_on_the_command_line(tmp_path, capsys):
    assert main(["tag", "--input-format", "html", SNIPPET, "--quiet"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["text"] == SNIPPET
    words = [t["text"] for s in rec["sentences"] for t in s["tokens"]]
    assert words == ["The", "senator", "strongly", "condemned", "the", "decision", "."]
    assert rec["spans"] and all(SNIPPET[sp["start"] : sp["end"]] == sp["text"] for sp in rec["spans"])
    assert main(["tag", SNIPPET, "--quiet"]) == 0  # auto: an argument is text, markup and all
    assert "p" in [t["text"] for s in json.loads(capsys.readouterr().out)["sentences"] for t in s["tokens"]]


def test_directories_give_html_files_as_html_auto_and_text_modes(tmp_path, capsys):
    out = tmp_path / "out.jsonl"
    tmp_path = tmp_path / "in"
    tmp_path.mkdir()
    (tmp_path / "a.html").write_text(SNIPPET, encoding="utf-8")
    (tmp_path / "b.HTM").write_text("<p>Officials said it.</p>", encoding="utf-8")
    (tmp_path / "c.txt").write_text(SNIPPET, encoding="utf-8")
    assert [r.html for r in read_records(inputs=[str(tmp_path)], input_format="auto")] == [True, True, False]
    assert [r.html for r in read_records(inputs=[str(tmp_path)], input_format="html")] == [True, True, True]
    assert [r.html for r in read_records(inputs=[str(tmp_path)])] == [False, False, False]
    assert main(["tag", "--input", str(tmp_path), "--out", str(out), "--quiet"]) == 0
    recs = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    first_words = [r["sentences"][0]["tokens"][0]["text"] for r in recs]
    assert first_words == ["The", "Officials", "<"]
    assert [r["text"] for r in recs] == [SNIPPET, "<p>Officials said it.</p>", SNIPPET]


def test_ray_engine_refuses_html_input(capsys):
    assert main(["tag", "--engine", "ray", "--input-format", "html", "--input", "x", "--out", "o"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--input-format html needs --engine local" in err


# ----------------------------------------------------------------- properties
FRAGMENTS = [
    "<p>",
    "</p>",
    "<b>",
    "</b>",
    "<br>",
    "<br/>",
    "<div class='a b'>",
    "</div>",
    "<script>",
    "</script>",
    "<style>",
    "</style>",
    "<!-- c -->",
    "<![CDATA[x]]>",
    "<![ ",
    "<!x",
    "<?pi?>",
    "<!DOCTYPE html>",
    "&amp;",
    "&lt;",
    "&#65;",
    "&#x1F600;",
    "&nbsp;",
    "&foo;",
    "&amp",
    "&#0;",
    "&#xD800;",
    "&",
    "<",
    ">",
    "</",
    "<pre>",
    "</pre>",
    "<head>",
    "</head>",
    "<title>",
    "</title>",
    "<li>",
    "<td>",
    '<a href="x\ny">',
    "</a>",
    "<textarea>",
    "\n",
    "  ",
    "\t",
    "\r\n",
    "said",
    "fears",
    "AT",
    "T",
    "daylight",
    "robbery",
    ".",
    "condemned",
    "\u200b",
    "é",
]
html_ish = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=5)), max_size=30).map("".join)


@settings(max_examples=400, deadline=None)
@given(source=html_ish)
def test_property_visible_characters_map_into_the_source(source):
    vis = visible_text(source)
    assert len(vis.starts) == len(vis.ends) == len(vis.text)
    for i, ch in enumerate(vis.text):
        a, b = vis.starts[i], vis.ends[i]
        assert 0 <= a <= b <= len(source) and (a < b or ch == "\n")
        assert i == 0 or vis.starts[i - 1] <= a
        if ch not in " \n" and not source.startswith("&", a):  # no entity, no collapsed whitespace, no break
            assert source[a:b] == ch
    ends = [0] + [b for _, b in vis.blocks]
    for (a, b), before in zip(vis.blocks, ends):
        assert before <= a < b <= len(vis.text)


def _check_offsets(doc, source):
    assert doc.text == source
    last = 0
    for s in doc.sentences:
        assert 0 <= s.start < s.end <= len(source)
        for t in s.tokens:  # in order; two tokens share source only within a character reference
            assert last <= t.end and 0 <= t.start < t.end <= len(source)
            last = t.end
    for sp in doc.spans:
        assert 0 <= sp.start < sp.end <= len(source) and source[sp.start : sp.end] == sp.text


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sources=st.lists(html_ish, min_size=1, max_size=5))
def test_property_every_output_offset_is_within_the_source(marked, sources):
    docs = list(tag_records(marked, [(f"h{k}", s) for k, s in enumerate(sources)], chunk=3, html=True))
    assert [d.id for d in docs] == [f"h{k}" for k in range(len(sources))]
    for doc, source in zip(docs, sources):
        assert doc.error is None or doc.error.startswith(("empty text", "not valid Unicode", "binary data"))
        if doc.error is None:
            _check_offsets(doc, doc.text)  # the source, control characters made spaces
            assert len(doc.text) == len(source)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=html_ish)
def test_property_the_model_on_html_keeps_offsets_in_the_source(ot, source):
    doc = next(tag_records(ot, [("x", source)], html=True))
    if doc.error is None:
        _check_offsets(doc, doc.text)
        assert len(doc.text) == len(source)
