"""A DSE's role heads (``model.frames.roles``, ``model.frames.positions``): the tokens' places relative to a span,
the targets' tags and their decoding, the Keras heads against frames.onnx's, and a tiny tagger that learns its
sentences' attitudes and targets."""

import numpy as np
import pytest
from tiny_frames import TINY

from opinion_tagger.config import TaggerConfig
from opinion_tagger.errors import ConfigError
from opinion_tagger.runtime.frame_heads import ATTITUDE, HOLDER, TARGETS, head_names, relative_places, target_spans
from opinion_tagger.sentences import Frame, Sentence, Token
from opinion_tagger.training.frame_data import frame_batch, target_tags

ROLES = {**TINY, "model.frames.roles": True, "model.frames.positions": True}


def test_a_tokens_place_is_inside_or_its_distance_before_or_after_the_span():
    # span [2, 4) of 9 tokens: 2 and 1 tokens before it (adjacent: place 1), inside (0), then 1..5 after it
    assert relative_places(2, 4, 9).tolist() == [2, 1, 0, 0, 9, 10, 11, 12, 13]
    # far away: distances 5-6, 7-9, 10-14 and 15 or more share a place
    far = relative_places(30, 31, 32)
    assert far[[29, 28, 27, 26, 25, 24, 23, 21, 20, 16, 15, 0]].tolist() == [1, 2, 3, 4, 5, 5, 6, 6, 7, 7, 8, 8]
    after = relative_places(0, 1, 20)[[1, 4, 5, 6, 7, 9, 10, 14, 15, 19]]
    assert after.tolist() == [9, 12, 13, 13, 14, 14, 15, 15, 16, 16]


def test_the_keras_places_are_the_numpy_places():
    from opinion_tagger.model.frame_heads import SpanPlaces

    rng = np.random.default_rng(3)
    spans = np.sort(rng.integers(0, 40, size=(3, 5, 2)), axis=-1).astype("int32")
    places = np.asarray(SpanPlaces()(np.zeros((3, 40, 2), "float32"), spans))
    for b in range(3):
        for s in range(5):
            assert places[b, s].tolist() == relative_places(*spans[b, s], 40).tolist()


def test_targets_are_the_spans_of_the_likeliest_tags():
    o, b, i = [0.8, 0.1, 0.1], [0.1, 0.7, 0.2], [0.1, 0.3, 0.6]
    p = np.array([o, b, i, i, o, i, b, b, o])
    # B I I; an I after an O begins a span; B B: two spans
    assert [(s, e) for s, e, _ in target_spans(p)] == [(1, 4), (5, 6), (6, 7), (7, 8)]
    assert target_spans(p)[0][2] == pytest.approx((0.7 + 0.6 + 0.6) / 3)
    assert target_spans(np.array([o, o])) == []
    assert [(s, e) for s, e, _ in target_spans(np.array([o, b, i]))] == [(1, 3)]


def test_a_dses_targets_as_tags_keep_the_longest_of_nested_ones():
    f = Frame("DSE", 0, 1, targets=((2, 4), (1, 6), (7, 8), (5, 8)))
    # (1, 6) first, (5, 8) overlaps it, (2, 4) inside it: dropped; (7, 8) kept
    assert target_tags(f, 9).tolist() == [0, 1, 2, 2, 2, 2, 0, 1, 0]
    assert target_tags(Frame("DSE", 0, 1, targets=()), 3).tolist() == [0, 0, 0]
    assert target_tags(Frame("DSE", 0, 1), 3).tolist() == [-1, -1, -1]  # not read
    assert target_tags(Frame("DSE", 0, 1, targets=((1, 9),)), 3).tolist() == [0, 1, 2]  # cut at the sentence


def test_the_role_targets_of_a_batch():
    words = "We doubt the plan works .".split()
    tokens = [Token(w, k, k + 1) for k, w in enumerate(words)]
    frames = [Frame("DSE", 1, 2, attitude="speculation", targets=((2, 5),)), Frame("DSE", 4, 5)]
    sents = [Sentence(tokens, {"DSE": ["O"] * 6, "ESE": ["O"] * 6}, "d", 0, frames=frames)]
    short = [Frame("DSE", 0, 1, targets=())]
    sents.append(Sentence(tokens[:3], {"DSE": ["O"] * 3, "ESE": ["O"] * 3}, "d", 1, frames=short))
    spans, y = frame_batch(TaggerConfig.from_dict(ROLES), sents, [0, 1], 3, 6)
    assert spans["DSE_spans"][0, :2].tolist() == [[1, 2], [4, 5]]
    assert y[ATTITUDE][:, :2].tolist() == [[8, -1], [-1, -1], [-1, -1]]  # speculation is the 9th type
    assert y[TARGETS][0, 0].tolist() == [0, 0, 1, 2, 2, 0]
    assert y[TARGETS][0, 1].tolist() == [-1] * 6  # targets not read
    assert y[TARGETS][1, 0].tolist() == [0, 0, 0, -1, -1, -1]  # the sentence's 3 words; padding -1
    assert y[TARGETS][2].tolist() == [[-1] * 6] * 4  # a padding row
    # without roles, no role targets
    assert ATTITUDE not in frame_batch(TaggerConfig.from_dict(TINY), sents, [0, 1], 2, 6)[1]


@pytest.mark.parametrize(
    "positions, context, holder, own",
    [(False, 0, False, 0), (True, 0, False, 0), (True, 4, False, 0), (True, 4, True, 0), (True, 4, False, 3)],
)
def test_frames_onnx_gives_the_keras_heads_outputs(positions, context, holder, own):
    """Random weights, random states: the heads of frames.onnx (ONNX Runtime) and the Keras heads agree on every
    output, holder, attitude and targets included, on the sentences' own tokens (``own``: the holder pointer's
    own context of that many units a direction)."""
    from opinion_tagger.export.frames_export import frame_heads
    from opinion_tagger.model.frame_heads import head_arrays
    from opinion_tagger.training.frame_fit import head_network

    fields = {
        "model.frames.positions": positions,
        "model.frames.context": context,
        "model.frames.context_holder": holder,
        "model.frames.holder_context": own,
    }
    config = TaggerConfig.from_dict({**ROLES, **fields})
    rng = np.random.default_rng(0)
    net = head_network(config, 6, 1e-3)
    for w in net.weights:
        w.assign(rng.normal(size=w.shape).astype("float32") * 0.5)
    states = rng.normal(size=(2, 9, 6)).astype("float32")
    words = np.ones((2, 9), "int32")
    words[1, 7:] = 0
    dse = np.zeros((2, 3, 2), "int32")
    dse[0, :2], dse[1, :2] = [(2, 4), (0, 1)], [(5, 7), (3, 4)]
    ese = np.zeros((2, 3, 2), "int32")
    ese[0, 0] = (6, 8)
    keras_out = net.predict_on_batch({"states": states, "words": words, "DSE_spans": dse, "ESE_spans": ese})
    heads = frame_heads(head_arrays(net, config), config)
    rows = [(0, 0), (0, 1), (1, 0), (1, 1)]
    ran = heads.run(states, [9, 7], {"DSE": [(b, *dse[b, s]) for b, s in rows], "ESE": [(0, 6, 8)]})
    for k, (b, s) in enumerate(rows):
        n = 9 if b == 0 else 7
        for name in ("DSE_polarity", "DSE_intensity", ATTITUDE):
            np.testing.assert_allclose(ran[name][k], keras_out[name][b, s], atol=1e-6)
        start = keras_out[f"{HOLDER}_start"][b, s, : 3 + n]
        np.testing.assert_allclose(ran[f"{HOLDER}_start"][k, : 3 + n], start, atol=1e-5)
        np.testing.assert_allclose(ran[f"{HOLDER}_end"][k, :n], keras_out[f"{HOLDER}_end"][b, s, :n], atol=1e-5)
        np.testing.assert_allclose(ran[TARGETS][k, :n], keras_out[TARGETS][b, s, :n], atol=1e-5)
    np.testing.assert_allclose(ran["ESE_polarity"][0], keras_out["ESE_polarity"][0, 0], atol=1e-6)
    # decoded: an attitude with its probability, targets with their scores
    (f,) = heads.predict(states, [9, 7], [(0, "DSE", 2, 4)])
    assert f.attitude_score == pytest.approx(ran[ATTITUDE][0].max(), abs=1e-6)
    assert [(i, j) for i, j, _ in target_spans(ran[TARGETS][0])] == list(f.targets)
    assert len(f.target_scores) == len(f.targets)
    assert heads.roles == ("holder", "target", "attitude")


# words, then each DSE as (start, end, attitude, targets): the targets follow their DSE
ROLE_DATA = [
    ("Officials said the plan was awful .", [(1, 2, "other-attitude", ((2, 4),))]),
    ("Critics fear the new tax .", [(1, 2, "sentiment-neg", ((2, 5),))]),
    ("We hate the plan .", [(1, 2, "sentiment-neg", ((2, 4),))]),
    ("They love the new park .", [(1, 2, "sentiment-pos", ((2, 5),))]),
    ("They want a park .", [(1, 2, "intention-pos", ((2, 4),))]),
]


def role_sentences() -> list[Sentence]:
    out = []
    for k, (text, dses) in enumerate(ROLE_DATA):
        words = text.split()
        tags = {"DSE": ["O"] * len(words), "ESE": ["O"] * len(words)}
        frames = []
        for i, j, attitude, targets in dses:
            tags["DSE"][i:j] = ["B-DSE"] + ["I-DSE"] * (j - i - 1)
            frames.append(Frame("DSE", i, j, "neutral", "low", None, (0, 1), attitude, targets))
        tokens = [Token(w, i, i + 1) for i, w in enumerate(words)]
        out.append(Sentence(tokens, tags, "demo/roles", k, text, frames=frames))
    return out


@pytest.mark.integration
def test_a_tiny_tagger_learns_its_sentences_attitudes_and_targets(tmp_path):
    from opinion_tagger.runtime.sentence_tagger import SentenceTagger
    from opinion_tagger.training.run import train

    cfg = TaggerConfig.from_dict({**ROLES, "model.frames.context": 4, "training.stopping.max_epochs": 80})
    train(cfg, role_sentences(), [], tmp_path / "b", progress=False)
    tagger = SentenceTagger.load(tmp_path / "b")  # frames.onnx in ONNX Runtime
    assert tagger.roles == ("holder", "target", "attitude")
    sents = role_sentences()
    preds = tagger.predict_frames([s.words for s in sents])
    dses = [f for _, frames in preds for f in frames if f.type == "DSE"]
    assert [(f.start, f.end) for f in dses] == [(1, 2)] * 5
    assert [f.attitude for f in dses] == [d[2] for _, ds in ROLE_DATA for d in ds]
    assert [f.targets for f in dses] == [d[3] for _, ds in ROLE_DATA for d in ds]
    assert all(0 < s <= 1 for f in dses for s in (f.attitude_score, *f.target_scores))


def test_a_batch_without_dses_runs_the_other_heads():
    """No DSE in a batch with an ESE: the ESE's frame, no DSE output rows (the DSE's LSTM has nothing to run)."""
    from opinion_tagger.export.frames_export import frame_heads
    from opinion_tagger.model.frame_heads import head_arrays
    from opinion_tagger.training.frame_fit import head_network

    config = TaggerConfig.from_dict({**ROLES, "model.frames.context": 4})
    heads = frame_heads(head_arrays(head_network(config, 6, 1e-3), config), config)
    states = np.random.default_rng(1).normal(size=(1, 5, 6)).astype("float32")
    ran = heads.run(states, [5], {"ESE": [(0, 1, 3)]})
    assert ran["ESE_polarity"].shape[0] == 1
    assert {k: v.shape[0] for k, v in ran.items() if k.startswith("DSE")} == dict.fromkeys(
        ("DSE_polarity", "DSE_intensity", f"{HOLDER}_start", f"{HOLDER}_end", ATTITUDE, TARGETS), 0
    )
    assert [(f.type, f.start, f.end) for f in heads.predict(states, [5], [(0, "ESE", 1, 3)])] == [("ESE", 1, 3)]


@pytest.mark.integration
def test_training_continues_from_a_bundle_with_role_heads(tmp_path):
    """The training network rebuilt from a bundle (``train --init-from``, ``adapt``) has the role heads of its
    frames.onnx, the LSTM per DSE's weights in Keras's own order included, and predicts what the bundle predicts."""
    from opinion_tagger.export.frames_export import frame_heads
    from opinion_tagger.model.frame_heads import head_arrays, tagging_view
    from opinion_tagger.model.keras_backend import sentence_tagger
    from opinion_tagger.model.onnx_weights import bundle_head_arrays
    from opinion_tagger.runtime.sentence_tagger import SentenceTagger
    from opinion_tagger.training.models import bundle_start
    from opinion_tagger.training.run import train

    cfg = TaggerConfig.from_dict({**ROLES, "model.frames.context": 4, "training.stopping.max_epochs": 3})
    train(cfg, role_sentences(), [], tmp_path / "b", progress=False)
    stored = bundle_head_arrays(tmp_path / "b", cfg)
    vocab, model = bundle_start(tmp_path / "b", cfg)
    rebuilt = head_arrays(model, cfg)
    assert set(rebuilt) == set(stored) and any("lstm" in k for k in stored)
    for k, v in stored.items():
        np.testing.assert_array_equal(rebuilt[k], v)
    words = [s.words for s in role_sentences()]
    onnx_frames = SentenceTagger.load(tmp_path / "b").predict_frames(words)
    keras_frames = sentence_tagger(tagging_view(model, cfg), vocab, cfg, heads=frame_heads(rebuilt, cfg))
    for (_, a), (_, b) in zip(onnx_frames, keras_frames.predict_frames(words)):
        assert [(f.start, f.end, f.attitude, f.targets) for f in a] == [
            (f.start, f.end, f.attitude, f.targets) for f in b
        ]


def test_the_holder_reads_its_own_context_or_the_targets_not_both():
    fields = {"model.frames.context": 4, "model.frames.context_holder": True, "model.frames.holder_context": 3}
    with pytest.raises(ConfigError, match="model.frames.holder_context: the holder pointer reads its own view"):
        TaggerConfig.from_dict({**ROLES, **fields})
    names = head_names(TaggerConfig.from_dict({**ROLES, "model.frames.holder_context": 3}))
    assert names["DSE_holder_context/lstm/forward_lstm/lstm_cell/bias"] == (12,)  # 4 gates of 3 units
    assert "DSE_context/tokens" not in names  # no context for the targets: the holder's alone
