"""Crash-safe checkpoints: atomic files with a manifest, fallback to the last complete
checkpoint, and a resumed run that repeats the uninterrupted one exactly."""

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opinion_tagger.config import TaggerConfig
from opinion_tagger.corpus import MPQACorpus, mpqa_sentences
from opinion_tagger.runtime.sentence_tagger import SentenceTagger
from opinion_tagger.storage import atomic_path, atomic_write_bytes, make_manifest, manifest_problem
from opinion_tagger.training.checkpoints import checkpoint_dirs
from opinion_tagger.training.trainer import Trainer

ROOT = Path(__file__).resolve().parents[2]
# dropout stays on: resuming must repeat the dropout masks too
TINY = TaggerConfig.from_dict(
    {
        "task": "joint",
        "model.recurrent.cell": "elman",
        "model.recurrent.depth": 1,
        "model.recurrent.hidden": 8,
        "model.embeddings.features": "random",
        "model.embeddings.dim": 8,
        "training.batch_size": 2,
        "training.optimizer.learning_rate": 0.02,
        "training.stopping.max_epochs": 4,
        "training.stopping.patience": 10,
        "training.jit_compile": False,
    }
)


# --------------------------------------------------------------------------- storage
def test_manifest_records_size_and_sha256(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"abc")
    assert make_manifest(tmp_path, ["a.txt"]) == {
        "a.txt": {"bytes": 3, "sha256": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"}
    }


def test_failed_atomic_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "model.keras"
    atomic_write_bytes(target, b"old")

    class Crash(Exception):
        pass

    with pytest.raises(Crash):
        with atomic_path(target) as tmp:
            assert tmp.parent == tmp_path and tmp.name.endswith(".keras") and tmp.name.startswith(".model.tmp-")
            tmp.write_bytes(b"new, half writ")
            raise Crash
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.keras"]


def test_manifest_never_names_a_path_outside_its_directory(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "secret").write_bytes(b"x")
    entry = make_manifest(tmp_path, ["secret"])["secret"]
    assert "not a plain file name" in manifest_problem(tmp_path / "d", {"../secret": entry})
    assert "not a plain file name" in manifest_problem(tmp_path / "d", {str(tmp_path / "secret"): entry})


@settings(max_examples=50, deadline=None)
@given(data=st.binary(min_size=1, max_size=300), cut=st.integers(0, 299), flip=st.integers(0, 299))
def test_any_truncation_or_changed_byte_is_named(tmp_path_factory, data, cut, flip):
    d = tmp_path_factory.mktemp("m")
    atomic_write_bytes(d / "f.bin", data)
    manifest = make_manifest(d, ["f.bin"])
    assert manifest["f.bin"]["sha256"] == hashlib.sha256(data).hexdigest()
    assert manifest_problem(d, manifest) is None
    (d / "f.bin").write_bytes(data[: cut % len(data)])
    assert manifest_problem(d, manifest) == (
        f"{d / 'f.bin'}: {cut % len(data)} bytes, the manifest says {len(data)} (truncated or changed)"
    )
    changed = bytearray(data)
    changed[flip % len(data)] ^= 0xFF
    (d / "f.bin").write_bytes(bytes(changed))
    assert manifest_problem(d, manifest) == f"{d / 'f.bin'}: sha256 differs from the manifest (the file was changed)"


# --------------------------------------------------------------------------- resume
@pytest.fixture(scope="module")
def data(tmp_path_factory):
    from conftest import make_sample

    sents = list(mpqa_sentences(MPQACorpus(make_sample.write_sample(tmp_path_factory.mktemp("d") / "mpqa"))))
    return sents[:4], sents[4:]


@pytest.fixture(scope="module")
def straight(data, tmp_path_factory):
    """The uninterrupted run: its history and bundle."""
    out = tmp_path_factory.mktemp("straight") / "m"
    _, meta = Trainer(TINY, out, progress=False).run(*data)
    return history(meta), out


def history(meta):
    return [(h["epoch"], h["loss"], h["dev_score"]) for h in meta["training"]["history"]]


class Stop(Exception):
    pass


def interrupted(data, out, at_epoch):
    def stop(entry):
        if entry["epoch"] == at_epoch:
            raise Stop

    with pytest.raises(Stop):
        Trainer(TINY, out, progress=False, on_epoch=stop).run(*data)


@pytest.mark.integration
def test_resumed_run_says_so_and_equals_the_uninterrupted_one(data, straight, tmp_path, capfd):
    interrupted(data, tmp_path / "m", 2)
    capfd.readouterr()
    _, meta = Trainer(TINY, tmp_path / "m", progress=False).run(*data, resume=True)
    assert "resuming from epoch 2 (" in capfd.readouterr().err
    assert history(meta) == straight[0]  # exactly: same data order, dropout masks and optimizer state
    words = [s.words for s in data[0] + data[1]]
    assert SentenceTagger.load(tmp_path / "m").predict(words) == SentenceTagger.load(straight[1]).predict(words)
    # the two newest complete checkpoints are kept
    assert [d.name for _, d in checkpoint_dirs(tmp_path / "m")] == ["epoch-0004", "epoch-0003"]


@pytest.mark.integration
@pytest.mark.parametrize(
    "damage, file",
    [
        ("truncate", "best.weights.h5"),  # seen: a kill left it at 96 bytes, then an h5py traceback
        ("truncate", "vocab.txt"),  # seen: a shape traceback
        ("delete", "manifest.json"),  # a kill before the manifest was written
    ],
)
def test_damaged_checkpoint_falls_back_to_the_previous_one(data, straight, tmp_path, capfd, damage, file):
    out = tmp_path / "m"
    interrupted(data, out, 3)
    newest = out / "checkpoint" / "epoch-0003" / file
    if damage == "truncate":
        newest.write_bytes(newest.read_bytes()[:96])
    else:
        newest.unlink()
    capfd.readouterr()
    _, meta = Trainer(TINY, out, progress=False).run(*data, resume=True)
    err = capfd.readouterr().err
    assert f"skipping incomplete checkpoint of epoch 3: {newest}" in err
    assert "resuming from epoch 2 (" in err
    assert history(meta) == straight[0]


@pytest.mark.integration
def test_resume_without_a_complete_checkpoint_starts_afresh(data, straight, tmp_path, capfd):
    out = tmp_path / "m"
    interrupted(data, out, 1)
    (out / "checkpoint" / "epoch-0001" / "manifest.json").unlink()
    capfd.readouterr()
    _, meta = Trainer(TINY, out, progress=False).run(*data, resume=True)
    assert "no complete checkpoint: starting afresh" in capfd.readouterr().err
    assert history(meta) == straight[0]


@pytest.mark.slow
def test_twenty_random_sigkills_end_in_the_uninterrupted_result(tmp_path):
    """`opinion-tagger train` on the sample corpus, SIGKILLed at random moments 20 times and
    resumed after each (experiments/kill_trials.py; children forked after TensorFlow's import)."""
    r = subprocess.run(
        [
            sys.executable,
            str(ROOT / "experiments" / "kill_trials.py"),
            "--kills",
            "20",
            "--fork",
            "--work",
            str(tmp_path),
            "--json",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=900,
    )
    assert r.returncode in (0, 1), r.stderr[-2000:]
    figures = json.loads(r.stdout.strip().splitlines()[-1])
    assert figures["trials"] == 20 and figures["survived"] == 20 and figures["failure"] is None
    assert figures["finished"] and figures["bundle_loads"]
    assert figures["final_score_equal"], figures.get("difference")
