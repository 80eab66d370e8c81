"""Regenerate experiments/REPORT.md and its plots from experiments/results/*.json.

python experiments/make_report.py [--results DIR] [--out experiments/REPORT.md]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from locations import RESULTS
from study import write_report

from tagger.evaluation.results import load_diverged, load_results


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--results", default=str(RESULTS))
    ap.add_argument("--out", default=str(Path(__file__).parent / "REPORT.md"))
    args = ap.parse_args(argv)
    out = Path(args.out)
    results = Path(args.results)
    write_report(load_results(results), out, out.parent / "report", load_diverged(results))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
