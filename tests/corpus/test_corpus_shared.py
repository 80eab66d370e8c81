"""Integration: the whole 535-document MPQA copy and the reference files in ../shared."""

import json

import pytest

from opinion_tagger.cli import main
from opinion_tagger.corpus.agreement import measure_agreement
from opinion_tagger.corpus.convert import mpqa_sentences
from opinion_tagger.corpus.mpqa import MPQACorpus
from opinion_tagger.corpus.reference import read_reference
from opinion_tagger.corpus.sources import load_documents, select
from opinion_tagger.corpus.split import load_split

pytestmark = pytest.mark.corpus


@pytest.fixture(scope="module")
def converted(shared_mpqa):
    corpus = MPQACorpus(shared_mpqa)
    return corpus, list(mpqa_sentences(corpus))


@pytest.fixture(scope="module")
def reference(shared_reference):
    return read_reference(shared_reference)


def test_reference_counts(reference):
    from opinion_tagger.runtime.bio import spans_from_bio

    assert len(reference) == 11111
    assert sum(len(s) for s in reference) == 298581
    assert sum(len(spans_from_bio(s.tags["DSE"])) for s in reference) == 9966
    assert sum(len(spans_from_bio(s.tags["ESE"])) for s in reference) == 12211


def test_conversion_counts(converted):
    corpus, sents = converted
    assert len(corpus) == 535
    assert len({s.doc for s in sents}) == 535
    assert len(sents) == 11111
    # one annotation in the copy runs 2 bytes past its document's end: clipped, reported
    assert corpus.problems.counts == {"offset outside text": 1}
    assert corpus.problems.n_skipped == 0


def test_agreement_with_reference(converted, reference):
    """The converted corpus agrees with the reference files: span counts within 3% of the reference's and
    both overlap shares at least 95%."""
    a = measure_agreement(converted[1], reference)
    assert a.sentences_matched == 11111
    for typ, ref_n in (("DSE", 9966), ("ESE", 12211)):
        assert a.spans_reference[typ] == ref_n
        assert abs(a.spans_ours[typ] - ref_n) / ref_n < 0.03, (typ, a.spans_ours[typ])
        assert a.reference_covered[typ] >= 0.95, (typ, a.reference_covered[typ])
        assert a.ours_covered[typ] >= 0.95, (typ, a.ours_covered[typ])


def test_split_covers_the_paper_protocol(shared_datasplit):
    tests = set()
    for k in range(10):
        sp = load_split(shared_datasplit, k)
        assert (len(sp.train), len(sp.dev), len(sp.test)) == (360, 135, 40)
        assert not set(sp.dev) & (set(sp.train) | set(sp.test))
        assert not tests & set(sp.test)
        tests |= set(sp.test)
        if k == 0:
            dev0 = sp.dev
        assert sp.dev == dev0
    assert len(tests) == 400


def test_split_selects_both_sources(shared_datasplit, shared_reference, converted):
    sp = load_split(shared_datasplit, 0)
    ref_docs = load_documents("reference", shared_reference)
    ours = {}
    for s in converted[1]:
        ours.setdefault(s.doc, []).append(s)
    for part in ("train", "dev", "test"):
        assert len(select(ref_docs, sp.part(part))) == len(select(ours, sp.part(part)))


def test_cli_stats_json_on_shared_copy(shared_mpqa, capsys):
    assert main(["corpus", "stats", "--mpqa", str(shared_mpqa), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["documents"] == 535 and stats["sentences"] == 11111
    assert set(stats["spans"]) == {"DSE", "ESE"} and stats["tokens"] > 290000
