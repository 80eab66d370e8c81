"""The CV runner and the report generator on a tiny configuration and corpus (seconds)."""

import json
import sys
from pathlib import Path

import pytest
from conftest import experiment_script, write_split

from experiments import study
from experiments.cross_validation import load_experiments, run_experiment
from experiments.summaries import load_diverged, load_results, sign_test
from opinion_tagger.config import TaggerConfig
from opinion_tagger.corpus.sources import load_documents, select
from opinion_tagger.corpus.split import load_split
from opinion_tagger.errors import TaggerError
from opinion_tagger.training.trainer import Trainer


@pytest.fixture
def setup(sample_mpqa, tmp_path):
    split = write_split(
        tmp_path / "split", {0: ("demo/doc-a\n", "other/doc-c\n"), 1: ("other/doc-c\n", "demo/doc-a\n")}
    )
    cfg = tmp_path / "tiny.yaml"
    cfg.write_text(f"""
name: tiny
kind: rnn
data: {{source: mpqa, path: {sample_mpqa}}}
folds: [0, 1]
model: {{recurrent: {{cell: gru, hidden: 6}}, embeddings: {{features: random, dim: 6}}}}
training: {{batch_size: 4, jit_compile: false, stopping: {{max_epochs: 3, patience: 3}}}}
grid: {{task: [dse, ese], model.recurrent.depth: [1]}}
choices: tiny test settings
""")
    crf = tmp_path / "crf.yaml"
    crf.write_text(f"""
name: crfb
kind: crf
data: {{source: mpqa, path: {sample_mpqa}}}
folds: [0]
task: joint
crf: {{max_iterations: 20}}
""")
    return split, cfg, crf, tmp_path


def test_grid_expansion_and_errors(setup, tmp_path):
    _, cfg, _, _ = setup
    exps = load_experiments(cfg)
    assert [e.name for e in exps] == ["tiny-dse-d1", "tiny-ese-d1"]
    assert exps[0].config().task == "dse" and exps[0].config().model.recurrent.depth == 1
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nmodel: {recurrent: {cell: transformer}}\n")
    with pytest.raises(TaggerError, match='model.recurrent.cell: "transformer" is not one of'):
        load_experiments(bad)
    bad.write_text("name: x\nmodel: {cell: lstm}\n")  # a field by its name alone
    with pytest.raises(TaggerError, match=r"model.cell: unknown field \(did you mean model.recurrent.cell\?\)"):
        load_experiments(bad)


def test_overrides_set_fields_of_the_matching_grid_cells_only(tmp_path):
    cfg = tmp_path / "deep.yaml"
    cfg.write_text(
        "name: deep\ntraining: {trainer: fast, fast: {activation_l2: 0.0001, l2: 0.0001}}\n"
        "grid: {model.recurrent.depth: [1, 3, 4, 5], model.recurrent.budget: [24k]}\n"
        "overrides:\n  - when: {model.recurrent.depth: [4, 5]}\n    set: {training.fast.activation_l2: 0.00001}\n"
        "  - when: {model.recurrent.depth: 1, model.recurrent.budget: 200k}\n    set: {training.fast.l2: 0.5}\n"
    )
    exps = load_experiments(cfg)
    assert [e.name for e in exps] == ["deep-d1-24k", "deep-d3-24k", "deep-d4-24k", "deep-d5-24k"]
    assert [e.config().training.fast.activation_l2 for e in exps] == [1e-4, 1e-4, 1e-5, 1e-5]
    assert [e.config().training.fast.l2 for e in exps] == [1e-4] * 4  # depth 1 matches, budget 24k does not
    for text, message in (
        ("overrides: {model.recurrent.depth: 4}", "must be a list"),
        ("overrides: [{when: {model.recurrent.depth: 4}}]", r"overrides\[0\] must be"),
        ("overrides: [{when: {depth: 4}, set: {}}]", r"overrides\[0\]: depth is not a field"),
    ):
        bad = tmp_path / "bad.yaml"
        bad.write_text(f"name: x\ngrid: {{model.recurrent.depth: [4]}}\n{text}\n")
        with pytest.raises(TaggerError, match=message):
            load_experiments(bad)


def test_a_list_of_grids_gives_the_runs_of_each(tmp_path):
    cfg = tmp_path / "cells.yaml"
    cfg.write_text(
        "name: c\nmodel: {recurrent: {depth: 1}}\n"
        "grid:\n  - {model.recurrent.cell: [mrnn], model.recurrent.factors: [8, 16]}\n"
        "  - {model.recurrent.cell: [irlm], model.recurrent.decay_init: [0.5]}\n"
    )
    exps = load_experiments(cfg)
    assert [e.name for e in exps] == ["c-mrnn-factors8", "c-mrnn-factors16", "c-irlm-decay_init0.5"]
    assert [e.config().model.recurrent.factors for e in exps] == [8, 16, None]
    for grid, message in (
        ("[{model.recurrent.cell: [mrnn]}, {model.recurrent.cell: [mrnn]}]", "c-mrnn twice"),
        ("{model.recurrent.cell: mrnn}", "grid must be"),
        ("{cell: [mrnn]}", "grid: cell is not a field"),
    ):
        cfg.write_text(f"name: c\ngrid: {grid}\n")
        with pytest.raises(TaggerError, match=message):
            load_experiments(cfg)


@pytest.mark.integration
def test_runner_writes_results_skips_and_resumes(setup):
    split, cfg, crf, tmp = setup
    results, runs = tmp / "results", tmp / "runs"
    exp = load_experiments(cfg)[0]
    # an interrupted fold 0: a checkpoint after epoch 1 in the runner's run directory
    docs = load_documents("mpqa", exp.data["path"])
    sp = load_split(split, 0)

    class Stop(Exception):
        pass

    def stop(entry):
        raise Stop

    with pytest.raises(Stop):
        Trainer(exp.config(), runs / exp.name / "fold0", progress=False, on_epoch=stop).run(
            select(docs, sp.train), select(docs, sp.dev)
        )
    written = run_experiment(exp, None, results, runs, split, progress=False)
    assert [p.name for p in written] == ["fold0.json", "fold1.json"]
    r0 = json.loads(written[0].read_text())
    assert r0["epochs"] == 3 and len(r0["history"]) == 3  # resumed: epochs 2, 3 added to epoch 1
    assert r0["config"] == exp.config().to_dict()
    assert r0["seed"] == 1 and r0["git_commit"] and r0["data"]["source"] == "mpqa"
    assert set(r0["scores"]) == {"dev", "test"}
    assert set(r0["scores"]["test"]["DSE"]) >= {"binary", "proportional", "exact"}
    assert not (runs / exp.name / "fold0" / "checkpoint").exists()
    # finished runs are skipped
    assert run_experiment(exp, None, results, runs, split, progress=False) == []
    # the CRF baseline
    written = run_experiment(load_experiments(crf)[0], None, results, runs, split, progress=False)
    assert set(json.loads(written[0].read_text())["scores"]["test"]) == {"DSE", "ESE"}

    # the report
    out = study.write_report(load_results(results), tmp / "REPORT.md", tmp / "report")
    text = out.read_text()
    assert "## DSE" in text and "`tiny-dse-d1`" in text and "`crfb`" in text
    assert "| 2 |" in text  # two folds for tiny-dse-d1
    tiny = [r for r in load_results(results) if r["name"] == "tiny-dse-d1"]
    dev = [100 * r["scores"]["dev"]["DSE"]["proportional"]["f1"] for r in tiny]
    assert f"| {sum(dev) / 2:.2f} ± {abs(dev[0] - dev[1]) / 2**0.5:.2f} |" in text  # dev column: mean ± std
    assert "Cells with fewer than 10 folds" in text
    assert (tmp / "report" / "f1_vs_depth.png").stat().st_size > 1000
    assert (tmp / "report" / "precision_recall.png").stat().st_size > 1000


@pytest.mark.integration
def test_fold_lock_shares_folds_between_jobs(setup):
    import os
    import subprocess

    from experiments.cross_validation import result_path
    from experiments.fold_locks import claim_fold

    split, cfg, _, tmp = setup
    lock = tmp / "runs" / "x" / "fold0.lock"
    with claim_fold(lock) as owner:
        assert owner is None and lock.read_text() == str(os.getpid())
    assert not lock.exists()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    lock.write_text(str(dead.pid))  # left by a job that died: taken over
    with claim_fold(lock) as owner:
        assert owner is None and lock.read_text() == str(os.getpid())
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        exp = load_experiments(cfg)[0]
        results, runs = tmp / "results", tmp / "runs"
        (runs / exp.name).mkdir(parents=True)
        (runs / exp.name / "fold0.lock").write_text(str(live.pid))  # another job is on fold 0
        written = run_experiment(exp, [0, 1], results, runs, split, progress=False)
        assert written == [result_path(results, exp.name, 1)]
        assert not result_path(results, exp.name, 0).exists()
        assert (runs / exp.name / "fold0.lock").read_text() == str(live.pid)  # not touched
    finally:
        live.kill()
        live.wait()


@pytest.mark.integration
def test_git_commit_outside_git(tmp_path, monkeypatch):
    """A copy of the tree without .git records the commit it is told, marked as a copy."""
    from opinion_tagger import provenance

    monkeypatch.setattr(provenance, "REPO_ROOT", tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    monkeypatch.delenv("OPINION_TAGGER_GIT_COMMIT", raising=False)
    assert provenance.git_commit() == "unknown"
    monkeypatch.setenv("OPINION_TAGGER_GIT_COMMIT", "8a02e7a")
    assert provenance.git_commit() == "8a02e7a (copy)"


@pytest.mark.slow
def test_runner_trains_fast_folds_together(setup):
    pytest.importorskip("jax")
    split, _, _, tmp = setup
    fast = tmp / "fast.yaml"
    fast.write_text(f"""
name: quick
data: {{source: mpqa, path: {load_experiments(setup[1])[0].data["path"]}}}
folds: [0, 1]
task: dse
model: {{recurrent: {{depth: 1, hidden: 4}}, embeddings: {{features: random, dim: 6}}}}
training: {{trainer: fast, batch_size: 4, o_weight: 0.5, optimizer: {{name: sgd}}, fast: {{loss_sum: true}},
           stopping: {{max_epochs: 2, eval_every: 2, patience: 0}}}}
""")
    (exp,) = load_experiments(fast)
    written = run_experiment(exp, None, tmp / "results", tmp / "runs", split, progress=False)
    assert [p.name for p in written] == ["fold0.json", "fold1.json"]
    for p in written:
        r = json.loads(p.read_text())
        assert r["trained_together"] == 2 and r["device"].endswith("fast JAX trainer")
        assert r["epochs"] == 2 and r["history"][-1]["dev_score"] == pytest.approx(
            r["scores"]["dev"]["DSE"]["proportional"]["f1"]
        )
    assert not list((tmp / "runs" / "quick").glob("fold*/checkpoint"))  # checkpoints go once results are written
    assert run_experiment(exp, None, tmp / "results", tmp / "runs", split, progress=False) == []  # all done


@pytest.mark.integration
def test_runner_reruns_a_diverged_fold_with_another_seed_then_gives_up(setup):
    pytest.importorskip("jax")
    split, _, _, tmp = setup
    wild = tmp / "wild.yaml"  # a learning rate no network survives: every seed diverges
    wild.write_text(f"""
name: wild
data: {{source: mpqa, path: {load_experiments(setup[1])[0].data["path"]}}}
folds: [0]
task: dse
model: {{recurrent: {{depth: 1, hidden: 4}}, embeddings: {{features: random, dim: 6}}}}
training: {{trainer: fast, batch_size: 4, fast: {{loss_sum: true}}, stopping: {{max_epochs: 3, patience: 0}},
           optimizer: {{name: sgd, momentum: 0.9, learning_rate: 1.0e+30, clipnorm: 0}}}}
""")
    (exp,) = load_experiments(wild)
    with pytest.raises(TaggerError, match=r"wild fold 0: training diverged with seeds 1, 1001 and 2001"):
        run_experiment(exp, None, tmp / "results", tmp / "runs", split, progress=False, together=1)
    assert not (tmp / "results" / "wild" / "fold0.json").exists()  # no result for a fold that never trained
    (record,) = load_diverged(tmp / "results")  # but the record of its divergence, for the study's report
    assert record["name"] == "wild" and record["fold"] == 0
    assert TaggerConfig.from_dict(record["config"]).training.optimizer.learning_rate == 1e30
    assert [a["seed"] for a in record["diverged"]] == [1, 1001, 2001]
    assert all(a["epoch"] in (1, 2) for a in record["diverged"])  # a rate of 1e30: infinite at once
    attempts = [{"seed": 1, "epoch": 5}, {"seed": 1001, "epoch": 3}, {"seed": 2001, "epoch": 2}]
    lines = study.cells_study_section({}, [{**record, "name": "cells-dev-x", "diverged": attempts}])
    assert lines == [
        "",
        "Diverged with every seed, so not scored: `cells-dev-x` (seeds 1, 1001, 2001: loss infinite at epochs "
        "5, 3, 2).",
        "",
    ]
    # run_cv reports the failed experiment and still runs the next one
    import subprocess

    command, env = experiment_script("run_cv")
    argv = [str(wild), str(setup[2]), "--results", str(tmp / "results"), "--runs", str(tmp / "runs")]
    done = subprocess.run(
        [*command, *argv, "--datasplit", str(split), "--together", "1"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert "run_cv: error: wild fold 0: training diverged with seeds 1, 1001 and 2001" in done.stderr
    assert "run_cv: 1 of 2 experiments failed: wild" in done.stderr
    assert (tmp / "results" / "crfb" / "fold0.json").is_file()


@pytest.mark.integration
def test_rename_results_moves_records_and_keeps_the_old_name(tmp_path):
    import subprocess

    command, env = experiment_script("rename_results")
    for name, folds in (("paper-elman-dse-d1-24k", (0, 3)), ("paper-elman-ese-d1-24k", (0,)), ("paperx-y", (0,))):
        (tmp_path / name).mkdir()
        for k in folds:
            (tmp_path / name / f"fold{k}.json").write_text(json.dumps({"name": name, "fold": k}))
    (tmp_path / "paper-elman-dse-d1-24k" / "fold3.distributions.npz").write_bytes(b"kept")  # an ensemble member's

    def run(*args):
        return subprocess.run([*command, *args, "--results", str(tmp_path)], env=env, capture_output=True, text=True)

    done = run("paper-elman", "authors-elman", "--only", "paper-elman-dse-d1-24k")
    assert done.returncode == 0 and "2 results renamed" in done.stderr
    assert not (tmp_path / "paper-elman-dse-d1-24k").exists()
    moved = json.loads((tmp_path / "authors-elman-dse-d1-24k" / "fold3.json").read_text())
    assert moved == {"name": "authors-elman-dse-d1-24k", "fold": 3, "renamed_from": "paper-elman-dse-d1-24k"}
    assert (tmp_path / "authors-elman-dse-d1-24k" / "fold3.distributions.npz").read_bytes() == b"kept"
    assert (tmp_path / "paper-elman-ese-d1-24k" / "fold0.json").exists()  # not in --only
    (tmp_path / "authors-elman-ese-d1-24k").mkdir()
    (tmp_path / "authors-elman-ese-d1-24k" / "fold0.json").write_text("{}")
    clash = run("paper-elman", "authors-elman")
    assert clash.returncode != 0 and "already exists" in clash.stderr
    assert (tmp_path / "paper-elman-ese-d1-24k" / "fold0.json").exists() and (tmp_path / "paperx-y").exists()
    whole = run("paper-elman-ese-d1-24k", "recipe-x-ese-d1-24k-init_scale0.01")  # one experiment by its full name
    assert whole.returncode == 0 and "1 results renamed" in whole.stderr
    assert (
        json.loads((tmp_path / "recipe-x-ese-d1-24k-init_scale0.01" / "fold0.json").read_text())["renamed_from"]
        == "paper-elman-ese-d1-24k"
    )


@pytest.mark.integration
def test_adopt_run_copies_a_fold_only_when_the_configuration_matches(tmp_path):
    import subprocess

    command, env = experiment_script("adopt_run")
    config = tmp_path / "c.yaml"
    config.write_text(
        "name: big\ntask: joint\nmodel.recurrent: {cell: lstm, hidden: 8}\ntraining.optimizer.learning_rate: 2.0e-3\n"
        "grid: {task: [joint]}\nchoices: picked on dev\n"
    )
    (exp,) = load_experiments(config)
    results = tmp_path / "results"

    def put(name, **changes):
        (results / name).mkdir(parents=True)
        record = {
            "name": name,
            "kind": "rnn",
            "fold": 0,
            "seed": 7,
            "choices": "a study",
            "config": exp.config().replace({"training.seed": 7, **changes}).to_dict(),
            "data": {"source": "reference"},
        }
        (results / name / "fold0.json").write_text(json.dumps(record))

    def run(source):
        return subprocess.run(
            [*command, str(config), "big-joint", source, "--folds", "0", "--results", str(results)],
            env=env,
            capture_output=True,
            text=True,
        )

    put("study-lr", **{"training.optimizer.learning_rate": 5e-4})
    refused = run("study-lr")
    assert refused.returncode == 2 and "training.optimizer.learning_rate (0.0005 vs 0.002)" in refused.stderr
    assert not (results / "big-joint").exists()
    put("study-same")
    done = run("study-same")
    assert done.returncode == 0 and "1 folds adopted" in done.stderr
    adopted = json.loads((results / "big-joint" / "fold0.json").read_text())
    assert (adopted["name"], adopted["adopted_from"], adopted["choices"], adopted["seed"]) == (
        "big-joint",
        "study-same",
        "picked on dev",
        7,
    )
    again = run("study-same")
    assert again.returncode == 2 and "already exists" in again.stderr


def test_sign_test_and_depth_table_by_hand():
    assert sign_test(9, 0) == 2 / 2**9  # 0.0039
    assert sign_test(8, 2) == 2 * (1 + 10 + 45) / 2**10  # 0.109375
    assert sign_test(2, 8) == sign_test(8, 2) and sign_test(5, 5) == 1.0 and sign_test(0, 0) == 1.0

    def cell(scores):
        return {
            "type": "DSE",
            "records": [
                {"fold": k, "scores": {"test": {"DSE": {"proportional": {"f1": f}}}}} for k, f in scores.items()
            ],
        }

    cells = {
        ("DSE", 1, "24k"): cell({0: 0.60, 1: 0.62, 2: 0.61}),
        ("DSE", 3, "24k"): cell({0: 0.63, 1: 0.61, 2: 0.64, 3: 0.70}),
    }  # fold 3 has no depth-1 partner
    lines = study.depth_section(cells)
    (row,) = [x for x in lines if x.startswith("| DSE")]
    # diffs +3, -1, +3 points: mean +1.67, std 2.31; 2 wins, 1 loss: p = 2 * (1 + 3) / 8 = 1.0
    assert row == "| DSE | 24k | 3 − 1 | 3 | +1.67 ± 2.31 | 2 / 1 | 1.000 | +0.74 |"
    assert study.depth_section({("DSE", 3, "24k"): cells[("DSE", 3, "24k")]}) == []


def test_grid_section_by_hand_lists_stuck_and_diverged_runs():
    from experiments.summaries import summarise

    def result(fold, test_f1, dev_f1, **extra):
        score = lambda f: {
            "ESE": {
                m: {"precision": f, "recall": f, "f1": f}  # noqa: E731
                for m in ("proportional", "binary", "exact")
            }
        }
        return {
            "name": "paper-elman-ese-d5-24k",
            "kind": "rnn",
            "fold": fold,
            "config": {},
            "epochs": 100,
            "data": {"source": "reference"},
            "scores": {"test": score(test_f1), "dev": score(dev_f1)},
            **extra,
        }

    results = [result(k, 0.5, 0.55) for k in range(9)] + [
        result(9, 0.0, 0.0, diverged=[{"seed": 1, "epoch": 3}], seed=1001)
    ]
    lines = study.grid_section(summarise(results))
    (row,) = [x for x in lines if x.startswith("| ESE | 24k | 5 |")]
    # nine folds at 50 and one at 0: mean 45.00, sample std sqrt((9 * 5² + 45²) / 9) = sqrt(250) = 15.81;
    # paper 49.25
    assert row.startswith("| ESE | 24k | 5 | 10 | 45.00 ± 15.81 | 49.25 | -4.25 |")
    assert any("over the 1 cells" in x.lower() and "mean |ours − paper| 4.25" in x for x in lines)
    assert any(
        x.startswith("Runs whose training loss became infinite")
        and "ESE d5 24k fold 9: seed 1 diverged at epoch 3; the result is seed 1001's" in x
        for x in lines
    )
    assert any(
        x.startswith("Runs that never tagged anything")
        and "ESE d5 24k fold 9 (100 epochs).  With no span" in x
        and x.endswith("raises its cell's P column.")
        for x in lines
    )


def test_variants_section_by_hand_pairs_with_the_elman_cell():
    from experiments.summaries import summarise

    def result(name, source, fold, f1):
        score = {"DSE": {m: {"precision": f1, "recall": f1, "f1": f1} for m in ("proportional", "binary", "exact")}}
        return {
            "name": name,
            "kind": "rnn",
            "fold": fold,
            "config": {"cell": "elman", "depth": 3, "budget": "200k", "trainer": "fast"},
            "data": {"source": source},
            "scores": {"test": score, "dev": score},
        }

    results = [result("paper-elman-dse-d3-200k", "reference", k, f) for k, f in enumerate((0.60, 0.62, 0.61))] + [
        result("paper-elman-spacy-dse", "mpqa", k, f) for k, f in enumerate((0.58, 0.63, 0.60))
    ]
    lines = study.grid_section(summarise(results))
    (row,) = [x for x in lines if x.startswith("| `paper-elman-spacy-dse`")]
    # spaCy 58, 63, 60: mean 60.33, std sqrt((2.33² + 2.67² + 0.33²) / 2) = 2.52; Elman 60, 62, 61: 61.00 ± 1.00;
    # paired diffs -2, +1, -1: mean -0.67, 1 win and 2 losses, p = 2 * (1 + 3) / 8 = 1; paper DSE d3 200k 66.01
    assert row == (
        "| `paper-elman-spacy-dse` | DSE | elman, depth 3, 200k | mpqa | 3 | 60.33 ± 2.52 | 60.33 ± 2.52 | "
        "60.3 / 60.3 | 61.00 ± 1.00 | -0.67 on 3 folds, 1 / 2, p 1.000 | 66.01 |"
    )
    # the spaCy rows are not grid cells: the 20-cell table still counts one cell with results
    assert any(x.startswith("| DSE | 200k | 3 | 3 | 61.00 ± 1.00 |") for x in lines)
    assert not any("decay the learning rate" in x for x in lines)  # the same recipe: nothing to say
    # a gated row with another decay than its Elman cell's says so, with the measured factor (none here)
    gated = [
        {
            **result("gated-dse-lstm-200k", "reference", 0, 0.62),
            "config": {"cell": "lstm", "depth": 3, "budget": "200k", "lr_decay": 0.9999, "trainer": "fast"},
        }
    ]
    for r in results:
        r["config"]["lr_decay"] = 0.999
    lines = study.grid_section(summarise(results + gated))
    assert any(
        "The `gated-*` rows also decay the learning rate by ×0.9999 per update where the Elman grid decays it by ×0.999"
        in x
        and "moved fold-0 dev F1 by not run" in x
        for x in lines
    )


def test_units_section_by_hand_pairs_the_new_cells_with_elman_lstm_and_gru():
    from experiments.summaries import summarise

    def result(name, cell, fold, f1, depth=3):
        score = {"ESE": {m: {"precision": f1, "recall": f1, "f1": f1} for m in ("proportional", "binary", "exact")}}
        return {
            "name": name,
            "kind": "rnn",
            "fold": fold,
            "config": {"cell": cell, "depth": depth, "budget": "200k"},
            "data": {"source": "reference"},
            "scores": {"test": score, "dev": score},
        }

    def rows(name, cell, scores, depth=3):
        return [result(name, cell, k, f, depth) for k, f in enumerate(scores)]

    results = (
        rows("paper-elman-ese-d3-200k", "elman", (0.50, 0.52, 0.51))
        + rows("gated-ese-lstm-200k", "lstm", (0.55, 0.56))  # two folds only
        + rows("gated-ese-gru-200k", "gru", (0.54, 0.50, 0.53), depth=1)  # another depth: not its partner
        + rows("cells-ese-irlm", "irlm", (0.53, 0.51, 0.55))
        + rows("cells-dev-ese-irlm-clipnorm500.0", "irlm", (0.9,))  # the dev study: never a row here
    )
    lines = study.grid_section(summarise(results))
    (row,) = [x for x in lines if x.startswith("| `cells-")]
    # irlm 53, 51, 55: 53.00 ± 2.00; against Elman 50, 52, 51: diffs +3, -1, +4, mean +2.00, 2 wins and 1 loss,
    # p = 2 * (1 + 3) / 8 = 1; against LSTM 55, 56 (folds 0, 1): diffs -2, -5, mean -3.50, 0 / 2, p = 2 / 4 = 0.5
    assert row == (
        "| `cells-ese-irlm` | ESE | irlm, depth 3, 200k | 3 | 53.00 ± 2.00 | 53.00 ± 2.00 | 53.0 / 53.0 | "
        "+2.00 on 3 folds, 2 / 1, p 1.000 | -3.50 on 2 folds, 0 / 2, p 0.500 | – | – |"
    )
    # a depth-1 row: paired with the Elman cell of its depth (none here) and, from the depth-3 row, as its partner
    lines = study.grid_section(summarise(results + rows("cells-ese-irlm-d1", "irlm", (0.50, 0.52, 0.52), depth=1)))
    deep, one = ([x for x in lines if x.startswith(f"| `cells-ese-irlm{s}` |")][0] for s in ("", "-d1"))
    # irlm depth 3 against depth 1: diffs +3, -1, +3: mean +1.67, 2 / 1, p 1
    assert deep.endswith("| – | +1.67 on 3 folds, 2 / 1, p 1.000 |")
    assert one.startswith("| `cells-ese-irlm-d1` | ESE | irlm, depth 1, 200k | 3 | 51.33 ± 1.15 |")
    # the GRU row has depth 1, so it pairs with the depth-1 row: 50 - 54, 52 - 50, 52 - 53: mean -1.00, 1 / 2, p 1
    assert one.endswith("| – | – | -1.00 on 3 folds, 1 / 2, p 1.000 | – |")
    assert study.units_section({}, {}) == []


def test_the_irlm_memory_figures_and_tables_join_the_report_once_written(tmp_path):
    assert study.irlm_memory_section(tmp_path) == []
    (tmp_path / "irlm_memory-ese.png").write_bytes(b"\x89PNG")
    assert study.irlm_memory_section(tmp_path) == []  # the figure without its table
    (tmp_path / "irlm_memory-ese.md").write_text("From 10 ESE bundles:\n\n| task | layer |\n")
    (tmp_path / "irlm_memory-dse.png").write_bytes(b"\x89PNG")
    (tmp_path / "irlm_memory-dse.md").write_text("From 10 DSE bundles:\n\n| task | layer |\n")
    lines = study.irlm_memory_section(tmp_path)
    assert lines[0].startswith("### What the IRLM units remember")
    # one title, then each table and its figure, by file name
    assert [x for x in lines if x.startswith("From") or x.startswith("![")] == [
        "From 10 DSE bundles:\n\n| task | layer |",
        lines[4],
        "From 10 ESE bundles:\n\n| task | layer |",
        lines[8],
    ]
    assert lines[4].endswith(f"({tmp_path.name}/irlm_memory-dse.png)")
    assert lines[8].endswith(f"({tmp_path.name}/irlm_memory-ese.png)")


def test_factors_and_seed_spread_by_hand():
    from experiments.summaries import summarise

    def result(name, dev_f1, seed=1, fold=0):
        score = {
            "DSE": {
                m: {"precision": dev_f1, "recall": dev_f1, "f1": dev_f1} for m in ("proportional", "binary", "exact")
            }
        }
        return {
            "name": name,
            "kind": "rnn",
            "fold": fold,
            "seed": seed,
            "data": {"source": "reference"},
            "config": {"depth": 1, "budget": "24k"},
            "scores": {"test": score, "dev": score},
        }

    results = [
        result("paper-elman-dse-d1-24k", 0.62),
        result("paper-elman-dse-d1-24k", 0.99, fold=1),
        result("recipe-dropout-dse-d1-24k-dropout0.1", 0.605),
        result("recipe-seed-dse-d1-24k-seed2", 0.60, seed=2),
        result("recipe-seed-dse-d1-24k-seed3", 0.64, seed=3),
    ]
    lines = study.factors_section(summarise(results))
    (factor,) = [x for x in lines if x.startswith("| dropout")]
    # fold 0 only (fold 1's 99 is not a dev figure of the study): 62.00 -> 60.50
    assert factor == (
        "| dropout 0 → 0.1 | DSE | d1 24k | `paper-elman-dse-d1-24k` | 62.00 | "
        "`recipe-dropout-dse-d1-24k-dropout0.1` | 60.50 | -1.50 |"
    )
    (spread,) = [x for x in lines if x.startswith("| DSE | d1 24k |")]
    # seeds 1 (the grid's run), 2, 3: 62, 60, 64: mean 62.00, sample std 2.00, range 4.00
    assert spread == "| DSE | d1 24k | 1, 2, 3 | 62.00, 60.00, 64.00 | 62.00 ± 2.00 | 4.00 |"
    assert study.factors_section({}) == []
    assert study.factor_changes(summarise(results), "dropout 0 → 0.1") == "-1.50 (DSE d1 24k)"
    assert study.factor_changes(summarise(results), "frozen GloVe → fine-tuned GloVe") == "not run"


def test_factor_rows_name_the_units_where_not_elman():
    from experiments.summaries import summarise

    def network(**recurrent):
        return study.network(TaggerConfig.from_dict({"model": {"recurrent": recurrent}}))

    assert network(cell="lstm", depth=3, budget="24k") == "lstm d3 24k"
    assert network(cell="elman", depth=1, budget="200k") == "d1 200k"
    assert network(depth=2, hidden=128) == "d2 128u"
    assert network(cell="lstm", depth=1, budget="200k", hidden=100) == "lstm d1 100u"

    def result(name, dev_f1):
        score = {
            "ESE": {
                m: {"precision": dev_f1, "recall": dev_f1, "f1": dev_f1} for m in ("proportional", "binary", "exact")
            }
        }
        return {
            "name": name,
            "kind": "rnn",
            "fold": 0,
            "seed": 1,
            "data": {"source": "reference"},
            "config": {"cell": "gru", "depth": 3, "budget": "24k"},
            "scores": {"test": score, "dev": score},
        }

    before, after = (f"recipe-gated-ese-gru-24k-learning_rate0.001-lr_decay{d}" for d in ("0.999", "0.9999"))
    summaries = summarise([result(before, 0.50), result(after, 0.5525)])
    (row,) = [x for x in study.factors_section(summaries) if x.startswith("| GRU")]
    assert row == (
        f"| GRU units: lr decay ×0.999 → ×0.9999 | ESE | gru d3 24k | `{before}` | 50.00 | `{after}` | 55.25 | +5.25 |"
    )
    assert study.factor_changes(summaries, "GRU units: lr decay ×0.999 → ×0.9999") == "+5.25 (ESE gru d3 24k)"


def test_goal_check_by_hand_for_the_best_and_the_shipped_configuration():
    from experiments.summaries import summarise

    def result(name, fold, prop, binary, exact):
        score = {
            "DSE": {
                m: {"precision": f, "recall": f, "f1": f}
                for m, f in (("proportional", prop), ("binary", binary), ("exact", exact))
            }
        }
        return {
            "name": name,
            "kind": "rnn",
            "fold": fold,
            "config": {},
            "data": {"source": "reference"},
            "scores": {"test": score, "dev": score},
        }

    # the best: ten folds, five at 72/78/50 and five at 74/80/52 -> 73.00 / 79.00 / 51.00, each std
    # sqrt(10 * 1² / 9) = 1.05; the shipped one: two folds, 66/70/48 and 68/72/50 -> 67.00 ± 1.41 etc.;
    # paired on folds 0-1 (best 72, 72): -6, -4 -> -5.00 ± 1.41, 0 wins / 2 losses, p = 2 / 2² = 0.5
    results = [result("best", k, *((0.72, 0.78, 0.50) if k < 5 else (0.74, 0.80, 0.52))) for k in range(10)] + [
        result(study.SHIPPED_ACCURATE, k, *f) for k, f in ((0, (0.66, 0.70, 0.48)), (1, (0.68, 0.72, 0.50)))
    ]
    summaries = summarise(results)
    rows = sorted((s for s in summaries.values()), key=lambda s: -s["metric"][("proportional", "f1")][0])
    lines = study.goal_lines("DSE", rows)
    assert (
        "Best configuration with all 10 folds: `best` (10 of 10 folds), 73.00 ± 1.05 / 79.00 ± 1.05 "
        "(exact-match F1 51.00 ± 1.05); against the goal +1.00 / +2.00: the goal is met."
    ) in lines
    assert (
        "The `accurate` bundle's configuration (a bidirectional LSTM over MiniLM and GloVe, a CRF per type): "
        f"`{study.SHIPPED_ACCURATE}` "
        "(2 of 10 folds), 67.00 ± 1.41 / 71.00 ± 1.41 (exact-match F1 49.00 ± 1.41); against the goal "
        "-5.00 / -6.00: the goal is not met (not all folds have run).  Against `best` on the folds both have "
        "run: -5.00 ± 1.41 prop F1 over 2 folds, 0 / 2 (wins / losses), sign test p 0.500."
    ) in lines
    # binary below its goal: not met, even with prop above
    # the shipped one the best: paired with the best other 10-fold configuration (`second`, 72 on every
    # fold; shipped 73 or 75 -> +1 five times, +3 five times: +2.00 ± 1.05, 10 / 0, p = 2 / 2^10 = 0.002)
    both = [
        result(study.SHIPPED_ACCURATE, k, *((0.73, 0.78, 0.50) if k < 5 else (0.75, 0.80, 0.52))) for k in range(10)
    ] + [result("second", k, 0.72, 0.77, 0.5) for k in range(10)]
    top = sorted(summarise(both).values(), key=lambda s: -s["metric"][("proportional", "f1")][0])
    assert any(
        x.endswith(
            "Against `second` on the folds both have run: +2.00 ± 1.05 prop F1 over 10 folds, "
            "10 / 0 (wins / losses), sign test p 0.002."
        )
        for x in study.goal_lines("DSE", top)
    )
    low = [result("best", k, 0.73, 0.76, 0.5) for k in range(10)]
    low_lines = study.goal_lines("DSE", list(summarise(low).values()))
    assert any(x.endswith("+1.00 / -1.00: the goal is not met.") for x in low_lines)


def _fold0_result(name: str, typ: str, f1: float, config: dict, epochs: int, best_epoch: int) -> dict:
    """A fold-0 result whose test and dev scores are all ``f1``, for the report's dev-study sections."""
    score = {typ: {m: {"precision": f1, "recall": f1, "f1": f1} for m in ("proportional", "binary", "exact")}}
    return {
        "name": name,
        "kind": "rnn",
        "fold": 0,
        "config": config,
        "epochs": epochs,
        "best_epoch": best_epoch,
        "data": {"source": "reference"},
        "scores": {"test": score, "dev": score},
    }


def test_accurate_study_runs_show_dev_scores_only(tmp_path):
    def result(name, f1):
        return _fold0_result(name, "DSE", f1, {"cell": "lstm", "depth": 1, "hidden": 128, "features": "glove"}, 5, 5)

    text = study.write_report(
        [
            result("accurate-lora16-bilstm-joint", 0.66),
            result("accurate-study-rank64", 0.71),
            result("accurate-beyond-study-crf", 0.72),
        ],
        tmp_path / "REPORT.md",
        tmp_path / "plots",
    ).read_text()
    tables, dev_study = text.split("### The accurate tagger: dev study on fold 0")
    assert "`accurate-lora16-bilstm-joint`: " in tables and "accurate-study-rank64" not in tables
    assert "accurate-beyond-study-crf" not in tables
    assert "| `accurate-study-rank64` | DSE |" in dev_study and "| 71.00 |" in dev_study
    assert "| `accurate-beyond-study-crf` | DSE |" in dev_study and "| 72.00 |" in dev_study


# the depth-3, 200k network and paper.yaml's recipe, as a result's configuration records them
PAPER_RECIPE = {
    "depth": 3,
    "budget": "200k",
    "features": "glove",
    "fine_tune": True,
    "trainer": "fast",
    "optimizer": "sgd",
    "learning_rate": 0.001,
    "momentum": 0.7,
    "batch_size": 80,
    "input_dropout": 0,
    "dropout": 0,
}


def test_cells_study_runs_show_dev_scores_only(tmp_path):
    """The cells' dev runs (cells-dev-*) are not rows of the test tables; their section gives dev scores and
    the cell's own settings."""

    def result(name, cell, f1, **extra):
        config = {**PAPER_RECIPE, "task": "ese", "cell": cell, "lr_decay": 0.999, **extra}
        return _fold0_result(name, "ESE", f1, config, 40, 35)

    text = study.write_report(
        [
            result("paper-elman-ese-d3-200k", "elman", 0.55),
            result("cells-dev-ese-mrnn-factors33", "mrnn", 0.5432, factors=33),
            result("cells-dev-ese-irlm-decay_init0.9-clipnorm5.0", "irlm", 0.5111, decay_init=0.9, clipnorm=5.0),
        ],
        tmp_path / "REPORT.md",
        tmp_path / "plots",
    ).read_text()
    tables, rest = text.split("## How each choice was made")
    assert "paper-elman-ese-d3-200k" in tables and "cells-dev" not in tables
    cells = rest.split("### The multiplicative RNN and IRLM cells: dev study on fold 0")[1]
    mrnn = next(line for line in cells.splitlines() if line.startswith("| `cells-dev-ese-mrnn-factors33` | ESE |"))
    assert "| mrnn d3 200k |" in mrnn and ", 33 factors," in mrnn and "| 54.32 |" in mrnn
    irlm = next(line for line in cells.splitlines() if line.startswith("| `cells-dev-ese-irlm-decay_init0.9"))
    assert ", clipnorm 5," in irlm and "decay starts at 0.9" in irlm and "| 51.11 |" in irlm


def test_the_report_gives_the_choices_the_configuration_files_say_now(tmp_path, capsys):
    """A choice written down after its runs: the report takes each experiment's choices from its configuration
    file (make_report.current_choices), else the text its results recorded."""
    from experiments.make_report import current_choices

    def result(name, choices):
        config = {**PAPER_RECIPE, "task": "ese", "cell": "elman"}
        return {**_fold0_result(name, "ESE", 0.5, config, 40, 35), "choices": choices}

    configs = tmp_path / "configs"
    (configs / "recipe").mkdir(parents=True)
    (configs / "recipe" / "later.yaml").write_text(
        "name: later\nfolds: [0]\ntask: ese\ngrid: {training.seed: [1, 2]}\nchoices: 'Not taken: no gain on dev.'\n"
    )
    (configs / "broken.yaml").write_text("name: [\n")
    choices = current_choices(configs)
    assert capsys.readouterr().err == (
        f"warning: {configs / 'broken.yaml'}: invalid YAML at line 2, column 1: expected the node content, but found "
        "'<stream end>'; its results keep the choices they recorded\n"
    )
    assert choices == {"later-seed1": "Not taken: no gain on dev.", "later-seed2": "Not taken: no gain on dev."}
    text = study.write_report(
        [result("later-seed1", "Not yet chosen."), result("kept", "As recorded.")],
        tmp_path / "REPORT.md",
        tmp_path / "plots",
        choices=choices,
    ).read_text()
    assert "- `later-seed1` and its grid: Not taken: no gain on dev." in text and "Not yet chosen" not in text
    assert "- `kept` and its grid: As recorded." in text


def test_an_ensemble_is_a_row_its_members_are_not_and_its_training_is_counted_once(tmp_path):
    config = {"cell": "lstm", "depth": 1, "hidden": 128, "features": "glove", "output": "crf", "task": "joint"}

    def result(name, f1, seconds, **extra):
        return {**_fold0_result(name, "DSE", f1, config, 5, 5), "fold": 1, "train_seconds": seconds, **extra}

    members = {"members": ["experiments/runs/a/fold1", "experiments/runs/b/fold1"], "seeds": [1, 2]}
    text = study.write_report(
        [
            result("accurate-crf-bilstm-joint", 0.70, 3600),
            result("accurate-ensemble-seed2", 0.69, 7200),
            result("accurate-ensemble-x2", 0.71, 10800, ensemble=members),
            result("accurate-ensemble-x2-sequence", 0.72, 10800, ensemble={**members, "decode": "sequence"}),
            result("accurate-ensemble-x2-crf", 0.73, 10800, ensemble={**members, "decode": "crf"}),
        ],
        tmp_path / "REPORT.md",
        tmp_path / "plots",
    ).read_text()
    tables, compute = text.split("## Compute")
    ensemble = next(line for line in tables.splitlines() if line.startswith("| `accurate-ensemble-x2`: "))
    assert "ensemble of seeds 1, 2 (averaged probabilities)" in ensemble and "| 71.00 |" in ensemble
    sequence = next(line for line in tables.splitlines() if line.startswith("| `accurate-ensemble-x2-sequence`: "))
    assert "ensemble of seeds 1, 2 (averaged probabilities; likeliest valid sequence)" in sequence
    crf = next(line for line in tables.splitlines() if line.startswith("| `accurate-ensemble-x2-crf`: "))
    assert "ensemble of seeds 1, 2 (averaged CRF scores; Viterbi)" in crf and "| 73.00 |" in crf
    assert "| `accurate-ensemble-seed2`" not in tables
    # the ensemble's 3 hours are its members' 1 + 2: 2 runs, 3.0 hours in all
    assert "2 runs, 3.0 hours of training in all" in compute and "ensembles, 3 results, are scored" in compute


def test_distillation_study_runs_show_dev_scores_only_and_name_their_teacher(tmp_path):
    config = {**PAPER_RECIPE, "task": "joint", "cell": "elman"}
    teacher = {"teacher": "experiments/runs/t/fold{fold}", "distill_weight": 0.5}
    text = study.write_report(
        [
            _fold0_result("fast-distill-study-distill_weight0.0", "DSE", 0.6012, config, 60, 45),
            _fold0_result("fast-distill-study-distill_weight0.5", "DSE", 0.6234, {**config, **teacher}, 60, 50),
        ],
        tmp_path / "REPORT.md",
        tmp_path / "plots",
    ).read_text()
    tables, rest = text.split("## How each choice was made")
    assert "fast-distill-study" not in tables
    section = rest.split("### A teacher for the fast tagger: dev study on fold 0")[1]
    rows = [line for line in section.splitlines() if line.startswith("| `fast-distill-study-")]
    assert len(rows) == 2 and "| 60.12 |" in rows[0] and "teacher" not in rows[0]
    assert "teacher `experiments/runs/t/fold{fold}` ×0.5" in rows[1] and "| 62.34 |" in rows[1]


def test_a_bundle_takes_its_epochs_from_a_finished_dev_run_of_its_configuration():
    import importlib.util

    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location(
        "train_bundled_model", root / "experiments" / "train_bundled_model.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    result = root / "experiments" / "results" / "fast-distill-study-distill_weight0.9" / "fold0.json"
    cfg = mod.CONFIGS["fast"].replace(
        {"training.distillation.teacher": "opinion_tagger/models/accurate", "training.distillation.weight": 0.9}
    )
    epochs, selection = mod.epochs_from(str(result), cfg)
    scores = {h["epoch"]: h["dev_score"] for h in selection["dev_history"]}
    assert epochs == 75 == max(scores, key=lambda e: (scores[e], -e))  # the best dev score, earliest on a tie
    assert selection["run"] == "fast-distill-study-distill_weight0.9"
    assert selection["result"] == "experiments/results/fast-distill-study-distill_weight0.9/fold0.json"
    teacher = TaggerConfig.from_dict(selection["config"]).training.distillation.teacher
    assert teacher == "experiments/runs/accurate-masked-study-crf/fold{fold}"
    with pytest.raises(SystemExit, match=r"differs in: training.distillation.weight\)"):
        mod.epochs_from(str(result), cfg.replace({"training.distillation.weight": 0.5}))
    with pytest.raises(SystemExit, match="differs in: model.recurrent.depth"):
        mod.epochs_from(str(result), cfg.replace({"model.recurrent.depth": 2}))
    # the noisy-copies study gives its 100 units as hidden: 100, the bundle as the 200k budget at depth 3
    copies = root / "experiments" / "results" / "fast-augment-study-distill_copies2-distill_noise0.3-lr_decay0.999667"
    recipe = {"training.distillation.copies": 2, "training.distillation.noise": 0.3, "training.fast.lr_decay": 0.999667}
    taught = cfg.replace({"training.distillation.teacher": "opinion_tagger/models/accurate", **recipe})
    assert mod.epochs_from(str(copies / "fold0.json"), taught)[0] == 30
    with pytest.raises(SystemExit, match="differs in: model.recurrent.budget, model.recurrent.hidden"):
        mod.epochs_from(str(copies / "fold0.json"), taught.replace({"model.recurrent.budget": "24k"}))


def test_a_bundle_is_trained_with_the_fields_set_on_the_command_line():
    """``train_bundled_model --set PATH=VALUE`` (values read as YAML) and ``--distill-style`` change the bundle's
    configuration; a misspelt field or a value out of range stops the command with the field named."""
    import argparse
    import importlib.util

    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("train_bundled_model", root / "experiments/train_bundled_model.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.field_value("model.recurrent.dropout=0.3") == ("model.recurrent.dropout", 0.3)
    assert mod.field_value("model.head.output=crf") == ("model.head.output", "crf")
    with pytest.raises(argparse.ArgumentTypeError, match="PATH=VALUE"):
        mod.field_value("0.3")
    args = argparse.Namespace(
        name="accurate", seed=None, epochs=5, epochs_from=None, dev_teacher=None, lr_decay=None, tags_only=False,
        teacher="opinion_tagger/models/accurate-mpnet", distill_weight=0.9, distill_copies=1, distill_noise=0.1,
        distill_style="genres", set=[("model.recurrent.dropout", 0.3), ("model.recurrent.input_dropout", 0.25)],
    )  # fmt: skip
    config = mod.training_config(argparse.ArgumentParser(), args)
    assert (config.model.recurrent.dropout, config.model.recurrent.input_dropout) == (0.3, 0.25)
    d = config.training.distillation
    assert (d.weight, d.copies, d.noise, d.style) == (0.9, 1, 0.1, "genres")
    args.set = [("model.recurrent.dropot", 0.3)]
    with pytest.raises(SystemExit):
        mod.training_config(argparse.ArgumentParser(), args)


def test_every_committed_configuration_loads():
    """Each experiments/configs file parses and each of its experiments is a valid configuration (a field
    misspelt or a value out of range fails here, not hours into a run)."""
    root = Path(__file__).resolve().parents[2] / "experiments" / "configs"
    files = sorted(root.rglob("*.yaml"))
    assert len(files) > 20
    names = [e.name for f in files for e in load_experiments(f)]
    assert "accurate-mpnet-bf16-crf" in names and len(names) == len(set(names))


def test_the_frames_study_shows_span_and_frame_scores_of_its_runs():
    """The report's frame-head section: a run's dev span scores (the recipe table) and its frame scores, the
    accuracies beside their majority class (hand-written values)."""
    import copy

    from experiments.summaries import summarise

    base = json.loads(
        (
            Path(__file__).resolve().parents[2] / "experiments/results/accurate-lora16-bilstm-joint/fold0.json"
        ).read_text()
    )
    record = copy.deepcopy(base)
    record["name"] = "frames-dev-framesTrue"
    acc = {"matched": 200, "accuracy": 0.655, "majority": 0.42, "majority_class": "neutral"}
    prf = {"precision": 0.5, "recall": 0.5, "f1": 0.5}
    record["scores"]["dev_frames"] = {
        "DSE": {
            "polarity_proportional": {**prf, "f1": 0.4125},
            "polarity_binary": {**prf, "f1": 0.5},
            "polarity": acc,
            "intensity": {**acc, "accuracy": 0.5},
            "holder": {**acc, "accuracy": 0.75, "majority_class": "span", "f1": 0.8},
        },
    }
    summaries = summarise([record])
    lines = study.frames_study_section(summaries)
    assert lines[0] == "### Opinion frames: dev study on fold 0"
    (row,) = [line for line in lines if line.startswith("| `frames-dev-framesTrue` | DSE | 41.25")]
    assert row == (
        "| `frames-dev-framesTrue` | DSE | 41.25 / 50.00 | 65.50 (42.00 neutral, 200 spans) | "
        "50.00 (42.00 neutral, 200 spans) | 75.00 (42.00 span, 200 spans) | 80.00 |"
    )
    assert not [line for line in lines if line.startswith("| `frames-dev-framesTrue` | ESE | ")][1:]  # no frames
    assert study.frames_study_section({}) == []


@pytest.mark.integration
def test_a_frame_head_experiment_records_its_frame_scores_and_scoring_its_bundles_again_gives_them(setup):
    """A fold of a configuration with frame heads records their scores on dev and on the test fold;
    experiments/score_frames.py, scoring the fold's bundle again, writes the same."""
    from experiments import score_frames

    split, _, _, tmp = setup
    corpus = load_experiments(setup[1])[0].data["path"]
    cfg = tmp / "frames.yaml"
    cfg.write_text(f"""
name: fr
data: {{source: mpqa, path: {corpus}}}
folds: [0]
task: joint
model: {{recurrent: {{cell: gru, depth: 1, hidden: 6}}, embeddings: {{features: random, dim: 6}},
        frames: {{enabled: true, detach: true, units: 4}}}}
training: {{batch_size: 4, jit_compile: false, stopping: {{max_epochs: 1, patience: 1}}}}
""")
    (exp,) = load_experiments(cfg)
    (written,) = run_experiment(exp, None, tmp / "results", tmp / "runs", split, progress=False)
    result = json.loads(written.read_text())
    dev, test = result["scores"]["dev_frames"], result["scores"]["test_frames"]
    assert set(test) == {"DSE", "ESE"} and "holder" in test["DSE"] and "holder" not in test["ESE"]
    del result["scores"]["test_frames"]
    written.write_text(json.dumps(result))
    again = score_frames.score("fr", None, tmp / "results", tmp / "runs", {"mpqa": corpus}, split)
    assert again == {0: {"dev": dev, "test": test}}
    assert json.loads(written.read_text())["scores"]["test_frames"] == test


@pytest.mark.integration
def test_a_heads_experiment_fits_frame_heads_on_another_experiments_fold_networks(setup):
    """kind: heads fits frame heads on the fold bundles of an experiment trained without them: the result has the
    frames' dev and test scores and the very span scores of the network it started from."""
    split, _, _, tmp = setup
    corpus = load_experiments(setup[1])[0].data["path"]
    (tmp / "net.yaml").write_text(f"""
name: net
data: {{source: mpqa, path: {corpus}}}
folds: [0]
task: joint
model: {{recurrent: {{cell: gru, depth: 1, hidden: 6}}, embeddings: {{features: random, dim: 6}}}}
training: {{batch_size: 4, jit_compile: false, stopping: {{max_epochs: 2, patience: 2}}}}
""")
    heads = f"""
name: net-heads
kind: heads
network: net
data: {{source: mpqa, path: {corpus}}}
folds: [0]
model.frames: {{enabled: true, units: 4}}
training: {{optimizer: {{learning_rate: 0.01}}, stopping: {{max_epochs: 3, patience: 2}}}}
"""
    (tmp / "heads.yaml").write_text(heads)
    (net,) = load_experiments(tmp / "net.yaml")
    (written,) = run_experiment(net, None, tmp / "results", tmp / "runs", split, progress=False)
    (exp,) = load_experiments(tmp / "heads.yaml")
    assert (exp.kind, exp.network) == ("heads", "net")
    (fitted,) = run_experiment(exp, None, tmp / "results", tmp / "runs", split, progress=False)
    before, after = json.loads(written.read_text()), json.loads(fitted.read_text())
    assert after["scores"]["test"] == before["scores"]["test"] and after["scores"]["dev"] == before["scores"]["dev"]
    assert set(after["scores"]["test_frames"]) == {"DSE", "ESE"} and "holder" in after["scores"]["dev_frames"]["DSE"]
    assert after["config"]["model"]["frames"]["enabled"] and after["heads_only"]["max_epochs"] == 3
    assert after["config"]["training"] == before["config"]["training"]  # the network's training, as it was
    (tmp / "bad.yaml").write_text(heads.replace("network: net\n", ""))
    with pytest.raises(TaggerError, match="kind heads, and only it, takes network"):
        load_experiments(tmp / "bad.yaml")


def test_the_frames_cross_validation_rows_average_the_folds_frame_scores():
    """The report's 10-fold frame table: means ± standard deviations over the folds of hand-written values, the
    majority class's mean share and commonest name beside each accuracy."""
    import copy

    from experiments.frames_report import frames_cv_section
    from experiments.summaries import summarise

    base = json.loads(
        (
            Path(__file__).resolve().parents[2] / "experiments/results/accurate-lora16-bilstm-joint/fold0.json"
        ).read_text()
    )
    records = []
    for fold, (pol, f1, major) in enumerate(((0.6, 0.5, "neutral"), (0.8, 0.7, "negative"), (0.7, 0.6, "neutral"))):
        r = copy.deepcopy(base)
        r["name"], r["fold"] = "acc-frames", fold
        acc = {"matched": 100, "accuracy": pol, "majority": 0.4, "majority_class": major}
        prf = {"precision": f1, "recall": f1, "f1": f1}
        r["scores"]["test_frames"] = {
            "DSE": {
                "polarity_proportional": prf,
                "polarity_binary": {**prf, "f1": f1 + 0.1},
                "polarity": acc,
                "intensity": {**acc, "accuracy": 0.5},
                "holder": {**acc, "accuracy": 0.9, "majority_class": "span", "f1": f1 + 0.2},
            },
        }
        records.append(r)
    summaries = summarise(records)
    lines = frames_cv_section(summaries)
    assert lines[0] == "## Opinion frames: cross-validation"
    (row,) = [line for line in lines if line.startswith("| `acc-frames` | DSE |")]
    span = summaries[("acc-frames", "DSE")]["metric"]
    assert row == (
        f"| `acc-frames` | DSE | 3 | {span[('proportional', 'f1')][0]:.2f} ± 0.00 / "
        f"{span[('binary', 'f1')][0]:.2f} ± 0.00 | 60.00 ± 10.00 / 70.00 ± 10.00 | 70.00 ± 10.00 (40.00 neutral) | "
        "50.00 ± 0.00 (40.00 neutral) | 90.00 ± 0.00 (40.00 span) | 80.00 ± 10.00 |"
    )
    assert not [line for line in lines if line.startswith("| `acc-frames` | ESE |")]  # no ESE frames
    assert frames_cv_section(summarise([base])) == []
