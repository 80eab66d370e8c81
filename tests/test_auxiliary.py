"""Auxiliary heads: MPQA's other annotations as tags, the configuration, the weighted loss, and
bundles that keep only the tagged types' heads."""

import numpy as np
import pytest
from conftest import TINY_NETWORK

from opinion_tagger.config import TaggerConfig
from opinion_tagger.corpus import MPQACorpus
from opinion_tagger.corpus.auxiliary import add_auxiliary_tags, tag_auxiliary
from opinion_tagger.corpus.sources import load_documents
from opinion_tagger.errors import CorpusError, TaggerError
from opinion_tagger.sentences import Sentence, Token

TINY = {**TINY_NETWORK, "task": "joint", "model.recurrent.cell": "elman", "training.optimizer.learning_rate": 0.02}


def reference_like(sentences: list[list[str]], doc: str) -> list[Sentence]:
    """Sentences as ``opinion_tagger.corpus.reference`` gives them: PTB words without document offsets."""
    out = []
    for k, words in enumerate(sentences):
        tokens, pos = [], 0
        for w in words:
            tokens.append(Token(w, pos, pos + len(w)))
            pos += len(w) + 1
        out.append(Sentence(tokens, {"DSE": ["O"] * len(words)}, doc, k, " ".join(words), 0, pos - 1))
    return out


def test_objective_speech_events_are_tagged_and_the_writers_empty_agent_is_not(sample_mpqa):
    docs = load_documents("mpqa", sample_mpqa)
    counts = add_auxiliary_tags(docs, MPQACorpus(sample_mpqa), ("OSE", "AGENT"), "mpqa")
    we = docs["other/doc-c"][1]  # "We will report tomorrow."
    assert we.words == ["We", "will", "report", "tomorrow", "."]
    assert we.tags["OSE"] == ["O", "O", "B-OSE", "O", "O"]
    assert all(tag == "O" for s in docs["demo/doc-a"] for tag in s.tags["OSE"])
    assert all(tag == "O" for ss in docs.values() for s in ss for tag in s.tags["AGENT"])
    assert counts.spans == {"OSE": 1, "AGENT": 0}  # every document's agent "w" spans 0,0
    assert counts.tagged == {"OSE": 1, "AGENT": 0}
    assert counts.untagged == {"OSE": 0, "AGENT": 0} and counts.unmatched_documents == []
    assert we.tags["DSE"] == ["B-DSE", "O", "O", "O", "O"]  # the opinion tags stay


def test_reference_sentences_are_aligned_to_the_document(sample_mpqa):
    words = [
        ["The", "minister", "hinted", "at", "deep", "concerns", "yesterday", "."],
        ["We", "will", "report", "tomorrow", "."],
    ]
    docs = {"other/doc-c": reference_like(words, "other/doc-c")}
    counts = tag_auxiliary(docs, ("OSE",), "reference", "reference-files", mpqa=sample_mpqa)
    assert [s.tags["OSE"] for s in docs["other/doc-c"]] == [["O"] * 8, ["O", "O", "B-OSE", "O", "O"]]
    assert counts.to_dict() == {
        "spans": {"OSE": 1},
        "untagged": {"OSE": 0},
        "tagged": {"OSE": 1},
        "unmatched_documents": 0,
        "e.g.": [],
    }


def test_a_document_whose_sentences_differ_gets_o_tags_and_is_counted(sample_mpqa):
    docs = {"other/doc-c": reference_like([["We", "will", "report", "tomorrow", "."]], "other/doc-c")}
    counts = add_auxiliary_tags(docs, MPQACorpus(sample_mpqa), ("OSE",), "reference")
    assert docs["other/doc-c"][0].tags["OSE"] == ["O"] * 5
    assert counts.unmatched_documents == ["other/doc-c"] and counts.untagged == {"OSE": 1}


def test_bad_auxiliary_requests_name_the_culprit(sample_mpqa):
    corpus = MPQACorpus(sample_mpqa)
    with pytest.raises(CorpusError, match="unknown auxiliary types SOURCE"):
        add_auxiliary_tags({}, corpus, ("SOURCE",), "mpqa")
    with pytest.raises(CorpusError, match="not source 'conll'"):
        add_auxiliary_tags({}, corpus, ("OSE",), "conll")
    with pytest.raises(CorpusError, match="demo/missing: document not in the MPQA corpus"):
        add_auxiliary_tags({"demo/missing": []}, corpus, ("OSE",), "mpqa")


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


def test_the_reference_corpus_aligns_with_mpqa_for_auxiliary_tags(shared_reference, shared_mpqa):
    """Forty documents of the reference files: every one matches its MPQA sentences, and nearly every
    auxiliary span tags a token."""
    docs = load_documents("reference", shared_reference)
    docs = {name: docs[name] for name in sorted(docs)[:40]}
    counts = add_auxiliary_tags(docs, MPQACorpus(shared_mpqa), ("AGENT", "TARGET", "ATTITUDE", "OSE"), "reference")
    assert counts.unmatched_documents == []
    for t, n in counts.spans.items():
        assert n > 20, t
        assert counts.untagged[t] <= 0.01 * n, t
        assert 0 < counts.tagged[t] <= n, t


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
