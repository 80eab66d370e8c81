"""``opinion-tagger tag``'s TEXT arguments and standard input: an argument that names an existing file or
directory is read as ``--input`` reads it (said on standard error), never tagged as text; a file name that names
nothing, or files mixed with texts, is refused in one line that names --input; with neither TEXT nor --input,
text piped to standard input is tagged."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from opinion_tagger.cli import main

ROOT = Path(__file__).resolve().parents[2]
TEXT = "The senator strongly condemned the decision."


def records(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines()]


@pytest.fixture
def texts(tmp_path, monkeypatch):
    """A working directory with ``texts/movie.txt``."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "texts").mkdir()
    (tmp_path / "texts" / "movie.txt").write_text(TEXT, encoding="utf-8")
    return tmp_path


@pytest.mark.integration
def test_a_file_argument_is_tagged_as_its_content(texts, capsys):
    assert main(["tag", "--model", "fast", "--quiet", "texts/movie.txt"]) == 0
    out, err = capsys.readouterr()
    assert "texts/movie.txt is a file: tagging its content (as --input texts/movie.txt)" in err
    [rec] = records(out)
    assert rec["id"] == "texts/movie.txt" and rec["text"] == TEXT
    assert main(["tag", "--model", "fast", "--quiet", "--input", "texts/movie.txt"]) == 0
    assert records(capsys.readouterr().out) == [rec]  # as --input reads it


@pytest.mark.integration
def test_a_directory_argument_is_tagged_as_its_files(texts, capsys):
    assert main(["tag", "--model", "fast", "--quiet", "texts/"]) == 0
    out, err = capsys.readouterr()
    assert "texts/ is a directory: tagging its files (as --input texts/)" in err
    assert [(r["id"], r["text"]) for r in records(out)] == [("texts/movie.txt", TEXT)]
    assert not any(r["text"] == "texts/" for r in records(out))


@pytest.mark.parametrize("name", ["texts/missing.txt", "d/", "notes.jsonl", "page.HTML"])
def test_a_file_name_that_names_nothing_is_refused(texts, capsys, name):
    assert main(["tag", "--model", "fast", name]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "Traceback" not in err, err
    assert f"{name}: no such file or directory" in err and "--input FILE" in err


def test_files_mixed_with_texts_are_refused(texts, capsys):
    assert main(["tag", "--model", "fast", "texts/movie.txt", "Some text."]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1, err
    assert "'texts/movie.txt' names a file" in err and "--input texts/movie.txt" in err


@pytest.mark.parametrize("text", ["and/or", "24/7", "e.g.", "Great.", "Read notes.txt first."])
def test_texts_that_only_resemble_paths_are_texts(texts, capsys, text):
    assert main(["tag", "--model", "fast", "--quiet", text]) == 0
    [rec] = records(capsys.readouterr().out)
    assert rec["id"] == "arg:0" and rec["text"] == text


def _tag(*argv, **kwargs) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "opinion_tagger", "tag", "--model", "fast", "--quiet", *argv]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120, **kwargs)


@pytest.mark.integration
def test_piped_standard_input_is_tagged():
    done = _tag(input=TEXT + "\n")  # echo ... | opinion-tagger tag
    assert done.returncode == 0, done.stderr
    [rec] = records(done.stdout)
    assert rec["id"] == "stdin" and rec["text"] == TEXT + "\n" and rec["spans"]
    done = _tag("-", input='{"id": "a", "text": "Rain fell."}\n')  # - as the only argument: standard input too
    assert done.returncode == 0 and [r["id"] for r in records(done.stdout)] == ["a"], done.stderr


@pytest.mark.integration
def test_without_text_or_piped_input_there_is_nothing_to_tag():
    done = _tag(stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "nothing to tag" in done.stderr and "standard input" in done.stderr
