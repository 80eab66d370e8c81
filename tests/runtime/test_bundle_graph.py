"""What tagging reads of a bundle: meta.json, config.json, vocab.txt, model.onnx (and the files model.onnx's
weights are rebuilt from, and the frame heads'), each checked by the manifest; model.onnx's graph, read as what it
declares without loading it, checked against config.json and vocab.txt.  Training state (model.keras, weights.npz)
is not read: a damaged one does not stop tagging."""

import json
import shutil

import numpy as np
import pytest

from opinion_tagger.errors import BundleError
from opinion_tagger.paths import BUNDLED, bundled_models
from opinion_tagger.runtime.bundle import BundleWarning, check_graph, load_bundle_files, read_config
from opinion_tagger.runtime.onnx_graph import read_signature
from opinion_tagger.runtime.sentence_tagger import SentenceTagger
from opinion_tagger.storage import make_manifest

FAST = BUNDLED / "fast"
WORDS = [["Officials", "said", "the", "plan", "was", "daylight", "robbery", "."], ["They", "fear", "the", "worst"]]


@pytest.fixture
def bundle(tmp_path):
    return shutil.copytree(FAST, tmp_path / "bundle")


def relist(bundle, name: str) -> None:
    """The manifest entry of ``name`` made for the file as it is now."""
    meta = json.loads((bundle / "meta.json").read_text())
    meta["manifest"] |= make_manifest(bundle, [name])
    (bundle / "meta.json").write_text(json.dumps(meta))


@pytest.mark.parametrize("name", bundled_models())
def test_the_graph_reader_reads_what_onnx_reads(name):
    onnx = pytest.importorskip("onnx")
    file = BUNDLED / name / "model.onnx"
    sig = read_signature(file)
    graph = onnx.load(str(file), load_external_data=False).graph

    def shape(value):
        return tuple(d.dim_value or None for d in value.type.tensor_type.shape.dim)

    assert sig.inputs == {i.name: shape(i) for i in graph.input}
    assert sig.outputs == {o.name: shape(o) for o in graph.output}
    assert sig.initializers == {t.name: tuple(t.dims) for t in graph.initializer}
    assert [(op.type, op.outputs) for op in sig.operators] == [(n.op_type, tuple(n.output)) for n in graph.node]


def test_tagging_reads_no_training_state(bundle):
    expected = SentenceTagger.load(FAST).predict(WORDS)
    for name in ("model.keras", "weights.npz"):  # present, listed or not, and damaged: not read
        (bundle / name).write_bytes(b"not a network")
    assert SentenceTagger.load(bundle).predict(WORDS) == expected


def test_an_edit_the_graph_cannot_show_is_refused_by_the_digest_of_the_exported_configuration(bundle):
    file = bundle / "config.json"
    config = json.loads(file.read_text())
    config["model"]["recurrent"]["dropout"] = 0.25
    file.write_text(json.dumps(config))
    relist(bundle, "config.json")
    with pytest.raises(BundleError) as exc:
        SentenceTagger.load(bundle)
    assert str(exc.value) == (
        f"{file}: not the configuration model.onnx was exported from (its sha256 in meta.json's onnx entry differs)"
    )


def test_a_file_that_is_not_an_onnx_graph_is_named(bundle):
    (bundle / "model.onnx").write_bytes(b"\x0agarbage")
    relist(bundle, "model.onnx")
    with pytest.raises(BundleError, match=r"^.*bundle/model.onnx: not an ONNX model \(.*\)$"):
        load_bundle_files(bundle)


def _graph(tmp_path, inputs, outputs):
    """A bundle folder whose model.onnx declares ``inputs`` and ``outputs`` ({name: shape}) and nothing else."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    def value(name, shape, kind):
        return helper.make_tensor_value_info(name, kind, list(shape))

    nodes = [helper.make_node("Identity", ["x"], [name]) for name in outputs]
    graph = helper.make_graph(
        nodes,
        "g",
        [value(n, s, TensorProto.INT32) for n, s in inputs.items()],
        [value(n, s, TensorProto.FLOAT) for n, s in outputs.items()],
    )
    folder = tmp_path / "graph"
    folder.mkdir()
    onnx.save_model(helper.make_model(graph), str(folder / "model.onnx"))
    return folder


@pytest.mark.parametrize(
    "inputs, outputs, message",
    [
        (
            {"words": [None, None], "token_ids": [None, None]},
            {"DSE": [None, None, 3], "ESE": [None, None, 3]},
            "field model.encoder.name/fine_tune gives inputs ['words'] but model.onnx has ['token_ids', 'words']",
        ),
        (
            {"words": [None, None]},
            {"DSE": [None, None, 3], "ESE": [None, None, 3], "states": [None, None, 200]},
            "field model.frames.enabled gives frames False but model.onnx has True",
        ),
        (
            {"words": [None, None]},
            {"DSE": [None, None, 3]},
            "field task gives task types ['DSE', 'ESE'] but model.onnx has ['DSE']",
        ),
        (
            {"words": [None, None]},
            {"DSE": [None, None, 2], "ESE": [None, None, 3]},
            "model.onnx: output DSE has 2 values a word, not one per tag (O, B, I)",
        ),
    ],
)
def test_inputs_and_outputs_that_are_not_the_configurations_are_named(tmp_path, inputs, outputs, message):
    folder = _graph(tmp_path, inputs, outputs)
    config = read_config(FAST / "config.json")
    with pytest.raises(BundleError) as exc:
        check_graph(folder, config, 100, {})
    assert str(exc.value).startswith(str(folder)) and str(exc.value).endswith(message)
    assert "\n" not in str(exc.value)


def test_a_bundle_without_a_manifest_is_still_checked_against_its_graph(bundle):
    meta = json.loads((bundle / "meta.json").read_text())
    del meta["manifest"]
    (bundle / "meta.json").write_text(json.dumps(meta))
    config = json.loads((bundle / "config.json").read_text())
    config["model"]["recurrent"]["depth"] = 1
    (bundle / "config.json").write_text(json.dumps(config))
    with pytest.warns(BundleWarning), pytest.raises(BundleError, match="field model.recurrent.depth gives depth 1 "):
        load_bundle_files(bundle)


def test_the_word_vectors_rows_are_read_from_the_file_the_graph_names():
    """A LoRA-tuned encoder's bundle rebuilds model.onnx's word-vector table from glove_rows.npz (its GloVe rows),
    listed in the manifest; the table is checked by sha256 when it is rebuilt."""
    for name in bundled_models():
        _, config, meta = load_bundle_files(BUNDLED / name)
        files = {e["file"] for e in meta["onnx"]["externals"].values() if "file" in e}
        if config.model.encoder.lora_rank:
            assert files == {"glove_rows.npz"} and "glove_rows.npz" in meta["manifest"], name
            with np.load(BUNDLED / name / "glove_rows.npz") as rows:
                assert set(rows.files) == {f"embedding::table::{k}" for k in ("glove_rows", "trained", "sha256")}
        else:
            assert not files, name


def test_a_bundle_written_before_frames_onnx_is_refused_with_the_command_that_upgrades_it(tmp_path):
    """Frame heads were a frames.npz of their weights, run in NumPy; now frames.onnx, run by ONNX Runtime."""
    pytest.importorskip("onnx")
    from opinion_tagger.export.bundle_writer import frames_to_onnx
    from opinion_tagger.model.onnx_weights import bundle_head_arrays

    bundle = shutil.copytree(BUNDLED / "accurate", tmp_path / "old")
    config = read_config(bundle / "config.json")
    with open(bundle / "frames.npz", "wb") as fh:
        np.savez(fh, **bundle_head_arrays(bundle, config))
    meta = json.loads((bundle / "meta.json").read_text())
    del meta["manifest"]["frames.onnx"]
    meta["manifest"] |= make_manifest(bundle, ["frames.npz"])
    (bundle / "meta.json").write_text(json.dumps(meta))
    (bundle / "frames.onnx").unlink()
    with pytest.raises(BundleError) as exc:
        SentenceTagger.load(bundle)
    assert str(exc.value) == (
        f"{bundle / 'frames.onnx'}: missing from the model bundle "
        f"(written before it: `opinion-tagger export-onnx {bundle}` writes it from frames.npz)"
    )
    frames_to_onnx(bundle)  # what export-onnx does first
    assert not (bundle / "frames.npz").exists()
    expected = SentenceTagger.load(BUNDLED / "accurate").predict_frames(WORDS)
    assert SentenceTagger.load(bundle).predict_frames(WORDS) == expected
