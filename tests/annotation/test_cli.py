"""``opinion-tagger annotate`` (import, export, stats) and training and evaluating on a
project's accepted documents (``--data annotations``), from scratch and from the bundled model."""

import importlib.util
import json

import pytest

from opinion_tagger.annotation.store import Project
from opinion_tagger.cli import main

# invented sentences (no corpus text)
TEXTS = [
    "Maria said the new bridge was a complete disaster.",
    "The committee praised the brave volunteers.",
    "Rain fell on the village all night.",
    "Critics fear the plan will fail, as usual.",
    "He claimed that the results were simply wonderful.",
    "The train left the station at noon.",
]


@pytest.fixture
def project(tmp_path, capsys):
    inp = tmp_path / "docs.jsonl"
    inp.write_text(
        "".join(json.dumps({"id": f"doc{k}", "text": t}) + "\n" for k, t in enumerate(TEXTS * 2)) + "not json\n",
        encoding="utf-8",
    )
    path = tmp_path / "p.sqlite"
    assert main(["annotate", "import", str(path), str(inp), "--model", "none"]) == 1  # one bad record
    err = capsys.readouterr().err
    assert "docs.jsonl:13: invalid JSON" in err and "imported 12 documents" in err
    return path


def test_import_stats_export(project, tmp_path, capsys):
    with Project(project) as p:
        d = p.documents()[0]
        p.add_span(d.id, 0, "DSE", 1, 2, "tester")  # "said"
        p.set_status(d.id, 1, "done", "tester")
    assert main(["annotate", "stats", str(project), "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["progress"] == "1 of 12 done" and s["spans"]["DSE"] == {"model": 0, "human": 1}
    assert s["annotators"] == ["tester"]
    assert (
        main(
            [
                "annotate",
                "export",
                str(project),
                "--format",
                "jsonl",
                "--out",
                str(tmp_path / "o.jsonl"),
                "--status",
                "done",
            ]
        )
        == 0
    )
    [rec] = [json.loads(line) for line in (tmp_path / "o.jsonl").read_text().splitlines()]
    assert rec["status"] == "done" and rec["spans"][0]["text"] == "said" and rec["spans"][0]["source"] == "human"
    assert main(["annotate", "export", str(project), "--format", "brat", "--out", str(tmp_path / "b")]) == 0
    assert len(list((tmp_path / "b").glob("*.ann"))) == 1  # the accepted document alone, by default
    every = ["--status", "todo", "--status", "done"]
    assert main(["annotate", "export", str(project), "--format", "brat", "--out", str(tmp_path / "c"), *every]) == 0
    assert len(list((tmp_path / "c").glob("*.ann"))) == 12
    assert main(["annotate", "stats", str(tmp_path / "none.sqlite")]) == 2
    assert "no such project file" in capsys.readouterr().err


def test_export_writes_the_accepted_documents_to_standard_output_by_default(project, tmp_path, capsys):
    with Project(project) as p:
        first, second = p.documents()[:2]
        p.set_status(first.id, 0, "done", "tester")
        p.set_status(second.id, 0, "rejected", "tester")
    capsys.readouterr()
    assert main(["annotate", "export", str(project)]) == 0
    out, err = capsys.readouterr()
    assert [(r["id"], r["status"]) for r in map(json.loads, out.splitlines())] == [("doc0", "done")]
    assert err == "wrote 1 document to standard output\n"
    assert main(["annotate", "export", str(project), "--format", "conll", "--include-rejected"]) == 0
    out = capsys.readouterr().out
    assert out.count("# id = ") == 2 and "# status = done" in out and "# status = rejected" in out
    assert main(["annotate", "export", str(project), "--format", "brat"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--format brat" in err and "--out DIRECTORY" in err and "Traceback" not in err
    for out, fmt, why in ((tmp_path, "jsonl", "is a directory"), (project, "brat", "not a directory")):
        assert main(["annotate", "export", str(project), "--format", fmt, "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"--out {out}" in err and why in err and "Traceback" not in err
    with pytest.raises(SystemExit):
        main(["annotate", "export", "--help"])
    assert "Writes the accepted documents only" in " ".join(capsys.readouterr().out.split())


def test_import_pre_annotates_with_the_bundled_model(tmp_path, capsys):
    (tmp_path / "a.txt").write_text("Officials said the plan was daylight robbery, as usual.", encoding="utf-8")
    assert main(["annotate", "import", str(tmp_path / "p.sqlite"), str(tmp_path / "a.txt")]) == 0
    with Project(tmp_path / "p.sqlite") as p:
        doc = p.document(p.documents()[0].id)
    assert doc.model == "accurate"  # the default model, as tag's
    assert doc.spans and all(s.source == "model" and 0 < s.score <= 1 for s in doc.spans)
    capsys.readouterr()  # the project file lies in the directory imported next: it is not read as a document
    assert main(["annotate", "import", str(tmp_path / "p.sqlite"), str(tmp_path)]) == 0
    assert "imported 0 documents, 1 already in the project, 0 errors" in capsys.readouterr().err


@pytest.mark.slow
def test_train_and_evaluate_on_accepted_documents(project, tmp_path, capsys):
    with Project(project) as p:
        for info in p.documents():  # accept every document, with the first word as a DSE
            p.add_span(info.id, 0, "DSE", 0, 1, "tester")
            p.set_status(info.id, 1, "done", "tester")
    out = tmp_path / "m"
    tiny = [
        "--task",
        "joint",
        "--depth",
        "1",
        "--hidden",
        "8",
        "--features",
        "random",
        "--embedding-dim",
        "8",
        "--max-epochs",
        "2",
        "--no-jit",
        "--quiet",
    ]
    assert main(["train", "--data", "annotations", str(project), *tiny, "--out", str(out)]) == 0
    meta = json.loads((out / "meta.json").read_text())
    assert meta["training"]["data"]["documents"] == {"train": 11, "dev": 1}
    capsys.readouterr()
    assert main(["evaluate", "--model", str(out), "--data", "annotations", str(project), "--json"]) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    # scored on the held-out document only: the 11 it learnt from are left out, and it says so
    assert "left out 11 documents" in captured.err and "scoring the other 1" in captured.err
    assert set(report) == {"DSE", "ESE"} and 0 <= report["DSE"]["proportional"]["f1"] <= 1
    more = tmp_path / "m2"  # continue training the bundled model on the corrections
    argv = [
        "train",
        "--data",
        "annotations",
        str(project),
        "--init-from",
        "default",
        "--max-epochs",
        "1",
        "--no-jit",
        "--quiet",
        "--out",
        str(more),
    ]
    if importlib.util.find_spec("optax") is None:  # the bundled model trains with the fast trainer
        capsys.readouterr()
        assert main(argv) == 2
        assert "pip install 'opinion-tagger[fast]'" in capsys.readouterr().err
        pytest.skip("continuing the bundled model's training needs the fast extra (JAX, optax)")
    assert main(argv) == 0
    meta = json.loads((more / "meta.json").read_text())
    assert meta["training"]["init"].endswith("models/accurate") and meta["training"]["epochs"] == 1
    assert json.loads((more / "config.json").read_text())["model"]["recurrent"]["cell"] == "lstm"
    assert (
        main(
            [
                "train",
                "--data",
                "annotations",
                str(project),
                "--init-from",
                "default",
                "--cell",
                "gru",
                "--out",
                str(tmp_path / "m3"),
            ]
        )
        == 2
    )
    assert "only with the bundle's network" in capsys.readouterr().err


def test_import_ids_are_relative_to_the_directory_given(tmp_path, capsys, monkeypatch):
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "a.txt").write_text(TEXTS[0], encoding="utf-8")
    (docs / "sub" / "b.txt").write_text(TEXTS[1], encoding="utf-8")
    (docs / "sub" / "c.jsonl").write_text(json.dumps({"text": TEXTS[2]}) + "\n", encoding="utf-8")
    (tmp_path / "alone.txt").write_text(TEXTS[3], encoding="utf-8")
    project = docs / "p.sqlite"  # inside the directory imported: still not read as a document
    assert (
        main(["annotate", "import", str(project), f"{docs.resolve()}/", str(tmp_path / "alone.txt"), "--model", "none"])
        == 0
    )
    with Project(project) as p:
        names = [d.name for d in p.documents()]
    assert names == ["a.txt", "sub/b.txt", "sub/c.jsonl:1", "alone.txt"]  # no machine path in an id
    monkeypatch.chdir(tmp_path)  # the same directory given another way: the same ids, nothing new
    capsys.readouterr()
    assert main(["annotate", "import", str(project), "docs", "--model", "none"]) == 0
    assert "imported 0 documents, 3 already in the project" in capsys.readouterr().err
    brat = ["--format", "brat", "--out", str(tmp_path / "b"), "--status", "todo"]
    assert main(["annotate", "export", str(project), *brat]) == 0
    assert sorted(f.name for f in (tmp_path / "b").iterdir()) == [
        "a.ann",
        "a.txt",
        "alone.ann",
        "alone.txt",
        "annotation.conf",
        "sub_b.ann",
        "sub_b.txt",
        "sub_c.jsonl_1.ann",
        "sub_c.jsonl_1.txt",
    ]
