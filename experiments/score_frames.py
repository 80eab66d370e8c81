"""Add a frame-head run's dev frame scores to its result, for a run whose result was written before results
recorded them (``scores.dev_frames``, as ``opinion_tagger.experiment`` now writes at the end of training): its
bundle in experiments/runs/NAME/foldK scored on that fold's dev documents, the data read as the run read it.

    python -m experiments.score_frames NAME [NAME ...] [--fold 0]
"""

from __future__ import annotations

import argparse
import json
import sys

from experiments.locations import RESULTS, RUNS
from opinion_tagger.config import TaggerConfig
from opinion_tagger.corpus.sources import select
from opinion_tagger.corpus.split import load_split
from opinion_tagger.errors import TaggerError
from opinion_tagger.evaluation.scoring import evaluate_frames
from opinion_tagger.paths import default_datasplit, default_mpqa, default_reference
from opinion_tagger.runtime.sentence_tagger import SentenceTagger
from opinion_tagger.storage import atomic_write_text
from opinion_tagger.training.run_data import add_training_labels, load_data

DEFAULTS = {"mpqa": default_mpqa, "reference": default_reference}


def score(name: str, fold: int) -> dict:
    result_file = RESULTS / name / f"fold{fold}.json"
    result = json.loads(result_file.read_text())
    if not TaggerConfig.from_dict(result["config"]).model.frames.enabled:
        raise TaggerError(f"{result_file}: the run has no frame heads")
    source = result["data"]["source"]
    if source not in DEFAULTS:
        raise TaggerError(f"{result_file}: data {source!r}: only mpqa and reference runs are scored here")
    path = DEFAULTS[source]()
    tagger = SentenceTagger.load(RUNS / name / f"fold{fold}")
    docs = load_data(source, path)
    add_training_labels(docs, source, path, frames=True)
    dev = select(docs, load_split(default_datasplit(), fold).dev)
    result["scores"]["dev_frames"] = evaluate_frames(tagger, dev)
    atomic_write_text(result_file, json.dumps(result, indent=1) + "\n")
    return result["scores"]["dev_frames"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="+", help="experiment names (results/NAME, runs/NAME)")
    ap.add_argument("--fold", type=int, default=0)
    args = ap.parse_args(argv)
    try:
        for name in args.names:
            frames = score(name, args.fold)
            summary = {t: round(100 * r["polarity_proportional"]["f1"], 2) for t, r in frames.items()}
            print(f"{name} fold {args.fold}: dev polarity-aware prop F1 {summary}", file=sys.stderr)
    except (TaggerError, OSError) as exc:
        print(f"score_frames: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
