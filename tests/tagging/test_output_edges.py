"""What a new user sees of ``tag``'s output: HTML output of an HTML page shows the page as a browser
showed it, BRAT files are named after the record (never after a machine path), and the summaries count
in the right number.  Invented text only."""

import io
import json

import pytest

from opinion_tagger import OpinionTagger, TaggedDocument, TaggedSpan
from opinion_tagger.cli import main
from opinion_tagger.tagging.formats import Writer, file_stem
from opinion_tagger.tagging.html_input import tag_records
from opinion_tagger.tagging.inputs import Record
from opinion_tagger.wording import counted

PAGE = (
    "<!DOCTYPE html><html><head><title>Secret headline</title><script>var said = '<p>x</p>';</script>"
    "<style>p { color: red }</style></head><body><p>Officials <b>said</b> the plan was daylight robbery.</p>"
    "<p>AT&amp;T said   no.</p></body></html>"
)


class Marker:
    """A stand-in network: DSE on "said", ESE on "daylight robbery" (confidence 0.9)."""

    types = ("DSE", "ESE")
    words = {"DSE": {"said"}, "ESE": {"daylight", "robbery"}}

    def predict(self, sentences, batch_size=64):
        out = []
        for words in sentences:
            row = {}
            for typ in self.types:
                marked = self.words[typ]
                tags = [
                    ("I-" if k and words[k - 1] in marked else "B-") + typ if w in marked else "O"
                    for k, w in enumerate(words)
                ]
                row[typ] = (tags, [0.9] * len(words))
            out.append(row)
        return out


def test_html_output_of_an_html_page_shows_its_visible_text_with_the_marks():
    [doc] = tag_records(OpinionTagger(Marker()), [Record("page.html", PAGE, html=True)])
    buf = io.StringIO()
    writer = Writer("html", buf)
    writer.document(doc)
    writer.close()
    body = buf.getvalue().split("</p>\n", 1)[1]  # after the legend
    for hidden in ("Secret headline", "var said", "color: red", "&lt;", "<b>", "DOCTYPE"):
        assert hidden not in body, hidden
    assert (
        'Officials <mark class="dse" title="DSE 0.90">said</mark> the plan was '
        '<mark class="ese" title="ESE 0.90">daylight robbery</mark>.<br>AT&amp;T '
        '<mark class="dse" title="DSE 0.90">said</mark> no.'
    ) in body
    # the JSONL record still gives offsets into the source
    rec = doc.to_dict()
    assert rec["text"] == PAGE and "html" not in rec
    assert [PAGE[s["start"] : s["end"]] for s in rec["spans"]] == ["said", "daylight robbery", "said"]


@pytest.mark.integration
def test_tag_format_html_of_an_html_file_shows_no_markup(tmp_path, capsys):
    page = tmp_path / "page.html"
    page.write_text(PAGE, encoding="utf-8")
    assert main(["tag", "--model", "fast", "--input", str(page), "--format", "html", "--quiet"]) == 0
    out = capsys.readouterr().out
    body = out.split('<div class="doc">', 1)[1]
    assert "Officials" in body and "daylight" in body and "AT&amp;T" in body
    for hidden in ("Secret headline", "var said", "&lt;p&gt;", "&lt;b&gt;", "DOCTYPE"):
        assert hidden not in body, hidden


@pytest.mark.integration
def test_brat_files_of_a_file_given_alone_are_named_after_it(tmp_path, capsys):
    (tmp_path / "x" / "in").mkdir(parents=True)
    (tmp_path / "x" / "in" / "a.txt").write_text("Officials said it was a disaster.", encoding="utf-8")
    out = tmp_path / "out"
    argv = ["tag", "--model", "fast", "--input", str(tmp_path / "x" / "in" / "a.txt"), "--format", "brat"]
    assert main([*argv, "--out", str(out), "--quiet"]) == 0
    assert sorted(f.name for f in out.iterdir()) == ["a.ann", "a.txt", "annotation.conf"]
    assert (out / "a.txt").read_text(encoding="utf-8") == "Officials said it was a disaster."


@pytest.mark.integration
def test_brat_files_of_a_directory_are_named_after_their_place_in_it(tmp_path, monkeypatch):
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "a.txt").write_text("Rain fell all night.", encoding="utf-8")
    (docs / "sub" / "a.txt").write_text("Critics fear the plan.", encoding="utf-8")
    (docs / "b.html").write_text("<p>The mayor said no.</p>", encoding="utf-8")
    lines = [{"text": "One."}, {"id": "../../escaped", "text": "Two."}, {"id": "/etc/passwd", "text": "Three."}]
    (docs / "c.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    before = sorted(p for p in tmp_path.rglob("*") if "out" not in p.parts)
    assert main(["tag", "--model", "fast", "--input", "docs", "--format", "brat", "--out", "out", "--quiet"]) == 0
    assert sorted(f.name for f in (tmp_path / "out").iterdir()) == [
        "a.ann",
        "a.txt",
        "annotation.conf",
        "b.ann",
        "b.txt",
        "c.jsonl_1.ann",
        "c.jsonl_1.txt",
        "escaped.ann",
        "escaped.txt",
        "passwd.ann",
        "passwd.txt",
        "sub_a.ann",
        "sub_a.txt",
    ]
    assert sorted(p for p in tmp_path.rglob("*") if "out" not in p.parts) == before  # nothing written elsewhere


def test_brat_names_stay_unique_and_inside_the_directory(tmp_path):
    writer = Writer("brat", directory=tmp_path)
    for rid in ("a.txt", "A.TXT", "a", "a.error"):
        writer.document(TaggedDocument(rid, "Rain.", spans=[TaggedSpan("DSE", 0, 4, "Rain", 1.0)]))
    writer.error("a", "empty text")
    writer.error("..", "empty text")
    assert {f.name for f in tmp_path.iterdir()} == {
        "a.txt",
        "a.ann",
        "A_2.txt",  # A.TXT: "a" compared without case is taken
        "A_2.ann",
        "a_3.txt",
        "a_3.ann",
        "a.error.txt",  # a document named a.error
        "a.error.ann",
        "a_2.error.txt",  # the error record of "a"
        "doc.error.txt",
    }
    assert file_stem("/home/someone/corpus/report.htm") == "report"
    assert file_stem("C:\\Users\\x\\report.TXT") == "report"
    assert file_stem("news/2024/story 1") == "news_2024_story_1"


def test_counts_are_singular_for_one():
    from opinion_tagger.errors import Problems

    assert counted(1, "record") == "1 record" and counted(0, "error") == "0 errors"
    assert counted(2, "copy", "copies") == "2 copies"
    problems = Problems()
    for kind in ("binary document", "malformed line", "malformed line", "offset outside text", "not utf-8"):
        problems.add(kind, f"a {kind}")
    assert problems.summary() == "1 binary document, 2 malformed lines, 1 not utf-8, 1 offset outside text"
    problems.add("offset outside text", "another")
    assert problems.summary().endswith("2 offsets outside text")  # the corpus commands' summaries


def test_summaries_count_in_the_right_number(tmp_path, capsys):
    assert main(["tag", "--model", "fast", "Rain fell all night.", "--quiet"]) == 0
    assert capsys.readouterr().err == "tagged 1 record, 0 errors\n"
    assert main(["tag", "--model", "fast", "Rain fell.", "\u200b", "--quiet"]) == 1
    assert capsys.readouterr().err.endswith("tagged 1 record, 1 error\n")
    doc = tmp_path / "a.txt"
    doc.write_text("Rain fell all night.", encoding="utf-8")
    project = tmp_path / "p.sqlite"
    assert main(["annotate", "import", str(project), str(doc), "--model", "none"]) == 0
    assert "imported 1 document, 0 already in the project, 0 errors" in capsys.readouterr().err
    out = tmp_path / "all.jsonl"
    assert main(["annotate", "export", str(project), "--status", "todo", "--out", str(out)]) == 0
    assert capsys.readouterr().err == f"wrote 1 document to {out}\n"
