"""``opinion-tagger adapt`` and ``annotate adapt``: a bundle adapted to an annotation project, an MPQA directory
with a document list or a CoNLL file, with a replay of its own training documents, the epoch chosen on held-out
new documents, its record and card saying what it was adapted to; and ``train`` on a corpus without a split."""

import json

import pytest

from opinion_tagger.annotation.store import Project
from opinion_tagger.cli import main
from opinion_tagger.runtime.sentence_tagger import SentenceTagger

pytestmark = pytest.mark.slow

TINY = ["--task", "joint", "--depth", "1", "--hidden", "8", "--features", "random", "--embedding-dim", "8"]
QUICK = ["--max-epochs", "2", "--no-jit", "--quiet"]

# invented sentences (no corpus text)
TEXTS = [
    "Dear Anna, I really hope you liked the awful cake.",
    "We think the new neighbours are lovely, honestly.",
    "The bus was late again this morning.",
    "My brother says the film was a total waste of time.",
]


@pytest.fixture
def base(sample_mpqa, tmp_path, capsys):
    """A tiny model trained on the sample corpus's documents of a doclist, without a fold."""
    (sample_mpqa / "doclist.mine").write_text("demo/doc-a\ndemo/doc-b\nother/doc-c\n")
    out = tmp_path / "base"
    argv = ["train", "--data", "mpqa", str(sample_mpqa), "--doclist", "doclist.mine", *TINY, *QUICK, "--out", str(out)]
    assert main(argv) == 0
    capsys.readouterr()
    return out


def test_training_without_a_fold_holds_out_a_document_and_records_them_all(base):
    data = json.loads((base / "meta.json").read_text())["training"]["data"]
    assert (data["train_documents"], data["dev_documents"]) == (["demo/doc-a", "demo/doc-b"], ["other/doc-c"])
    assert not (base / "checkpoint").exists()  # a finished run keeps no checkpoints


def test_training_needs_three_documents_and_says_so(sample_mpqa, tmp_path, capsys):
    (sample_mpqa / "doclist.two").write_text("demo/doc-a\ndemo/doc-b\n")
    out = tmp_path / "m"
    argv = ["train", "--data", "mpqa", str(sample_mpqa), "--doclist", "doclist.two", *TINY, *QUICK, "--out", str(out)]
    assert main(argv) == 2
    assert "2 documents to train on: training needs at least 3" in capsys.readouterr().err
    assert not out.exists()


def test_checkpoints_are_kept_when_asked(sample_mpqa, tmp_path):
    (sample_mpqa / "doclist.mine").write_text("demo/doc-a\ndemo/doc-b\nother/doc-c\n")
    out = tmp_path / "kept"
    argv = ["train", "--data", "mpqa", str(sample_mpqa), "--doclist", "doclist.mine", *TINY, *QUICK]
    assert main([*argv, "--keep-checkpoints", "--out", str(out)]) == 0
    assert list((out / "checkpoint").glob("epoch-*"))


@pytest.fixture
def project(tmp_path, capsys):
    """An annotation project of 8 accepted documents, each with its first word a DSE."""
    inp = tmp_path / "docs.jsonl"
    inp.write_text("".join(json.dumps({"id": f"doc{k}", "text": t}) + "\n" for k, t in enumerate(TEXTS * 2)))
    path = tmp_path / "p.sqlite"
    assert main(["annotate", "import", str(path), str(inp), "--model", "none"]) == 0
    with Project(path) as p:
        for info in p.documents():
            p.add_span(info.id, 0, "DSE", 0, 1, "tester")
            p.set_status(info.id, 1, "done", "tester")
    capsys.readouterr()
    return path


def test_training_on_a_project_of_two_documents_says_what_is_missing(project, tmp_path, capsys):
    with Project(project) as p:
        for info in p.documents()[2:]:
            p.set_status(info.id, 2, "todo", "tester")
    assert main(["train", "--data", "annotations", str(project), *TINY, *QUICK, "--out", str(tmp_path / "m")]) == 2
    assert "2 documents to train on: training needs at least 3" in capsys.readouterr().err


def test_adapt_to_a_project_with_replay(base, project, tmp_path, capsys):
    out = tmp_path / "adapted"
    argv = ["adapt", "--model", str(base), "--data", "annotations", str(project), "--out", str(out)]
    assert main([*argv, "--epochs", "2", "--quiet"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["model"] == str(out)
    assert "to 7 documents (7 sentences)" in captured.err and "1 document (1 sentence) held out" in captured.err
    training = json.loads((out / "meta.json").read_text())["training"]
    assert training["data"]["dev_documents"] == ["doc4"]  # one in five held out
    assert training["adapted"]["from"] == str(base)
    replay = training["adapted"]["replay"]
    # three replayed sentences for each new training sentence (7), drawn from the base's own training documents (5)
    assert (replay["sentences"], replay["of"]) == (5, 5) and replay["documents"] == 2
    assert not (out / "checkpoint").exists()
    card = (out / "README.md").read_text()
    assert "adapted to 7 annotated documents of annotations data" in card and "epoch: doc4" in card
    # the model it started from, scored on the same held-out document, beside it
    before = training["adapted"]["held_out_before"]
    assert set(before) == {"DSE", "ESE"} and json.loads(captured.out)["held_out_before"]["DSE"] == {
        k: before["DSE"][k] for k in ("binary", "proportional", "exact")
    }
    assert "| before: binary F1 | before: proportional F1 |" in card
    assert "adapt: On the held-out documents it" in captured.err
    tags = SentenceTagger.load(out).predict_tags([["We", "think", "so", "."]])
    assert set(tags) == {"DSE", "ESE"}


def _adapted(before: tuple[float, float], after: tuple[float, float]) -> dict:
    def scores(dse: float, ese: float) -> dict:
        return {"DSE": {"proportional": {"f1": dse}}, "ESE": {"proportional": {"f1": ese}}}

    return {"training": {"adapted": {"held_out_before": scores(*before)}}, "scores": {"dev": scores(*after)}}


def test_the_held_out_documents_say_whether_adapting_gained():
    from opinion_tagger.training.adapt import gain_line

    # the mean over the types: 0.55 before, 0.60 after
    assert gain_line(_adapted((0.6, 0.5), (0.7, 0.5)), "accurate") == (
        "On the held-out documents it gains 5.0 points of proportional F1 over accurate."
    )
    line = gain_line(_adapted((0.6, 0.5), (0.5, 0.5)), "accurate")
    assert line is not None
    assert line.startswith("On the held-out documents it does not beat accurate (50.0 against 55.0")
    assert gain_line({"training": {"adapted": {}}, "scores": {"dev": {}}}, "accurate") is None


def test_adapt_with_a_frozen_encoder_trains_the_recurrent_layers_and_heads_only(base, project, tmp_path, capsys):
    from opinion_tagger.model.keras_backend import load_keras_model

    out = tmp_path / "frozen"
    argv = ["adapt", "--model", str(base), "--data", "annotations", str(project), "--out", str(out)]
    assert main([*argv, "--epochs", "1", "--learning-rate", "0.01", "--freeze-encoder", "--quiet"]) == 0
    capsys.readouterr()
    before, after = load_keras_model(base), load_keras_model(out)
    # the random word vectors learn in training but stay as they were here; the recurrent layer moved
    assert all(
        (a == b).all()
        for a, b in zip(before.get_layer("embedding").get_weights(), after.get_layer("embedding").get_weights())
    )
    assert any(
        (a != b).any()
        for a, b in zip(before.get_layer("birnn_1").get_weights(), after.get_layer("birnn_1").get_weights())
    )
    assert json.loads((out / "meta.json").read_text())["training"]["adapted"]["settings"]["freeze_encoder"] is True
    assert "(the encoder and word vectors frozen)" in (out / "README.md").read_text()


def test_annotate_adapt_and_an_mpqa_doclist_and_a_conll_file(base, project, sample_mpqa, tmp_path, capsys):
    out = tmp_path / "from-project"
    assert (
        main(
            [
                "annotate",
                "adapt",
                str(project),
                "--model",
                str(base),
                "--out",
                str(out),
                "--epochs",
                "1",
                "--replay",
                "0",
                "--quiet",
            ]
        )
        == 0
    )
    assert json.loads((out / "meta.json").read_text())["training"]["adapted"]["replay"] == {"sentences": 0}
    conll = tmp_path / "sample.conll"
    assert main(["corpus", "convert", "--mpqa", str(sample_mpqa), "--out", str(conll)]) == 0
    for data in (["mpqa", str(sample_mpqa), "--doclist", "doclist.mine"], ["conll", str(conll)]):
        out = tmp_path / data[0]
        assert (
            main(["adapt", "--model", str(base), "--data", *data, "--out", str(out), "--epochs", "1", "--quiet"]) == 0
        )
        assert json.loads((out / "meta.json").read_text())["training"]["data"]["dev_documents"] == ["other/doc-c"]
    capsys.readouterr()
    assert main(["annotate", "adapt", str(tmp_path / "typo.sqlite"), "--out", str(tmp_path / "x")]) == 2
    assert "typo.sqlite: no such project" in capsys.readouterr().err
