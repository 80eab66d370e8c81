"""MPQA parsing and labelling rules on the invented sample corpus (corpora/sample)."""

import json

import pytest

from opinion_tagger.cli import main
from opinion_tagger.corpus.convert import document_sentences, mpqa_sentences, read_conll, write_conll
from opinion_tagger.corpus.labels import LabelRules, ranges_to_bio
from opinion_tagger.corpus.mpqa import MPQACorpus, parse_annotation_line, parse_attributes
from opinion_tagger.errors import CorpusError
from opinion_tagger.runtime.bio import spans_from_bio


def tags_of(sent, typ):
    return [(t.text, tag) for t, tag in zip(sent.tokens, sent.tags[typ]) if tag != "O"]


def test_attributes_with_commas_and_spaces():
    attrs = parse_attributes(' nested-source="w, the committee" insubstantial="c1, c2" implicit="true"')
    assert attrs == {"nested-source": "w, the committee", "insubstantial": "c1, c2", "implicit": "true"}


def test_annotation_line_and_errors():
    ann = parse_annotation_line('7\t10,20\tstring\tGATE_expressive-subjectivity\t intensity="low"\n', 3)
    assert (ann.id, ann.start, ann.end, ann.type, ann.attrs, ann.line) == (
        "7",
        10,
        20,
        "GATE_expressive-subjectivity",
        {"intensity": "low"},
        3,
    )
    assert parse_annotation_line("# comment\n") is None
    assert parse_annotation_line("\n") is None
    assert parse_annotation_line("5\t3,3\tstring\tGATE_sentence").is_empty
    with pytest.raises(ValueError):
        parse_annotation_line("1\t10-20\tstring\tGATE_agent")
    with pytest.raises(ValueError):
        parse_annotation_line("1\t20,10\tstring\tGATE_agent")
    with pytest.raises(ValueError):
        parse_annotation_line('1\t1,2\tstring\tGATE_agent\t broken="x')


def test_doclists_decide_documents(sample_mpqa):
    assert MPQACorpus(sample_mpqa).names == ["demo/doc-a", "demo/doc-b", "other/doc-c"]
    assert MPQACorpus(sample_mpqa, subset="original").names == ["demo/doc-a", "demo/doc-b"]
    assert MPQACorpus(sample_mpqa, subset="ula").names == ["other/doc-c"]
    with pytest.raises(CorpusError, match="doclist not found"):
        MPQACorpus(sample_mpqa, subset="xbank")


def test_sentences_sorted_and_tokens_have_document_offsets(sample_mpqa):
    doc = MPQACorpus(sample_mpqa).read("demo/doc-a")
    assert [s for s, _ in doc.sentences] == sorted(s for s, _ in doc.sentences)
    sents = document_sentences(doc)
    assert [s.index for s in sents] == [0, 1, 2]
    for s in sents:
        for t in s.tokens:
            assert doc.text[t.start : t.end] == t.text


def test_utf8_byte_offsets_become_character_offsets(sample_mpqa):
    doc = MPQACorpus(sample_mpqa).read("demo/doc-b")
    first = document_sentences(doc)[0]
    assert first.tokens[0].text == "Caf\u00e9"
    assert tags_of(first, "DSE") == [("fear", "B-DSE")]
    fear = first.tokens[2]
    assert doc.text[fear.start : fear.end] == "fear"


def test_labelling_rules(sample_mpqa):
    docs = {d.name: document_sentences(d) for d in MPQACorpus(sample_mpqa)}
    a0, a1, _ = docs["demo/doc-a"]
    assert tags_of(a0, "DSE") == [
        ("has", "B-DSE"),
        ("refused", "I-DSE"),
        ("to", "I-DSE"),
        ("make", "I-DSE"),
        ("any", "I-DSE"),
        ("statements", "I-DSE"),
    ]
    assert tags_of(a0, "ESE") == [("absurd", "B-ESE")]
    assert tags_of(a1, "ESE") == [("as", "B-ESE"), ("usual", "I-ESE"), ("daylight", "B-ESE"), ("robbery", "I-ESE")]
    # overlapping DSEs "can accept this" and "this" merge; the implicit DSE on a quote mark is dropped
    b1 = docs["demo/doc-b"][1]
    assert tags_of(b1, "DSE") == [("can", "B-DSE"), ("accept", "I-DSE"), ("this", "I-DSE")]
    c0, c1 = docs["other/doc-c"]
    # insubstantial DSE kept; adjacent ESEs stay two spans
    assert tags_of(c0, "DSE") == [("hinted", "B-DSE")]
    assert tags_of(c0, "ESE") == [("deep", "B-ESE"), ("concerns", "B-ESE")]
    # an implicit DSE on a word is kept by the default "words" rule; objective speech events never are
    assert tags_of(c1, "DSE") == [("We", "B-DSE")]


def test_rule_switches(sample_mpqa):
    corpus = MPQACorpus(sample_mpqa)
    doc_b, doc_c = corpus.read("demo/doc-b"), corpus.read("other/doc-c")
    no_implicit = document_sentences(doc_c, LabelRules(dse_implicit="none"))
    assert tags_of(no_implicit[1], "DSE") == []
    all_implicit = document_sentences(doc_b, LabelRules(dse_implicit="all"))
    assert tags_of(all_implicit[1], "DSE")[0] == ('"', "B-DSE")
    no_insub = document_sentences(doc_c, LabelRules(dse_insubstantial=False))
    assert tags_of(no_insub[0], "DSE") == []


def test_overlap_strategies():
    assert ranges_to_bio(5, [(0, 3), (2, 4)], "X", "merge") == ["B-X", "I-X", "I-X", "I-X", "O"]
    assert ranges_to_bio(5, [(0, 2), (1, 4)], "X", "longest") == ["O", "B-X", "I-X", "I-X", "O"]
    assert ranges_to_bio(5, [(0, 2), (1, 4)], "X", "first") == ["B-X", "I-X", "O", "O", "O"]
    assert ranges_to_bio(4, [(0, 2), (2, 4)], "X", "merge") == ["B-X", "I-X", "B-X", "I-X"]


def test_spans_from_bio_paper_convention():
    assert spans_from_bio(["I", "I", "O", "B", "I", "B"]) == [(0, 2, ""), (3, 5, ""), (5, 6, "")]
    assert spans_from_bio(["O", "I-DSE", "I-ESE", "B-DSE"]) == [(1, 2, "DSE"), (2, 3, "ESE"), (3, 4, "DSE")]
    assert spans_from_bio([]) == []
    assert spans_from_bio(("O", "O")) == []  # all outside: the early return


def test_decoded_tags_are_valid_iob2_row_by_row():
    """0/1/2 ids -> tags: an I after O or at a row's start becomes B; each row cut to its length."""
    import numpy as np

    from opinion_tagger.runtime.batching import decode_tag_rows, decode_tags

    ids = np.array([[2, 2, 0, 2, 1, 2, 0], [0, 1, 1, 2, 2, 0, 2]])
    assert decode_tag_rows(ids, [7, 3], "ESE") == [
        ["B-ESE", "I-ESE", "O", "B-ESE", "B-ESE", "I-ESE", "O"],
        ["O", "B-ESE", "B-ESE"],
    ]
    assert decode_tags([0, 2, 2, 1], "DSE") == ["O", "B-DSE", "I-DSE", "B-DSE"]
    assert decode_tags([], "DSE") == []


def test_conll_roundtrip(sample_mpqa, tmp_path):
    sents = list(mpqa_sentences(MPQACorpus(sample_mpqa)))
    out = tmp_path / "sample.conll"
    with open(out, "w") as fh:
        assert write_conll(sents, fh) == 7
    back = read_conll(out)
    assert [(s.doc, s.index, s.words, s.tags) for s in back] == [(s.doc, s.index, s.words, s.tags) for s in sents]
    text = out.read_text()
    assert "# doc = demo/doc-a\n# sent = 0\n# text = The committee has refused" in text
    assert "has\t41\t44\tB-DSE\tO\n" in text


def test_conll_errors_name_file_and_line(tmp_path):
    bad = tmp_path / "bad.conll"
    bad.write_text("# doc = x\nword\t0\t4\tB-DSE\tO\nword\t5\t9\tX\tO\n")
    with pytest.raises(CorpusError, match=r"bad.conll:3: bad DSE tag"):
        read_conll(bad)


def test_bad_input_is_reported_not_lost(sample_mpqa):
    ann = sample_mpqa / "man_anns/demo/doc-a/gateman.mpqa.lre.2.0"
    ann.write_text(ann.read_text() + "99\tnot-a-span\tstring\tGATE_agent\n98\t5000,5010\tstring\tGATE_agent\n")
    (sample_mpqa / "man_anns/other/doc-c/gateman.mpqa.lre.2.0").unlink()
    (sample_mpqa / "doclist.ulaSubset").write_text("other/doc-c\nother/missing\n")
    corpus = MPQACorpus(sample_mpqa)
    docs = [d.name for d in corpus]
    assert docs == ["demo/doc-a", "demo/doc-b"]
    assert corpus.problems.counts == {
        "malformed line": 1,
        "offset outside text": 1,
        "missing annotations": 1,
        "missing document": 1,
    }
    msgs = "\n".join(m for _, m, _ in corpus.problems.messages)
    assert "gateman.mpqa.lre.2.0:" in msgs and "other/missing" in msgs


def test_missing_root_is_one_clear_error(tmp_path, capsys):
    assert main(["corpus", "stats", "--mpqa", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nope" in err and "not found" in err


def test_cli_stats_and_convert(sample_mpqa, tmp_path, capsys):
    assert main(["corpus", "stats", "--mpqa", str(sample_mpqa), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["documents"] == 3 and stats["sentences"] == 7
    assert stats["spans"] == {"DSE": 6, "ESE": 5}
    assert stats["skipped"] == {}
    out = tmp_path / "c.conll"
    assert main(["corpus", "convert", "--mpqa", str(sample_mpqa), "--out", str(out)]) == 0
    assert len(read_conll(out)) == 7
