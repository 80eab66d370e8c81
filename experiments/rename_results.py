"""Rename the results of configurations whose recipe changed, so that the old runs stay on record
under a name of their own and the configuration's name is free for the new recipe.

    python -m experiments.rename_results paper-elman authors-elman [--only paper-elman-dse-d3-200k ...]

moves ``experiments/results/OLD/`` and ``OLD-*/`` to ``NEW/`` and ``NEW-*/``; in each fold's JSON the ``name``
becomes the new one and ``renamed_from`` records the old.  Refuses to overwrite a result that already exists.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from experiments.locations import RESULTS
from opinion_tagger.storage import atomic_write_text


def rename(results: Path, old: str, new: str, only: list[str] | None = None) -> list[Path]:
    moved = []
    for src in sorted([*results.glob(old), *results.glob(f"{old}-*")]):  # OLD itself, or OLD's grid
        if not src.is_dir() or (only and src.name not in only):
            continue
        dst = results / (new + src.name[len(old) :])
        clash = [f for f in src.glob("fold*") if (dst / f.name).exists()]
        if clash:
            raise SystemExit(f"{dst / clash[0].name}: already exists; nothing renamed in {src}")
        dst.mkdir(parents=True, exist_ok=True)
        for f in sorted(src.glob("fold*.json")):
            record = json.loads(f.read_text())
            record["renamed_from"] = record["name"]
            record["name"] = dst.name
            atomic_write_text(dst / f.name, json.dumps(record, indent=1) + "\n")
            f.unlink()
            moved.append(dst / f.name)
        for f in sorted(src.glob("fold*.distributions.npz")):  # an ensemble member's (experiments/ensemble.py --keep)
            f.replace(dst / f.name)
        src.rmdir()
    return moved


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("old", help="the configuration name whose results move (e.g. paper-elman)")
    ap.add_argument("new", help="their new name (e.g. authors-elman)")
    ap.add_argument("--only", nargs="*", help="move only these experiments (full names)")
    ap.add_argument("--results", default=str(RESULTS))
    args = ap.parse_args()
    moved = rename(Path(args.results), args.old, args.new, args.only)
    print(f"{len(moved)} results renamed", file=sys.stderr)


if __name__ == "__main__":
    main()
