"""Auxiliary heads: the configuration, the weighted loss, and bundles that keep only the tagged types' heads."""

import numpy as np
import pytest
from conftest import TINY_NETWORK

from opinion_tagger.config import TaggerConfig
from opinion_tagger.corpus import MPQACorpus
from opinion_tagger.corpus.auxiliary import add_auxiliary_tags
from opinion_tagger.corpus.sources import load_documents
from opinion_tagger.errors import TaggerError

TINY = {**TINY_NETWORK, "task": "joint", "model.recurrent.cell": "elman", "training.optimizer.learning_rate": 0.02}


@pytest.mark.parametrize(
    "values, message",
    [
        ({"model.auxiliary.types": "agent,speaker"}, '"agent,speaker" must name distinct types among AGENT'),
        ({"model.auxiliary.types": "ose,OSE"}, 'types: "ose,OSE" must name distinct types'),
        ({"model.auxiliary.types": "ose", "training.trainer": "fast"}, "auxiliary heads need training.trainer: keras"),
        (
            {"model.auxiliary.types": "ose", "model.auxiliary.weight": 0.0},
            "model.auxiliary.weight: 0.0 must be greater than 0",
        ),
    ],
)
def test_config_rejects_bad_auxiliary_settings(values, message):
    with pytest.raises(ValueError, match=message):
        TaggerConfig.from_dict(values)


def test_config_names_the_auxiliary_types_after_the_tagged_ones():
    cfg = TaggerConfig.from_dict({"task": "joint", "model.auxiliary.types": " agent, ose"})
    assert cfg.auxiliary_types == ("AGENT", "OSE")
    assert cfg.trained_types == ("DSE", "ESE", "AGENT", "OSE")
    assert TaggerConfig().trained_types == ("DSE",)


def test_auxiliary_losses_are_weighted():
    """Same weights, three auxiliary weights w: the loss is the heads' sum plus w times the auxiliary head's,
    so it is linear in w."""
    from opinion_tagger.model.network import build_model, compile_model

    x = np.array([[1, 2, 3, 0], [4, 5, 0, 0]], dtype="int32")
    y = {t: np.array([[1, 2, 0, 0], [0, 1, 0, 0]], dtype="int32") for t in ("DSE", "ESE", "OSE")}
    losses = {}
    weights = None
    for w in (0.25, 0.5, 1.0):
        cfg = TaggerConfig.from_dict({**TINY, "model.auxiliary.types": "ose", "model.auxiliary.weight": w})
        model = build_model(cfg, 6, 8, auxiliary=True)
        assert set(model.output_names) >= {"DSE", "ESE", "OSE"}
        if weights is None:
            weights = model.get_weights()
        model.set_weights(weights)
        compile_model(model, cfg)
        losses[w] = float(model.test_on_batch(x, y, return_dict=True)["loss"])
    assert losses[1.0] != pytest.approx(losses[0.5])
    assert losses[1.0] - losses[0.5] == pytest.approx(2 * (losses[0.5] - losses[0.25]), rel=1e-4)


@pytest.mark.integration
def test_a_tagger_trained_with_an_auxiliary_head_keeps_only_its_types(sample_mpqa, tmp_path):
    from opinion_tagger.runtime.sentence_tagger import SentenceTagger
    from opinion_tagger.training.run import train

    docs = load_documents("mpqa", sample_mpqa)
    add_auxiliary_tags(docs, MPQACorpus(sample_mpqa), ("OSE",), "mpqa")
    sents = [s for ss in docs.values() for s in ss]
    cfg = TaggerConfig.from_dict(
        {**TINY, "model.auxiliary.types": "ose", "training.stopping.max_epochs": 3, "training.stopping.patience": 3}
    )
    tagger, meta = train(cfg, sents, sents, tmp_path / "aux", progress=False)
    loaded = SentenceTagger.load(tmp_path / "aux", backend="keras")
    assert set(loaded.network.model.output_names) == {"DSE", "ESE"}
    assert loaded.config.auxiliary_types == ("OSE",)
    words = [s.words for s in sents]
    assert loaded.predict(words) == tagger.predict(words)
    assert set(meta["scores"]["dev"]) == {"DSE", "ESE"}
    with pytest.raises(TaggerError, match="auxiliary heads train from scratch"):
        train(cfg, sents, sents, tmp_path / "more", progress=False, init=tmp_path / "aux")


@pytest.mark.integration
def test_the_cli_trains_with_auxiliary_heads_and_records_their_tags(sample_mpqa, tmp_path, capsys):
    import json

    from conftest import write_split

    from opinion_tagger.cli import main

    split = write_split(tmp_path / "split", {0: ("other/doc-c\ndemo/doc-a\n", "demo/doc-b\n")})
    out = tmp_path / "m"
    argv = ["train", "--data", "mpqa", str(sample_mpqa), "--datasplit", str(split), "--fold", "0", "--task", "dse"]
    argv += ["--depth", "1", "--hidden", "8", "--features", "random", "--max-epochs", "1", "--quiet"]
    assert main([*argv, "--auxiliary", "ose", "--auxiliary-weight", "0.3", "--out", str(out)]) == 0
    meta = json.loads((out / "meta.json").read_text())
    aux = meta["training"]["data"]["auxiliary"]
    assert aux["spans"] == {"OSE": 1} and aux["tagged"] == {"OSE": 1}  # doc-c's "report"
    assert json.loads((out / "config.json").read_text())["model"]["auxiliary"]["weight"] == 0.3
    capsys.readouterr()
    assert main([*argv, "--auxiliary", "speaker", "--out", str(tmp_path / "bad")]) == 2
    assert (
        'model.auxiliary.types: "speaker" must name distinct types among AGENT, TARGET, ATTITUDE, OSE'
        in capsys.readouterr().err
    )
