"""Auxiliary tags (opinion_tagger.corpus.auxiliary): MPQA's other annotations (objective speech events, agents,
targets, attitudes) as tags on the sentences of the invented sample corpus, on reference-file sentences aligned to
their document, and on the real corpora in ../shared."""

import pytest

from opinion_tagger.corpus import MPQACorpus
from opinion_tagger.corpus.auxiliary import add_auxiliary_tags, tag_auxiliary
from opinion_tagger.corpus.sources import load_documents
from opinion_tagger.errors import CorpusError
from opinion_tagger.sentences import Sentence, Token


def reference_like(sentences: list[list[str]], doc: str) -> list[Sentence]:
    """Sentences as ``opinion_tagger.corpus.reference`` gives them: PTB words without document offsets."""
    out = []
    for k, words in enumerate(sentences):
        tokens, pos = [], 0
        for w in words:
            tokens.append(Token(w, pos, pos + len(w)))
            pos += len(w) + 1
        out.append(Sentence(tokens, {"DSE": ["O"] * len(words)}, doc, k, " ".join(words), 0, pos - 1))
    return out


def test_objective_speech_events_are_tagged_and_the_writers_empty_agent_is_not(sample_mpqa):
    docs = load_documents("mpqa", sample_mpqa)
    counts = add_auxiliary_tags(docs, MPQACorpus(sample_mpqa), ("OSE", "AGENT"), "mpqa")
    we = docs["other/doc-c"][1]  # "We will report tomorrow."
    assert we.words == ["We", "will", "report", "tomorrow", "."]
    assert we.tags["OSE"] == ["O", "O", "B-OSE", "O", "O"]
    assert all(tag == "O" for s in docs["demo/doc-a"] for tag in s.tags["OSE"])
    assert all(tag == "O" for ss in docs.values() for s in ss for tag in s.tags["AGENT"])
    assert counts.spans == {"OSE": 1, "AGENT": 0}  # every document's agent "w" spans 0,0
    assert counts.tagged == {"OSE": 1, "AGENT": 0}
    assert counts.untagged == {"OSE": 0, "AGENT": 0} and counts.unmatched_documents == []
    assert we.tags["DSE"] == ["B-DSE", "O", "O", "O", "O"]  # the opinion tags stay


def test_reference_sentences_are_aligned_to_the_document(sample_mpqa):
    words = [
        ["The", "minister", "hinted", "at", "deep", "concerns", "yesterday", "."],
        ["We", "will", "report", "tomorrow", "."],
    ]
    docs = {"other/doc-c": reference_like(words, "other/doc-c")}
    counts = tag_auxiliary(docs, ("OSE",), "reference", "reference-files", mpqa=sample_mpqa)
    assert [s.tags["OSE"] for s in docs["other/doc-c"]] == [["O"] * 8, ["O", "O", "B-OSE", "O", "O"]]
    assert counts.to_dict() == {
        "spans": {"OSE": 1},
        "untagged": {"OSE": 0},
        "tagged": {"OSE": 1},
        "unmatched_documents": 0,
        "e.g.": [],
    }


def test_a_document_whose_sentences_differ_gets_o_tags_and_is_counted(sample_mpqa):
    docs = {"other/doc-c": reference_like([["We", "will", "report", "tomorrow", "."]], "other/doc-c")}
    counts = add_auxiliary_tags(docs, MPQACorpus(sample_mpqa), ("OSE",), "reference")
    assert docs["other/doc-c"][0].tags["OSE"] == ["O"] * 5
    assert counts.unmatched_documents == ["other/doc-c"] and counts.untagged == {"OSE": 1}


def test_bad_auxiliary_requests_name_the_culprit(sample_mpqa):
    corpus = MPQACorpus(sample_mpqa)
    with pytest.raises(CorpusError, match="unknown auxiliary types SOURCE"):
        add_auxiliary_tags({}, corpus, ("SOURCE",), "mpqa")
    with pytest.raises(CorpusError, match="not source 'conll'"):
        add_auxiliary_tags({}, corpus, ("OSE",), "conll")
    with pytest.raises(CorpusError, match="demo/missing: document not in the MPQA corpus"):
        add_auxiliary_tags({"demo/missing": []}, corpus, ("OSE",), "mpqa")


def test_the_reference_corpus_aligns_with_mpqa_for_auxiliary_tags(shared_reference, shared_mpqa):
    """Forty documents of the reference files: every one matches its MPQA sentences, and nearly every
    auxiliary span tags a token."""
    docs = load_documents("reference", shared_reference)
    docs = {name: docs[name] for name in sorted(docs)[:40]}
    counts = add_auxiliary_tags(docs, MPQACorpus(shared_mpqa), ("AGENT", "TARGET", "ATTITUDE", "OSE"), "reference")
    assert counts.unmatched_documents == []
    for t, n in counts.spans.items():
        assert n > 20, t
        assert counts.untagged[t] <= 0.01 * n, t
        assert 0 < counts.tagged[t] <= n, t
