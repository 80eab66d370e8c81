"""Adopt a finished fold of one experiment as the same fold of another whose configuration is identical
but for its name: typically a dev-study run that a 10-fold configuration was chosen from, so the fold
is not trained twice.

    python -m experiments.adopt_run experiments/configs/accurate-lora64.yaml accurate-lora64-bilstm-joint \
        accurate-study-context_lora_rank64-learning_rate0.002-o_weight1.0 --folds 0

Each fold's JSON is copied to ``experiments/results/TARGET/fold<k>.json`` with the target's name and
``choices``; ``adopted_from`` records the source's name.  Refused, with nothing written, when the
source's recorded configuration (seed aside), kind or data source differs from the target's, or the
target fold already exists.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from experiments.cross_validation import load_experiments, result_path
from experiments.locations import RESULTS
from experiments.summaries import result_config
from opinion_tagger.errors import TaggerError
from opinion_tagger.storage import atomic_write_text


def adopt(config: Path, target: str, source: str, folds: list[int], results: Path = RESULTS) -> list[Path]:
    by_name = {e.name: e for e in load_experiments(config)}
    if target not in by_name:
        raise TaggerError(f"{config}: no experiment named {target}")
    exp = by_name[target]
    records = {}
    for k in folds:
        src, dst = result_path(results, source, k), result_path(results, target, k)
        if not src.is_file():
            raise TaggerError(f"{src}: no such result")
        if dst.exists():
            raise TaggerError(f"{dst}: already exists")
        record = json.loads(src.read_text())
        want = exp.config().replace({"training.seed": record["seed"]}).dotted()
        stored = result_config(record)
        have = stored.dotted() if not isinstance(stored, dict) else stored
        diff = sorted(f for f in set(want) | set(have) if want.get(f) != have.get(f))
        if diff:
            raise TaggerError(
                f"{src}: configuration differs from {target}'s in "
                + ", ".join(f"{f} ({have.get(f)!r} vs {want.get(f)!r})" for f in diff)
            )
        if record["kind"] != exp.kind or record["data"]["source"] != exp.data["source"]:
            raise TaggerError(f"{src}: kind or data source differs from {target}'s")
        records[dst] = {**record, "name": target, "choices": exp.choices, "adopted_from": source}
    for dst, record in records.items():
        dst.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(dst, json.dumps(record, indent=1) + "\n")
    return list(records)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("config", help="the target's YAML configuration file")
    ap.add_argument("target", help="the target experiment's full name")
    ap.add_argument("source", help="the experiment whose finished folds are adopted")
    ap.add_argument("--folds", nargs="+", type=int, required=True)
    ap.add_argument("--results", default=str(RESULTS))
    args = ap.parse_args()
    try:
        done = adopt(Path(args.config), args.target, args.source, args.folds, Path(args.results))
    except TaggerError as exc:
        print(f"adopt_run: error: {exc}", file=sys.stderr)
        return 2
    print(f"{len(done)} folds adopted", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
