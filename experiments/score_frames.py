"""Add a frame-head run's frame scores to its results, for runs whose results were written before results
recorded them (``scores.dev_frames`` and ``scores.test_frames``, as ``experiments.cross_validation`` now writes at
the end of a fold): each fold's bundle in experiments/runs/NAME/foldK scored on that fold's dev and test
documents, the data read as the run read it.

    python -m experiments.score_frames NAME [NAME ...] [--folds 0 1 ...]   (default: every fold with a result)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from experiments.locations import RESULTS, RUNS
from opinion_tagger.config import TaggerConfig
from opinion_tagger.corpus.sources import select
from opinion_tagger.corpus.split import load_split
from opinion_tagger.errors import TaggerError
from opinion_tagger.evaluation.scoring import evaluate_frames
from opinion_tagger.paths import default_datasplit, default_mpqa, default_reference
from opinion_tagger.runtime.sentence_tagger import SentenceTagger
from opinion_tagger.storage import atomic_write_text
from opinion_tagger.training.run_data import load_data

DEFAULTS = {"mpqa": default_mpqa, "reference": default_reference}


def score(
    name: str,
    folds: list[int] | None,
    results: Path = RESULTS,
    runs: Path = RUNS,
    data: dict | None = None,
    datasplit: str | Path | None = None,
) -> dict[int, dict]:
    """The frame scores of each fold of ``name`` (by fold: ``dev_frames``, ``test_frames``), written into its
    results; ``data``: the corpus path of a source (default: ``DEFAULTS``'), ``datasplit`` the split's."""
    datasplit = datasplit or default_datasplit()
    files = {k: results / name / f"fold{k}.json" for k in folds} if folds is not None else {}
    if folds is None:
        files = {int(p.stem[4:]): p for p in sorted((results / name).glob("fold*.json"))}
    if not files:
        raise TaggerError(f"{results / name}: no results")
    docs: dict = {}
    out = {}
    for k, result_file in sorted(files.items()):
        result = json.loads(result_file.read_text())
        if not TaggerConfig.from_dict(result["config"]).model.frames.enabled:
            raise TaggerError(f"{result_file}: the run has no frame heads")
        source = result["data"]["source"]
        if source not in DEFAULTS:
            raise TaggerError(f"{result_file}: data {source!r}: only mpqa and reference runs are scored here")
        if source not in docs:
            path = (data or {}).get(source) or DEFAULTS[source]()
            docs[source] = load_data(source, path, frames=True)
        tagger = SentenceTagger.load(runs / name / f"fold{k}")
        split = load_split(datasplit, k)
        for part in ("dev", "test"):
            result["scores"][f"{part}_frames"] = evaluate_frames(tagger, select(docs[source], split.part(part)))
        atomic_write_text(result_file, json.dumps(result, indent=1) + "\n")
        out[k] = {p: result["scores"][f"{p}_frames"] for p in ("dev", "test")}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="+", help="experiment names (results/NAME, runs/NAME)")
    ap.add_argument("--folds", type=int, nargs="+", help="folds to score (default: every fold with a result)")
    args = ap.parse_args(argv)
    try:
        for name in args.names:
            for k, parts in score(name, args.folds).items():
                summary = {
                    p: {t: round(100 * r["polarity_proportional"]["f1"], 2) for t, r in frames.items()}
                    for p, frames in parts.items()
                }
                print(f"{name} fold {k}: polarity-aware prop F1 {summary}", file=sys.stderr)
    except (TaggerError, OSError) as exc:
        print(f"score_frames: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
