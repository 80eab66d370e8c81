"""--precision: fp32 in ONNX Runtime (the default) and bf16 in OpenVINO (the bf16 extra, a CPU with native bf16).

The bf16 plug-in's graph, compiled at f32, must tag as ONNX Runtime does (the same graph, the same weights, the
same arithmetic): that checks everything of the bf16 path but the precision, on any CPU.  bf16 itself runs only
where the CPU has native bf16; elsewhere it is refused in one line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from opinion_tagger.errors import TaggerError
from opinion_tagger.paths import resolve_model
from opinion_tagger.runtime.sentence_tagger import SentenceTagger

ov = pytest.importorskip("openvino", reason="the bf16 extra is not installed: pip install 'opinion-tagger[bf16]'")
pytest.importorskip("onnx", reason="the bf16 extra is not installed: pip install 'opinion-tagger[bf16]'")

from opinion_tagger.plugins.openvino_backend import OpenVinoNetwork, native_bf16  # noqa: E402

NATIVE_BF16 = native_bf16(ov.Core())


@pytest.fixture(scope="module")
def dev_words(shared_mpqa, shared_datasplit):
    from opinion_tagger.corpus.sources import load_documents, select
    from opinion_tagger.corpus.split import load_split

    sents = select(load_documents("mpqa", shared_mpqa), load_split(shared_datasplit, 0).dev)
    return [s.words for s in sents[:300]]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("OPINION_TAGGER_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / "openvino"


@pytest.mark.corpus
@pytest.mark.parametrize("model", ["fast", "accurate"])
def test_the_openvino_graph_at_f32_tags_as_onnx_runtime(model, dev_words, cache):
    """300 MPQA dev sentences in batches of mixed lengths (padded rows: OpenVINO's RNN sequences would read a
    padded row's backward direction from the padding's end, which the network's per-length groups avoid)."""
    bundle = resolve_model(model)
    tagger = SentenceTagger.load(bundle, threads=1)
    expected = tagger.predict(dev_words)
    tagger.network = OpenVinoNetwork(bundle, tagger.meta, threads=1, precision="f32")
    got = tagger.predict(dev_words)
    assert [{t: tags for t, (tags, _) in s.items()} for s in got] == [
        {t: tags for t, (tags, _) in s.items()} for s in expected
    ]
    worst = max(abs(a - b) for e, g in zip(expected, got) for t in e for a, b in zip(e[t][1], g[t][1]))
    assert worst < 1e-4


def test_the_compiled_network_is_cached_and_a_damaged_blob_compiled_again(cache):
    bundle = resolve_model("fast")
    meta = SentenceTagger.load(bundle, threads=1).meta
    words = [["They", "fear", "the", "worst", "."], ["He", "said", "so", "."]]
    first = OpenVinoNetwork(bundle, meta, threads=1, precision="f32")
    (blob,) = cache.glob("*.blob")
    record = json.loads(blob.with_suffix(".json").read_text())
    assert len(record["sha256"]) == 64
    from opinion_tagger.runtime.batching import encode_words

    ids = encode_words(SentenceTagger.load(bundle).vocab, words)
    blob.write_bytes(b"damaged" + blob.read_bytes()[7:])  # its sha256 no longer matches: compiled again
    again = OpenVinoNetwork(bundle, meta, threads=1, precision="f32")
    import hashlib

    rewritten = blob.read_bytes()
    assert json.loads(blob.with_suffix(".json").read_text())["sha256"] == hashlib.sha256(rewritten).hexdigest()
    assert not rewritten.startswith(b"damaged")
    stamp = blob.stat().st_mtime_ns
    cached = OpenVinoNetwork(bundle, meta, threads=1, precision="f32")  # read from the cache, not written again
    assert blob.stat().st_mtime_ns == stamp
    for net in (again, cached):
        for t, out in net.forward(ids).items():
            assert abs(out - first.forward(ids)[t]).max() < 1e-6


def test_precision_bf16_with_the_keras_back_end_is_refused():
    with pytest.raises(
        TaggerError, match=r"--precision bf16 runs the bundle's model.onnx: give it with --backend onnx"
    ):
        SentenceTagger.load(resolve_model("fast"), backend="keras", precision="bf16")


@pytest.mark.integration
@pytest.mark.skipif(NATIVE_BF16, reason="this CPU has native bf16")
def test_bf16_is_refused_in_one_line_on_a_cpu_without_native_bf16():
    done = subprocess.run(
        [sys.executable, "-m", "opinion_tagger", "tag", "--precision", "bf16", "They fear the worst."],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "--precision bf16 needs a CPU with native bf16 (AVX512_BF16 or AMX)" in done.stderr


@pytest.mark.corpus
@pytest.mark.skipif(not NATIVE_BF16, reason="this CPU has no native bf16 (AVX512_BF16 or AMX)")
def test_bf16_tags_nearly_as_fp32(dev_words, cache):
    from opinion_tagger.tagging.tagger import OpinionTagger

    tagger = SentenceTagger.load(resolve_model("accurate"), threads=1)
    expected = tagger.predict(dev_words)
    got = OpinionTagger.load("accurate", threads=1, precision="bf16").tagger.predict(dev_words)
    same = sum(e[t][0] == g[t][0] for e, g in zip(expected, got) for t in e)
    assert same >= 0.95 * sum(len(e) for e in expected)


def test_the_spacy_component_takes_the_precision():
    import spacy

    nlp = spacy.blank("en")
    component = nlp.add_pipe("opinion_tagger", config={"model": "fast", "precision": "bf16"})
    assert component.precision == "bf16" and nlp.config["components"]["opinion_tagger"]["precision"] == "bf16"
    if not NATIVE_BF16:
        with pytest.raises(TaggerError, match="native bf16"):
            nlp("They fear the worst.")
