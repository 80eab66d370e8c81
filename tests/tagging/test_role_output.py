"""A DSE's attitude and targets in every output of tagging (JSONL and reading it back, CoNLL, BRAT, HTML, HTML
input), from a stand-in for a model with attitude and target heads (tests/role_frames.py; no bundled model has
them yet), on invented sentences.  A model without them keeps its output (test_frame_output.py, and
test_tag_output_fixed.py byte for byte)."""

import io
import json
from html.parser import HTMLParser

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from role_frames import TEXT, role_tagger

from opinion_tagger.runtime.frame_heads import FramePrediction
from opinion_tagger.tagging.documents import (
    TaggedDocument,
    TaggedSentence,
    TaggedSpan,
    TaggedToken,
    apply_tags,
    span_frame,
    spans_of,
)
from opinion_tagger.tagging.formats import BratUsage, Writer, brat_ann, brat_config, conll_lines, render_html

DISLIKE = {
    "type": "DSE",
    "start": 15,
    "end": 22,
    "text": "dislike",
    "score": 0.9,
    "polarity": "negative",
    "polarity_score": 0.85,
    "intensity": "high",
    "intensity_score": 0.65,
    "holder": {"start": 0, "end": 14, "text": "Our neighbours"},
    "holder_score": 0.7,
    "attitude": "sentiment-neg",
    "attitude_score": 0.8,
    "targets": [{"start": 31, "end": 44, "text": "parking rules", "score": 0.9}],
}
SADLY = {
    "type": "ESE",
    "start": 46,
    "end": 51,
    "text": "sadly",
    "score": 0.9,
    "polarity": "negative",
    "polarity_score": 0.75,
    "intensity": "high",
    "intensity_score": 0.7,
}  # an ESE: no roles
SHRUGGED = {
    "type": "DSE",
    "start": 62,
    "end": 70,
    "text": "shrugged",
    "score": 0.9,
    "polarity": "neutral",
    "polarity_score": 0.6,
    "intensity": "low",
    "intensity_score": 0.55,
    "holder": "writer",
    "holder_score": 0.5,
    "attitude": None,
    "attitude_score": 0.45,
    "targets": [],  # the model predicts targets, and none for this DSE
}


@pytest.fixture(scope="module")
def ot():
    return role_tagger()


@pytest.fixture(scope="module")
def doc(ot):
    return ot.tag(TEXT, id="r")


def test_jsonl_dses_carry_their_attitude_and_targets(doc):
    assert TEXT[31:44] == "parking rules" and TEXT[15:22] == "dislike" and TEXT[62:70] == "shrugged"
    assert doc.to_dict()["spans"] == [DISLIKE, SADLY, SHRUGGED]
    line = written("jsonl", doc)
    assert (
        '"holder_score":0.7,"attitude":"sentiment-neg","attitude_score":0.8,'
        '"targets":[{"start":31,"end":44,"text":"parking rules","score":0.9}]}'
    ) in line
    assert '"attitude":null,"attitude_score":0.45,"targets":[]}' in line


def test_reading_the_record_back_gives_the_same_document(doc):
    back = TaggedDocument.from_dict(json.loads(json.dumps(doc.to_dict())))
    assert back.spans == doc.spans and back.frames
    assert back.to_dict() == doc.to_dict()
    dislike = back.spans[0].frame
    assert (dislike.attitude, dislike.attitude_score, dislike.targets) == (
        "sentiment-neg",
        0.8,
        [{"start": 31, "end": 44, "text": "parking rules", "score": 0.9}],
    )
    rows = [dict(t.tags) for s in back.sentences for t in s.tokens]
    rows[5]["ESE"] = "B-ESE"  # "parking": a span made by hand
    fixed = apply_tags(back, rows)
    assert [sp.text for sp in fixed.spans] == ["dislike", "parking", "sadly", "shrugged"]
    assert fixed.spans[0].frame == doc.spans[0].frame and fixed.spans[1].frame is None  # kept: its roles too


def test_the_runtime_frame_becomes_offsets_and_rounded_scores():
    text = "They doubt the new plan."
    tokens = [TaggedToken(w, text.index(w), text.index(w) + len(w), {}) for w in ("They", "doubt", "the", "new")]
    tokens += [TaggedToken("plan", 19, 23, {}), TaggedToken(".", 23, 24, {})]
    sent = TaggedSentence(0, 24, tokens)
    doc = TaggedDocument("d", text, [sent])
    pred = FramePrediction("DSE", 1, 2, "negative", 0.71234, "low", 0.5, (0, 1), 0.66666, "sentiment-neg", 0.8)
    pred.targets, pred.target_scores = ((2, 5),), (0.912345,)
    f = span_frame(doc, sent, pred)
    assert (f.attitude, f.attitude_score, f.polarity_score, f.holder_score) == ("sentiment-neg", 0.8, 0.7123, 0.6667)
    assert f.targets == [{"start": 11, "end": 23, "text": "the new plan", "score": 0.9123}]
    pred.target_scores = ()
    with pytest.raises(ValueError, match="1 targets with 0 target scores"):
        span_frame(doc, sent, pred)
    pred.targets, pred.target_scores = ((4, 7),), (0.5,)
    with pytest.raises(ValueError, match=r"token range \(4, 7\)"):
        span_frame(doc, sent, pred)


def test_a_frame_without_role_heads_has_no_role_fields():
    text = "They doubt it."
    tokens = [TaggedToken("They", 0, 4, {}), TaggedToken("doubt", 5, 10, {}), TaggedToken("it", 11, 13, {})]
    sent = TaggedSentence(0, 14, tokens + [TaggedToken(".", 13, 14, {})])
    doc = TaggedDocument("d", text, [sent], frames=True)
    for t in sent.tokens:
        t.tags = {"DSE": "B-DSE" if t.text == "doubt" else "O", "ESE": "O"}
    found = {(0, "DSE", 1, 2): FramePrediction("DSE", 1, 2, "negative", 0.7, "low", 0.5, (0, 1), 0.6)}
    (span,) = spans_of(doc, frames=found)
    doc.spans = [span]
    assert doc.to_dict()["spans"][0] == {
        "type": "DSE",
        "start": 5,
        "end": 10,
        "text": "doubt",
        "score": 1.0,
        "polarity": "negative",
        "polarity_score": 0.7,
        "intensity": "low",
        "intensity_score": 0.5,
        "holder": {"start": 0, "end": 4, "text": "They"},
        "holder_score": 0.6,
    }
    assert conll_lines(doc).splitlines()[4] == "doubt\t5\t10\tB-DSE\tO\tnegative/low/0-4\t_"
    assert "Attitude" not in brat_ann(doc) and "TARGET" not in brat_ann(doc)
    assert 'class="target"' not in render_html(doc) and " id=" not in render_html(doc)


def test_conll_adds_the_attitude_and_the_targets_to_a_dses_frame(doc):
    lines = conll_lines(doc).splitlines()
    assert lines[1] == "# columns = token start end DSE ESE DSE-frame ESE-frame"
    assert lines[5] == "dislike\t15\t22\tB-DSE\tO\tnegative/high/0-14/sentiment-neg/31-44\t_"
    assert lines[11] == "sadly\t46\t51\tO\tB-ESE\t_\tnegative/high"  # an ESE: no roles
    assert lines[16] == "shrugged\t62\t70\tB-DSE\tO\tneutral/low/writer/_/_\t_"  # no attitude, no targets
    wants = role_tagger().tag("Nobody wants higher fares.")
    assert "\tpositive/medium/0-6/intention-pos/7-19+20-25\t" in conll_lines(wants)


def test_brat_targets_are_entities_with_relations_and_the_attitude_an_attribute(doc, tmp_path):
    assert brat_ann(doc).splitlines() == [
        "T1\tDSE 15 22\tdislike",
        "T2\tESE 46 51\tsadly",
        "T3\tDSE 62 70\tshrugged",
        "T4\tHOLDER 0 14\tOur neighbours",
        "T5\tTARGET 31 44\tparking rules",
        "A1\tPolarity T1 negative",
        "A2\tIntensity T1 high",
        "A3\tAttitude T1 sentiment-neg",
        "A4\tPolarity T2 negative",
        "A5\tIntensity T2 high",
        "A6\tPolarity T3 neutral",
        "A7\tIntensity T3 low",
        "A8\tHolder T3 writer",
        "R1\tHolder Arg1:T1 Arg2:T4",
        "R2\tTarget Arg1:T1 Arg2:T5",
    ]
    used = BratUsage()
    used.add(brat_ann(doc))
    conf = brat_config(["DSE", "ESE"], used).splitlines()
    assert "TARGET" in conf and "Target\tArg1:DSE, Arg2:TARGET" in conf
    assert (
        "Attitude\tArg:DSE, Value:"
        + "|".join(
            [
                "sentiment-pos",
                "sentiment-neg",
                "arguing-pos",
                "arguing-neg",
                "agree-pos",
                "agree-neg",
                "intention-pos",
                "intention-neg",
                "speculation",
                "other-attitude",
            ]
        )
        in conf
    )


def test_brat_numbers_one_target_entity_per_distinct_span_after_the_holders():
    text = "Nobody wants higher fares. Everyone wants higher fares."
    ann = brat_ann(role_tagger().tag(text)).splitlines()
    assert [x for x in ann if x.startswith("T")] == [
        "T1\tDSE 7 12\twants",
        "T2\tDSE 36 41\twants",
        "T3\tHOLDER 0 6\tNobody",
        "T4\tHOLDER 27 35\tEveryone",
        "T5\tTARGET 7 19\twants higher",  # over its DSE's own word
        "T6\tTARGET 20 25\tfares",
        "T7\tTARGET 36 48\twants higher",
        "T8\tTARGET 49 54\tfares",
    ]
    assert [x for x in ann if x.startswith("R")] == [
        "R1\tHolder Arg1:T1 Arg2:T3",
        "R2\tTarget Arg1:T1 Arg2:T5",
        "R3\tTarget Arg1:T1 Arg2:T6",
        "R4\tHolder Arg1:T2 Arg2:T4",
        "R5\tTarget Arg1:T2 Arg2:T7",
        "R6\tTarget Arg1:T2 Arg2:T8",
    ]
    doc = role_tagger().tag(text)
    doc.spans[1].frame.targets = [dict(t) for t in doc.spans[0].frame.targets]  # two DSEs with the same targets
    assert [x for x in brat_ann(doc).splitlines() if "TARGET" in x or "\tTarget" in x] == [
        "T5\tTARGET 7 19\twants higher",
        "T6\tTARGET 20 25\tfares",
        "R2\tTarget Arg1:T1 Arg2:T5",
        "R3\tTarget Arg1:T1 Arg2:T6",
        "R5\tTarget Arg1:T2 Arg2:T5",
        "R6\tTarget Arg1:T2 Arg2:T6",
    ]


class Marks(HTMLParser):
    """Checks that every end tag closes the element open last; keeps each mark's attributes, its range in the text
    shown and its text."""

    VOID = {"br", "meta"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.open: list[tuple[str, dict, int]] = []
        self.marks: list[tuple[dict, str]] = []  # (attributes, text), in the order they close
        self.ranges: list[tuple[dict, int, int]] = []  # (attributes, start, end) in the text shown
        self.crossed: list[str] = []
        self.text = ""

    def handle_starttag(self, tag, attrs):
        if tag not in self.VOID:
            self.open.append((tag, dict(attrs), len(self.text)))

    def handle_endtag(self, tag):
        if not self.open or self.open[-1][0] != tag:
            self.crossed.append(tag)
            return
        name, attrs, start = self.open.pop()
        if name == "mark":
            self.marks.append((attrs, self.text[start:]))
            self.ranges.append((attrs, start, len(self.text)))

    def handle_data(self, data):
        self.text += data


def parsed(page: str) -> Marks:
    """The marks of a well-formed page (no end tag closes another element than the one open last)."""
    marks = Marks()
    marks.feed(page)
    marks.close()
    assert not marks.crossed and not marks.open, (marks.crossed, marks.open)
    return marks


def test_html_ties_each_target_to_its_dse(doc):
    page = written("html", doc)
    marks = parsed(page).marks
    targets = [(a, text) for a, text in marks if a.get("class") == "target"]
    assert [(a["data-of"], a["title"], text) for a, text in targets] == [
        ("d1-op1", "target 0.90 of DSE: dislike", "parking rules")
    ]
    (dse,) = [a for a, _ in marks if a.get("id") == "d1-op1"]
    assert dse["class"] == "dse" and dse["data-opinion"] == "d1-op1"
    assert dse["title"] == (
        "DSE 0.90, negative 0.85, high 0.65, holder: Our neighbours 0.70, attitude: sentiment-neg 0.80, "
        "targets: parking rules 0.90"
    )
    (shrugged,) = [a for a, text in marks if text == "shrugged"]
    assert shrugged["title"].endswith("holder: writer 0.50, attitude: none 0.45, targets: none")
    assert "dotted" in targets[0][0]["style"]  # the target is seen: a dotted underline


def test_html_a_target_over_its_own_dses_words_nests_inside_it():
    page = render_html(role_tagger().tag("Nobody wants higher fares.", id="w"))
    assert page.startswith(
        'Nobody <mark class="dse" id="op1" data-polarity="positive" data-intensity="medium" data-opinion="op1" '
        'title="DSE 0.90, positive 0.70, medium 0.60, holder: Nobody 0.65, attitude: intention-pos 0.75, '
        'targets: wants higher 0.60; fares 0.55"><mark class="target" data-of="op1" '
    )
    marks = parsed(page).marks
    by_target = [(text, a["title"]) for a, text in marks if a.get("class") == "target"]
    assert by_target == [
        ("wants", "target 0.60 of DSE: wants"),  # inside the DSE's mark
        (" higher", "target 0.60 of DSE: wants"),  # the rest of the same target, after it
        ("fares", "target 0.55 of DSE: wants"),
    ]
    assert [a.get("id") for a, text in marks if a.get("class") == "dse"] == ["op1"]


def test_html_escapes_the_text_of_targets():
    doc = role_tagger().tag("Nobody wants <higher> & fares.", id="<x>")
    assert [t.text for t in doc.sentences[0].tokens][1:5] == ["wants", "<", "higher", ">"]  # targets (1, 3), (3, 4)
    page = written("html", doc)
    assert "<x>" not in page and "<higher" not in page and "<h2>&lt;x&gt;</h2>" in page
    assert 'title="target 0.60 of DSE: wants"> &lt;</mark>' in page
    assert "targets: wants &lt; 0.60; higher 0.55" in page
    marks = parsed(page).marks
    (dse,) = [a for a, _ in marks if a.get("id") == "d1-op1"]
    assert dse["title"].endswith("targets: wants < 0.60; higher 0.55")


def test_html_input_maps_targets_to_the_source_and_shows_them_on_the_visible_text(ot):
    from opinion_tagger.tagging.html_input import tag_records

    source = "<p>Our <i>neighbours</i> dislike the new <b>parking</b> rules, sadly.</p>"
    (doc,) = tag_records(ot, [("h", source)], html=True)
    dse = doc.spans[0].frame
    start = source.index("parking")
    end = start + len("parking</b> rules")
    assert dse.targets == [{"start": start, "end": end, "text": "parking</b> rules", "score": 0.9}]
    assert dse.holder == {"start": 3, "end": 20, "text": "Our <i>neighbours"}
    back = TaggedDocument.from_dict(doc.to_dict())
    assert back.spans[0].frame.targets == dse.targets
    marks = parsed(render_html(doc)).marks
    assert [(a["data-of"], text) for a, text in marks if a.get("class") == "target"] == [("op1", "parking rules")]
    (title,) = [a["title"] for a, text in marks if text == "dislike"]
    assert title.endswith("targets: parking rules 0.90")  # the visible words, not the markup


WORDS = ["We", "all", "quietly", "resent", "the", "long", "queues", "at", "noon", "."]


@settings(max_examples=60, deadline=None)
@given(
    dse=st.tuples(st.integers(0, 9), st.integers(1, 4)),
    ese=st.tuples(st.integers(0, 9), st.integers(1, 4)),
    targets=st.lists(st.tuples(st.integers(0, 9), st.integers(1, 5)), max_size=4),
)
def test_property_any_targets_render_as_well_formed_tied_marks(dse, ese, targets):
    """Targets anywhere in the sentence, over the DSE, the ESE, each other: the marks never cross, each piece of a
    target is tied to its DSE, and the text is whole."""
    from opinion_tagger.tagging.documents import SpanFrame

    text = " ".join(WORDS)
    starts = [sum(len(w) + 1 for w in WORDS[:k]) for k in range(len(WORDS))]
    tokens = [TaggedToken(w, a, a + len(w), {}) for w, a in zip(WORDS, starts)]
    doc = TaggedDocument("p", text, [TaggedSentence(0, len(text), tokens)], frames=True)

    def words(i, n):
        j = min(i + n, len(WORDS))
        return tokens[i].start, tokens[j - 1].end

    found = sorted({words(*t) for t in targets})
    frame = SpanFrame("negative", 0.8, "high", 0.7, None, 0.5, "sentiment-neg", 0.6)
    frame.targets = [{"start": a, "end": b, "text": text[a:b], "score": 0.5} for a, b in found]
    doc.spans = [
        TaggedSpan("DSE", *words(*dse), text[slice(*words(*dse))], 0.9, frame),
        TaggedSpan("ESE", *words(*ese), text[slice(*words(*ese))], 0.8, SpanFrame("neutral", 0.6, "low", 0.5)),
    ]
    shown = parsed(render_html(doc))
    assert shown.text == text  # every character, once
    pieces = [(a, start, end) for a, start, end in shown.ranges if a.get("class") == "target"]
    assert all(a["data-of"] == "op1" for a, _, _ in pieces)
    assert [a.get("id") for a, _, _ in shown.ranges if a.get("class") == "dse"].count("op1") == 1
    covered = {k for a, b in found for k in range(a, b)}
    assert {k for _, a, b in pieces for k in range(a, b)} == covered
    for _, a, b in pieces:  # each piece lies in a target, in as many target marks as targets cover it
        inside = sum(s <= a and b <= e for s, e in found)
        assert inside >= 1 and inside == sum(c <= a and b <= d for _, c, d in pieces)


def written(fmt: str, doc: TaggedDocument) -> str:
    out = io.StringIO()
    writer = Writer(fmt, out)
    writer.document(doc)
    writer.close()
    return out.getvalue()
