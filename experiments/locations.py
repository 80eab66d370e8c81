"""Where this repository's experiments keep their results and runs (the runner, ``experiments.cross_validation``,
takes both as arguments)."""

from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"  # one JSON file per configuration and fold, in git
RUNS = HERE / "runs"  # checkpoints and locks of runs in progress, not in git
