"""The ONNX Runtime network (model.onnx, written with every bundle) gives the Keras model's predictions."""

import numpy as np
import onnx
import pytest

from opinion_tagger.config import TaggerConfig
from opinion_tagger.corpus import MPQACorpus, mpqa_sentences
from opinion_tagger.runtime.sentence_tagger import SentenceTagger
from opinion_tagger.training.run import train


@pytest.mark.integration
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
    cfg = TaggerConfig.from_dict(
        {
            "task": task,
            "model.recurrent.cell": cell,
            "model.head.output": output,
            "model.recurrent.depth": 2,
            "model.recurrent.hidden": 10,
            "model.embeddings.features": "random",
            "model.embeddings.dim": 8,
            "training.stopping.max_epochs": 3,
            "training.batch_size": 4,
            "training.optimizer.learning_rate": 0.02,
        }
    )
    keras_tagger, _ = train(cfg, sents, sents, tmp_path / "m", progress=False)
    np_tagger = SentenceTagger.load(tmp_path / "m", backend="onnx")
    assert type(SentenceTagger.load(tmp_path / "m").network).__name__ == "OnnxNetwork"  # the default
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


def _moments_graph(op: str, shared_mean: bool = False):
    """A layer norm over the last axis of x [2, 3, 4] in tf2onnx's form (TensorFlow's moments), by hand."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    reduce = {"axes": [-1], "keepdims": 1} if op == "ReduceMean" else {}
    nodes = [
        helper.make_node(op, ["x"], ["mean"], **reduce),
        helper.make_node("Neg", ["mean"], ["neg"]),
        helper.make_node("Sub", ["x", "mean"], ["diff"]),
        helper.make_node("Mul", ["diff", "diff"], ["square"]),
        helper.make_node(op, ["square"], ["var"], **reduce),
        helper.make_node("Add", ["var", "eps"], ["shifted"]),
        helper.make_node("Sqrt", ["shifted"], ["root"]),
        helper.make_node("Reciprocal", ["root"], ["inverse"]),
        helper.make_node("Mul", ["inverse", "gamma"], ["scale"]),
        helper.make_node("Mul", ["x", "scale"], ["scaled_x"]),
        helper.make_node("Mul", ["neg", "scale"], ["scaled_mean"]),
        helper.make_node("Add", ["scaled_mean", "beta"], ["shift"]),
        helper.make_node("Add", ["scaled_x", "shift"], ["y"]),
    ]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 4])]
    if shared_mean:  # the mean is used outside the pattern too: it must stay
        nodes.append(helper.make_node("Identity", ["mean"], ["mean_out"]))
        outputs.append(helper.make_tensor_value_info("mean_out", TensorProto.FLOAT, [2, 3, 1]))
    inits = [
        numpy_helper.from_array(np.array(1e-3, dtype=np.float32), "eps"),
        numpy_helper.from_array(rng.normal(size=(1, 1, 4)).astype(np.float32), "gamma"),
        numpy_helper.from_array(rng.normal(size=(1, 1, 4)).astype(np.float32), "beta"),
    ]
    graph = helper.make_graph(
        nodes, "ln", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])], outputs, inits
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _run(model, x):
    import onnxruntime as ort

    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})


@pytest.mark.parametrize("op", ["GlobalAveragePool", "ReduceMean"])
def test_a_layer_norm_in_moments_becomes_one_operator_with_the_same_values(op):
    from opinion_tagger.export.onnx_fusion import fuse_layer_norms

    x = np.random.default_rng(1).normal(size=(2, 3, 4)).astype(np.float32)
    model = _moments_graph(op)
    before = _run(model, x)[0]
    mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)  # by hand: (x - mean) / sqrt(var + eps)
    gamma, beta = (onnx.numpy_helper.to_array(t) for t in model.graph.initializer[1:3])
    np.testing.assert_allclose(before, (x - mean) / np.sqrt(var + 1e-3) * gamma + beta, atol=1e-5)
    assert fuse_layer_norms(model) == 1
    onnx.checker.check_model(model)
    assert [n.op_type for n in model.graph.node].count("LayerNormalization") == 1
    assert not {"Sqrt", "Reciprocal", "Neg", op} & {n.op_type for n in model.graph.node}
    np.testing.assert_allclose(_run(model, x)[0], before, atol=1e-5)


def test_a_moments_subgraph_whose_values_are_used_elsewhere_stays():
    from opinion_tagger.export.onnx_fusion import fuse_layer_norms

    model = _moments_graph("ReduceMean", shared_mean=True)
    assert fuse_layer_norms(model) == 0 and len(model.graph.node) == 14
