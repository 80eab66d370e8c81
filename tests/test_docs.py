"""The user-facing pages (README.md, docs/*.md and the model cards in opinion_tagger/models/) are documentation, not a
lab notebook: no dates, clock times, issue numbers or commit ids (the run-by-run record is experiments/README.md);
README.md stays short, with the two lines CI and a new user run; the site's navigation lists every page."""

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
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
    "ruff check && ruff format --check && mypy && mkdocs build --strict && python -m pytest -q -n 2"
)
SETUP_LINE = (
    "python3 -m venv .venv && . .venv/bin/activate && pip install -e . && opinion-tagger download && "
    'opinion-tagger tag "Officials said the plan was, as usual, daylight robbery."'
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
