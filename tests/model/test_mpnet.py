"""The MPNet-base encoder (opinion_tagger.model.mpnet) against hand computations and a NumPy re-implementation
of Hugging Face's MPNetModel, its sentence embeddings, and a tagger built on it exported to ONNX.

Tests that need the weights skip unless ``opinion-tagger download --encoder mpnet`` has assembled them
(under CI, with ``$CI`` set, they fail instead).  No corpus text: every sentence here is invented.
"""

import math

import numpy as np
import pytest
from conftest import mpnet_weights

from opinion_tagger.encoders import MPNET
from opinion_tagger.errors import TaggerError
from opinion_tagger.runtime import base_weights
from opinion_tagger.runtime.base_weights import locate
from opinion_tagger.runtime.wordpieces import WordPieces


def mpnet_path():
    return locate(MPNET)


def MPNetWordPieces(cache=True):  # noqa: N802  (the wordpieces of MPNet)
    return WordPieces(MPNET, cache=cache)


# key position - query position -> bucket, worked out by hand from MPNet's rule: a key after the query adds 16;
# distances 0..7 are their own bucket; from 8, bucket 8 + floor(8 ln(d / 8) / ln 16), at most 15, so bucket
# 8 + k starts at d = 8 * 2^(k/2): 8, 11.3 (12), 16, 22.6 (23), 32, 45.3 (46), 64, 90.5 (91); 128 and beyond: 15
BUCKETS = {
    0: 0,
    -1: 1,
    -7: 7,
    -8: 8,
    -11: 8,
    -12: 9,
    -15: 9,
    -16: 10,
    -22: 10,
    -23: 11,
    -31: 11,
    -32: 12,
    -45: 12,
    -46: 13,
    -63: 13,
    -64: 14,
    -90: 14,
    -91: 15,
    -127: 15,
    -128: 15,
    -1000: 15,
    1: 17,
    7: 23,
    8: 24,
    12: 25,
    20: 26,
    64: 30,
    91: 31,
    128: 31,
    500: 31,
}


@pytest.fixture(scope="module")
def encoder():
    mpnet_weights()
    from opinion_tagger.model.mpnet import build_encoder

    return build_encoder()


@pytest.fixture(scope="module")
def tensors():
    from safetensors.numpy import load_file

    return load_file(str(mpnet_weights() / "model.safetensors"))


@pytest.fixture(scope="module")
def pieces():
    mpnet_weights()
    return MPNetWordPieces(cache=False)


def test_relative_position_buckets_match_the_hand_computed_table():
    pytest.importorskip("keras")
    from opinion_tagger.model.mpnet import RelativePositionBias, relative_position_bucket

    rel = np.array(list(BUCKETS))
    assert relative_position_bucket(rel).tolist() == list(BUCKETS.values())
    # the layer: bias[0, h, i, j] is the weight of bucket(j - i) for head h
    layer = RelativePositionBias(num_buckets=32, heads=2, max_length=514)
    layer.build()
    layer.embeddings.assign(np.stack([np.arange(32), 100 + np.arange(32)], axis=1).astype("float32"))
    bias = np.asarray(layer(np.zeros((1, 300, 4), "float32")))
    assert bias.shape == (1, 2, 300, 300)
    for d, bucket in BUCKETS.items():
        if abs(d) < 300:
            i, j = (0, d) if d >= 0 else (-d, 0)
            assert bias[0, 0, i, j] == bucket and bias[0, 1, i, j] == 100 + bucket, d


# --- a NumPy MPNetModel (float64), written from Hugging Face's modeling_mpnet.py, reading the package tensors


def _np_bucket(rel: int) -> int:
    n = -rel
    ret = 16 if n < 0 else 0
    n = abs(n)
    if n < 8:
        return ret + n
    return ret + min(15, 8 + int(math.log(n / 8) / math.log(128 / 8) * 8))


def _np_norm(x, t, name):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + 1e-5) * t[f"{name}.weight"] + t[f"{name}.bias"]


def _np_linear(x, t, name):
    return x @ t[f"{name}.weight"].astype(np.float64).T + t[f"{name}.bias"]


def _np_embed(t, ids, mask):
    positions = np.cumsum(mask, axis=1) * mask + 1
    x = t["embeddings.word_embeddings.weight"][ids].astype(np.float64)
    x = x + t["embeddings.position_embeddings.weight"][positions]
    return _np_norm(x, t, "embeddings.LayerNorm")


def _np_bias(t, mask):
    p = mask.shape[1]
    buckets = np.array([[_np_bucket(j - i) for j in range(p)] for i in range(p)])
    rel = t["encoder.relative_attention_bias.weight"].astype(np.float64)[buckets].transpose(2, 0, 1)[None]
    return rel + (1.0 - mask[:, None, None, :]) * np.finfo(np.float32).min


def _np_layer(t, i, x, bias):
    from scipy.special import erf

    b, p, h = x.shape
    name = f"encoder.layer.{i}"

    def heads(y):
        return y.reshape(b, p, 12, h // 12).transpose(0, 2, 1, 3)

    q, k, v = (heads(_np_linear(x, t, f"{name}.attention.attn.{w}")) for w in "qkv")
    scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(h // 12) + bias
    probs = np.exp(scores - scores.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    context = (probs @ v).transpose(0, 2, 1, 3).reshape(b, p, h)
    attended = _np_norm(_np_linear(context, t, f"{name}.attention.attn.o") + x, t, f"{name}.attention.LayerNorm")
    inner = _np_linear(attended, t, f"{name}.intermediate.dense")
    inner = 0.5 * inner * (1 + erf(inner / math.sqrt(2)))
    return _np_norm(_np_linear(inner, t, f"{name}.output.dense") + attended, t, f"{name}.output.LayerNorm")


def _tiny_batch(pieces):
    inputs, _ = pieces.batch([["Nobody", "expected", "the", "verdict", "."], ["It", "rained", "."]])
    return inputs["token_ids"], inputs["padding_mask"]


def test_wordpieces_are_mpnets_own():
    mpnet_weights()
    pieces = MPNetWordPieces(cache=False)
    inputs, spans = pieces.batch([["Unbelievably", "calm", "."], ["Yes"]])
    assert set(inputs) == {"token_ids", "padding_mask", "word_starts"}  # no segment ids
    ids, mask = inputs["token_ids"], inputs["padding_mask"]
    n = mask.sum(1)
    assert ids[0, 0] == 0 and ids[0, n[0] - 1] == 2 and ids[1, :3].tolist() == [0, ids[1, 1], 2]  # <s> ... </s>
    assert (ids[mask == 0] == 1).all()  # <pad>
    assert len(spans[0][0]) == 2 and spans[0][0][1] - spans[0][0][0] > 1  # "unbelievably": several pieces
    assert inputs["word_starts"][0].tolist() == [a for a, _ in spans[0]]
    assert pieces.pieces(["Calm"]) == pieces.pieces(["calm"])  # lower-cased
    assert pieces.pieces(["\u2603\u2603"])[0] == [pieces.tokenizer.token_to_id("[UNK]")]


def test_one_layer_equals_a_numpy_reimplementation(encoder, tensors, pieces):
    ids, mask = _tiny_batch(pieces)
    real = mask.astype(bool)
    x = encoder.embed(ids, mask)
    np.testing.assert_allclose(np.asarray(x)[real], _np_embed(tensors, ids, mask)[real], atol=1e-5)
    ours = np.asarray(encoder.blocks[0](x, encoder.attention_bias(x, mask)))
    theirs = _np_layer(tensors, 0, np.asarray(x, dtype=np.float64), _np_bias(tensors, mask.astype(np.float64)))
    np.testing.assert_allclose(ours[real], theirs[real], atol=1e-4)
    # and the whole encoder, all twelve layers, from the ids
    h = _np_embed(tensors, ids, mask)
    bias = _np_bias(tensors, mask.astype(np.float64))
    for i in range(12):
        h = _np_layer(tensors, i, h, bias)
    out = np.asarray(encoder({"token_ids": ids, "padding_mask": mask}))
    np.testing.assert_allclose(out[real], h[real], atol=2e-4)
    # a sentence's vectors do not depend on the padding after it
    alone = np.asarray(encoder({"token_ids": ids[1:, : mask[1].sum()], "padding_mask": mask[1:, : mask[1].sum()]}))
    np.testing.assert_allclose(alone[0], out[1, : mask[1].sum()], atol=1e-4)


def _sentence_embeddings(encoder, pieces, texts):
    """As sentence-transformers: <s> pieces </s>, the mean over real tokens, L2-normalised."""
    rows = [[0, *pieces.tokenizer.encode(t, add_special_tokens=False).ids, 2] for t in texts]
    length = max(map(len, rows))
    ids = np.ones((len(rows), length), "int32")
    mask = np.zeros_like(ids)
    for k, r in enumerate(rows):
        ids[k, : len(r)], mask[k, : len(r)] = r, 1
    out = np.asarray(encoder({"token_ids": ids, "padding_mask": mask}))
    mean = (out * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
    return mean / np.linalg.norm(mean, axis=1, keepdims=True)


def test_paraphrases_are_close_and_unrelated_sentences_far(encoder, pieces):
    pairs = [
        ("The cat is sleeping on the sofa.", "A cat sleeps on the couch."),
        ("The government raised taxes on petrol.", "Fuel taxes were increased by the government."),
        ("How do I bake a chocolate cake?", "What is the recipe for a chocolate cake?"),
    ]
    others = [
        "The train to Paris leaves at noon.",
        "Penguins cannot fly but they swim well.",
        "Quantum computers use qubits.",
    ]
    emb = _sentence_embeddings(encoder, pieces, [s for p in pairs for s in p] + others)
    sim = emb @ emb.T
    for k in range(len(pairs)):
        assert sim[2 * k, 2 * k + 1] > 0.7, (pairs[k], sim[2 * k, 2 * k + 1])
    for a in range(len(pairs) * 2, len(emb)):
        for b in range(len(emb)):
            if a != b:
                assert sim[a, b] < 0.3, (a, b, sim[a, b])


def test_lora_adapts_query_and_value_only(encoder, pieces):
    from opinion_tagger.model.mpnet import build_encoder

    ids, mask = _tiny_batch(pieces)
    tuned = build_encoder(weights=False)
    for v, w in zip(tuned.weights, encoder.weights):
        v.assign(w)
    tuned.enable_lora(4)
    names = sorted(v.path for v in tuned.trainable_weights)
    assert len(names) == 12 * 2 * 3  # query and value of each layer: adapters A and B, and the bias
    assert all(n.split("/")[-2] in ("query", "value") for n in names)
    assert {n.split("/")[-1] for n in names} == {"lora_kernel_a", "lora_kernel_b", "bias"}
    before = np.asarray(encoder({"token_ids": ids, "padding_mask": mask}))
    np.testing.assert_allclose(np.asarray(tuned({"token_ids": ids, "padding_mask": mask})), before, atol=1e-5)


def test_damaged_assembled_weights_are_named_with_how_to_reassemble(monkeypatch, tmp_path):
    monkeypatch.setenv("OPINION_TAGGER_CACHE", str(tmp_path))
    with pytest.raises(TaggerError, match=r"not assembled .*opinion-tagger download --encoder mpnet"):
        mpnet_path()
    folder = base_weights.cache_dir(MPNET)
    folder.mkdir(parents=True)
    for name in MPNET.weights.files:
        (folder / name).write_text("{}")
    with pytest.raises(TaggerError, match=r"model.safetensors: sha256 .* not the pinned .*--encoder mpnet --force"):
        mpnet_path()


@pytest.mark.slow
def test_assembling_the_pieces_gives_the_pinned_files(monkeypatch, tmp_path):
    try:
        base_weights.part_files(MPNET)
    except TaggerError as exc:
        mpnet_weights()  # skips (fails under CI) when nothing is there
        pytest.skip(str(exc))
    monkeypatch.setenv("OPINION_TAGGER_CACHE", str(tmp_path))
    path = base_weights.assemble(MPNET)
    assert path == tmp_path / f"{MPNET.weights.archive}-{MPNET.weights.version}"
    assert sorted(p.name for p in path.iterdir()) == sorted(MPNET.weights.files)
    assert base_weights.assemble(MPNET) == path  # intact: not assembled again
    (path / "tokenizer.json").write_text("{}")
    with pytest.raises(TaggerError, match="tokenizer.json: sha256"):
        base_weights.verify(MPNET, path)


@pytest.mark.slow
def test_mpnet_lora_tagger_exports_to_onnx_equal_to_keras(tmp_path):
    """A network with contextual: mpnet and LoRA rank 4 (adapters set to random values, so the merge counts),
    saved as a bundle: weights.npz holds what training changes, model.onnx reads the encoder's unchanged
    weights from the assembled package, and ONNX Runtime's outputs equal Keras's within 1e-4."""
    import json

    from opinion_tagger.config import TaggerConfig
    from opinion_tagger.export.bundle_writer import save_bundle
    from opinion_tagger.export.onnx_export import sample_inputs
    from opinion_tagger.model.keras_backend import sentence_tagger
    from opinion_tagger.model.network import build_model
    from opinion_tagger.runtime.onnx_network import OnnxNetwork
    from opinion_tagger.runtime.sentence_tagger import SentenceTagger
    from opinion_tagger.runtime.vocabulary import Vocabulary

    mpnet_weights()
    cfg = TaggerConfig.from_dict(
        {
            "task": "joint",
            "model.recurrent.cell": "lstm",
            "model.recurrent.depth": 1,
            "model.recurrent.hidden": 8,
            "model.embeddings.features": "random",
            "model.embeddings.dim": 8,
            "model.encoder.name": "mpnet",
            "model.encoder.fine_tune": True,
            "model.encoder.lora_rank": 4,
            "model.head.output": "crf",
        }
    )
    vocab = Vocabulary(["<pad>", "<unk>", "the", "plan", "was", "robbery", ".", "officials", "said", "so"])
    model = build_model(cfg, len(vocab), 8)
    rng = np.random.default_rng(0)
    for layer in model._flatten_layers(include_self=False, recursive=True):
        if getattr(layer, "lora_enabled", False):
            layer.lora_kernel_b.assign(rng.normal(0, 0.05, layer.lora_kernel_b.shape).astype("float32"))
    save_bundle(tmp_path, model, vocab, cfg, {})
    meta = json.loads((tmp_path / "meta.json").read_text())
    assert meta["base_weights"]["sha256"] == "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"
    externals = meta["onnx"]["externals"]
    assert {e["source"] for e in externals.values()} == {"mpnet"}
    assert "mpnet/layer_3/key/kernel" in externals and "mpnet/word_embeddings/embeddings" in externals
    # the adapted kernels: the package's kernel (external) plus the adapters' factors, which model.onnx keeps
    assert externals["mpnet/layer_3/query/kernel/base"]["tensor"].endswith("layer.3.attention.attn.q.weight")
    assert "mpnet/layer_3/query/kernel" not in externals and "mpnet/layer_3/key/kernel/base" not in externals
    import onnx

    proto = onnx.load(str(tmp_path / "model.onnx"), load_external_data=False)
    stored = {i.name for i in proto.graph.initializer if i.data_location != onnx.TensorProto.EXTERNAL}
    assert {"mpnet/layer_3/query/kernel/lora_a", "mpnet/layer_11/value/kernel/lora_b"} <= stored
    assert not any(name.endswith("/query/kernel") for name in stored)
    assert (tmp_path / "model.onnx").stat().st_size < 2_000_000  # the merged kernels alone would be 57 MB
    assert sorted(meta["onnx"]["inputs"]) == ["padding_mask", "token_ids", "word_starts", "words"]
    inputs, words = sample_inputs(cfg, vocab)
    keras_out = model(inputs, training=False)
    onnx_out = OnnxNetwork(tmp_path, meta["onnx"], threads=1).forward(inputs)
    for t in cfg.types:
        np.testing.assert_allclose(onnx_out[t], np.asarray(keras_out[t])[..., :3], atol=1e-4)
    onnx_tags = SentenceTagger.load(tmp_path, backend="onnx").predict(words)
    keras_tags = sentence_tagger(model, vocab, cfg).predict(words)
    assert [{t: p[t][0] for t in p} for p in onnx_tags] == [{t: p[t][0] for t in p} for p in keras_tags]


def test_download_checks_an_assembled_copy(capsys):
    from opinion_tagger.cli import main

    path = mpnet_weights()
    assert main(["download", "--encoder", "mpnet"]) == 0
    assert f"already installed in {path}, sha256 checked" in capsys.readouterr().err


def test_config_reads_mpnet_only_inside_the_network():
    from opinion_tagger.config import TaggerConfig

    with pytest.raises(ValueError, match="model.encoder.name: mpnet is read inside the network"):
        TaggerConfig.from_dict({"model.encoder.name": "mpnet"})
    cfg = TaggerConfig.from_dict(
        {"model.encoder.name": "mpnet", "model.encoder.fine_tune": True, "model.encoder.lora_rank": 64}
    )
    assert TaggerConfig.from_dict(cfg.to_dict()) == cfg
