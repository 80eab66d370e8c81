"""A DSE's attitude and targets read from MPQA's attitude and target annotations (opinion_tagger.corpus.attitudes,
through opinion_tagger.corpus.frames): hand-made annotation lines on invented text, the invented sample corpus,
and the real corpora in ../shared (marked ``corpus``)."""

import json

import pytest

from opinion_tagger.corpus.attitudes import attitude_counts, attitude_value, link_ids
from opinion_tagger.corpus.convert import document_sentences
from opinion_tagger.corpus.frames import FrameCounts, document_frames
from opinion_tagger.corpus.mpqa import Document, MPQACorpus, parse_annotation_line
from opinion_tagger.sentences import Frame, frame_from_dict, frame_to_dict

SENTENCES = [
    "Critics fear the new tax and the plan behind it.",
    "The mayor praised the budget, said aides.",
    "Nobody mentioned the plan or the tax again.",
]
TEXT = " ".join(SENTENCES) + "\n"
DSE, ESE, ATT, TGT = "GATE_direct-subjective", "GATE_expressive-subjectivity", "GATE_attitude", "GATE_target"
AGENT = "GATE_agent"


def at(phrase: str, sentence: int) -> tuple[int, int]:
    base = sum(len(s) + 1 for s in SENTENCES[:sentence])
    k = SENTENCES[sentence].index(phrase)
    return base + k, base + k + len(phrase)


def across(first: str, sentence: int, last: str) -> tuple[int, int]:
    """From ``first`` in sentence ``sentence`` to ``last`` in the next one."""
    return at(first, sentence)[0], at(last, sentence + 1)[1]


ANNOTATIONS = [
    (AGENT, at("Critics", 0), 'id="critics"'),
    (ATT, at("fear", 0), 'id="a1" attitude-type="sentiment-neg" inferred="yes" target-link="t1, t5"'),
    (ATT, at("fear", 0), 'id="a2" attitude-type="arguing-neg" target-link="t2, t3, t404"'),
    (TGT, at("the new tax", 0), 'id="t1"'),
    (TGT, at("the new tax", 0), 'id="t5"'),  # the same words as t1: one target
    (TGT, at("the plan", 2), 'id="t2"'),  # t2 twice: the mention in the DSE's sentence is kept
    (TGT, at("the plan", 0), 'id="t2"'),
    (TGT, at("the tax", 2), 'id="t3"'),  # another sentence: dropped
    # "fear": a1 inferred, A2 an id in other case, a9 names no attitude, "none" no link
    (DSE, at("fear", 0), 'nested-source="w, critics" attitude-link="a1, A2, a9, none" intensity="medium"'),
    (ATT, at("praised", 1), 'id="a3" attitude-type="other" target-link="t6"'),
    (ATT, at("praised", 1), 'id="a4" attitude-type="sentiment-pos" target-link="none"'),
    (TGT, across("the budget", 1, "Nobody"), 'id="t6"'),  # crosses the sentence boundary: cut at it
    (DSE, at("praised", 1), 'nested-source="w, mayor" attitude-link="a3,a4" intensity="high"'),
    (DSE, at("said", 1), 'nested-source="w, aides" intensity="low"'),  # no attitude
    (ATT, at("mentioned", 2), 'id="a5" attitude-type="sentiment-pos" target-link=""'),
    (ATT, at("mentioned", 2), 'id="a6" attitude-type="sentiment-neg"'),
    (DSE, at("mentioned", 2), 'nested-source="w, nobody" attitude-link="a6, a5" intensity="low"'),
    (ESE, at("again", 2), 'nested-source="w" polarity="negative" intensity="low"'),
]


def document(annotations=ANNOTATIONS) -> Document:
    lines = [f"{n}\t{s},{e}\tstring\t{typ}\t {attrs}" for n, (typ, (s, e), attrs) in enumerate(annotations)]
    anns = [parse_annotation_line(line, k) for k, line in enumerate(reversed(lines), 1)]
    spans, pos = [], 0
    for s in SENTENCES:
        spans.append((pos, pos + len(s)))
        pos += len(s) + 1
    return Document("demo/attitudes", TEXT, anns, spans)


def by_words(sentence) -> dict:
    return {" ".join(sentence.words[f.start : f.end]): f for f in sentence.frames}


def words(sentence, spans) -> list[str]:
    return [" ".join(sentence.words[i:j]) for i, j in spans]


def test_attitude_types_and_links_are_read():
    assert [attitude_value(v) for v in ("sentiment-pos", " Arguing-Neg ", "other", "specilation", "x", None)] == [
        "sentiment-pos",
        "arguing-neg",
        "other-attitude",
        "speculation",
        None,
        None,
    ]
    assert link_ids("a1, a2,,none , None") == ["a1", "a2"] and link_ids(None) == []


def test_a_dses_attitude_and_targets():
    doc = document()
    sents = document_sentences(doc)
    counts = document_frames(doc, sents, "mpqa")
    first, second, third = (by_words(s) for s in sents)
    fear = first["fear"]
    # a1 is inferred: a2 (linked as "A2") is the attitude; the targets of both, t1 and t5 one, t3 dropped
    assert fear.attitude == "arguing-neg"
    assert words(sents[0], fear.targets) == ["the new tax", "the plan"]
    assert fear.targets == tuple(sorted(fear.targets))
    # both not inferred: sentiment before other ("other" read as other-attitude); t6 cut at the sentence's end
    praised = second["praised"]
    assert praised.attitude == "sentiment-pos" and words(sents[1], praised.targets) == ["the budget , said aides ."]
    assert (second["said"].attitude, second["said"].targets) == (None, ())  # no attitude-link: none, read
    assert third["mentioned"].attitude == "sentiment-neg"  # same family, same standing: the one listed first
    assert third["mentioned"].targets == () and (third["again"].attitude, third["again"].targets) == (None, None)
    # everything else as before
    assert fear.holder == (0, 1) and fear.intensity == "medium" and third["again"].polarity == "negative"
    assert counts.attitude_documents == 1
    assert counts.roles.to_dict() == {
        "dses": 4,
        "attitude_links": {"total": 7, "resolved": 6, "unresolved": 1},
        "dses_with_attitude": 3,
        "dses_without_attitude": {"no_link": 1, "links_unresolved": 0},
        "chosen_among_several": {"inferred": 1, "type": 1, "order": 1},
        "attitude_type": {"arguing-neg": 1, "sentiment-neg": 1, "sentiment-pos": 1},
        "target_links": {
            "total": 6,
            "none": 3,
            "resolved": 5,
            "unresolved": 1,
            "in_sentence": 4,
            "cut_at_sentence_boundary": 1,
            "outside_sentence_dropped": 1,
            "nearest_of_several_spans": 1,
        },
        "dses_with_targets": 2,
        "targets": 3,
    }
    assert counts.to_dict()["attitudes"]["documents"] == 1


def test_a_document_without_attitudes_reads_none():
    doc = document([a for a in ANNOTATIONS if a[0] not in (ATT, TGT)])
    sents = document_sentences(doc)
    counts = document_frames(doc, sents, "mpqa")
    assert all(f.attitude is None and f.targets is None for s in sents for f in s.frames)
    assert counts.attitude_documents == 0 and "attitudes" not in counts.to_dict()


def test_frames_go_to_json_and_back():
    frames = [
        Frame("DSE", 1, 2, "negative", "high", "low", (0, 1), "sentiment-neg", ((3, 5), (6, 8))),
        Frame("DSE", 1, 2, None, None, None, "writer", None, ()),
        Frame("ESE", 0, 3),
    ]
    back = [frame_from_dict(json.loads(json.dumps(frame_to_dict(f)))) for f in frames]
    assert back == frames and hash(back[0]) == hash(frames[0])
    assert frame_to_dict(frames[0])["targets"] == [[3, 5], [6, 8]]
    # a frame written before attitudes and targets were read
    old = {"type": "DSE", "start": 1, "end": 2, "polarity": None, "intensity": "low", "holder": [0, 1]}
    assert frame_from_dict(old) == Frame("DSE", 1, 2, None, "low", None, (0, 1))
    assert Frame("DSE", 1, 2, "negative") == Frame("DSE", 1, 2, "negative", None, None, None, None, None)


def test_sample_corpus_attitudes(sample_mpqa, capsys):
    from opinion_tagger.cli import main
    from opinion_tagger.corpus.frames import tag_frames
    from opinion_tagger.corpus.sources import load_documents

    docs = load_documents("mpqa", sample_mpqa)
    counts = tag_frames(docs, "mpqa", sample_mpqa)
    a0 = docs["demo/doc-a"][0]
    refused = by_words(a0)["has refused to make any statements"]
    assert refused.attitude == "arguing-neg" and words(a0, refused.targets) == ["the absurd plan"]
    assert by_words(docs["demo/doc-a"][1])["said"].targets == ()  # in a document with attitudes, linked to none
    assert all(f.targets is None for d in ("demo/doc-b", "other/doc-c") for s in docs[d] for f in s.frames)
    assert counts.to_dict()["attitudes"]["target_links"]["outside_sentence_dropped"] == 1  # a1's t2

    assert main(["corpus", "stats", "--mpqa", str(sample_mpqa), "--attitudes", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["spans"] == {"DSE": 6, "ESE": 5}
    assert stats["attitudes"]["annotations"] == {
        "documents": 3,
        "documents_with_attitudes": 1,
        "dse_annotations": 2,
        "dse_annotations_with_attitude_link": 1,
        "attitude_links": {"total": 3, "resolved": 2},
        "attitudes": 2,
        "attitudes_inferred": 1,
        "attitudes_without_target": 0,
        "attitude_type": {"arguing-neg": 1, "sentiment-neg": 1},
        "target_annotations": 2,
        "target_links": {"total": 2, "resolved": 2},
    }
    assert stats["attitudes"]["tagged_dses"]["dses_with_attitude"] == 1
    assert main(["corpus", "stats", "--mpqa", str(sample_mpqa), "--attitudes"]) == 0
    out = capsys.readouterr().out
    assert "attitudes  documents that carry them: 1 of 3" in out
    assert "in the DSE's sentence 1 (cut at its boundary 0), outside it (dropped) 1" in out
    assert main(["corpus", "stats", "--mpqa", str(sample_mpqa), "--json"]) == 0
    assert "attitudes" not in json.loads(capsys.readouterr().out)  # only when asked for


def _read(corpus: MPQACorpus) -> tuple[dict, dict]:
    frames = FrameCounts()
    for doc in corpus:
        document_frames(doc, document_sentences(doc), "mpqa", counts=frames)
    return attitude_counts(corpus), frames.roles.to_dict()


@pytest.mark.corpus
def test_attitudes_on_the_shared_corpora(shared_mpqa):
    """The counts docs/frames.md gives (``opinion-tagger corpus stats --attitudes``): the 349 documents of the
    attitude subset and the 48 ULA documents."""
    from conftest import _need

    annotations, tagged = _read(MPQACorpus(shared_mpqa, subset="attitude"))
    assert annotations["documents"] == 349 and annotations["documents_with_attitudes"] == 312
    assert annotations["dse_annotations"] == annotations["dse_annotations_with_attitude_link"] == 6406
    assert annotations["attitude_links"] == {"total": 8087, "resolved": 8086}
    assert annotations["attitudes"] == 8025 and annotations["attitudes_inferred"] == 210
    assert annotations["target_links"] == {"total": 7381, "resolved": 7380}
    assert annotations["attitude_type"]["sentiment-neg"] == 2589 and "None" not in annotations["attitude_type"]
    assert tagged["dses"] == 5041 and tagged["dses_with_attitude"] == 5040
    assert tagged["chosen_among_several"] == {"inferred": 114, "type": 564, "order": 244}
    assert tagged["attitude_type"] == {
        "sentiment-neg": 1604,
        "sentiment-pos": 1178,
        "arguing-pos": 777,
        "other-attitude": 587,
        "intention-pos": 342,
        "arguing-neg": 178,
        "agree-pos": 145,
        "agree-neg": 118,
        "speculation": 84,
        "intention-neg": 27,
    }
    t = tagged["target_links"]
    assert (t["total"], t["resolved"], t["in_sentence"], t["outside_sentence_dropped"]) == (5563, 5562, 5398, 164)
    assert t["cut_at_sentence_boundary"] == 8 and tagged["dses_with_targets"] == 4386 and tagged["targets"] == 5013

    ula = _need(shared_mpqa.parents[1] / "mpqa-2.0-ula" / "database.mpqa.2.0")
    annotations, tagged = _read(MPQACorpus(ula, subset="ula"))
    assert annotations["documents"] == annotations["documents_with_attitudes"] == 48
    assert annotations["attitude_links"] == {"total": 1571, "resolved": 1519}
    assert annotations["target_links"] == {"total": 1395, "resolved": 1351}
    assert tagged["dses"] == 872 and tagged["dses_with_attitude"] == 678
    assert tagged["dses_without_attitude"] == {"no_link": 164, "links_unresolved": 30}
    t = tagged["target_links"]
    assert (t["total"], t["resolved"], t["in_sentence"], t["outside_sentence_dropped"]) == (657, 640, 622, 18)
    assert tagged["dses_with_targets"] == 598 and tagged["targets"] == 618
