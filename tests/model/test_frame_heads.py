"""Frame heads (opinion_tagger.model.frame_heads, opinion_tagger.runtime.frame_heads): a tiny network trained on
hand-made sentences learns their polarity; the bundle's heads in NumPy on ONNX Runtime's states give what the
Keras heads give; the configuration switches them on, and off leaves every network as it was."""

import numpy as np
import pytest
from tiny_frames import DATA, TINY, sentences

from opinion_tagger.config import TaggerConfig
from opinion_tagger.sentences import Sentence


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A tiny joint tagger with frame heads, trained on DATA (no dev sentences: the lowest loss is kept)."""
    from opinion_tagger.training.run import train

    out = tmp_path_factory.mktemp("frames") / "bundle"
    cfg = TaggerConfig.from_dict({**TINY, "training.stopping.max_epochs": 60})
    tagger, meta = train(cfg, sentences(), [], out, progress=False)
    return cfg, tagger, out


@pytest.mark.integration
def test_a_tiny_network_learns_the_polarity_of_its_spans(trained):
    cfg, tagger, _ = trained
    sents = sentences()
    preds = tagger.predict_frames([s.words for s in sents])
    for s, (tags, frames) in zip(sents, preds):
        assert {t: tags[t][0] for t in ("DSE", "ESE")} == s.tags
        assert [(f.type, f.start, f.end, f.polarity) for f in frames] == [
            (f.type, f.start, f.end, f.polarity) for f in s.frames
        ]
        assert all(0.5 < f.polarity_score <= 1 for f in frames)
    awful, great = preds[0][1][1], preds[1][1][1]
    assert (awful.polarity, great.polarity) == ("negative", "positive")
    assert [f.holder for _, frames in preds for f in frames if f.type == "DSE"] == [(0, 1), (0, 1), (0, 1), "implicit"]
    assert [f.intensity for _, frames in preds for f in frames] == [f.intensity for s in sents for f in s.frames]


@pytest.mark.integration
def test_the_heads_run_on_the_spans_given(trained):
    """``predict_frames_given``: ``predict_frames``'s tags and frames and, from the same pass of the network, the
    frames of the spans given (the gold DSEs, any other span, none in an empty sentence); the holder's scores
    with the gold DSEs given."""
    from opinion_tagger.evaluation.scoring import predict_with_roles

    _, tagger, _ = trained
    sents = sentences()
    words = [s.words for s in sents] + [[]]
    given = [{"DSE": [(f.start, f.end) for f in s.frames if f.type == "DSE"]} for s in sents] + [{}]
    given[0]["ESE"] = [(0, 2)]
    both = tagger.predict_frames_given(words, given)

    def spans(frames):
        return [(f.type, f.start, f.end, f.polarity, f.holder) for f in frames]

    assert [(tags, spans(frames)) for tags, frames, _ in both] == [
        (tags, spans(frames)) for tags, frames in tagger.predict_frames(words)
    ]
    assert [[(f.type, f.start, f.end) for f in on_given] for _, _, on_given in both] == [
        [("DSE", 1, 2), ("ESE", 0, 2)],
        [("DSE", 1, 2)],
        [("DSE", 1, 2)],
        [("DSE", 1, 2)],
        [],
    ]
    assert [f.holder for _, _, g in both for f in g if f.type == "DSE"] == [(0, 1), (0, 1), (0, 1), "implicit"]
    assert tagger.roles == ("holder",)
    with pytest.raises(ValueError, match="5 sentences but spans given for 4"):
        tagger.predict_frames_given(words, given[:4])
    _, _, roles = predict_with_roles(tagger, sents)
    assert roles["holder"]["gold_dse_given"]["binary"]["f1"] == 1.0
    assert roles["holder"]["gold_dse_given"]["counts"] == {"dses": 4, "gold": 3, "predicted": 3}


@pytest.mark.integration
def test_onnx_runtime_gives_the_keras_networks_frames(trained):
    """The bundle on ONNX Runtime (states from model.onnx, the heads from frames.onnx) against the network in
    Keras: the same states, the same frames; and frames.onnx's heads against the Keras heads of the trained
    network, on the gold spans."""
    from opinion_tagger.model.frame_heads import SPANS, tagging_view
    from opinion_tagger.model.network import build_training_model
    from opinion_tagger.runtime.batching import encode_words
    from opinion_tagger.runtime.frame_heads import HOLDER, STATES, FrameHeads
    from opinion_tagger.runtime.sentence_tagger import SentenceTagger
    from opinion_tagger.training.frame_data import frame_batch

    cfg, keras_tagger, out = trained
    onnx_tagger = SentenceTagger.load(out)
    assert set(onnx_tagger.network.outputs) == {"DSE", "ESE", STATES}
    sents = sentences()
    words = [s.words for s in sents]
    ids = encode_words(keras_tagger.vocab, words, length=7)
    on_onnx, on_keras = onnx_tagger.network.forward(ids), keras_tagger.network.forward(ids)
    np.testing.assert_allclose(on_onnx[STATES], on_keras[STATES], atol=1e-5)
    for (tags_a, frames_a), (tags_b, frames_b) in zip(
        onnx_tagger.predict_frames(words), keras_tagger.predict_frames(words)
    ):
        for t, (tags, conf) in tags_b.items():
            assert tags_a[t][0] == tags and tags_a[t][1] == pytest.approx(conf, abs=1e-5)
        assert [(f.polarity, f.intensity, f.holder) for f in frames_a] == [
            (f.polarity, f.intensity, f.holder) for f in frames_b
        ]
        for a, b in zip(frames_a, frames_b):
            assert a.polarity_score == pytest.approx(b.polarity_score, abs=1e-5)
            assert a.intensity_score == pytest.approx(b.intensity_score, abs=1e-5)

    # the Keras heads of the trained network (its kept weights) on the gold spans, against the NumPy heads
    import keras

    model = build_training_model(cfg, len(keras_tagger.vocab), cfg.word_dim)
    best = sorted((out / "checkpoint").glob("epoch-*/best.weights.h5"))[-1]
    model.load_weights(best)
    spans, _ = frame_batch(cfg, sents, range(len(sents)), len(sents), 7)
    outputs = model.predict_on_batch({"words": ids, **spans})
    states = keras.ops.convert_to_numpy(tagging_view(model, cfg)(ids)[STATES])
    heads = FrameHeads.load(out, cfg)
    for r, s in enumerate(sents):
        n = len(s)
        for t in ("DSE", "ESE"):
            gold = [(i, j) for i, j in spans[SPANS.format(t)][r] if j > i]
            if not gold:
                continue
            onnx_pol = [f.polarity_score for f in heads.apply(states[r, :n], gold, t)]
            keras_pol = outputs[f"{t}_polarity"][r, : len(gold)].max(-1)
            np.testing.assert_allclose(onnx_pol, keras_pol, atol=1e-5)
            if t == "DSE":
                ran = heads.run(states[r : r + 1, :n], [n], {t: [(0, i, j) for i, j in gold]})
                start, end = ran[f"{HOLDER}_start"], ran[f"{HOLDER}_end"]
                np.testing.assert_allclose(start, outputs[f"{HOLDER}_start"][r, : len(gold), : 3 + n], atol=1e-5)
                np.testing.assert_allclose(end, outputs[f"{HOLDER}_end"][r, : len(gold), :n], atol=1e-5)


@pytest.mark.integration
def test_the_bundle_holds_the_heads_and_records_them(trained):
    import json

    from opinion_tagger.errors import BundleError
    from opinion_tagger.runtime.bundle import load_bundle_files

    _, _, out = trained
    meta = json.loads((out / "meta.json").read_text())
    assert "frames.onnx" in meta["manifest"] and meta["onnx"]["outputs"] == ["DSE", "ESE", "states"]
    assert json.loads((out / "config.json").read_text())["model"]["frames"]["enabled"] is True
    (out / "frames.onnx").rename(out / "frames.bak")
    try:
        with pytest.raises(BundleError, match="frames.onnx: missing from the model bundle"):
            load_bundle_files(out)
    finally:
        (out / "frames.bak").rename(out / "frames.onnx")


def test_frames_off_leave_the_network_and_its_digest_as_they_were():
    from opinion_tagger.model.network import build_model, build_training_model
    from opinion_tagger.runtime.bundle import config_digest

    plain = TaggerConfig.from_dict({k: v for k, v in TINY.items() if not k.startswith("model.frames.")})
    assert config_digest(plain) == config_digest(
        plain.replace({"model.frames.weight": 0.5, "model.frames.both": "keep"})
    )
    assert config_digest(plain) != config_digest(plain.replace({"model.frames.enabled": True}))
    assert set(build_training_model(plain, 10, 8).output) == {"DSE", "ESE"}
    with_frames = TaggerConfig.from_dict({**TINY})
    assert set(build_model(with_frames, 10, 8).output) == {"DSE", "ESE", "states"}
    names = set(build_training_model(with_frames, 10, 8).output)
    assert names == {"DSE", "ESE", "DSE_polarity", "DSE_intensity", "ESE_polarity", "ESE_intensity"} | {
        "DSE_holder_start",
        "DSE_holder_end",
    }


def test_frame_targets_of_a_batch():
    from opinion_tagger.training.frame_data import frame_batch

    sents = sentences()
    cfg = TaggerConfig.from_dict(
        {**TINY, "model.frames.both": "neutral", "model.frames.dse_intensity": "expression-intensity"}
    )
    spans, y = frame_batch(cfg, sents, [0, 2], 3, 8)
    assert spans["DSE_spans"].shape == (3, 4, 2) and spans["DSE_spans"][:, 0].tolist() == [[1, 2], [1, 2], [0, 0]]
    assert y["DSE_polarity"][:, 0].tolist() == [0, 1, -1]  # neutral, negative (of neutral, negative, positive)
    assert y["DSE_intensity"][:, 0].tolist() == [-1, -1, -1]  # no expression-intensity in DATA
    assert y["DSE_holder_start"][:, 0].tolist() == [3, 3, -1] and y["DSE_holder_end"][:, 0].tolist() == [0, 0, -1]
    assert y["ESE_polarity"][:, 0].tolist() == [1, -1, -1]  # "awful"; sentence 2 has no ESE


def test_frames_need_the_keras_trainer_and_frames_in_the_data(tmp_path):
    """Only the Keras trainer trains heads, on gold frames; a configuration of the fast trainer or with noisy
    copies and heads describes heads fitted afterwards (--heads-only), which the trainers refuse to train."""
    from opinion_tagger.errors import TaggerError
    from opinion_tagger.training.run import train

    fast = TaggerConfig.from_dict({**TINY, "training.trainer": "fast", "training.stopping.max_epochs": 1})
    with pytest.raises(TaggerError, match="the fast trainer trains no frame heads"):
        train(fast, sentences(), [], tmp_path / "f", progress=False)
    copies = TaggerConfig.from_dict(
        {
            **TINY,
            "training.stopping.max_epochs": 1,
            "training.distillation.teacher": str(tmp_path / "t"),
            "training.distillation.weight": 0.5,
            "training.distillation.copies": 1,
        }
    )
    with pytest.raises(TaggerError, match="which noisy copies have not"):
        train(copies, sentences(), [], tmp_path / "c", progress=False)
    bare = [Sentence(s.tokens, s.tags, s.doc, s.index, s.text) for s in sentences()]
    with pytest.raises(TaggerError, match="which 4 of 4 training sentences lack"):
        train(
            TaggerConfig.from_dict({**TINY, "training.stopping.max_epochs": 1}),
            bare,
            [],
            tmp_path / "m",
            progress=False,
        )


@pytest.mark.parametrize("cell, output", [("mrnn", "softmax"), ("gru", "crf")])
def test_every_network_exports_its_states(cell, output, tmp_path):
    """A traced cell (mrnn) and a native one under CRF heads, untrained: the bundle on ONNX Runtime gives the
    frames the Keras network gives."""
    from opinion_tagger.export.bundle_writer import save_bundle
    from opinion_tagger.export.frames_export import frame_heads
    from opinion_tagger.model.frame_heads import head_arrays
    from opinion_tagger.model.keras_backend import sentence_tagger
    from opinion_tagger.model.network import build_model, build_training_model
    from opinion_tagger.runtime.sentence_tagger import SentenceTagger
    from opinion_tagger.runtime.vocabulary import PAD, UNK, Vocabulary

    vocab = Vocabulary([PAD, UNK, *sorted({w.lower() for text, _, _ in DATA for w in text.split()})])
    cfg = TaggerConfig.from_dict({**TINY, "model.recurrent.cell": cell, "model.head.output": output})
    trained = build_training_model(cfg, len(vocab), cfg.word_dim)
    for t in ("DSE", "ESE"):  # every word a span of its own (tag B), for the heads to run on
        dense = trained.get_layer(t if output == "softmax" else f"{t}_emissions")
        dense.set_weights([dense.get_weights()[0], np.array([0.0, 5.0, 0.0], "float32")])
    clean = build_model(cfg, len(vocab), cfg.word_dim)
    for layer in clean.layers:
        layer.set_weights(trained.get_layer(layer.name).get_weights())
    heads = head_arrays(trained, cfg)
    save_bundle(tmp_path / "b", clean, vocab, cfg, {}, frame_heads=heads)
    sents = [s.words for s in sentences()]
    a = SentenceTagger.load(tmp_path / "b").predict_frames(sents)
    b = sentence_tagger(clean, vocab, cfg, heads=frame_heads(heads, cfg)).predict_frames(sents)
    assert [{k: v[0] for k, v in t.items()} for t, _ in a] == [{k: v[0] for k, v in t.items()} for t, _ in b]
    assert sum(len(f) for _, f in a) > 0  # spans to run the heads on
    for (_, fa), (_, fb) in zip(a, b):
        assert [(f.start, f.end, f.polarity, f.holder) for f in fa] == [
            (f.start, f.end, f.polarity, f.holder) for f in fb
        ]
        assert [f.intensity_score for f in fa] == pytest.approx([f.intensity_score for f in fb], abs=1e-5)


@pytest.mark.integration
def test_the_cli_trains_frame_heads_and_records_their_data_and_dev_scores(sample_mpqa, tmp_path, capsys):
    import json

    from conftest import write_split

    from opinion_tagger.cli import main

    split = write_split(tmp_path / "split", {0: ("demo/doc-a\n", "demo/doc-b\n")})  # dev: other/doc-c
    out = tmp_path / "m"
    argv = ["train", "--data", "mpqa", str(sample_mpqa), "--datasplit", str(split), "--fold", "0", "--task", "joint"]
    argv += ["--depth", "1", "--hidden", "8", "--features", "random", "--max-epochs", "1", "--quiet"]
    assert main([*argv, "--frames", "--frame-units", "4", "--out", str(out)]) == 0
    meta = json.loads((out / "meta.json").read_text())
    frames = meta["training"]["data"]["frames"]
    assert frames["spans"] == {"DSE": 6, "ESE": 5} and frames["matched"] == frames["spans"]
    dev = meta["scores"]["dev_frames"]
    assert set(dev) == {"DSE", "ESE"} and set(dev["DSE"]) >= {"polarity_binary", "polarity", "intensity", "holder"}
    assert json.loads((out / "config.json").read_text())["model"]["frames"]["units"] == 4
    # evaluate scores the frames too: on dev, the scores the bundle recorded
    capsys.readouterr()  # what training printed
    evaluate = ["evaluate", "--model", str(out), "--data", "mpqa", str(sample_mpqa), "--datasplit", str(split)]
    assert main([*evaluate, "--split", "dev", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["frames"] == dev
    # the holder's overlap F1 with the gold DSEs given and end to end; no targets or attitudes: no head for them
    assert set(result["roles"]) == {"holder"} and set(result["roles"]["holder"]) == {"gold_dse_given", "end_to_end"}
    assert main([*evaluate, "--split", "dev"]) == 0
    table = capsys.readouterr().out
    assert "DSE   polarity-aware proportional" in table and "DSE   holder named" in table
    assert "holder   gold given     binary" in table and "holder   end to end     proportional" in table
    assert "target" not in table and "attitude" not in table
    assert f"ESE   {'polarity':24} {100 * dev['ESE']['polarity']['accuracy']:7.2f}" in table
    # training continues from the bundle: its network's weights and its heads' (frames.onnx)
    from opinion_tagger.config import TaggerConfig
    from opinion_tagger.model.frame_heads import head_arrays
    from opinion_tagger.model.onnx_weights import bundle_head_arrays
    from opinion_tagger.training.models import bundle_start

    config = TaggerConfig.load(out / "config.json")
    _, start = bundle_start(out, config)
    saved = bundle_head_arrays(out, config)
    assert {k: v.tolist() for k, v in head_arrays(start, config).items()} == {k: v.tolist() for k, v in saved.items()}
    more = tmp_path / "m2"
    assert main([*argv, "--frames", "--frame-units", "4", "--init-from", str(out), "--out", str(more)]) == 0
    assert (more / "frames.onnx").is_file() and json.loads((more / "meta.json").read_text())["scores"]["dev_frames"]


@pytest.mark.integration
def test_detached_heads_leave_the_tags_as_a_network_without_heads_learns_them(tmp_path):
    """frame_detach: the heads' losses send no gradient into the network that tags, so its training is that of
    the same network without heads (same seed, same batches; no clipping couples the gradients): the tag
    probabilities equal, while the heads still learn (their loss falls)."""
    from opinion_tagger.training.run import train

    words = [s.words for s in sentences()]
    runs = {}
    for name, extra in (("none", {"model.frames.enabled": False}), ("detached", {"model.frames.detach": True})):
        cfg = TaggerConfig.from_dict({**TINY, **extra, "training.stopping.max_epochs": 8, "training.seed": 3})
        tagger, meta = train(cfg, sentences(), [], tmp_path / name, progress=False)
        runs[name] = (tagger.predict(words), meta["training"]["history"])
    (plain, plain_history), (detached, history) = runs["none"], runs["detached"]
    for a, b in zip(plain, detached):
        for t in a:
            assert a[t][0] == b[t][0]
            np.testing.assert_allclose(a[t][1], b[t][1], atol=1e-5)
    # the tags' loss is the run without heads' (the same computation), so the rest is the heads' (weight 1)
    frame_losses = [h["loss"] - p["loss"] for h, p in zip(history, plain_history)]
    assert min(frame_losses) > 0 and frame_losses[-1] < 0.8 * frame_losses[0]
