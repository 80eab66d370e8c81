"""The team benchmark (experiments/benchmarks/team_sessions.py): its check of the project file against the
acknowledged edits catches a lost one, and a short run of sessions on a served project loses nothing."""

import random

import pytest

from experiments.benchmarks.bench_annotation import invented_text
from experiments.benchmarks.team_sessions import Annotator, DocModel, check, team_bench
from opinion_tagger.annotation.editor import apply_event
from opinion_tagger.annotation.importing import import_records
from opinion_tagger.annotation.store import Project
from opinion_tagger.tagging.inputs import Record


def test_the_check_replays_acknowledged_edits_and_finds_a_lost_one(tmp_path):
    path = tmp_path / "p.sqlite"
    with Project(path, create=True) as p:
        import_records(p, [Record("a", "Rain fell all night. They said it was awful."), Record("b", "It rained.")])
    who = Annotator("ann", [(1, "a"), (2, "b")])
    events = [
        {"op": "add", "type": "DSE", "start": 6, "end": 7},
        {"op": "add", "type": "ESE", "start": 8, "end": 10},
        {"op": "add", "type": "DSE", "start": 6, "end": 8},  # replaces the first DSE
        {"op": "undo"},
        {"op": "accept"},
        {"op": "undo"},
        {"op": "accept"},
    ]
    with Project(path) as p:
        model = who.models.setdefault(1, DocModel())
        for event in events:
            event.update(doc=1, version=model.version)
            assert apply_event(p, event, "ann").level != "warning"
            model.apply(event, "ann")
    assert model.spans == {("DSE", 6, 7), ("ESE", 8, 10)} and model.status == "done" and model.version == 7
    assert check(path, [who]) == (0, 1)
    with Project(path) as p:  # a span the file lost
        p.db.execute("DELETE FROM spans WHERE doc_id = 1 AND type = 'ESE'")
    assert check(path, [who]) == (1, 1)


@pytest.mark.slow
def test_a_short_team_run_on_a_served_project_loses_nothing():
    rng = random.Random(0)
    result = team_bench(2, 0.25, 20, [invented_text(rng) for _ in range(20)])
    assert result["session_errors"] == [] and result["edits"] > 0 and result["lost"] == 0
    assert result["unanswered"] == 0 and 0 < result["p95_save_s"] < 30
