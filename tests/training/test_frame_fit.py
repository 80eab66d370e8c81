"""Frame heads for a trained network (opinion_tagger.training.frame_fit, ``train --init-from B --heads-only``): a
tiny tagger trained without heads gets them; its network, tags and states stay exactly as they were, the heads
learn the hand-made sentences' polarity and holders, and the bundle records both trainings."""

import json

import numpy as np
import pytest
from tiny_frames import TINY, sentences

from opinion_tagger.config import TaggerConfig

pytestmark = pytest.mark.integration

PLAIN = {k: v for k, v in TINY.items() if not k.startswith("model.frames.")}


@pytest.fixture(scope="module")
def plain_bundle(tmp_path_factory):
    """A tiny joint tagger without frame heads, trained on the hand-made sentences."""
    from opinion_tagger.training.run import train

    out = tmp_path_factory.mktemp("plain") / "bundle"
    train(TaggerConfig.from_dict({**PLAIN, "training.stopping.max_epochs": 60}), sentences(), [], out, progress=False)
    return out


@pytest.fixture(scope="module")
def with_heads(plain_bundle, tmp_path_factory):
    from opinion_tagger.training.frame_fit import fit_frame_heads

    out = tmp_path_factory.mktemp("heads") / "bundle"
    # the elman cell's ReLU states run to tens: a lower rate than the network's keeps the heads' softmaxes from
    # saturating on a wrong class
    config = TaggerConfig.from_dict(
        {
            **PLAIN,
            "training.optimizer.learning_rate": 0.01,
            "model.frames.enabled": True,
            "model.frames.units": 8,
            "training.stopping.max_epochs": 400,
        }
    )
    tagger, meta = fit_frame_heads(config, sentences(), sentences(), out, plain_bundle, {"seed": 1}, progress=False)
    return out, tagger, meta


def test_the_network_stays_and_the_heads_learn_the_frames(plain_bundle, with_heads):
    from opinion_tagger.runtime.batching import encode_words
    from opinion_tagger.runtime.sentence_tagger import SentenceTagger

    out, _, _ = with_heads
    before, after = SentenceTagger.load(plain_bundle), SentenceTagger.load(out)
    sents = sentences()
    words = [s.words for s in sents]
    ids = encode_words(before.vocab, words, length=7)
    a, b = before.network.forward(ids), after.network.forward(ids)
    for t in ("DSE", "ESE"):
        np.testing.assert_array_equal(a[t], b[t])  # the same network: the same scores, bit for bit
    preds = after.predict_frames(words)
    for s, (tags, frames) in zip(sents, preds):
        assert {t: tags[t][0] for t in ("DSE", "ESE")} == s.tags
        assert [(f.type, f.start, f.end, f.polarity, f.intensity) for f in frames] == [
            (f.type, f.start, f.end, f.polarity, f.intensity) for f in s.frames
        ]
    assert [f.holder for _, frames in preds for f in frames if f.type == "DSE"] == [(0, 1), (0, 1), (0, 1), "implicit"]


def test_the_bundle_records_the_networks_training_and_the_heads(plain_bundle, with_heads):
    out, _, meta = with_heads
    config = json.loads((out / "config.json").read_text())
    plain = json.loads((plain_bundle / "config.json").read_text())
    assert config["model"]["frames"] | {"enabled": False, "detach": False, "units": 64} == plain["model"]["frames"]
    assert config["model"]["frames"]["detach"] is True and config["training"] == plain["training"]
    training = meta["training"]
    assert training["init"] == str(plain_bundle) and training["network"]["epochs"] == 60
    assert training["heads_only"]["learning_rate"] == 0.01 and training["epochs"] == 400
    assert "dev_frames" in meta["scores"] and (out / "frames.onnx").is_file()


def test_the_cli_refuses_heads_without_a_bundle_or_on_another_network(plain_bundle, sample_mpqa, tmp_path, capsys):
    from conftest import write_split

    from opinion_tagger.cli import main

    split = write_split(tmp_path / "split", {0: ("demo/doc-a\n", "demo/doc-b\n")})
    argv = ["train", "--data", "mpqa", str(sample_mpqa), "--datasplit", str(split), "--quiet", "--heads-only"]
    assert main([*argv, "--out", str(tmp_path / "a")]) == 2
    assert "--heads-only trains frame heads on a bundle's network: give --init-from" in capsys.readouterr().err
    assert main([*argv, "--init-from", str(plain_bundle), "--hidden", "16", "--out", str(tmp_path / "b")]) == 2
    assert "--heads-only keeps the bundle's network" in capsys.readouterr().err
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_the_cli_fits_heads_on_the_data(plain_bundle, sample_mpqa, tmp_path, capsys):
    from conftest import write_split

    from opinion_tagger.cli import main

    split = write_split(tmp_path / "split", {0: ("demo/doc-a\n", "demo/doc-b\n")})
    out = tmp_path / "m"
    argv = ["train", "--data", "mpqa", str(sample_mpqa), "--datasplit", str(split), "--quiet"]
    assert main([*argv, "--heads-only", "--init-from", str(plain_bundle), "--max-epochs", "2", "--out", str(out)]) == 0
    meta = json.loads((out / "meta.json").read_text())
    assert meta["training"]["heads_only"]["max_epochs"] == 2 and len(meta["training"]["history"]) <= 2
    assert {"dev_loss", "loss"} <= set(meta["training"]["history"][0])
    assert set(meta["scores"]["dev_frames"]) == {"DSE", "ESE"}
    # heads fitted again on that bundle: its record of the network is still the network's own training
    again = tmp_path / "again"
    assert main([*argv, "--heads-only", "--init-from", str(out), "--max-epochs", "1", "--out", str(again)]) == 0
    record = json.loads((again / "meta.json").read_text())["training"]
    assert record["heads_only"]["max_epochs"] == 1 and record["network"] == meta["training"]["network"]
    assert "heads_only" not in record["network"] and record["network"]["epochs"] == 60
