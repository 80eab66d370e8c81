"""Tiny models on the invented sample corpus: overfitting, bundles, resume, CLI errors."""

import json

import numpy as np
import pytest

from opinion_tagger.cli import main
from opinion_tagger.config import TaggerConfig
from opinion_tagger.corpus import MPQACorpus, mpqa_sentences
from opinion_tagger.errors import BundleError, TaggerError
from opinion_tagger.evaluation.scoring import evaluate_tagger
from opinion_tagger.runtime.sentence_tagger import SentenceTagger
from opinion_tagger.storage import make_manifest
from opinion_tagger.training.checkpoints import checkpoint_dirs
from opinion_tagger.training.run import train
from opinion_tagger.training.trainer import CHECKPOINT_FILES, Trainer

TINY = {
    "model.recurrent.depth": 2,
    "model.recurrent.hidden": 12,
    "model.recurrent.input_dropout": 0.0,
    "model.recurrent.dropout": 0.0,
    "training.optimizer.learning_rate": 0.02,
    "training.batch_size": 4,
    "model.embeddings.features": "random",
    "model.embeddings.dim": 12,
}


@pytest.fixture
def sample_sentences(sample_mpqa):
    return list(mpqa_sentences(MPQACorpus(sample_mpqa)))


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    from conftest import make_sample

    root = make_sample.write_sample(tmp_path_factory.mktemp("data") / "mpqa")
    sents = list(mpqa_sentences(MPQACorpus(root)))
    out = tmp_path_factory.mktemp("model") / "joint"
    cfg = TaggerConfig.from_dict(
        {
            "task": "joint",
            "model.recurrent.cell": "elman",
            "training.stopping.max_epochs": 40,
            "training.stopping.patience": 40,
            **TINY,
        }
    )
    tagger, meta = train(cfg, sents, sents, out, progress=False, record={"data": {"source": "test"}})
    return sents, out, tagger, meta


@pytest.mark.integration
def test_tiny_model_overfits_to_f1_one(trained):
    sents, _, tagger, meta = trained
    report = evaluate_tagger(tagger, sents)
    for t in ("DSE", "ESE"):
        assert report[t]["proportional"]["f1"] == pytest.approx(1.0)
        assert report[t]["binary"]["f1"] == pytest.approx(1.0)
    assert meta["training"]["parameters"]["network"] > 0
    assert meta["scores"]["dev"]["DSE"]["proportional"]["f1"] == pytest.approx(1.0)


@pytest.mark.integration
def test_save_load_identical_predictions(trained):
    sents, out, tagger, _ = trained
    loaded = SentenceTagger.load(out, backend="keras")  # the Keras round trip; ONNX: tests/export/test_onnx_export.py
    words = [s.words for s in sents] + [["Unseen", "words", "here"], []]
    assert loaded.predict(words) == tagger.predict(words)
    assert loaded.config == tagger.config
    meta = json.loads((out / "meta.json").read_text())
    assert meta["format_version"] == 1 and meta["types"] == ["DSE", "ESE"]


@pytest.mark.integration
def test_bundle_errors_name_the_path(trained, tmp_path):
    with pytest.raises(BundleError, match="not found"):
        SentenceTagger.load(tmp_path / "nothing")
    import shutil

    bad = tmp_path / "bad"
    shutil.copytree(trained[1], bad, ignore=shutil.ignore_patterns("checkpoint"))
    (bad / "model.keras").write_bytes(b"not a zip file")
    SentenceTagger.load(bad)  # tagging reads model.onnx, not the training state
    with pytest.raises(BundleError, match=r"bad/model.keras"):
        SentenceTagger.load(bad, backend="keras")
    (bad / "vocab.txt").unlink()
    with pytest.raises(BundleError, match="vocab.txt"):
        SentenceTagger.load(bad)


@pytest.mark.integration
def test_resume_continues_from_last_checkpoint(sample_sentences, tmp_path):
    cfg = TaggerConfig.from_dict(
        {
            "task": "dse",
            "model.recurrent.cell": "gru",
            "training.stopping.max_epochs": 4,
            "training.stopping.patience": 10,
            **TINY,
        }
    )
    straight = Trainer(cfg, tmp_path / "a", progress=False).run(sample_sentences, sample_sentences)[1]

    class Stop(Exception):
        pass

    def interrupt(entry):
        if entry["epoch"] == 2:
            raise Stop

    with pytest.raises(Stop):
        Trainer(cfg, tmp_path / "b", progress=False, on_epoch=interrupt).run(sample_sentences, sample_sentences)
    (_, last), (_, previous) = checkpoint_dirs(tmp_path / "b")
    assert json.loads((last / "state.json").read_text())["epoch"] == 2 and previous.name == "epoch-0001"
    # a second start without --resume refuses to overwrite
    from opinion_tagger.errors import TaggerError

    with pytest.raises(TaggerError, match="--resume"):
        Trainer(cfg, tmp_path / "b", progress=False).run(sample_sentences, sample_sentences)
    # optimizer state is matched to the model's variables one by one (count and shapes), even in a
    # checkpoint whose manifest agrees
    opt, manifest = last / "optimizer.npz", last / "manifest.json"
    good, good_manifest = opt.read_bytes(), manifest.read_bytes()
    with np.load(opt) as saved:
        arrays = {k: saved[k] for k in saved.files}
    arrays["v2"], arrays["v3"] = arrays["v3"], np.zeros((1, 1), "float32")
    np.savez(opt, **arrays)
    manifest.write_text(json.dumps(make_manifest(last, CHECKPOINT_FILES)))
    with pytest.raises(TaggerError, match="optimizer state does not match"):
        Trainer(cfg, tmp_path / "b", progress=False).run(sample_sentences, sample_sentences, resume=True)
    opt.write_bytes(good)
    manifest.write_bytes(good_manifest)
    seen = []
    resumed = Trainer(cfg, tmp_path / "b", progress=False, on_epoch=seen.append).run(
        sample_sentences, sample_sentences, resume=True
    )[1]
    assert [e["epoch"] for e in seen] == [3, 4]
    a = [h["loss"] for h in straight["training"]["history"]]
    b = [h["loss"] for h in resumed["training"]["history"]]
    assert a == b


@pytest.mark.integration
def test_crf_joint_model_trains_and_reloads(sample_sentences, tmp_path):
    cfg = TaggerConfig.from_dict(
        {
            "task": "joint",
            "model.recurrent.cell": "lstm",
            "model.head.output": "crf",
            "training.stopping.max_epochs": 25,
            "training.stopping.patience": 25,
            **TINY,
        }
    )
    tagger, _ = train(cfg, sample_sentences, sample_sentences, tmp_path / "crf", progress=False)
    report = evaluate_tagger(tagger, sample_sentences)
    assert report["DSE"]["proportional"]["f1"] > 0.8
    words = [s.words for s in sample_sentences]
    assert SentenceTagger.load(tmp_path / "crf", backend="keras").predict(words) == tagger.predict(words)


@pytest.fixture
def length_buckets(monkeypatch):
    """Set OPINION_TAGGER_LENGTH_BUCKETS for the test (and forget it after)."""
    from opinion_tagger.runtime import batching as features

    def use(text: str):
        monkeypatch.setenv(features.BUCKETS_VARIABLE, text)
        features.length_buckets.cache_clear()
        return features.bucket_length

    yield use
    monkeypatch.delenv(features.BUCKETS_VARIABLE, raising=False)
    features.length_buckets.cache_clear()


@pytest.mark.integration
@pytest.mark.parametrize("output", ["softmax", "crf"])
def test_coarser_length_buckets_pad_more_and_learn_the_same(sample_sentences, tmp_path, length_buckets, output):
    """Padding is masked: coarser buckets change the shapes compiled, not the losses or the tags."""
    words = [s.words for s in sample_sentences]
    runs = {}
    for name, text in (("default", ""), ("coarse", "64,128,256")):
        bucket_length = length_buckets(text)
        assert bucket_length(5) == (8 if name == "default" else 64)
        cfg = TaggerConfig.from_dict(
            {
                "task": "joint",
                "model.recurrent.cell": "lstm",
                "model.head.output": output,
                "training.stopping.max_epochs": 3,
                "training.stopping.patience": 3,
                **TINY,
            }
        )
        tagger, meta = train(cfg, sample_sentences, sample_sentences, tmp_path / name, progress=False)
        runs[name] = ([h["loss"] for h in meta["training"]["history"]], tagger.predict(words))
        assert meta["training"]["device"].endswith("length buckets 64,128,256") == (name == "coarse")
    assert runs["coarse"][0] == pytest.approx(runs["default"][0], rel=1e-4)
    for coarse, default in zip(runs["coarse"][1], runs["default"][1], strict=True):
        for t in ("DSE", "ESE"):
            assert coarse[t][0] == default[t][0]  # tags
            assert coarse[t][1] == pytest.approx(default[t][1], abs=1e-5)  # confidences


@pytest.mark.parametrize("text", ["10,20", "64,32", "16,512", "sixteen"])
def test_bad_length_buckets_are_one_line_errors(length_buckets, text):
    with pytest.raises(TaggerError, match="OPINION_TAGGER_LENGTH_BUCKETS=.*increasing multiples of 8"):
        length_buckets(text)(5)


JIT_SCRIPT = """
import json
from opinion_tagger.config import TaggerConfig
from opinion_tagger.model.network import build_training_model, compile_model
out = {}
for output in ("crf", "softmax"):
    cfg = TaggerConfig.from_dict({"task": "joint", "model": {"recurrent": {"cell": "lstm", "hidden": 4},
                                  "head": {"output": output}, "embeddings": {"features": "random", "dim": 8}}})
    model = build_training_model(cfg, 20, 8)
    compile_model(model, cfg)
    out[output] = model.jit_compile
print("RESULT " + json.dumps(out))
"""


@pytest.mark.integration
def test_training_steps_compile_on_jax_and_crf_steps_not_on_tensorflow():
    """On TensorFlow, ``jit_compile`` asks for XLA except for a CRF (its scan's gradient does not compile there).
    On JAX every step is compiled, the CRF's too: uncompiled, each step traces and compiles the scans again."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    import keras

    from opinion_tagger.model.network import build_training_model, compile_model

    if keras.backend.backend() == "tensorflow":
        for output, jit, expected in (("crf", True, False), ("softmax", True, True), ("softmax", False, False)):
            cfg = TaggerConfig.from_dict(
                {
                    "task": "joint",
                    "model.recurrent.cell": "lstm",
                    "model.head.output": output,
                    "training.jit_compile": jit,
                    **TINY,
                }
            )
            model = build_training_model(cfg, 20, cfg.model.embeddings.dim)
            compile_model(model, cfg)
            assert model.jit_compile is expected, (output, jit)
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "KERAS_BACKEND": "jax", "PYTHONPATH": str(root)}
    proc = subprocess.run([sys.executable, "-c", JIT_SCRIPT], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(next(ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT "))[7:])
    assert result == {"crf": True, "softmax": True}


@pytest.mark.integration
def test_mixed_bfloat16_trains_in_bfloat16_and_saves_float32(sample_sentences, tmp_path):
    import keras

    from opinion_tagger.training.models import fresh_model

    cfg = TaggerConfig.from_dict(
        {
            "task": "joint",
            "model.recurrent.cell": "lstm",
            "model.head.output": "crf",
            "training.precision": "mixed_bfloat16",
            "training.stopping.max_epochs": 25,
            "training.stopping.patience": 25,
            **TINY,
        }
    )
    _, net = fresh_model(cfg, sample_sentences, [])
    assert keras.config.dtype_policy().name == "float32"  # only the training network was built under the policy
    assert (
        net.get_layer("birnn_1").compute_dtype == "bfloat16" and net.get_layer("embedding").compute_dtype == "bfloat16"
    )
    assert {net.get_layer(n).compute_dtype for n in ("DSE", "DSE_emissions", "ESE", "ESE_emissions")} == {"float32"}
    assert {v.dtype for v in net.trainable_weights} == {"float32"}
    tagger, meta = train(cfg, sample_sentences, sample_sentences, tmp_path / "bf16", progress=False)
    assert evaluate_tagger(tagger, sample_sentences)["DSE"]["proportional"]["f1"] > 0.8
    assert {layer.compute_dtype for layer in tagger.network.model.layers if layer.weights} == {"float32"}
    reloaded = SentenceTagger.load(tmp_path / "bf16", backend="keras")
    assert reloaded.config.training.precision == "mixed_bfloat16"
    words = [s.words for s in sample_sentences]
    assert reloaded.predict(words) == tagger.predict(words)


@pytest.mark.parametrize(
    "argv",
    [
        ["train", "--out", "x", "--depth", "9"],
        ["train", "--out", "x", "--batch-size", "0"],
        ["train", "--out", "x", "--budget", "24k", "--hidden", "10"],
        ["train", "--out", "x", "--cell", "transformer"],
        ["train"],
        ["evaluate", "--split", "train"],  # evaluate alone scores the default model: no usage error
    ],
)
def test_bad_cli_arguments_are_usage_errors(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "error:" in err and "--help" in err  # one line naming the problem


def test_cli_errors_are_one_line(tmp_path, capsys):
    assert main(["evaluate", "--model", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "none" in err
    assert main(["train", "--data", "nosuch", str(tmp_path), "--out", str(tmp_path / "m")]) == 2
    assert "unknown source" in capsys.readouterr().err


@pytest.mark.integration
def test_cli_train_and_evaluate_on_sample(sample_mpqa, tmp_path, capsys):
    """Fold files made for the sample: train on doc-a, dev is doc-b, test on doc-c."""
    from conftest import write_split

    split = write_split(tmp_path / "split", {0: ("demo/doc-a\n", "other/doc-c\n")})
    out = tmp_path / "m"
    rc = main(
        [
            "train",
            "--data",
            "mpqa",
            str(sample_mpqa),
            "--datasplit",
            str(split),
            "--fold",
            "0",
            "--task",
            "ese",
            "--cell",
            "elman",
            "--depth",
            "1",
            "--hidden",
            "8",
            "--features",
            "random",
            "--max-epochs",
            "2",
            "--quiet",
            "--out",
            str(out),
        ]
    )
    assert rc == 0
    capsys.readouterr()
    assert main(["evaluate", "--model", str(out), "--datasplit", str(split), "--fold", "0", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report) == {"ESE"} and set(report["ESE"]) == {"binary", "proportional", "exact"}
    assert 0.0 <= report["ESE"]["proportional"]["f1"] <= 1.0


def test_decoded_tags_are_valid_iob2():
    from opinion_tagger.runtime.batching import decode_tags

    # a stray I (after O, or first in the sentence) begins a span: B
    assert decode_tags([2, 2, 0, 2, 1, 2, 0], "ESE") == ["B-ESE", "I-ESE", "O", "B-ESE", "B-ESE", "I-ESE", "O"]
    assert decode_tags([], "DSE") == []


def test_cosine_schedule_warms_up_then_decays_to_zero():
    from opinion_tagger.model.network import learning_rate

    assert (
        learning_rate(TaggerConfig.from_dict({"training.optimizer.learning_rate": 0.01}), 7) == 0.01
    )  # constant: the number itself
    sched = learning_rate(
        TaggerConfig.from_dict(
            {
                "training.optimizer.learning_rate": 0.01,
                "training.schedule.name": "cosine",
                "training.stopping.max_epochs": 2,
            }
        ),
        50,
    )
    # 100 steps: warm-up over the first 10 (0 -> 0.01), then cosine decay over the other 90
    rate = {s: float(sched(s)) for s in (0, 5, 10, 55, 100)}
    assert rate[0] == pytest.approx(0.0) and rate[5] == pytest.approx(0.005) and rate[10] == pytest.approx(0.01)
    assert rate[55] == pytest.approx(0.005) and rate[100] == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize(
    "values, message",
    [
        ({"model.recurrent.depth": 0}, "depth: 0 .no recurrent layer. needs an encoder"),
        ({"model.encoder.fine_tune": True}, "model.encoder.fine_tune: true needs an encoder"),
        (
            {"model.encoder": {"name": "minilm", "fine_tune": True, "pooling": "mean"}},
            "a fine-tuned encoder reads each word's first wordpiece",
        ),
        ({"training.schedule.name": "linear"}, 'training.schedule.name: "linear" is not one of constant, cosine'),
        ({"training.precision": "float16"}, '"float16" is not one of float32, mixed_bfloat16'),
        (
            {"training.trainer": "fast", "training.precision": "mixed_bfloat16"},
            "training.precision: mixed_bfloat16 needs training.trainer: keras",
        ),
    ],
)
def test_config_rejects_inconsistent_contextual_settings(values, message):
    with pytest.raises(ValueError, match=message):
        TaggerConfig.from_dict(values)


def test_keras_trainer_weights_gold_o_tokens():
    """``o_weight`` on the Keras trainer: per-token sample weights, o_weight where the gold tag is O; a
    batch whose gold tags are all O has exactly o_weight times the unweighted loss."""
    from opinion_tagger.model.network import build_model, compile_model
    from opinion_tagger.training.trainer import o_weights

    y = {"DSE": np.array([[0, 1, 2, 0]])}
    assert o_weights(y, 1.0) is None
    assert o_weights(y, 0.5)["DSE"].tolist() == [[0.5, 1.0, 1.0, 0.5]]
    cfg = TaggerConfig.from_dict(
        {
            "task": "dse",
            "model.recurrent.depth": 1,
            "model.recurrent.hidden": 3,
            "model.embeddings.features": "random",
            "model.embeddings.dim": 4,
            "model.recurrent.input_dropout": 0,
            "model.recurrent.dropout": 0,
            "training.o_weight": 0.25,
        }
    )
    model = build_model(cfg, 10, 4)
    compile_model(model, cfg)
    x = np.array([[1, 2, 3, 4, 0], [5, 6, 0, 0, 0]], dtype="int32")
    all_o = {"DSE": np.zeros((2, 5), dtype="int32")}
    plain = model.test_on_batch(x, all_o, return_dict=True)["loss"]
    weighted = model.test_on_batch(x, all_o, sample_weight=o_weights(all_o, cfg.training.o_weight), return_dict=True)[
        "loss"
    ]
    assert weighted == pytest.approx(0.25 * plain, rel=1e-6)


@pytest.mark.integration
@pytest.mark.parametrize("trainer", ["keras", "fast"])
def test_patience_waits_until_the_network_tags_something(sample_sentences, trainer, tmp_path):
    """Trained on sentences stripped of their opinion spans, the network learns to tag everything O, so its
    dev F1 stays 0: such a run is not converged and trains on to max_epochs instead of stopping after
    ``patience`` evaluations.  A run that tags something stops as before."""
    from opinion_tagger.sentences import Sentence
    from opinion_tagger.training.stopping import patience_counts

    if trainer == "fast":
        pytest.importorskip("jax")
        pytest.importorskip("optax")
    assert patience_counts(None, True) is False and patience_counts(0.0, True) is False
    assert patience_counts(0.01, True) is True and patience_counts(-3.0, False) is True  # no dev: loss
    all_o = [
        Sentence(s.tokens, {t: ["O"] * len(s) for t in s.tags}, doc=s.doc, index=s.index) for s in sample_sentences
    ]
    cfg = TaggerConfig.from_dict(
        {
            "task": "dse",
            "training.trainer": trainer,
            "training.stopping.max_epochs": 4,
            "training.stopping.patience": 1,
            **TINY,
        }
    )
    _, meta = train(cfg, all_o, sample_sentences, tmp_path / "stuck", progress=False)
    assert [h["dev_score"] for h in meta["training"]["history"]] == [0.0] * 4
    assert meta["training"]["epochs"] == 4  # patience 1 alone would have stopped it after epoch 2
    _, meta = train(
        cfg.replace({"training.stopping.max_epochs": 12}),
        sample_sentences,
        sample_sentences,
        tmp_path / "learns",
        progress=False,
    )
    scores = [h["dev_score"] for h in meta["training"]["history"]]
    assert max(scores) > 0 and meta["training"]["epochs"] == min(12, scores.index(max(scores)) + 2)


@pytest.mark.integration
@pytest.mark.parametrize("output", ["softmax", "crf"])
def test_the_keras_trainer_learns_from_a_teacher_and_its_noisy_copies(sample_sentences, tmp_path, output):
    """A tiny student of the bundled fast model: the teacher tags the training text and one noisy copy of it,
    the student's loss mixes the teacher's probabilities and gold, and the bundle records the teacher."""
    from opinion_tagger.paths import resolve_model

    teacher = resolve_model("fast")
    cfg = TaggerConfig.from_dict(
        {
            "task": "joint",
            "model.recurrent.cell": "lstm",
            "model.head.output": output,
            "training.stopping.max_epochs": 2,
            "training.stopping.patience": 2,
            "training.distillation.teacher": str(teacher),
            "training.distillation.weight": 0.5,
            "training.distillation.copies": 1,
            "training.distillation.noise": 0.3,
            **TINY,
        }
    )
    tagger, meta = train(cfg, sample_sentences, sample_sentences, tmp_path / "student", progress=False)
    record = meta["training"]["teacher"]
    assert record["bundle"] == str(teacher) and record["copies"] == len(sample_sentences)
    assert all(np.isfinite(h["loss"]) for h in meta["training"]["history"])
    saved = json.loads((tmp_path / "student" / "config.json").read_text())
    assert saved["training"]["distillation"]["weight"] == 0.5
    words = [s.words for s in sample_sentences]
    assert SentenceTagger.load(tmp_path / "student", backend="keras").predict(words) == tagger.predict(words)
    assert SentenceTagger.load(tmp_path / "student").predict_tags(words) == tagger.predict_tags(words)
