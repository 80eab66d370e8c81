"""Frames in the product: JSONL, CoNLL, BRAT and HTML show each span's polarity, intensity and a DSE's holder,
only for a model with frame heads (tests/tagging/test_tag_output_fixed.py: the others' output is unchanged)."""

import io
import json

import numpy as np
import pytest

from opinion_tagger.tagging.documents import (
    SpanFrame,
    TaggedDocument,
    TaggedSentence,
    TaggedSpan,
    TaggedToken,
    apply_tags,
)
from opinion_tagger.tagging.formats import Writer, brat_ann, conll_lines, render_html

TEXT = "Officials said the plan was awful."
WORDS = [("Officials", 0, 9), ("said", 10, 14), ("the", 15, 18), ("plan", 19, 23), ("was", 24, 27)]
WORDS += [("awful", 28, 33), (".", 33, 34)]


def document(frames: bool = True) -> TaggedDocument:
    tags = {"said": {"DSE": "B-DSE", "ESE": "O"}, "awful": {"DSE": "O", "ESE": "B-ESE"}}
    tokens = [TaggedToken(w, a, b, tags.get(w, {"DSE": "O", "ESE": "O"})) for w, a, b in WORDS]
    doc = TaggedDocument("d", TEXT, [TaggedSentence(0, 34, tokens)], frames=frames)
    said = SpanFrame("neutral", 0.9, "low", 0.8, {"start": 0, "end": 9, "text": "Officials"}, 0.7)
    awful = SpanFrame("negative", 0.95, "high", 0.6)
    doc.spans = [
        TaggedSpan("DSE", 10, 14, "said", 0.9, said if frames else None),
        TaggedSpan("ESE", 28, 33, "awful", 0.85, awful if frames else None),
    ]
    return doc


def test_jsonl_spans_carry_their_frames():
    spans = document().to_dict()["spans"]
    assert spans == [
        {
            "type": "DSE",
            "start": 10,
            "end": 14,
            "text": "said",
            "score": 0.9,
            "polarity": "neutral",
            "polarity_score": 0.9,
            "intensity": "low",
            "intensity_score": 0.8,
            "holder": {"start": 0, "end": 9, "text": "Officials"},
            "holder_score": 0.7,
        },
        {
            "type": "ESE",
            "start": 28,
            "end": 33,
            "text": "awful",
            "score": 0.85,
            "polarity": "negative",
            "polarity_score": 0.95,
            "intensity": "high",
            "intensity_score": 0.6,
        },  # an ESE has no holder field
    ]
    assert document(frames=False).to_dict()["spans"][0] == {
        "type": "DSE",
        "start": 10,
        "end": 14,
        "text": "said",
        "score": 0.9,
    }
    back = TaggedDocument.from_dict(json.loads(json.dumps(document().to_dict())))
    assert back.spans == document().spans and back.frames


def test_conll_has_a_frame_column_per_type():
    lines = conll_lines(document()).splitlines()
    assert lines[:3] == [
        "# id = d",
        "# columns = token start end DSE ESE DSE-frame ESE-frame",
        "# text = Officials said the plan was awful.",
    ]
    assert lines[3] == "Officials\t0\t9\tO\tO\t_\t_"
    assert lines[4] == "said\t10\t14\tB-DSE\tO\tneutral/low/0-9\t_"
    assert lines[8] == "awful\t28\t33\tO\tB-ESE\t_\tnegative/high"
    doc = document()
    assert doc.spans[0].frame is not None
    doc.spans[0].frame.holder = "writer"
    assert conll_lines(doc).splitlines()[4].endswith("\tneutral/low/writer\t_")
    doc.spans[0].frame.holder = None
    assert conll_lines(doc).splitlines()[4].endswith("\tneutral/low/_\t_")
    assert "# columns" not in conll_lines(document(frames=False))


def test_brat_attributes_and_holder_relations():
    assert brat_ann(document()).splitlines() == [
        "T1\tDSE 10 14\tsaid",
        "T2\tESE 28 33\tawful",
        "T3\tHOLDER 0 9\tOfficials",
        "A1\tPolarity T1 neutral",
        "A2\tIntensity T1 low",
        "A3\tPolarity T2 negative",
        "A4\tIntensity T2 high",
        "R1\tHolder Arg1:T1 Arg2:T3",
    ]
    doc = document()
    doc.spans[0].frame.holder = "implicit"
    assert "A3\tHolder T1 implicit" in brat_ann(doc).splitlines()
    assert brat_ann(document(frames=False)) == "T1\tDSE 10 14\tsaid\nT2\tESE 28 33\tawful\n"


def test_html_marks_show_the_frame():
    page = render_html(document())
    assert (
        '<mark class="dse" data-polarity="neutral" data-intensity="low" '
        'title="DSE 0.90, neutral 0.90, low 0.80, holder: Officials 0.70">said</mark>'
    ) in page
    assert 'title="ESE 0.85, negative 0.95, high 0.60">awful</mark>' in page
    assert "data-polarity" not in render_html(document(frames=False))


def test_a_corrected_span_loses_its_frame_and_a_kept_one_keeps_it():
    doc = document()
    rows = [dict(t.tags) for t in doc.sentences[0].tokens]
    rows[3]["ESE"] = "B-ESE"  # "plan": a new span, made by hand
    fixed = apply_tags(doc, rows)
    assert [(sp.text, sp.frame is not None) for sp in fixed.spans] == [("said", True), ("plan", False), ("awful", True)]
    assert fixed.frames and fixed.spans[0].frame == doc.spans[0].frame


@pytest.fixture(scope="module")
def frame_bundle(tmp_path_factory):
    """An untrained bundle with frame heads whose tag heads call every word a span (tag B), every holder a span."""
    from opinion_tagger.config import TaggerConfig
    from opinion_tagger.export.bundle_writer import save_bundle
    from opinion_tagger.model.frame_heads import head_arrays
    from opinion_tagger.model.network import build_model, build_training_model
    from opinion_tagger.runtime.vocabulary import PAD, UNK, Vocabulary

    cfg = TaggerConfig.from_dict(
        {
            "task": "joint",
            "model.recurrent.depth": 1,
            "model.recurrent.hidden": 8,
            "model.embeddings.features": "random",
            "model.embeddings.dim": 8,
            "model.frames.enabled": True,
        }
    )
    vocab = Vocabulary([PAD, UNK, *sorted({w.lower() for w, _, _ in WORDS})])
    trained = build_training_model(cfg, len(vocab), 8)
    for t in ("DSE", "ESE"):
        dense = trained.get_layer(t)
        dense.set_weights([dense.get_weights()[0], np.array([0.0, 5.0, 0.0], "float32")])
    pointer = trained.get_layer("DSE_holder")  # a token, not a class, starts every holder
    pointer.classes_bias.assign(np.full(3, -20.0, "float32"))
    clean = build_model(cfg, len(vocab), 8)
    for layer in clean.layers:
        layer.set_weights(trained.get_layer(layer.name).get_weights())
    out = tmp_path_factory.mktemp("frames") / "bundle"
    save_bundle(out, clean, vocab, cfg, {}, frame_heads=head_arrays(trained, cfg))
    return out


def test_a_model_with_frame_heads_writes_them_in_every_format(frame_bundle, tmp_path):
    from opinion_tagger.tagging.tagger import OpinionTagger

    ot = OpinionTagger.load(frame_bundle)
    doc = ot.tag(TEXT + "\n\nThe minister hinted at deep concerns.", id="d")
    assert doc.frames and len(doc.spans) == 2 * 14  # every word a DSE and an ESE
    for sp in doc.spans:
        f = sp.frame
        assert f is not None and f.polarity in ("neutral", "negative", "positive", "both")
        assert 0 < f.polarity_score <= 1 and 0 < f.intensity_score <= 1
        if sp.type == "DSE":
            assert (
                f.holder in ("writer", "implicit", None)
                or doc.text[f.holder["start"] : f.holder["end"]] == (f.holder["text"])
            )
            sentence = next(s for s in doc.sentences if s.start <= sp.start < s.end)
            assert not isinstance(f.holder, dict) or sentence.start <= f.holder["start"] < sentence.end
    record = json.loads(io_text("jsonl", doc))
    assert all("polarity" in sp for sp in record["spans"])
    assert all(("holder" in sp) == (sp["type"] == "DSE") for sp in record["spans"])
    assert "\t".join(["said", "10", "14", "B-DSE", "B-ESE"]) in io_text("conll", doc)
    assert "data-polarity" in io_text("html", doc)
    brat = tmp_path / "brat"
    brat.mkdir()
    writer = Writer("brat", directory=brat)
    writer.document(doc)
    assert "\tPolarity T1 " in (brat / "d.ann").read_text()


def io_text(fmt: str, doc: TaggedDocument) -> str:
    out = io.StringIO()
    writer = Writer(fmt, out)
    writer.document(doc)
    writer.close()
    return out.getvalue()


def test_html_input_maps_holders_to_the_source(frame_bundle):
    from opinion_tagger.tagging.html_input import tag_records
    from opinion_tagger.tagging.tagger import OpinionTagger

    source = "<p>Officials <b>said</b> the plan &amp; the vote were awful.</p>"
    (doc,) = tag_records(OpinionTagger.load(frame_bundle), [source], html=True)
    assert doc.frames and doc.spans
    holders = [sp.frame.holder for sp in doc.spans if sp.type == "DSE" and isinstance(sp.frame.holder, dict)]
    assert len(holders) == len(doc.sentences[0].tokens)
    for h in holders:
        assert source[h["start"] : h["end"]] == h["text"]


def test_the_default_model_gives_the_readme_sentence_its_frames(capsys):
    """The bundled default model has frame heads: `opinion-tagger tag` on the README's sentence gives each span
    a polarity and an intensity with their probabilities, and its DSE a holder (the words "Officials")."""
    from conftest import need_encoder

    from opinion_tagger.cli import main

    need_encoder("accurate")
    text = "Officials said the plan was daylight robbery, as usual."
    assert main(["tag", text]) == 0
    spans = json.loads(capsys.readouterr().out)["spans"]
    assert {s["type"] for s in spans} == {"DSE", "ESE"}
    for s in spans:
        assert s["polarity"] in ("neutral", "negative", "positive", "both") and 0 < s["polarity_score"] <= 1
        assert s["intensity"] in ("neutral", "low", "medium", "high", "extreme") and 0 < s["intensity_score"] <= 1
        assert ("holder" in s) == (s["type"] == "DSE")
    (said,) = [s for s in spans if s["type"] == "DSE"]
    assert said["text"] == "said" and said["holder"] == {"start": 0, "end": 9, "text": "Officials"}
