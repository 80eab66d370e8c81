"""The user-facing pages (README.md, docs/*.md and the model cards in opinion_tagger/models/) are documentation, not a
lab notebook: no dates, clock times, issue numbers or commit ids (the run-by-run record is experiments/README.md);
README.md stays short, with the two lines CI and a new user run; the site's navigation lists every page.  And what the
pages say of the code holds: the commands and options they show exist in the parser (with the values it accepts),
the CoNLL columns they list are those written, the examples run as shown, the bundled models they say have frames
have them, their frame figures are the model cards' and the exit statuses are those the commands give."""

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = sorted([README, *DOCS.glob("*.md"), *(ROOT / "opinion_tagger" / "models").rglob("README.md")])

ISO_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
CLOCK_TIME = re.compile(r"\b\d{1,2}:\d{2}\b")
ISSUE = re.compile(r"\bissues?\s*#?\s*\d+", re.IGNORECASE)
# a commit id: 7 to 40 lowercase hex digits with at least one digit and one letter (not a word, not a number)
COMMIT = re.compile(r"\b(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b")
FENCE = re.compile(r"^\s*(```|~~~)")

TEST_LINE = (
    'pip install -e ".[all,test]" && opinion-tagger download && opinion-tagger download --encoder mpnet && '
    "ruff check && ruff format --check && mypy && lint-imports && mkdocs build && pytest -q -n 2"
)
SETUP_LINE = (
    "python3 -m venv .venv && . .venv/bin/activate && pip install -e . && opinion-tagger download && "
    'opinion-tagger tag "Officials said the plan was daylight robbery, as usual."'
)


def outside_code(text: str) -> str:
    """``text`` with the lines of fenced code blocks blanked (line numbers kept)."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            lines.append("")
        else:
            lines.append("" if fenced else line)
    return "\n".join(lines)


def found(pattern: re.Pattern, text: str) -> list[str]:
    return [f"line {text.count(chr(10), 0, m.start()) + 1}: {m.group(0)!r}" for m in pattern.finditer(text)]


def page_id(path: Path) -> str:
    return str(path.relative_to(ROOT))


def test_the_pages_are_found():
    names = {page_id(p) for p in PAGES}
    assert {"README.md", "docs/index.md", "opinion_tagger/models/README.md"} <= names
    assert {f"opinion_tagger/models/{m}/README.md" for m in ("accurate", "fast", "accurate-mpnet")} <= names


@pytest.mark.parametrize("path", PAGES, ids=page_id)
def test_no_dates_issue_numbers_or_commit_ids(path):
    text = path.read_text(encoding="utf-8")
    assert not found(ISO_DATE, text), "dates"
    assert not found(ISSUE, text), "issue numbers"
    assert not found(COMMIT, text), "commit ids"


@pytest.mark.parametrize("path", PAGES, ids=page_id)
def test_no_clock_times_outside_code(path):
    assert not found(CLOCK_TIME, outside_code(path.read_text(encoding="utf-8")))


def test_the_checks_catch_what_they_look_for():
    text = "Measured 2026-11-26 at 22:01 on commit 1e174b0 (issue 37; Issue #12).\n```\nrun at 09:30\n```\n"
    assert len(found(ISO_DATE, text)) == 1 and len(found(ISSUE, text)) == 2 and len(found(COMMIT, text)) == 1
    assert found(CLOCK_TIME, outside_code(text)) == ["line 1: '22:01'"]
    # sizes, ports, numbers and hex-like words are not commit ids or times
    harmless = "127.0.0.1:8501, ray://HEAD:10001, 104,241 tokens/s, 1000000, defaced, bf16, fp32, 10:1"
    assert not found(COMMIT, harmless) and not found(CLOCK_TIME, harmless)


def test_readme_is_short():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 300
    assert [n + 1 for n, line in enumerate(lines) if len(line) > 200] == []


def test_readme_keeps_the_lines_ci_and_a_new_user_run():
    lines = README.read_text(encoding="utf-8").splitlines()
    # .ci/run takes the first line starting "pip install" after the line starting "Run the tests"
    start = next(n for n, line in enumerate(lines) if line.startswith("Run the tests"))
    assert next(line for line in lines[start:] if line.startswith("pip install")) == TEST_LINE
    assert SETUP_LINE in lines


class _Loader(yaml.SafeLoader):
    """mkdocs.yml may hold tags such as ``!!python/name:``; they do not matter for the navigation."""


_Loader.add_multi_constructor("", lambda loader, suffix, node: None)


def nav_pages(nav) -> set[str]:
    if isinstance(nav, str):
        return {nav}
    if isinstance(nav, list):
        return set().union(*(nav_pages(item) for item in nav))
    if isinstance(nav, dict):
        return set().union(*(nav_pages(value) for value in nav.values()))
    return set()


def test_the_site_lists_every_page():
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Loader)
    listed = nav_pages(config["nav"])
    pages = {p.name for p in DOCS.glob("*.md")}
    assert pages - listed == set(), "pages missing from mkdocs.yml's nav"
    assert {p for p in listed if not p.startswith(("http://", "https://"))} - pages == set(), "nav names no page"


# --------------------------------------------------------------------------- the docs' claims about the code
def fenced_blocks(text: str, lang: str) -> list[str]:
    """The contents of the fenced code blocks of ``lang`` (```bash ...```) in ``text``, in order."""
    return re.findall(rf"^```{lang}\n(.*?)^```", text, flags=re.M | re.S)


def shown_commands(text: str) -> list[str]:
    """The ``opinion-tagger ...`` commands a page shows: in its bash blocks (continued lines joined, comments,
    pipes and ``&&`` lists cut) and in its inline code (a span that starts with the program or a subcommand)."""
    from opinion_tagger.cli import build_parser

    out = []
    for block in fenced_blocks(text, "bash"):
        for line in block.replace("\\\n", " ").splitlines():
            line = re.sub(r"\s#\s.*$", "", line)
            out += [p.strip() for p in re.split(r"&&|\|(?!\|)|;", line) if p.strip().startswith("opinion-tagger ")]
    names = set(subparsers(build_parser()))
    for span in re.findall(r"`([^`\n]+)`", outside_code(text)):
        span = span.replace("\\|", "|")
        first = span.split(" ", 1)[0]
        if first == "opinion-tagger" or (first in names and " -" in span):
            out.append(span if first == "opinion-tagger" else f"opinion-tagger {span}")
    return out


def subparsers(parser) -> dict:
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices
    return {}


def command_problems(command: str, root) -> list[str]:
    """What in ``command`` the parser ``root`` lacks: a subcommand, an option, or a value an option's choices
    refuse (values in capitals are placeholders, ``a|b`` lists alternatives)."""
    import shlex

    try:
        tokens = shlex.split(command)
    except ValueError:
        tokens = command.split()
    tokens = [t.strip("[]") for t in tokens[1:] if t.strip("[]") not in ("", "...", "-v")]
    parsers, problems = [root], []  # the subcommands named so far (a|b: each of them)
    while tokens and subparsers(parsers[0]):
        names = tokens.pop(0).split("|")
        missing = [n for n in names if n not in subparsers(parsers[0])]
        if missing:
            return [f"{command!r}: no subcommand {missing[0]!r}"]
        parsers = [subparsers(parsers[0])[n] for n in names]
    actions = {s: a for parser in parsers for a in parser._actions for s in a.option_strings}
    for k, token in enumerate(tokens):
        if not token.startswith("--"):
            continue
        name, _, value = token.partition("=")
        if name not in actions:
            problems.append(f"{command!r}: {parsers[0].prog} has no option {name}")
            continue
        value = value or (tokens[k + 1] if k + 1 < len(tokens) else "")
        if actions[name].choices is not None and value and not value.startswith("-") and value.islower():
            choices = {str(c) for c in actions[name].choices}
            problems += [f"{command!r}: {name} takes no {v!r}" for v in value.split("|") if v not in choices]
    return problems


@pytest.mark.parametrize("path", PAGES, ids=page_id)
def test_the_commands_and_options_the_pages_show_exist(path):
    from opinion_tagger.cli import build_parser

    root = build_parser()
    commands = shown_commands(path.read_text(encoding="utf-8"))
    assert [p for c in commands for p in command_problems(c, root)] == []


def test_the_command_check_catches_what_it_looks_for():
    from opinion_tagger.cli import build_parser

    root = build_parser()
    assert command_problems('opinion-tagger tag --input docs/ --format brat --out x "A text."', root) == []
    assert command_problems("opinion-tagger annotate serve|export P [--format jsonl|conll]", root) == []
    assert command_problems("opinion-tagger corpus stats|convert|agreement", root) == []
    assert len(command_problems("opinion-tagger tag --inputs x --format xml", root)) == 2
    assert command_problems("opinion-tagger annotate publish x", root) == [
        "'opinion-tagger annotate publish x': no subcommand 'publish'"
    ]
    page = "```bash\nopinion-tagger tag --nope x  # a comment\ncat a | opinion-tagger tag --input -\n```\n`tag --x`\n"
    assert shown_commands(page) == [
        "opinion-tagger tag --nope x",
        "opinion-tagger tag --input -",
        "opinion-tagger tag --x",
    ]


TAGGING = DOCS / "tagging.md"
CONLL_EXAMPLE = 'opinion-tagger tag --format conll "Officials said the plan was daylight robbery, as usual."'


def conll_example() -> list[str]:
    """The CoNLL output docs/tagging.md shows: the text block after the command it names."""
    text = TAGGING.read_text(encoding="utf-8")
    assert f"`{CONLL_EXAMPLE}`" in text
    block = next(b for b in fenced_blocks(text[text.index(CONLL_EXAMPLE) :], "text"))
    return block.splitlines()


def test_the_conll_columns_the_docs_list_are_those_written():
    from opinion_tagger.tagging.documents import SpanFrame, TaggedDocument, TaggedSentence, TaggedSpan, TaggedToken
    from opinion_tagger.tagging.formats import conll_lines

    text = "They fear it."
    tokens = [TaggedToken("They", 0, 4, {}), TaggedToken("fear", 5, 9, {}), TaggedToken("it", 10, 12, {})]
    tokens += [TaggedToken(".", 12, 13, {})]
    for tok, (dse, ese) in zip(tokens, [("O", "O"), ("B-DSE", "O"), ("O", "B-ESE"), ("O", "O")]):
        tok.tags.update(DSE=dse, ESE=ese)
    frame = SpanFrame("negative", 0.9, "high", 0.8, {"start": 0, "end": 4, "text": "They"}, 0.9)
    doc = TaggedDocument("d", text, [TaggedSentence(0, 13, tokens)], [TaggedSpan("DSE", 5, 9, "fear", 0.9, frame)])
    doc.spans.append(TaggedSpan("ESE", 10, 12, "it", 0.7, SpanFrame("neutral", 0.6, "low", 0.5)))
    plain = conll_lines(doc).splitlines()
    doc.frames = True
    framed = conll_lines(doc).splitlines()
    documented = conll_example()
    columns = next(line for line in documented if line.startswith("# columns = "))
    assert columns in framed  # the names of the columns, as the writer writes them
    names = columns.removeprefix("# columns = ").split()
    page = TAGGING.read_text(encoding="utf-8")
    assert f"`{' '.join(names[:5])}`" in page and f"`{' '.join(names[5:])}`" in page  # the prose names them too
    rows = [line for line in framed if line and not line.startswith("#")]
    assert all(len(r.split("\t")) == len(names) for r in rows) and rows[1].split("\t")[5] == "negative/high/0-4"
    assert all(len(r.split("\t")) == 5 for r in plain if r and not r.startswith("#"))  # no frames: the tags alone
    assert all(len(r.split("\t")) == len(names) for r in documented if not r.startswith("#"))


def test_the_conll_example_runs_as_shown(capsys):
    import shlex

    from opinion_tagger.cli import main

    assert main([*shlex.split(CONLL_EXAMPLE)[1:], "--quiet"]) == 0
    written = capsys.readouterr().out.rstrip("\n").splitlines()
    documented = conll_example()
    assert [line.split("\t")[:5] for line in written] == [line.split("\t")[:5] for line in documented]
    frame = re.compile(
        r"_|(neutral|negative|positive|both)/(neutral|low|medium|high|extreme)(/(writer|implicit|_|\d+-\d+)"
        r"(/([a-z]+(-[a-z]+)?|_)/(_|\d+-\d+(\+\d+-\d+)*))?)?"
    )
    assert all(frame.fullmatch(f) for line in written if not line.startswith("#") for f in line.split("\t")[5:])


def framed_models() -> dict[str, bool]:
    """Each bundled model: whether it has frame heads (its configuration's ``frames`` block)."""
    from opinion_tagger.paths import BUNDLED, bundled_models
    from opinion_tagger.runtime.bundle import read_config

    return {name: read_config(BUNDLED / name / "config.json").model.frames.enabled for name in bundled_models()}


def test_the_pages_say_which_bundled_models_have_frames():
    framed = framed_models()
    assert framed == {"accurate": True, "accurate-mpnet": True, "fast": False}
    for page in (README, DOCS / "models.md"):  # the row of the models' table
        lines = page.read_text(encoding="utf-8").splitlines()
        header = next(line for line in lines if line.startswith("| | `accurate`"))
        row = next(line for line in lines if line.startswith("|") and "opinion frames" in line)
        names = [re.search(r"`([^`]+)`", cell).group(1) for cell in header.strip("|").split("|")[1:]]
        said = [cell.split()[0] == "yes" for cell in row.strip("|").split("|")[1:]]
        assert dict(zip(names, said)) == framed, page
    prose = TAGGING.read_text(encoding="utf-8")
    listed = re.search(r"A model with frame heads \(([^)]*)\)", prose.replace("\n", " ")).group(1)
    having, _, lacking = listed.partition("; not ")
    assert set(re.findall(r"`([a-z-]+)`", having)) == {n for n, f in framed.items() if f}
    assert set(re.findall(r"`([a-z-]+)`", lacking.split(";")[0])) == {n for n, f in framed.items() if not f}


def card_frames(name: str) -> dict[str, tuple[str, str]]:
    """A model card's frame accuracies: ``{"DSE polarity": ("69.29", "49.87"), ...}`` (accuracy, majority)."""
    card = (ROOT / "opinion_tagger" / "models" / name / "README.md").read_text(encoding="utf-8")
    out = {}
    for typ in ("DSE", "ESE"):
        row = next(line for line in card.splitlines() if line.startswith(f"| {typ} |") and "(" in line)
        cells = [c.strip() for c in row.strip("|").split("|")]
        for what, cell in zip(("polarity", "intensity", "holder"), cells[2:5]):
            found = re.match(r"([\d.]+) \(([\d.]+)", cell)
            if found:
                out[f"{typ} {what}"] = found.groups()
    return out


def test_the_frame_figures_are_the_model_cards():
    frames_page = (DOCS / "frames.md").read_text(encoding="utf-8")
    order = ("DSE polarity", "ESE polarity", "DSE intensity", "ESE intensity", "DSE holder")
    for name in ("accurate", "accurate-mpnet"):
        figures = card_frames(name)
        row = " | ".join(f"{figures[k][0]} ({figures[k][1]})" for k in order)
        assert f"| `{name}` | {row} |" in frames_page, name
    accurate = card_frames("accurate")
    readme = " ".join(README.read_text(encoding="utf-8").split())
    sentence = readme[readme.index("The frames are right less often") :].split(". ", 1)[0]
    for key in ("DSE polarity", "ESE polarity", "DSE intensity", "ESE intensity"):
        assert f"{accurate[key][0]}%" in sentence and f"{accurate[key][1]}%" in sentence, key
    assert f"{accurate['DSE holder'][0]}%" in sentence and "news" in sentence


@pytest.mark.integration
def test_the_exit_statuses_the_command_line_page_gives(tmp_path, capsys, monkeypatch):
    from opinion_tagger.cli import main

    rows = {
        line.split("|")[1].strip(): line
        for line in (DOCS / "cli.md").read_text(encoding="utf-8").splitlines()
        if re.match(r"\| \d+ \|", line)
    }
    monkeypatch.chdir(tmp_path)
    assert main(["tag", "--model", "fast", "--quiet", "--input", "missing.txt"]) == 1  # an error record
    assert '"error":"no such file or directory"' in capsys.readouterr().out and "`tag --input`" in rows["1"]
    assert main(["annotate", "export", "missing.sqlite"]) == 2  # the command needs the project
    assert "missing.sqlite" in capsys.readouterr().err and "`annotate serve\\|export\\|stats`" in rows["2"]
    assert main(["tag", "--model", "missing", "x"]) == 2 and "model bundle" in rows["2"]


@pytest.mark.integration
def test_the_tagging_examples_run(tmp_path):
    """The examples of docs/tagging.md's first block that need no file of their own, as a shell runs them."""
    import os
    import subprocess
    import sys

    block = fenced_blocks(TAGGING.read_text(encoding="utf-8"), "bash")[0]
    runnable = [line.split("  #")[0].strip() for line in block.splitlines() if "--input docs" not in line]
    runnable = [line for line in runnable if "big.jsonl" not in line and "records.jsonl" not in line]
    assert len(runnable) >= 3
    program = f"{sys.executable} -m opinion_tagger"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for line in runnable:
        done = subprocess.run(
            ["bash", "-c", line.replace("opinion-tagger", program)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env=env,
        )
        assert done.returncode == 0 and done.stdout.strip(), (line, done.stderr)


def test_the_python_api_examples_run(capsys):
    """docs/api.md's Python blocks, in order, in one namespace (each may use what an earlier one made)."""
    namespace: dict = {}
    for block in fenced_blocks((DOCS / "api.md").read_text(encoding="utf-8"), "python"):
        exec(compile(block, "docs/api.md", "exec"), namespace)
    out = capsys.readouterr().out
    assert "DSE" in out and "whitewash" in out
