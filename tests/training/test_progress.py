"""Training progress: no bar frames in a redirected log, a line per
epoch, and an estimate that the first (compiling) batch does not inflate."""

import io
import re
import sys
import time

import pytest
from conftest import TINY_NETWORK

from opinion_tagger.config import TaggerConfig
from opinion_tagger.corpus import MPQACorpus, mpqa_sentences
from opinion_tagger.training.progress import EpochProgress
from opinion_tagger.training.run import train

TINY = {**TINY_NETWORK, "training.optimizer.learning_rate": 0.02}


class Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.integration
def test_redirected_keras_training_writes_plain_lines_one_per_epoch(sample_mpqa, tmp_path, capsys):
    sents = list(mpqa_sentences(MPQACorpus(sample_mpqa)))
    cfg = TaggerConfig.from_dict(
        {
            "task": "joint",
            "model.recurrent.cell": "elman",
            "training.stopping.max_epochs": 3,
            "training.stopping.patience": 3,
            **TINY,
        }
    )
    train(cfg, sents, sents, tmp_path / "m", progress=True)
    out = "".join(capsys.readouterr())  # captured: not a terminal, as when redirected to a file
    assert "\r" not in out and "batch/s" not in out
    assert [int(n) for n in re.findall(r"^epoch (\d+): loss [\d.]+, dev prop F1", out, re.MULTILINE)] == [1, 2, 3]


@pytest.mark.integration
@pytest.mark.parametrize("trainer", ["keras", "fast"])
def test_training_without_dev_documents_claims_no_dev_f1(sample_mpqa, tmp_path, capsys, trainer):
    """Without dev documents (a bundle on train + dev) the epoch is picked by the negated loss: the log line
    shows the loss alone, not that figure as a "dev prop F1"."""
    if trainer == "fast":
        pytest.importorskip("jax")
        pytest.importorskip("optax")
    sents = list(mpqa_sentences(MPQACorpus(sample_mpqa)))
    cfg = TaggerConfig.from_dict(
        {
            "task": "dse",
            "training.trainer": trainer,
            "training.stopping.max_epochs": 2,
            "training.stopping.patience": 0,
            "model.recurrent.budget": None,
            **TINY,
        }
    )
    train(cfg, sents, [], tmp_path / "m", progress=True)
    out = "".join(capsys.readouterr())
    assert re.findall(r"^epoch (\d+): loss [\d.]+, [\d.]+s$", out, re.MULTILINE) == ["1", "2"]
    assert "dev prop F1" not in out


@pytest.mark.integration
def test_redirected_fast_training_has_a_line_for_every_epoch(sample_mpqa, tmp_path, capsys):
    pytest.importorskip("jax")
    pytest.importorskip("optax")
    sents = list(mpqa_sentences(MPQACorpus(sample_mpqa)))
    cfg = TaggerConfig.from_dict(
        {
            "task": "dse",
            "training.trainer": "fast",
            "training.stopping.max_epochs": 3,
            "training.stopping.eval_every": 2,
            "training.stopping.patience": 0,
            "model.recurrent.budget": None,
            **TINY,
        }
    )
    train(cfg, sents, sents, tmp_path / "f", progress=True)
    out = "".join(capsys.readouterr())
    assert "\r" not in out and "batch/s" not in out
    lines = re.findall(r"^epoch (\d+): loss [\d.]+(, dev prop F1 [\d.]+)?, [\d.]+s$", out, re.MULTILINE)
    assert [(int(n), bool(dev)) for n, dev in lines] == [(1, False), (2, True), (3, True)]


def test_redirected_progress_is_a_plain_line_at_a_low_rate(monkeypatch):
    out = io.StringIO()
    monkeypatch.setattr(sys, "stderr", out)
    bar = EpochProgress(range(5), 7, every=0.0)
    for k in bar:
        bar.set_postfix(loss=f"{k / 10:.4f}")
    assert out.getvalue().splitlines() == [f"epoch 7: {k}/5 batches, 0s, loss {(k - 1) / 10:.4f}" for k in range(1, 5)]
    monkeypatch.setattr(sys, "stderr", out := io.StringIO())
    assert list(EpochProgress(range(5), 7)) == list(range(5)) and out.getvalue() == ""  # under a minute: nothing


def test_terminal_estimate_leaves_out_the_compiling_first_batch(monkeypatch):
    out = Terminal()
    monkeypatch.setattr(sys, "stderr", out)
    bar = EpochProgress(range(40), 1)
    for k in bar:
        time.sleep(0.5 if k == 0 else 0.01)  # the first step compiles; an epoch takes about a second
    frames = out.getvalue().split("\r")
    assert max(int(n) for f in frames for n in re.findall(r"(\d+)/40", f)) >= 20
    remaining = [int(m) * 60 + int(s) for f in frames for m, s in re.findall(r"<(\d+):(\d+)", f)]
    assert remaining and max(remaining) <= 1  # not the 20 s that counting the first batch would say
    assert list(EpochProgress([], 1)) == [] and list(EpochProgress(range(3), 1, enabled=False)) == [0, 1, 2]
