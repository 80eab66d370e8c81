"""The ONNX Runtime network (model.onnx, written with every bundle) gives the Keras model's predictions."""

import numpy as np
import onnx
import pytest

from tagger.config import TaggerConfig
from tagger.corpus import MPQACorpus, mpqa_sentences
from tagger.network.predict import Tagger
from tagger.training.run import train


@pytest.mark.parametrize(
    "cell,output,task",
    [
        ("elman", "softmax", "joint"),
        ("lstm", "crf", "dse"),
        ("gru", "softmax", "ese"),
        ("mrnn", "softmax", "joint"),
        ("irlm", "crf", "dse"),
    ],
)
def test_onnx_equals_keras(sample_mpqa, tmp_path, cell, output, task):
    sents = list(mpqa_sentences(MPQACorpus(sample_mpqa)))
    cfg = TaggerConfig(
        task=task,
        cell=cell,
        output=output,
        depth=2,
        hidden=10,
        features="random",
        embedding_dim=8,
        max_epochs=3,
        batch_size=4,
        learning_rate=0.02,
    )
    keras_tagger, _ = train(cfg, sents, sents, tmp_path / "m", progress=False)
    np_tagger = Tagger.load(tmp_path / "m", backend="onnx")
    assert Tagger.load(tmp_path / "m").model is None  # auto: ONNX Runtime, no Keras model
    ops = {n.op_type for n in onnx.load(tmp_path / "m" / "model.onnx").graph.node}
    native = {"elman": "RNN", "lstm": "LSTM", "gru": "GRU"}
    if cell in native:
        assert native[cell] in ops and "Loop" not in ops  # native operators
    else:
        assert "Loop" in ops  # no ONNX operator for the cell: the network traced whole
    words = [s.words for s in sents] + [["a"] * 30, ["Single"], []]
    ids = np.zeros((len(words), 32), dtype="int32")
    for k, w in enumerate(words):
        ids[k, : len(w)] = keras_tagger.vocab.ids(w)
    a, b = keras_tagger.network.forward(ids), np_tagger.network.forward(ids)
    for t in cfg.types:
        mask = ids != 0
        np.testing.assert_allclose(a[t][mask], b[t][mask], rtol=1e-4, atol=1e-5)
    # the JAX backend's path pads the words to a bucket length (30 -> 32): real words' scores are unchanged
    padded = keras_tagger.network._forward_padded(ids[:, :30])
    for t in cfg.types:
        assert padded[t].shape == (len(words), 30, 3)
        mask = ids[:, :30] != 0
        np.testing.assert_allclose(padded[t][mask], a[t][:, :30][mask], rtol=1e-4, atol=1e-5)
    pa, pb = keras_tagger.predict(words), np_tagger.predict(words)
    for x, y in zip(pa, pb):
        for t in cfg.types:
            assert x[t][0] == y[t][0]
            np.testing.assert_allclose(x[t][1], y[t][1], rtol=1e-4, atol=1e-5)
