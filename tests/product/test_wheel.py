"""The package as users get it: ``python -m build`` makes an sdist and a wheel (built from the sdist), the wheel
installs into a fresh virtual environment in a folder far from the checkout, and there the README's quick start,
the Python API, the spaCy component, ``annotate serve`` (with the annotate extra) and ``evaluate`` without a
corpus work, reading nothing of the source tree."""

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TEXT = "Officials said the plan was daylight robbery, as usual."
pytestmark = pytest.mark.slow


def _env() -> dict[str, str]:
    """The environment of a user's shell: nothing of the checkout or of this test run."""
    drop = ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")
    return {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("OPINION_TAGGER_")}


def _run(args, cwd: Path, check: bool = True, **kw) -> subprocess.CompletedProcess:
    done = subprocess.run(args, cwd=cwd, env=_env(), capture_output=True, text=True, **kw)
    if check and done.returncode:
        pytest.fail(f"{' '.join(map(str, args))}: exit {done.returncode}\n{done.stderr[-3000:]}")
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(the wheel, the sdist, the fresh environment's bin folder, a folder far from the checkout)."""
    pytest.importorskip("build", reason="the test extra's build package")
    tmp = tmp_path_factory.mktemp("wheel")
    dist = tmp / "dist"
    _run([sys.executable, "-m", "build", "--outdir", str(dist), str(ROOT)], cwd=tmp)
    wheel = next(dist.glob("opinion_tagger-*.whl"))
    sdist = next(dist.glob("opinion_tagger-*.tar.gz"))
    _run([sys.executable, "-m", "venv", str(tmp / "venv")], cwd=tmp)
    bin_ = tmp / "venv" / "bin"
    _run([bin_ / "python", "-m", "pip", "install", "--quiet", f"{wheel}[annotate]"], cwd=tmp)
    far = tmp / "far" / "away"
    far.mkdir(parents=True)
    _run([bin_ / "opinion-tagger", "download"], cwd=far)
    return wheel, sdist, bin_, far


def test_the_wheel_holds_the_package_its_models_and_types(installed):
    wheel, sdist, _, _ = installed
    names = zipfile.ZipFile(wheel).namelist()
    for needed in (
        "opinion_tagger/py.typed",
        "opinion_tagger/models/accurate/model.onnx",
        "opinion_tagger/models/fast/model.onnx",
        "opinion_tagger/models/accurate-mpnet/model.onnx",
        "opinion_tagger/annotation/static/editor.js",
        "opinion_tagger/runtime/sentence_tagger.py",
    ):
        assert needed in names, needed
    assert not [n for n in names if n.startswith(("tests/", "experiments/", "corpora/"))]
    # the bundled models hold what tagging reads, no training state (training continues from model.onnx)
    assert not [n for n in names if n.endswith(("/model.keras", "/weights.npz"))]
    assert wheel.stat().st_size < 35_000_000
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "[spacy_factories]" in text and "opinion-tagger = opinion_tagger.cli:console" in text
    assert sdist.stat().st_size > 10_000_000  # the models travel in the sdist too


def test_the_quick_start_tags_far_from_the_checkout(installed):
    _, _, bin_, far = installed
    out = _run([bin_ / "opinion-tagger", "tag", TEXT], cwd=far)
    record = json.loads(out.stdout)
    assert {(s["type"], s["text"]) for s in record["spans"]} >= {("DSE", "said"), ("ESE", "daylight robbery")}
    assert out.stderr.strip() == "tagged 1 records, 0 errors" or out.stderr.count("\n") == 1


def test_the_python_api_and_the_spacy_component(installed):
    _, _, bin_, far = installed
    code = (
        "import opinion_tagger, spacy\n"
        f"assert 'site-packages' in opinion_tagger.__file__, opinion_tagger.__file__\n"
        "from opinion_tagger import OpinionTagger\n"
        f"doc = OpinionTagger.load().tag({TEXT!r})\n"
        "print(sorted(s.type for s in doc.spans))\n"
        "nlp = spacy.blank('en'); nlp.add_pipe('opinion_tagger')\n"
        f"sdoc = nlp({TEXT!r})\n"
        "print(sorted(s.label_ for s in sdoc.spans['opinions']))\n"
    )
    out = _run([bin_ / "python", "-c", code], cwd=far).stdout.split("\n")
    assert out[0] == out[1] == "['DSE', 'ESE', 'ESE']"


def test_annotate_serve_answers_its_health_check(installed):
    _, _, bin_, far = installed
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [bin_ / "opinion-tagger", "annotate", "serve", "project.sqlite", "--create", "--port", str(port)],
        cwd=far,
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline, answer = time.monotonic() + 90, ""
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
                    answer = r.read().decode()
                    break
            except OSError:
                time.sleep(0.5)
        assert answer == "ok", proc.stderr.read() if proc.poll() is not None else "no answer"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_evaluate_without_a_corpus_says_so_in_one_line(installed):
    _, _, bin_, far = installed
    done = _run([bin_ / "opinion-tagger", "evaluate"], cwd=far, check=False)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert "--data" in done.stderr
