"""Reading a damaged or hostile MPQA directory: clear errors, nothing read from
outside the corpus, binary documents skipped with a reason."""

import json

import pytest

from opinion_tagger.cli import main
from opinion_tagger.corpus.mpqa import MPQACorpus
from opinion_tagger.errors import CorpusError


def test_non_utf8_doclist_is_one_clear_error(sample_mpqa, capsys):
    (sample_mpqa / "doclist.ulaSubset").write_bytes(b"other/doc-c\n\xff\xfe\x00junk\n")
    with pytest.raises(CorpusError, match=r"doclist.ulaSubset: not a document list: not UTF-8 text \(byte 12\)"):
        MPQACorpus(sample_mpqa)
    assert main(["corpus", "stats", "--mpqa", str(sample_mpqa)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "doclist.ulaSubset" in err and "Traceback" not in err


def test_entries_leaving_the_corpus_are_refused(sample_mpqa, tmp_path):
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "text").write_text("Secret words said here.\n")
    # a symbolic link inside docs/ that points out of the corpus, with annotations that would accept it
    (sample_mpqa / "docs" / "demo" / "link").symlink_to(secret / "text")
    ann = sample_mpqa / "man_anns" / "demo" / "link"
    ann.mkdir()
    (ann / "gateman.mpqa.lre.2.0").write_text('1\t13,17\tstring\tGATE_direct-subjective\t intensity="low"\n')
    (ann / "gatesentences.mpqa.2.0").write_text("1\t0,23\tstring\tGATE_sentence\n")
    (sample_mpqa / "doclist.ulaSubset").write_text(
        "other/doc-c\n" + "../" * 40 + "etc/passwd\n/etc/passwd\ndemo/link\n"
    )
    corpus = MPQACorpus(sample_mpqa)
    assert [d.name for d in corpus] == ["demo/doc-a", "demo/doc-b", "other/doc-c"]
    assert corpus.problems.counts == {"outside the corpus": 3}
    assert all("document skipped" in m for _, m, _ in corpus.problems.messages)


def test_binary_documents_are_skipped_with_a_reason(sample_mpqa, capsys):
    docs = sample_mpqa / "docs"
    (docs / "demo" / "doc-a").write_bytes(b"Invented\x00\x01\x02 binary")
    (docs / "demo" / "doc-b").write_bytes(b"\x89PNG\r\n\x1a\n\xff\xd8\x01\x02 no NUL but control bytes")
    latin = docs / "other" / "doc-c"
    latin.write_bytes(latin.read_bytes().replace(b"e", b"\xe9", 1))  # 8-bit text: kept, read as Latin-1
    corpus = MPQACorpus(sample_mpqa)
    assert [d.name for d in corpus] == ["other/doc-c"]
    assert corpus.problems.counts_by(True) == {"binary document": 2}
    assert corpus.problems.counts_by(False)["not utf-8"] == 1

    assert main(["corpus", "stats", "--mpqa", str(sample_mpqa), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["skipped"] == {"binary document": 2} and stats["documents"] == 1
    assert any("doc-a: binary data (NUL bytes)" in m for m in stats["problems"])

    assert main(["corpus", "stats", "--mpqa", str(sample_mpqa)]) == 0
    out = capsys.readouterr().out
    assert "problems   2 binary documents" in out and "-v" in out


def test_summary_without_problems_does_not_point_to_v(sample_mpqa, capsys):
    assert main(["corpus", "stats", "--mpqa", str(sample_mpqa)]) == 0
    out = capsys.readouterr().out
    assert "problems   no problems\n" in out
