"""Opinion frames read from MPQA annotations (opinion_tagger.corpus.frames): hand-made annotation lines on
invented text, and the real corpus in ../shared (marked ``corpus``)."""

import pytest

from opinion_tagger.corpus.convert import document_sentences
from opinion_tagger.corpus.frames import (
    FrameCounts,
    attribute_counts,
    document_frames,
    intensity_value,
    polarity_value,
)
from opinion_tagger.corpus.mpqa import Document, MPQACorpus, parse_annotation_line
from opinion_tagger.errors import CorpusError
from opinion_tagger.sentences import Frame, Sentence, Token

SENTENCES = [
    "The minister said the plan was a daylight robbery.",
    "He was, as always, sure; he hinted that critics were wrong.",
    "Nobody agreed with the ghost plan.",
]
TEXT = " ".join(SENTENCES) + "\n"

DSE, ESE, AGENT = "GATE_direct-subjective", "GATE_expressive-subjectivity", "GATE_agent"


def at(phrase: str, sentence: int, nth: int = 0) -> tuple[int, int]:
    """Character offsets of the ``nth`` occurrence of ``phrase`` in sentence ``sentence`` of TEXT."""
    base = sum(len(s) + 1 for s in SENTENCES[:sentence])
    k = -1
    for _ in range(nth + 1):
        k = SENTENCES[sentence].index(phrase, k + 1)
    return base + k, base + k + len(phrase)


ANNOTATIONS = [
    (AGENT, (0, 0), 'id="w"'),
    (AGENT, (0, 0), 'id="implicit"'),
    (AGENT, at("The minister", 0), 'id="min" nested-source="w, min"'),
    (AGENT, at("He", 1), 'nested-source="w, min"'),
    (AGENT, at("he", 1), 'nested-source="w,min,"'),
    (AGENT, at("critics", 1), 'id="Critics" nested-source="w, min, Critics"'),
    (
        DSE,
        at("said", 0),
        'nested-source="w, min" polarity="uncertain-negative" intensity="medium" expression-intensity="low"',
    ),
    (ESE, at("daylight robbery", 0), 'nested-source="w, min" polarity="negative" intensity="high"'),
    (ESE, at("robbery", 0), 'nested-source="w" polarity="positive" intensity="low"'),
    (DSE, at("hinted", 1), 'nested-source="w, min" intensity="low-medium" expression-intensity="neutral"'),
    (ESE, at("wrong", 1), 'nested-source="w, min, critics" polarity="both" intensity="medium"'),
    (DSE, at("agreed", 2), 'nested-source="w, implicit" polarity="neutral" intensity="low"'),
    (ESE, at("ghost", 2), 'nested-source="w, min" polarity="uncertain-both" intensity="extreme"'),
    (ESE, at("plan", 2), 'nested-source="w, nobody-known" polarity="odd" intensity="huge"'),
    (DSE, (len(TEXT) - 1, len(TEXT) - 1), 'nested-source="w" implicit="true"'),  # the writer's, no span
]


def document() -> Document:
    """The invented document: its annotations parsed from annotation lines (unsorted, as in MPQA)."""
    lines = [f"{n}\t{s},{e}\tstring\t{typ}\t {attrs}" for n, (typ, (s, e), attrs) in enumerate(ANNOTATIONS)]
    anns = [parse_annotation_line(line, k) for k, line in enumerate(reversed(lines), 1)]
    spans, pos = [], 0
    for s in SENTENCES:
        spans.append((pos, pos + len(s)))
        pos += len(s) + 1
    return Document("demo/frames", TEXT, anns, spans)


def frames_of(sent: Sentence) -> dict:
    """The sentence's frames by the words of their span."""
    return {" ".join(sent.words[f.start : f.end]): f for f in sent.frames}


def test_attribute_values_are_mapped():
    assert [polarity_value(v) for v in ("neutral", "uncertain-positive", " Both ", "uncertain-both", "x", None)] == [
        "neutral",
        "positive",
        "both",
        "both",
        None,
        None,
    ]
    assert [intensity_value(v) for v in ("low", "medium-high", "EXTREME", "neutral", "huge", None)] == [
        "low",
        "medium",
        "extreme",
        "neutral",
        None,
        None,
    ]


def test_frames_of_mpqa_sentences():
    doc = document()
    sents = document_sentences(doc)
    counts = document_frames(doc, sents, "mpqa")
    first, second, third = (frames_of(s) for s in sents)
    # "daylight robbery" and "robbery" merge into one span; the annotation overlapping it most gives its values
    assert first == {
        "said": Frame("DSE", 2, 3, "negative", "medium", "low", (0, 2)),
        "daylight robbery": Frame("ESE", 7, 9, "negative", "high", None, (0, 2)),
    }
    # the nearest mention of the source ("he", not "He"); a trailing comma in a chain; no polarity: None
    he = sents[1].words.index("he")
    assert second["hinted"] == Frame("DSE", he + 1, he + 2, None, "low", "neutral", (he, he + 1))
    # an id matched regardless of case ("critics" for agent "Critics")
    critics = sents[1].words.index("critics")
    assert second["wrong"] == Frame("ESE", critics + 2, critics + 3, "both", "medium", None, (critics, critics + 1))
    # implicit source; a source with no mention in the sentence; an id no agent has; unknown values
    assert third["agreed"].holder == "implicit" and third["agreed"].polarity == "neutral"
    assert (third["ghost"].holder, third["ghost"].polarity, third["ghost"].intensity) == ("none", "both", "extreme")
    assert (third["plan"].holder, third["plan"].polarity, third["plan"].intensity) == (None, None, None)
    assert counts.spans == {"DSE": 3, "ESE": 4} and counts.matched == counts.spans
    assert counts.conflicts == {"ESE": 1}  # negative and positive annotations in one merged span
    assert counts.holder["ESE"] == {"span": 2, "none": 1, "unknown": 1}
    assert counts.to_dict()["polarity"]["DSE"] == {"None": 1, "negative": 1, "neutral": 1}


def test_frames_of_the_writer():
    doc = document()
    lines = ['90\t0,3\tstring\tGATE_expressive-subjectivity\t nested-source="w" polarity="positive" intensity="low"']
    doc.annotations.append(parse_annotation_line(lines[0], 90))
    sents = document_sentences(doc)
    document_frames(doc, sents, "mpqa")
    assert frames_of(sents[0])["The"] == Frame("ESE", 0, 1, "positive", "low", None, "writer")


def reference_like(doc: Document) -> list[Sentence]:
    """The document's sentences as Irsoy & Cardie's files give them: PTB words without document offsets, their
    own spans ("plan was" as an ESE that no annotation matches in the first sentence)."""
    out = []
    for k, converted in enumerate(document_sentences(doc)):
        words = converted.words
        tokens, pos = [], 0
        for w in words:
            tokens.append(Token(w, pos, pos + len(w)))
            pos += len(w) + 1
        tags = {t: ["O"] * len(words) for t in ("DSE", "ESE")}
        if k == 0:
            tags["DSE"][2] = "B-DSE"
            tags["ESE"][4:6] = ["B-ESE", "I-ESE"]  # "plan was"
            tags["ESE"][8] = "B-ESE"  # "robbery" alone
        out.append(Sentence(tokens, tags, doc.name, k, " ".join(words), 0, pos - 1))
    return out


def test_reference_sentences_are_aligned_to_the_document():
    doc = document()
    sents = reference_like(doc)
    counts = document_frames(doc, sents, "reference")
    first = frames_of(sents[0])
    assert first["said"] == Frame("DSE", 2, 3, "negative", "medium", "low", (0, 2))
    assert first["plan was"] == Frame("ESE", 4, 6)  # no annotation overlaps it: every value unknown
    # both ESE annotations overlap "robbery" by its 7 characters: the longer one wins
    assert first["robbery"] == Frame("ESE", 8, 9, "negative", "high", None, (0, 2))
    assert counts.spans == {"DSE": 1, "ESE": 2} and counts.matched == {"DSE": 1, "ESE": 1}
    assert counts.conflicts == {"ESE": 1}


def test_a_document_whose_sentences_differ_gets_unknown_frames():
    doc = document()
    sents = reference_like(doc)[:1]
    counts = document_frames(doc, sents, "reference")
    assert sents[0].frames == [Frame("DSE", 2, 3), Frame("ESE", 4, 6), Frame("ESE", 8, 9)]
    assert counts.unmatched_documents == ["demo/frames"] and counts.matched == {"DSE": 0, "ESE": 0}


def test_frames_need_mpqa_or_reference_sentences(sample_mpqa):
    from opinion_tagger.corpus.frames import add_frames

    with pytest.raises(CorpusError, match="not source 'conll'"):
        add_frames({}, MPQACorpus(sample_mpqa), "conll")
    with pytest.raises(CorpusError, match="demo/missing: document not in the MPQA corpus"):
        add_frames({"demo/missing": []}, MPQACorpus(sample_mpqa), "mpqa")


def test_sample_corpus_frames(sample_mpqa):
    from opinion_tagger.corpus.frames import tag_frames
    from opinion_tagger.corpus.sources import load_documents

    docs = load_documents("mpqa", sample_mpqa)
    counts = tag_frames(docs, "mpqa", sample_mpqa)
    assert isinstance(counts, FrameCounts)
    a0 = docs["demo/doc-a"][0]  # the committee's DSE: its source "the committee" has no agent (unknown)
    assert [(f.type, f.polarity, f.intensity, f.holder) for f in a0.frames] == [
        ("DSE", None, "medium", None),
        ("ESE", "negative", "high", "writer"),
    ]
    counts = attribute_counts(MPQACorpus(sample_mpqa))
    assert counts["ESE"]["polarity"] == {"negative": 4, "None": 1}
    assert counts["DSE"]["source"] == {"unknown": 6, "writer": 2}


@pytest.mark.corpus
def test_frames_on_the_shared_corpus(shared_mpqa, shared_reference):
    """Counts on the 535 documents: the annotations' attributes, and the frames of the MPQA reader's spans and of
    the reference files' spans."""
    from opinion_tagger.corpus.frames import add_frames
    from opinion_tagger.corpus.sources import load_documents

    corpus = MPQACorpus(shared_mpqa)
    raw = attribute_counts(corpus)
    assert raw["ESE"]["annotations"]["all"] == 12222 and raw["DSE"]["annotations"]["all"] == 13056
    assert sum(n for v, n in raw["ESE"]["polarity"].items() if v != "None") == 12220  # ESE polarity on all
    assert raw["ESE"]["polarity"] == {"neutral": 5782, "negative": 4867, "positive": 1498, "both": 73, "None": 2}
    assert raw["DSE"]["polarity"] == {"neutral": 3221, "negative": 2441, "positive": 1841, "both": 242, "None": 5311}
    assert raw["DSE"]["intensity"]["None"] == 6 and raw["DSE"]["expression_intensity"]["None"] == 3476
    assert raw["DSE"]["source"] == {"agent": 9232, "writer": 2942, "implicit": 874, "unknown": 8}
    assert raw["ESE"]["source"] == {"agent": 5856, "writer": 6160, "implicit": 203, "unknown": 3}

    docs = load_documents("mpqa", shared_mpqa)
    mine = add_frames(docs, corpus, "mpqa")
    assert mine.spans == mine.matched == {"DSE": 10073, "ESE": 12191}  # every converted span has its annotation
    assert sum(len(s.frames) for ss in docs.values() for s in ss) == 10073 + 12191
    assert mine.polarity["DSE"] == {"neutral": 3215, "negative": 2425, "positive": 1839, "both": 241, "None": 2353}
    assert mine.polarity["ESE"] == {"neutral": 5774, "negative": 4852, "positive": 1491, "both": 73, "None": 1}
    assert mine.holder["DSE"] == {"span": 8276, "implicit": 869, "none": 726, "writer": 194, "unknown": 8}
    assert mine.holder["ESE"] == {"writer": 6154, "span": 4868, "none": 964, "implicit": 203, "unknown": 2}
    assert mine.conflicts == {"DSE": 7, "ESE": 12}

    ref = load_documents("reference", shared_reference)
    theirs = add_frames(ref, corpus, "reference")
    assert theirs.unmatched_documents == []
    assert theirs.spans == {"DSE": 9966, "ESE": 12211}
    assert theirs.matched == {"DSE": 9936, "ESE": 12203}  # 30 and 8 reference spans overlap no annotation
    assert theirs.holder["DSE"]["span"] == 8282 and theirs.polarity["ESE"]["None"] == 9
