"""`opinion-tagger tag` output on a fixed input is byte for byte the expected files (the bundled `fast` model).

The expected files in tests/fixtures/tag_output/ are the command's JSONL, CoNLL and HTML output on invented text
(JSONL without spaces after separators).  Retraining or replacing the bundled `fast` model changes them: regenerate with
`opinion-tagger tag --model fast --input tests/fixtures/tag_output/input.jsonl --format FMT --out
tests/fixtures/tag_output/fast.FMT` for FMT in jsonl, conll, html.
"""

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tag_output"


@pytest.mark.parametrize("fmt", ["jsonl", "conll", "html"])
def test_tag_output_is_byte_identical(fmt, tmp_path):
    out = tmp_path / f"out.{fmt}"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "opinion_tagger",
            "tag",
            "--model",
            "fast",
            "--input",
            str(FIXTURES / "input.jsonl"),
            "--format",
            fmt,
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode == 1, proc.stderr  # record "d" is blank: an error record, exit status 1
    assert proc.stderr == "opinion-tagger: d: empty text\ntagged 4 records, 1 error\n"
    assert out.read_bytes() == (FIXTURES / f"fast.{fmt}").read_bytes()
