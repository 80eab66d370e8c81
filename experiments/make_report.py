"""Regenerate experiments/REPORT.md and its plots from experiments/results/*.json.

python -m experiments.make_report [--results DIR] [--out experiments/REPORT.md]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from experiments.cross_validation import load_experiments
from experiments.locations import RESULTS
from experiments.study import write_report
from experiments.summaries import load_diverged, load_results
from opinion_tagger.errors import TaggerError

CONFIGS = Path(__file__).resolve().parent / "configs"


def current_choices(configs: Path = CONFIGS) -> dict[str, str]:
    """Each experiment's ``choices`` as the configuration files under ``configs`` say them now."""
    out = {}
    for path in sorted(configs.rglob("*.yaml")):
        try:
            out.update({e.name: e.choices for e in load_experiments(path) if e.choices})
        except TaggerError as exc:
            print(f"warning: {exc}; its results keep the choices they recorded", file=sys.stderr)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--results", default=str(RESULTS))
    ap.add_argument("--out", default=str(Path(__file__).parent / "REPORT.md"))
    args = ap.parse_args(argv)
    out = Path(args.out)
    results = Path(args.results)
    write_report(load_results(results), out, out.parent / "report", load_diverged(results), current_choices())
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
