"""The spaCy pipeline component: found through its entry point, the same spans as ``OpinionTagger.tag``
through ``nlp(...)`` and ``nlp.pipe`` (also in two processes), the pipeline's sentences and tokens used, a
saved pipeline loaded again, displaCy's span view."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import spacy
from conftest import need_encoder

from opinion_tagger import OpinionTagger

TEXTS = [
    "Officials said the plan was daylight robbery, as usual.",
    "The minister fears the worst; critics called the deal a complete waste of money.",
    "It rained in the morning.",
]


def spans(doc, key="opinions"):
    group = doc.spans[key]
    return [(s.label_, s.start_char, s.end_char) for s in group], [round(float(x), 4) for x in group.attrs["scores"]]


def tagged(ot, text):
    doc = ot.tag(text)
    return [(s.type, s.start, s.end) for s in doc.spans], [s.score for s in doc.spans]


@pytest.fixture(scope="module")
def fast_nlp():
    nlp = spacy.blank("en")
    nlp.add_pipe("opinion_tagger", config={"model": "fast"})
    return nlp


@pytest.mark.integration
def test_the_factory_is_found_without_importing_the_package_first():
    code = (
        "import spacy; nlp = spacy.blank('en'); "  # no import of opinion_tagger: spaCy reads the entry point
        "nlp.add_pipe('opinion_tagger', config={'model': 'fast'}); "
        "doc = nlp('Officials said the plan was daylight robbery.'); "
        "print(sorted({s.label_ for s in doc.spans['opinions']}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[0] == "['DSE', 'ESE']"


def test_spans_and_scores_equal_opinion_taggers(fast_nlp):
    ot = OpinionTagger.load("fast")
    for text in TEXTS:
        assert spans(fast_nlp(text)) == tagged(ot, text)
    assert [spans(d) for d in fast_nlp.pipe(TEXTS, batch_size=2)] == [tagged(ot, t) for t in TEXTS]
    doc = fast_nlp(TEXTS[0])
    assert doc.spans["opinions"][0].label_ == "DSE"


def test_the_doc_keeps_its_own_annotation(fast_nlp):
    doc = fast_nlp(TEXTS[1])
    assert not doc.has_annotation("SENT_START")  # the component's own sentences did not change the Doc
    nlp = spacy.blank("en")
    nlp.add_pipe("opinion_tagger", config={"model": "fast", "spans_key": "mine"})
    assert list(nlp(TEXTS[0]).spans) == ["mine"]


def test_batch_size_makes_batches_of_that_many_sentences_as_opinion_taggers_does():
    nlp = spacy.blank("en")
    component = nlp.add_pipe("opinion_tagger", config={"model": "fast", "batch_size": 2})
    assert component.tagger.batch_size == 2
    rows = []
    forward = component.tagger.tagger.network.forward
    component.tagger.tagger.network.forward = lambda inputs: (
        rows.append(len(inputs["words"] if isinstance(inputs, dict) else inputs)) or forward(inputs)
    )
    text = " ".join(TEXTS)  # three sentences, as its sentencizer cuts them
    doc = nlp(text)
    assert sorted(rows, reverse=True) == [2, 1]
    assert spans(doc) == tagged(OpinionTagger.load("fast"), text)
    default = spacy.blank("en").add_pipe("opinion_tagger", config={"model": "fast"})
    assert default.tagger.batch_size == OpinionTagger.load("fast").batch_size  # within the model's budgets


def test_sentences_set_by_an_earlier_component_are_used(fast_nlp):
    ot = OpinionTagger.load("fast")
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer", config={"punct_chars": [";"]})  # cuts at the semicolon only
    nlp.add_pipe("opinion_tagger", config={"model": "fast"})
    text = "Officials said the plan was daylight robbery. They hated it; the minister fears the worst."
    doc = nlp(text)
    assert [s.text for s in doc.sents][0].endswith("hated it;")
    expected = ot.tag_docs([nlp.make_doc(text)], [[t.i == 0 or t.nbor(-1).text == ";" for t in nlp.make_doc(text)]])
    assert spans(doc) == ([(s.type, s.start, s.end) for s in expected[0].spans], [s.score for s in expected[0].spans])


def test_another_tokenizer_is_tagged_on_its_own_tokens():
    from spacy.tokens import Doc

    class Whitespace:
        def __init__(self, vocab):
            self.vocab = vocab

        def __call__(self, text):
            return Doc(self.vocab, words=text.split())

    nlp = spacy.blank("en")
    nlp.tokenizer = Whitespace(nlp.vocab)
    nlp.add_pipe("opinion_tagger", config={"model": "fast"})
    doc = nlp("Officials said, as usual, that the plan was daylight robbery.")
    assert "said," in [t.text for t in doc]  # its tokens, punctuation attached
    ot = OpinionTagger.load("fast")
    expected = ot.tag_docs([doc])[0]
    assert spans(doc)[0] == [(s.type, s.start, s.end) for s in expected.spans]
    assert all(s.text == doc.text[s.start_char : s.end_char] for s in doc.spans["opinions"])  # whole tokens


@pytest.mark.integration
def test_two_processes_tag_as_one():
    """``nlp.pipe(..., n_process=2)`` in a fresh interpreter (forking this test process, which has loaded
    TensorFlow and JAX in other tests, is what no program should do): the same spans as one process, also after
    the parent tagged once itself."""
    code = (
        "import json, spacy\n"
        "nlp = spacy.blank('en'); nlp.add_pipe('opinion_tagger', config={'model': 'fast'})\n"
        f"texts = {TEXTS * 4!r}\n"
        "spans = lambda d: [(s.label_, s.start_char, s.end_char) for s in d.spans['opinions']]\n"
        "first = nlp(texts[0])\n"
        "one = [spans(d) for d in nlp.pipe(texts, batch_size=3)]\n"
        "two = [spans(d) for d in nlp.pipe(texts, batch_size=3, n_process=2)]\n"
        "print(json.dumps([one == two, len(two), sum(map(len, two))]))\n"
    )
    # its own process group, so that a timeout stops the workers it forked too, not only the script
    with subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    ) as proc:
        try:
            out, err = proc.communicate(timeout=600)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            raise
    done = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    assert done.returncode == 0, done.stderr[-2000:]
    same, n, found = json.loads(done.stdout.strip().splitlines()[-1])
    assert same and n == 12 and found > 0


def test_a_saved_pipeline_refers_to_its_model_unless_asked_to_copy_it(tmp_path, fast_nlp):
    fast_nlp.to_disk(tmp_path / "by-name")
    cfg = (tmp_path / "by-name" / "config.cfg").read_text()
    assert 'model = "fast"' in cfg and not (tmp_path / "by-name" / "opinion_tagger" / "model").exists()
    assert spans(spacy.load(tmp_path / "by-name")(TEXTS[0])) == spans(fast_nlp(TEXTS[0]))
    nlp = spacy.blank("en")
    nlp.add_pipe("opinion_tagger", config={"model": "fast", "copy_model": True})
    nlp.to_disk(tmp_path / "copied")
    copied = tmp_path / "copied" / "opinion_tagger" / "model"
    assert json.loads((copied / "meta.json").read_text())["manifest"]
    loaded = spacy.load(tmp_path / "copied")
    assert Path(loaded.get_pipe("opinion_tagger").model) == copied
    assert spans(loaded(TEXTS[0])) == spans(fast_nlp(TEXTS[0]))


def test_a_model_that_does_not_exist_is_one_line():
    from opinion_tagger.errors import BundleError

    with pytest.raises(BundleError, match="no-such-model"):
        spacy.blank("en").add_pipe("opinion_tagger", config={"model": "no-such-model"})


def test_displacy_shows_the_span_group(fast_nlp):
    from spacy import displacy

    html = displacy.render(fast_nlp(TEXTS[0]), style="span", options={"spans_key": "opinions"})
    assert "DSE" in html and "ESE" in html and "daylight" in html


@pytest.mark.corpus
@pytest.mark.slow
def test_on_300_mpqa_sentences_the_component_equals_the_tagger(shared_mpqa):
    """The default model on MPQA's raw text: the same spans and scores through nlp(...) and nlp.pipe."""
    from opinion_tagger.corpus.mpqa import MPQACorpus
    from opinion_tagger.tokenize import split_sentences

    need_encoder("accurate")
    texts, n = [], 0
    for document in MPQACorpus(shared_mpqa):
        text = document.text
        texts.append(text)
        n += len(split_sentences(text))
        if n >= 300:
            break
    ot = OpinionTagger.load()
    nlp = spacy.blank("en")
    nlp.add_pipe("opinion_tagger")
    expected = [tagged(ot, t) for t in texts]
    assert [spans(d) for d in nlp.pipe(texts)] == expected
    assert [spans(nlp(t)) for t in texts[:3]] == expected[:3]
    assert sum(len(e[0]) for e in expected) > 100


@pytest.fixture
def role_nlp():
    """A pipeline whose component tags with the stand-in for a model with attitude and target heads."""
    from role_frames import role_tagger

    nlp = spacy.blank("en")
    component = nlp.add_pipe("opinion_tagger", config={"model": "fast"})
    component._tagger, component._pid = role_tagger(), os.getpid()
    return nlp


def test_a_dses_attitude_and_targets_are_extension_attributes_and_a_span_group(role_nlp):
    from role_frames import TEXT

    doc = role_nlp(TEXT)
    assert list(doc.spans) == ["opinions", "opinion_targets"]
    opinions, targets = doc.spans["opinions"], doc.spans["opinion_targets"]
    assert [(s.label_, s.text) for s in opinions] == [("DSE", "dislike"), ("ESE", "sadly"), ("DSE", "shrugged")]
    assert [(t.label_, t.start_char, t.end_char, t.text) for t in targets] == [("TARGET", 31, 44, "parking rules")]
    assert [round(float(x), 4) for x in targets.attrs["scores"]] == [0.9]
    assert (targets.attrs["opinions"], targets.attrs["opinions_key"]) == ([0], "opinions")
    dislike, sadly, shrugged = opinions
    assert (dislike._.attitude, dislike._.attitude_score) == ("sentiment-neg", 0.8)
    assert [(t.label_, t.text) for t in dislike._.targets] == [("TARGET", "parking rules")]
    assert dislike._.targets[0]._.opinion == dislike and targets[0]._.opinion == dislike
    assert (shrugged._.attitude, shrugged._.attitude_score, shrugged._.targets) == (None, 0.45, [])
    assert (sadly._.attitude, sadly._.attitude_score, sadly._.targets) == (None, None, None)  # an ESE
    assert doc[0:2]._.targets is None and doc[0:2]._.opinion is None and dislike._.opinion is None
    frame = opinions.attrs["frames"][0]
    assert (frame["attitude"], frame["attitude_score"], frame["targets"]) == (
        "sentiment-neg",
        0.8,
        [{"start": 31, "end": 44, "text": "parking rules", "score": 0.9}],
    )
    again = spacy.tokens.Doc(role_nlp.vocab).from_bytes(doc.to_bytes())  # read from the groups: they survive
    dislike = again.spans["opinions"][0]
    assert (dislike._.attitude, [t.text for t in dislike._.targets]) == ("sentiment-neg", ["parking rules"])
    assert again.spans["opinion_targets"][0]._.opinion == dislike


def test_a_target_two_dses_share_is_a_span_for_each(role_nlp):
    doc = role_nlp("We resent and fear the tolls.")
    resent, fear = doc.spans["opinions"]
    targets = doc.spans["opinion_targets"]
    assert [(t.text, t.id_) for t in targets] == [("the tolls", "0"), ("the tolls", "1")]
    assert [round(float(x), 4) for x in targets.attrs["scores"]] == [0.8, 0.7] and targets.attrs["opinions"] == [0, 1]
    assert [t._.opinion for t in targets] == [resent, fear]
    assert resent._.targets == [targets[0]] and fear._.targets == [targets[1]]
    assert list(role_nlp("It rained.").spans["opinion_targets"]) == []  # a model with target heads: always a group


def test_a_model_without_target_heads_writes_no_roles(fast_nlp):
    doc = fast_nlp(TEXTS[0])
    assert list(doc.spans) == ["opinions"]
    assert all(s._.attitude is None and s._.targets is None for s in doc.spans["opinions"])


def test_displacy_shows_the_targets(role_nlp):
    from role_frames import TEXT
    from spacy import displacy

    doc = role_nlp(TEXT)
    html = displacy.render(doc, style="span", options={"spans_key": "opinion_targets"})
    assert "TARGET" in html and "parking" in html and "DSE" not in html
    doc.spans["shown"] = [*doc.spans["opinions"], *doc.spans["opinion_targets"]]  # both, as docs/api.md shows
    html = displacy.render(doc, style="span", options={"spans_key": "shown"})
    assert all(label in html for label in ("DSE", "ESE", "TARGET"))


def test_the_span_groups_keys_are_the_configs():
    from role_frames import TEXT, role_tagger

    nlp = spacy.blank("en")
    config = {"model": "fast", "spans_key": "mine", "targets_key": "about"}
    component = nlp.add_pipe("opinion_tagger", config=config)
    component._tagger, component._pid = role_tagger(), os.getpid()
    doc = nlp(TEXT)
    assert list(doc.spans) == ["mine", "about"] and doc.spans["mine"].attrs["targets_key"] == "about"
    dislike = doc.spans["mine"][0]
    assert [t.text for t in dislike._.targets] == ["parking rules"] and doc.spans["about"][0]._.opinion == dislike
