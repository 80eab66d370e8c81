"""Document lists of one's own over any MPQA-format directory, the division of a corpus without a split, and
scoring that leaves out the documents a model learnt from."""

import json

import pytest

from opinion_tagger.cli import main
from opinion_tagger.cli.evaluate import without_trained
from opinion_tagger.corpus.mpqa import MPQACorpus
from opinion_tagger.corpus.sources import load_documents
from opinion_tagger.errors import CorpusError, TaggerError
from opinion_tagger.training.run_data import hold_out, trained_documents


def test_a_doclist_names_documents_relative_to_the_directory(sample_mpqa, tmp_path):
    (sample_mpqa / "doclist.mine").write_text("other/doc-c\n\ndemo/doc-a\n")
    assert MPQACorpus(sample_mpqa, doclist="doclist.mine").names == ["other/doc-c", "demo/doc-a"]
    elsewhere = tmp_path / "list.txt"
    elsewhere.write_text("demo/doc-b\n")
    assert MPQACorpus(sample_mpqa, doclist=elsewhere).names == ["demo/doc-b"]
    docs = load_documents("mpqa", sample_mpqa, doclist="doclist.mine")
    assert list(docs) == ["other/doc-c", "demo/doc-a"]


@pytest.mark.parametrize(
    ("entries", "damage", "message"),
    [
        ("demo/doc-a\n../../outside\n", None, r"entry 2 \('../../outside'\) leads out of"),
        ("demo/doc-a\ndemo/doc-z\n", None, r"entry 2 \('demo/doc-z'\): no document .*docs/demo/doc-z"),
        (
            "demo/doc-b\n",
            "man_anns/demo/doc-b/gatesentences.mpqa.2.0",
            r"entry 1 .*: no annotations file .*gatesentences",
        ),
        ("", None, "names no document"),
    ],
)
def test_a_doclist_entry_that_is_not_there_is_one_error_naming_it(sample_mpqa, entries, damage, message):
    (sample_mpqa / "doclist.mine").write_text(entries)
    if damage:
        (sample_mpqa / damage).unlink()
    with pytest.raises(CorpusError, match=message):
        MPQACorpus(sample_mpqa, doclist="doclist.mine")


def test_a_missing_doclist_is_one_error(sample_mpqa):
    with pytest.raises(CorpusError, match="doclist.none: document list not found"):
        MPQACorpus(sample_mpqa, doclist="doclist.none")


def test_the_command_line_refuses_a_bad_doclist_with_status_2(sample_mpqa, capsys):
    (sample_mpqa / "doclist.bad").write_text("demo/doc-a\n../../etc/passwd\n")
    for argv in (
        ["evaluate", "--model", "fast", "--data", "mpqa", str(sample_mpqa), "--doclist", "doclist.bad"],
        ["corpus", "convert", "--mpqa", str(sample_mpqa), "--doclist", "doclist.bad", "--out", "unused.conll"],
    ):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "entry 2 ('../../etc/passwd') leads out of" in err[0]


def test_evaluate_on_a_doclist_scores_its_documents_and_each_one(sample_mpqa, capsys):
    (sample_mpqa / "doclist.mine").write_text("demo/doc-a\nother/doc-c\n")
    argv = ["evaluate", "--model", "fast", "--data", "mpqa", str(sample_mpqa), "--doclist", "doclist.mine"]
    assert main([*argv, "--json", "--by-document"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert list(report["documents"]) == ["demo/doc-a", "other/doc-c"]
    assert [r["sentences"] for r in report["documents"].values()] == [3, 2]
    for r in (report, *report["documents"].values()):
        scores = r["scores"] if "scores" in r else r
        assert set(scores) >= {"DSE", "ESE"} and 0 <= scores["DSE"]["proportional"]["f1"] <= 1
    assert main([*argv, "--by-document"]) == 0
    out = capsys.readouterr().out
    assert "on doclist.mine (5 sentences" in out and "demo/doc-a" in out and "other/doc-c" in out


def test_a_corpus_without_a_split_holds_out_every_tenth_document_or_the_last():
    names = [f"d{k}" for k in range(12)]
    assert hold_out(names) == ([n for n in names if n != "d9"], ["d9"])
    assert hold_out(["a", "b", "c"]) == (["a", "b"], ["c"])
    assert hold_out(names[:5], every=5) == (names[:4], ["d4"])
    with pytest.raises(TaggerError, match=r"2 documents to train on: training needs at least 3 .* add 1 more"):
        hold_out(["a", "b"])


def test_evaluate_leaves_out_the_documents_a_model_learnt_from(capsys):
    meta = {
        "training": {
            "data": {"train_documents": ["a", "b"]},
            "adapted": {"from_training": {"data": {"train_documents": ["n"]}}},
        }
    }
    assert trained_documents(meta) == {"a", "b", "n"}
    assert without_trained("m", meta, ["a", "c", "n", "d"]) == ["c", "d"]
    assert "left out 2 documents m was trained on (e.g. a); scoring the other 2" in capsys.readouterr().err
    with pytest.raises(TaggerError, match="m was trained on all 2 documents to be scored"):
        without_trained("m", meta, ["a", "b"])
    assert without_trained("m", {}, ["a"]) == ["a"]
