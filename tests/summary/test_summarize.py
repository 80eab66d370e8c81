"""``opinion-tagger summarize``: hand-computed groups, counts and mean intensities on a small hand-written JSONL of
invented sentences (no corpus text), normalized holders and targets, bad lines named by line while the other
records still count, the CSV and Parquet columns, the HTML report's escaping and its rendering in Chromium, the
report without matplotlib, and tag's output summarised end to end (and the example of docs/summarize.md)."""

import csv
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from opinion_tagger.cli import main
from opinion_tagger.summary.records import normalize
from opinion_tagger.summary.table import COLUMNS

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = ROOT / "tests" / "artifacts" / "summary"
PAGE = ROOT / "docs" / "summarize.md"


def span(text: str, words: str, typ: str = "DSE", polarity: str = "negative", intensity: str = "medium", **frame):
    """A span of tag's JSONL over the first ``words`` in ``text``; ``holder``: words of the text (a dict is made),
    "writer", "implicit" or None (a DSE's, given or not: an ESE has no holder field); ``frame=False``: no frame;
    other fields (``targets``: words of the text, ``attitude``) as given."""
    start = text.index(words)
    out = {"type": typ, "start": start, "end": start + len(words), "text": words, "score": 0.9}
    if frame.pop("frame", True):
        out.update(polarity=polarity, polarity_score=0.8, intensity=intensity, intensity_score=0.6)
        if "holder" in frame:
            h = frame.pop("holder")
            if h not in (None, "writer", "implicit"):
                h = {"start": text.index(h), "end": text.index(h) + len(h), "text": h}
            out.update(holder=h, holder_score=0.9)
        if "targets" in frame:
            found = [(text.index(t), t) for t in frame.pop("targets")]
            out["targets"] = [{"start": s, "end": s + len(t), "text": t, "score": 0.7} for s, t in found]
        out.update(frame)
    return out


def rec(rid: str, text: str, *spans) -> dict:
    return {"id": rid, "text": text, "sentences": [], "spans": list(spans)}


T1 = "The Mayor condemned the tunnel plan, a disgrace."
T2 = "Officials said the  MAYOR fears the worst, sadly."
T4 = "Maria fears the dam."
T6 = "Clearly, everyone loves the night market; I welcomed it."
T7 = "The fishermen said nothing."
# line 3 is not JSON, line 4 is tag's error record, line 5 a frame field of the wrong type
LINES = [
    json.dumps(
        rec(
            "r1",
            T1,
            span(T1, "condemned", intensity="high", holder="The Mayor"),
            span(T1, "a disgrace", "ESE", intensity="extreme"),
        )
    ),
    json.dumps(
        rec(
            "r2",
            T2,
            span(T2, "said", polarity="neutral", intensity="low", holder="Officials"),
            span(T2, "fears", intensity="medium", holder="the  MAYOR"),
            span(T2, "sadly", "ESE", intensity="low"),
        )
    ),
    '{"id": "r3", "text": "The council',
    json.dumps({"id": "r4", "error": "empty text"}),
    json.dumps(rec("r5", T4, {**span(T4, "fears", holder="Maria"), "intensity": 3})),
    "",  # a blank line: no record
    json.dumps(
        rec(
            "r6",
            T6,
            span(T6, "Clearly", "ESE", polarity="positive", intensity="low"),
            span(T6, "loves", polarity="positive", intensity="high", holder="implicit"),
            span(T6, "welcomed", polarity="positive", intensity="neutral", holder="writer"),
        )
    ),
    json.dumps(
        rec(
            "r7",
            T7,
            span(T7, "said", polarity="neutral", intensity="low", holder=None),
            span(T7, "nothing", frame=False),
        )
    ),
]
BAD = [
    "tagged.jsonl:3: not JSON (unexpected end of data at column 34)",
    "tagged.jsonl:5: span 1 (DSE 'fears'): intensity is a number (3), not one of neutral, low, medium, high, extreme",
]
# holder, holder kind, target, opinion, count, dse, ese, records, mean intensity, examples: worked out by hand
GROUPS = [
    ("mayor", "words", "negative", 2, 2, 0, 2, 2.5, [("condemned", "r1"), ("fears", "r2")]),  # high 3, medium 2
    ("", "untagged", "negative", 2, 0, 2, 2, 2.5, [("a disgrace", "r1"), ("sadly", "r2")]),  # extreme 4, low 1
    ("implicit", "implicit", "positive", 1, 1, 0, 1, 3.0, [("loves", "r6")]),
    ("officials", "words", "neutral", 1, 1, 0, 1, 1.0, [("said", "r2")]),
    ("writer", "writer", "positive", 1, 1, 0, 1, 0.0, [("welcomed", "r6")]),  # neutral intensity: 0
    ("", "none", "neutral", 1, 1, 0, 1, 1.0, [("said", "r7")]),
    ("", "untagged", "positive", 1, 0, 1, 1, 1.0, [("Clearly", "r6")]),
]
SUMMARY_LINE = (
    "7 records, 9 spans summarised, 2 errors; not summarised: 1 error record of tag (documents not tagged), "
    "1 span without a frame"
)


@pytest.fixture
def tagged(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("tagged.jsonl").write_text("\n".join(LINES) + "\n", encoding="utf-8")
    return Path("tagged.jsonl")


def read_csv(path: Path) -> list[dict]:
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def test_normalize():
    assert normalize("The  Harbour\tcouncil") == normalize("harbour Council") == "harbour council"
    assert normalize("THE MAYOR") == normalize("mayor") == normalize('"the mayor"') == "mayor"
    assert normalize("these fishermen") == normalize("A fishermen") == "fishermen"
    assert normalize("The") == "the" and normalize("The the") == "the"  # a determiner alone stays
    assert normalize("Straße") == normalize("STRASSE") == "strasse"  # case-folded, not lower-cased
    assert normalize("theatre critics") == "theatre critics" and normalize("Mayor Talvik") != normalize("Talvik")


def test_groups_counts_and_means_by_hand(tagged, capsys):
    assert main(["summarize", str(tagged), "--out", "out"]) == 1  # bad lines: 1, as tag's failed records
    err = capsys.readouterr().err.splitlines()
    assert err[:2] == [f"opinion-tagger: {b}" for b in BAD]  # each bad line named, FILE:LINE
    assert err[-1] == SUMMARY_LINE  # the other records all counted
    rows = read_csv(Path("out/summary.csv"))
    got = [
        (
            r["holder"],
            r["holder_kind"],
            r["opinion"],
            int(r["count"]),
            int(r["dse"]),
            int(r["ese"]),
            int(r["records"]),
            float(r["mean_intensity"]),
            [(r[f"example_{k}"], r[f"example_{k}_doc"]) for k in (1, 2, 3) if r[f"example_{k}"]],
        )
        for r in rows
    ]
    assert got == GROUPS
    assert {r["target"] for r in rows} == {""} and {r["opinion_kind"] for r in rows} == {"polarity"}


def test_the_text_table_on_standard_output(tagged, capsys):
    assert main(["summarize", str(tagged), "--top", "3"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "count  holder      opinion   intensity  example",
        "    2  mayor       negative  2.50       condemned (r1)",
        "    2  (untagged)  negative  2.50       a disgrace (r1)",
        "    1  implicit    positive  3.00       loves (r6)",
        "... 4 more groups (--out DIR writes them all)",
        "intensity: the mean of neutral 0, low 1, medium 2, high 3, extreme 4",
    ]


def test_csv_and_parquet_have_the_same_columns_and_rows(tagged):
    import pyarrow as pa
    import pyarrow.parquet as pq

    assert main(["summarize", str(tagged), "--out", "out"]) == 1
    with open("out/summary.csv", encoding="utf-8") as fh:
        assert next(csv.reader(fh)) == list(COLUMNS)
    table = pq.read_table("out/summary.parquet")
    assert table.column_names == list(COLUMNS)
    types = {f.name: f.type for f in table.schema}
    assert all(types[c] == pa.int64() for c in ("count", "dse", "ese", "records"))
    assert types["mean_intensity"] == pa.float64() and types["holder"] == pa.string()
    parquet = [{k: "" if v is None else str(v) for k, v in row.items()} for row in table.to_pylist()]
    assert parquet == read_csv(Path("out/summary.csv"))


def test_targets_and_attitudes_make_the_groups(tmp_path, capsys):
    t1 = "The Mayor condemned the tunnel plan and the Ferry."
    t2 = "Mayor  Talvik criticised Tunnel  Plan; the mayor attacked the tunnel plan."
    t3 = "I said it was fine."
    lines = [
        rec(
            "a",
            t1,
            span(
                t1, "condemned", holder="The Mayor", targets=["the tunnel plan", "the Ferry"], attitude="sentiment-neg"
            ),
        ),
        rec(
            "b",
            t2,
            span(t2, "criticised", holder="Mayor  Talvik", targets=["Tunnel  Plan"], attitude="sentiment-neg"),
            span(
                t2,
                "attacked",
                intensity="high",
                holder="the mayor",
                targets=["the tunnel plan"],
                attitude="sentiment-neg",
            ),
        ),
        rec("c", t3, span(t3, "said", polarity="neutral", intensity="low", holder="writer", targets=[], attitude=None)),
    ]
    path = tmp_path / "targets.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    assert main(["summarize", str(path), "--out", str(tmp_path / "out")]) == 0
    rows = read_csv(tmp_path / "out" / "summary.csv")
    got = [(r["holder"], r["target"], r["opinion"], r["opinion_kind"], r["count"], r["mean_intensity"]) for r in rows]
    assert got == [
        ("mayor", "tunnel plan", "sentiment-neg", "attitude", "2", "2.5"),  # "condemned" (2) and "attacked" (3)
        ("mayor", "ferry", "sentiment-neg", "attitude", "1", "2.0"),  # "condemned" counts for both its targets
        ("mayor talvik", "tunnel plan", "sentiment-neg", "attitude", "1", "2.0"),
        ("writer", "", "neutral", "polarity", "1", "1.0"),  # no attitude: its polarity; no target
    ]
    assert capsys.readouterr().err.splitlines()[-1] == "3 records, 4 spans summarised, 0 errors"
    assert main(["summarize", str(path), "--top", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:3] == [
        "count  holder  target       opinion        intensity  example",
        "    2  mayor   tunnel plan  sentiment-neg  2.50       condemned (a)",
        "    1  mayor   ferry        sentiment-neg  2.00       condemned (a)",
    ]
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "<h2>About what</h2>" in page and "<h2>Holders by target</h2>" in page


GOOD = {"type": "DSE", "start": 0, "end": 4, "text": "fear", "score": 0.9, "polarity": "negative", "intensity": "low"}


def test_tags_attitudes_and_targets_are_summarised(tmp_path, capsys):
    """tag's JSONL from a model with attitude and target heads (a stand-in: tests/role_frames.py): each DSE counts
    for each of its targets, under its attitude; a DSE without targets under none, without an attitude under its
    polarity."""
    from role_frames import TEXT, role_tagger

    from opinion_tagger.tagging.formats import record_text

    docs = role_tagger().tag_many([("r", TEXT), ("w", "Nobody wants higher fares.")])
    path = tmp_path / "tagged.jsonl"
    path.write_text("".join(record_text(d, "jsonl") or "" for d in docs), encoding="utf-8")
    assert main(["summarize", str(path), "--out", str(tmp_path / "out")]) == 0
    rows = read_csv(tmp_path / "out" / "summary.csv")
    got = [
        (r["holder_kind"], r["holder"], r["target"], r["opinion"], r["opinion_kind"], r["dse"], r["ese"]) for r in rows
    ]
    assert sorted(got) == [
        ("untagged", "", "", "negative", "polarity", "0", "1"),  # the ESE "sadly"
        ("words", "nobody", "fares", "intention-pos", "attitude", "1", "0"),
        ("words", "nobody", "wants higher", "intention-pos", "attitude", "1", "0"),  # a target over its DSE's word
        ("words", "our neighbours", "parking rules", "sentiment-neg", "attitude", "1", "0"),
        ("writer", "writer", "", "neutral", "polarity", "1", "0"),  # "shrugged": no attitude, no target
    ]
    assert capsys.readouterr().err.splitlines()[-1] == "2 records, 4 spans summarised, 0 errors"


@pytest.mark.parametrize(
    "line, problem",
    [
        ("[1, 2]", "a list, not a tagged record (a JSON object a line)"),
        ('{"id": "x", "text": "Hello."}', "no spans field: not a record of the JSONL that opinion-tagger tag writes"),
        ('{"id": "x", "spans": {}}', "spans is an object, not a list"),
        ('{"id": true, "spans": []}', "id is true, not a string"),
        ('{"id": "x", "spans": [7]}', "span 1 is a number (7), not an object"),
        (json.dumps({"spans": [{**GOOD, "text": None}]}), "span 1: text is null, not a string"),
        (
            json.dumps({"spans": [{**GOOD, "polarity": 1}]}),
            "span 1 (DSE 'fear'): polarity is a number (1), not a polarity",
        ),
        (
            json.dumps({"spans": [{**GOOD, "intensity": "very"}]}),
            "intensity is a string ('very'), not one of neutral, low",
        ),
        (
            json.dumps({"spans": [{**GOOD, "intensity_score": "high"}]}),
            "intensity_score is a string ('high'), not a number",
        ),
        (json.dumps({"spans": [{**GOOD, "holder": "boss"}]}), "holder is a string ('boss'), not words"),
        (json.dumps({"spans": [{**GOOD, "holder": {"start": 0}}]}), "holder's text is null, not a string"),
        (json.dumps({"spans": [{**GOOD, "holder": 3}]}), "holder is a number (3), not words"),
        (json.dumps({"spans": [{**GOOD, "attitude": 5}]}), "attitude is a number (5), not an attitude type or null"),
        (json.dumps({"spans": [{**GOOD, "targets": "the plan"}]}), "targets is a string ('the plan'), not a list"),
        (json.dumps({"spans": [{**GOOD, "targets": [{"start": 0}]}]}), "target 1's text is null, not a string"),
        (
            json.dumps({"spans": [{**GOOD, "targets": [{"text": "x", "end": "4"}]}]}),
            "target 1's end is a string ('4'), not an integer",
        ),
        (b"\xff\xfe{}", "not UTF-8 text"),
    ],
)
def test_a_bad_line_is_named_and_the_others_still_count(tmp_path, capsys, line, problem):
    path = tmp_path / "t.jsonl"
    good = json.dumps({"id": "ok", "spans": [GOOD]}).encode()
    path.write_bytes(good + b"\n" + (line if isinstance(line, bytes) else line.encode()) + b"\n" + good + b"\n")
    assert main(["summarize", str(path)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and err[0].startswith(f"opinion-tagger: {path}:2: ") and problem in err[0], err
    assert err[1] == "3 records, 2 spans summarised, 1 error"


def test_missing_input_and_out_a_file_exit_2(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["summarize", "missing.jsonl"]) == 2
    assert capsys.readouterr().err == "opinion-tagger: error: missing.jsonl: no such file\n"
    Path("t.jsonl").write_text(json.dumps({"id": "a", "spans": [GOOD]}) + "\n")
    Path("out").write_text("")
    assert main(["summarize", "t.jsonl", "--out", "out"]) == 2
    assert "--out out: exists and is not a directory" in capsys.readouterr().err
    Path("parts").mkdir()
    assert main(["summarize", "parts"]) == 2 and "parts: a directory without .jsonl files" in capsys.readouterr().err


def test_a_directory_of_parts_and_standard_input(tmp_path, capsys, monkeypatch):
    parts = tmp_path / "parts"
    parts.mkdir()
    for k in range(2):
        (parts / f"part-0000{k}.jsonl").write_text(json.dumps({"id": f"d{k}", "spans": [GOOD, GOOD]}) + "\n")
    (parts / "part-00000.done.json").write_text("{}")
    assert main(["summarize", str(parts)]) == 0
    assert capsys.readouterr().err.splitlines()[-1] == "2 records, 4 spans summarised, 0 errors"
    monkeypatch.setattr(sys, "stdin", open(parts / "part-00001.jsonl"))
    assert main(["summarize", "-"]) == 0
    captured = capsys.readouterr()
    assert "    2  (untagged)  negative  1.00       fear (d1)" in captured.out
    assert captured.err.splitlines()[-1] == "1 record, 2 spans summarised, 0 errors"


def test_no_frames_says_which_models_give_them(tmp_path, capsys):
    path = tmp_path / "fast.jsonl"
    path.write_text(json.dumps({"id": "a", "spans": [{k: GOOD[k] for k in ("type", "start", "end", "text", "score")}]}))
    assert main(["summarize", str(path)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "1 record, 0 spans summarised, 0 errors; not summarised: 1 span without a frame",
        "opinion-tagger: the spans have no frames: tag with a model with frame heads (accurate, accurate-mpnet)",
    ]


HOSTILE = "<script>alert('x')</script>"


def hostile_jsonl(path: Path) -> Path:
    """Records whose every text is markup or an attempt at it, and a target with dollars (mathtext in matplotlib)."""
    t = "<script>alert('x')</script> hates <b>the $5 & $6 fare</b>."
    lines = [
        rec(
            HOSTILE, t, span(t, "hates", holder="<script>", targets=["<b>the $5 & $6 fare</b>"], attitude="<i>neg</i>")
        ),
        rec("<img src=x onerror=alert(1)>", t, span(t, "<b>the $5", "ESE", polarity="<svg onload=alert(2)>")),
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines) + "{broken <script>\n", encoding="utf-8")
    return path


def test_the_report_escapes_user_text(tmp_path, capsys):
    assert main(["summarize", str(hostile_jsonl(tmp_path / "<x>.jsonl")), "--out", str(tmp_path / "out")]) == 1
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "&lt;script&gt;" in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert (
        "<script" not in page.lower()
        and "<img" not in page.lower()
        and "onerror=" not in page.replace("onerror=alert(1)&gt;", "")
    )
    assert "<b>the" not in page and "<i>neg" not in page and "<svg onload" not in page
    assert "&lt;svg onload=alert(2)&gt;" in page and "&lt;x&gt;.jsonl" in page
    assert page.count("<svg") >= 4  # the plots: matplotlib read the dollars as text, not mathematics
    # nothing fetched: links within the page, images inline (the heat map's cells)
    assert re.findall(r'(?:src|href)="(?!#|data:image/png;base64,)', page) == []
    assert "<link" not in page and "@import" not in page and "url(http" not in page
    assert "$5 &amp; $6" in page  # in the tables, and in the plots' SVG text


def test_without_matplotlib_the_tables_are_written(tagged, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if it were not installed
    assert main(["summarize", str(tagged), "--out", "out"]) == 1
    err = capsys.readouterr().err.splitlines()
    note = (
        "drawing the report's plots needs the report extra (matplotlib not installed): "
        "pip install 'opinion-tagger[report]'; report.html has the tables"
    )
    assert f"opinion-tagger: {note}" in err and err[-1] == SUMMARY_LINE
    assert len(read_csv(Path("out/summary.csv"))) == len(GROUPS) and Path("out/summary.parquet").is_file()
    page = Path("out/report.html").read_text(encoding="utf-8")
    assert "<svg" not in page and note.replace("'", "&#x27;") in page and '<table class="groups">' in page


@pytest.mark.integration
def test_summarize_loads_no_model_library(tagged):
    code = (
        "import sys; from opinion_tagger.cli import main; "
        "status = main(['summarize', 'tagged.jsonl', '--out', 'out']); "
        "print(status, sorted(m for m in ('onnxruntime', 'spacy', 'tensorflow', 'keras', 'jax') if m in sys.modules))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert done.stdout.strip() == "1 []"


# --------------------------------------------------------------------------- in a browser
def _need_chromium():
    if not os.path.exists(CHROMIUM):
        if os.environ.get("CI"):
            pytest.fail("chromium is missing: .ci/run installs Debian's chromium")
        pytest.skip("chromium not installed")


@pytest.mark.browser
def test_the_report_renders_in_chromium(tmp_path, capsys):
    """The report opened from its file in Debian's Chromium: no console error, no request but the page's own,
    its tables and plots shown, the hostile texts shown as text (a screenshot in tests/artifacts/summary/)."""
    _need_chromium()
    from playwright.sync_api import expect, sync_playwright

    t = "Clara said the ferry was a disgrace."
    lines = [json.loads(x) for x in LINES if x.startswith("{") and x.endswith("}")]
    lines += [rec("t", t, span(t, "said", holder="Clara", targets=["the ferry"], attitude="sentiment-neg"))]
    path = hostile_jsonl(tmp_path / "hostile.jsonl")
    path.write_text(path.read_text() + "".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    assert main(["summarize", str(path), "--out", str(tmp_path / "out")]) == 1
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    url = (tmp_path / "out" / "report.html").as_uri()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        problems, requests = [], []
        page.on("console", lambda m: problems.append(m.text) if m.type in ("error", "warning") else None)
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.on("request", lambda r: requests.append(r.url))
        page.on("dialog", lambda d: problems.append(f"a dialog: {d.message}"))  # an alert() that ran
        page.goto(url, wait_until="load")
        expect(page.get_by_role("heading", name="Who holds opinions")).to_be_visible()
        for name in ("holders", "targets", "polarity", "groups"):
            expect(page.locator(f"table.{name} tbody tr").first).to_be_visible()
        plots = page.locator("figure.plot svg")
        expect(plots).to_have_count(4)
        for k in range(4):
            box = plots.nth(k).bounding_box()
            assert box is not None and box["width"] > 200 and box["height"] > 100, box
        assert page.locator("figure.plot svg text").count() > 20  # axes, labels, legends drawn as text
        expect(page.locator("table.holders")).to_contain_text("<script>")  # shown as text, never run
        expect(page.locator("table.groups")).to_contain_text("<img src=x onerror=alert(1)>")
        expect(page.locator("ul.bad")).to_contain_text("hostile.jsonl:3: not JSON")
        assert page.locator("script, img, iframe").count() == 0
        page.screenshot(path=str(ARTIFACTS / "report.png"), full_page=True)
        browser.close()
    assert problems == [] and requests == [url]


# --------------------------------------------------------------------------- tag's output, end to end
def _opinions_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_opinions", ROOT / "corpora" / "sample" / "make_opinions.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_invented_sentences():
    make = _opinions_module()
    first, again, other = make.records(50), make.records(50), make.records(50, seed=1)
    assert first == again and first != other and len({r["id"] for r in first}) == 50
    texts = [r["text"] for r in first]
    assert all(t[0].isupper() and t.endswith(".") for t in texts)
    assert any(h in t for t in texts for h in make.HOLDERS[1:]) and any("Frankly" in t for t in texts)


@pytest.mark.slow
def test_tag_then_summarize_end_to_end(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    records = _opinions_module().records(12, seed=3)
    Path("in.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert main(["tag", "--input", "in.jsonl", "--out", "tagged.jsonl", "--quiet"]) == 0
    tagged = [json.loads(line) for line in Path("tagged.jsonl").read_text(encoding="utf-8").splitlines()]
    framed = [s for r in tagged for s in r["spans"] if "polarity" in s]
    assert framed, "the default model gives frames"
    capsys.readouterr()
    assert main(["summarize", "tagged.jsonl", "--out", "out"]) == 0
    assert capsys.readouterr().err.splitlines()[-1] == f"12 records, {len(framed)} spans summarised, 0 errors"
    rows = read_csv(Path("out/summary.csv"))
    # a span in the group of each of its targets (a DSE of the default model gives them), or in one group
    assert sum(int(r["count"]) for r in rows) == sum(max(1, len(s.get("targets") or ())) for s in framed)
    dse = [s for s in framed if s["type"] == "DSE"]
    assert any(s.get("targets") for s in dse), "the default model gives targets"
    assert sum(int(r["dse"]) for r in rows) == sum(max(1, len(s.get("targets") or ())) for s in dse)
    words = {normalize(s["holder"]["text"]) for s in dse if isinstance(s.get("holder"), dict)}
    assert words == {r["holder"] for r in rows if r["holder_kind"] == "words"}
    ids = {r["id"] for r in records}
    assert all(r["example_1_doc"] in ids for r in rows)
    page = Path("out/report.html").read_text(encoding="utf-8")
    # holders, targets, polarity and intensity, holders by target
    assert page.count('<figure class="plot">') == 4


def documented_example() -> tuple[list[str], list[str]]:
    """docs/summarize.md's example: its commands (the first bash block) and the output it shows (the text block
    after them)."""
    text = PAGE.read_text(encoding="utf-8")
    start = text.index("## An example on invented sentences")
    commands = re.search(r"^```bash\n(.*?)^```", text[start:], flags=re.M | re.S).group(1)
    shown = re.search(r"^```text\n(.*?)^```", text[start:], flags=re.M | re.S).group(1)
    return [c.split("  #")[0].strip() for c in commands.splitlines()], shown.splitlines()


@pytest.mark.slow
def test_the_documented_example_runs_as_shown(tmp_path):
    """The commands of docs/summarize.md's example, as a shell runs them, give the output it shows."""
    commands, shown = documented_example()
    assert len(commands) == 4 and commands[0].startswith("python corpora/sample/make_opinions.py 300")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    outputs = []
    for line in commands:
        line = line.replace("python corpora/", f"{sys.executable} {ROOT}/corpora/")
        line = line.replace("opinion-tagger", f"{sys.executable} -m opinion_tagger")
        done = subprocess.run(["bash", "-c", line], cwd=tmp_path, capture_output=True, text=True, env=env)
        assert done.returncode == 0, (line, done.stderr)
        outputs.append(done)
    assert outputs[2].stdout.splitlines() == shown
    assert "`300 records, 289 spans summarised, 0 errors`" in PAGE.read_text(encoding="utf-8")
    assert outputs[2].stderr.splitlines()[-1] == "300 records, 289 spans summarised, 0 errors"
    assert {p.name for p in (tmp_path / "summary").iterdir()} == {"summary.csv", "summary.parquet", "report.html"}


def test_the_documented_errors_are_those_written(tmp_path, capsys, monkeypatch):
    """docs/summarize.md's example of bad lines: the lines summarize writes for such a file."""
    text = PAGE.read_text(encoding="utf-8")
    block = re.search(r"^  ```text\n(.*?)^  ```", text, flags=re.M | re.S).group(1)
    documented = [line.strip() for line in block.splitlines()]
    monkeypatch.chdir(tmp_path)
    good = json.dumps(rec("a", T4, span(T4, "fears", holder="Maria"), span(T4, "the dam", "ESE")))
    t = "Officials said that Maria fears it."
    bad_intensity = json.dumps(
        rec("b", t, span(t, "said", holder="Officials"), {**span(t, "fears", holder="Maria"), "intensity": 3})
    )
    lines = [
        good,
        good,
        '{"id": "c", "text": "The council',
        good,
        good,
        good,
        bad_intensity,
        '{"id": "d", "error": "empty text"}',
        good,
    ]
    Path("tagged.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["summarize", "tagged.jsonl"]) == 1
    assert capsys.readouterr().err.splitlines() == documented
