"""Training continues from a bundle without training state (model.keras, weights.npz), as the bundled models ship:
the Keras network is rebuilt from model.onnx's weights (opinion_tagger.model.onnx_weights) and, before any step,
tags as the bundle does.  An export's inverse: recurrent operators back into Keras's cells, and a LoRA kernel
stored merged back into adapters whose product is its difference from the base kernel."""

from types import SimpleNamespace

import numpy as np
import pytest

from opinion_tagger.export.onnx_recurrent import _direction_weights
from opinion_tagger.model.onnx_weights import _recurrent_weights, split_delta
from opinion_tagger.paths import BUNDLED, bundled_models
from opinion_tagger.runtime.bio import spans_from_bio
from opinion_tagger.runtime.sentence_tagger import SentenceTagger

# invented sentences (no corpus text)
WORDS = [
    "Officials said the plan was , as usual , daylight robbery .".split(),
    "We think the new neighbours are lovely , honestly .".split(),
    "My brother says the film was a total waste of time .".split(),
    "The bus was late again this morning .".split(),
    "She fears that the reform will hurt the poorest families .".split(),
]


def spans(predictions) -> list:
    return [{t: spans_from_bio(tags) for t, (tags, _) in p.items()} for p in predictions]


@pytest.mark.parametrize("shape, rank", [((6, 2, 3), 4), ((8, 8), 2)])
def test_a_merged_kernels_difference_becomes_adapters_whose_product_it_is(shape, rank):
    """An EinsumDense kernel whose adapters' rank exceeds its output width (MiniLM's query and value at rank 64),
    and a Dense kernel of a rank-2 difference: A B scale equals the difference; the components beyond the
    difference's rank start as fresh adapters do (A as given, B zero)."""
    rng = np.random.default_rng(0)
    a = rng.normal(size=(*shape[:-1], rank)).astype(np.float32)  # the trained adapters
    b = rng.normal(size=(rank, shape[-1])).astype(np.float32)
    scale = 2.0
    delta = (a @ b) * scale
    fresh = rng.normal(size=a.shape).astype(np.float32)
    new_a, new_b = split_delta(delta, fresh, np.zeros_like(b), scale)
    assert new_a.shape == a.shape and new_b.shape == b.shape
    np.testing.assert_allclose((new_a @ new_b) * scale, delta, atol=1e-5)
    k = min(rank, shape[-1])
    assert not new_b[k:].any() and np.array_equal(new_a[..., k:], fresh[..., k:])


@pytest.mark.parametrize("kind, gates", [("elman", 1), ("lstm", 4), ("gru", 3)])
def test_recurrent_operators_weights_go_back_into_the_keras_cell(kind, gates):
    rng = np.random.default_rng(1)
    h, d = 3, 5
    bias_shape = (2, gates * h) if kind == "gru" else (gates * h,)
    cell = SimpleNamespace(
        kernel=rng.normal(size=(d, gates * h)),
        recurrent_kernel=rng.normal(size=(h, gates * h)),
        bias=rng.normal(size=bias_shape),
        use_bias=True,
        reset_after=True,
    )
    back = _recurrent_weights(cell, kind, *_direction_weights(cell, kind))
    assert len(back) == 3
    for variable, value in back.values():
        assert np.array_equal(value, variable)


@pytest.mark.integration
@pytest.mark.parametrize("name", bundled_models())
def test_the_network_rebuilt_from_model_onnx_tags_as_the_bundle(name):
    from opinion_tagger.errors import TaggerError
    from opinion_tagger.model.keras_backend import import_keras, load_keras_model, sentence_tagger

    path = BUNDLED / name
    assert not {"model.keras", "weights.npz"} & {p.name for p in path.iterdir()}
    bundle = SentenceTagger.load(path)
    import_keras(False)
    try:
        model = load_keras_model(path)
    except TaggerError as exc:  # an encoder's base weights that this machine has not downloaded
        pytest.skip(str(exc))
    rebuilt = sentence_tagger(model, bundle.vocab, bundle.config).predict(WORDS)
    expected = bundle.predict(WORDS)
    assert spans(rebuilt) == spans(expected) and any(any(s.values()) for s in spans(expected))
    for x, y in zip(rebuilt, expected):
        for t in x:
            np.testing.assert_allclose(x[t][1], y[t][1], atol=1e-4)


@pytest.mark.integration
def test_training_continues_from_the_bundled_model_without_its_training_state(sample_mpqa, tmp_path, capsys):
    """The default model (its LoRA kernels merged in model.onnx): the network training starts from tags as the
    bundle does, and one epoch on the sample corpus writes a complete bundle (with training state)."""
    import json

    from conftest import write_split

    from opinion_tagger.cli import main
    from opinion_tagger.model.keras_backend import import_keras, sentence_tagger
    from opinion_tagger.model.network import build_model
    from opinion_tagger.runtime.frame_heads import FrameHeads
    from opinion_tagger.training.models import bundle_start

    path = BUNDLED / "accurate"
    bundle = SentenceTagger.load(path)
    import_keras(False)
    vocab, start = bundle_start(path, bundle.config)  # the network training starts from, with its frame heads
    clean = build_model(bundle.config, len(vocab), bundle.config.word_dim, pretrained=False)
    for layer in clean.layers:
        layer.set_weights(start.get_layer(layer.name).get_weights())
    tagger = sentence_tagger(clean, vocab, bundle.config, heads=FrameHeads.load(path, bundle.config))
    assert spans(tagger.predict(WORDS)) == spans(bundle.predict(WORDS))
    frames = [[(f.start, f.end, f.polarity, f.holder) for f in fs] for _, fs in tagger.predict_frames(WORDS)]
    assert frames == [[(f.start, f.end, f.polarity, f.holder) for f in fs] for _, fs in bundle.predict_frames(WORDS)]

    split = write_split(tmp_path / "split", {0: ("demo/doc-a\n", "demo/doc-b\n")})
    out = tmp_path / "more"
    argv = ["train", "--data", "mpqa", str(sample_mpqa), "--datasplit", str(split), "--fold", "0"]
    argv += ["--init-from", "accurate", "--max-epochs", "1", "--quiet", "--out", str(out)]
    assert main(argv) == 0, capsys.readouterr().err
    meta = json.loads((out / "meta.json").read_text())
    assert meta["training"]["init"].endswith("models/accurate") and meta["training"]["epochs"] == 1
    assert {"weights.npz", "glove_rows.npz", "model.onnx", "frames.onnx"} <= set(meta["manifest"])
    assert len(SentenceTagger.load(out).predict(WORDS)) == len(WORDS)
