"""Run cross-validation experiments (resumable; finished folds are skipped).

    python -m experiments.run_cv experiments/configs/paper.yaml [--only NAME ...] [--folds 0 1 2]

Results: experiments/results/<name>/fold<k>.json; checkpoints: experiments/runs/ (git-ignored).
Stop it at any time; the next start continues where it stopped.  An experiment that fails (e.g. every seed
diverged) is reported in one line and the next ones still run; the exit status is then 2.
"""

from __future__ import annotations

import argparse
import logging
import sys

from experiments.cpu_pinning import add_cpus_option, pin_cpus
from experiments.cross_validation import load_experiments, run_experiment
from experiments.locations import RESULTS, RUNS
from opinion_tagger.errors import TaggerError


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("configs", nargs="+", help="YAML configuration files")
    ap.add_argument("--only", nargs="*", help="run only the experiments with these names")
    ap.add_argument("--folds", nargs="*", type=int, help="folds to run (default: the configuration's)")
    ap.add_argument("--results", default=str(RESULTS))
    ap.add_argument("--runs", default=str(RUNS))
    ap.add_argument("--datasplit", default=None)
    ap.add_argument("--list", action="store_true", help="list the experiments and their finished folds")
    ap.add_argument(
        "--together",
        type=int,
        default=10,
        help="folds trained at once in one program by the fast trainer (default: %(default)s)",
    )
    ap.add_argument(
        "--progress",
        action="store_true",
        help="report progress within epochs also when stderr is not a terminal (a line a minute, e.g. in a log)",
    )
    add_cpus_option(
        ap,
        "pin this job to these cores, e.g. 0 or 0,1 (on the 2-core machine: two jobs, "
        "--cpus 0 and --cpus 1); default: no pinning, the libraries' thread pools",
    )
    args = ap.parse_args(argv)
    pin_cpus(ap, args)  # before TensorFlow or JAX loads
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    from pathlib import Path

    try:
        exps = [e for c in args.configs for e in load_experiments(c)]
        if args.only:  # in the order given
            by_name = {e.name: e for e in exps}
            missing = [n for n in args.only if n not in by_name]
            if missing:
                raise TaggerError(f"no experiment named {', '.join(missing)}")
            exps = [by_name[n] for n in args.only]
    except TaggerError as exc:
        print(f"run_cv: error: {exc}", file=sys.stderr)
        return 2
    failed = []
    for e in exps:
        if args.list:
            where = Path(args.results) / e.name
            done = sorted(int(p.stem.removeprefix("fold")) for p in where.glob("fold*.json"))
            failed = sorted(int(p.stem.removeprefix("diverged-fold")) for p in where.glob("diverged-fold*.json"))
            diverged = f", every seed diverged on {failed}" if failed else ""
            print(f"{e.name}: {len(done)}/{len(e.folds)} folds done {done}{diverged}")
            continue
        try:
            run_experiment(
                e,
                args.folds,
                Path(args.results),
                Path(args.runs),
                args.datasplit,
                progress=args.progress or sys.stderr.isatty(),
                together=args.together,
            )
        except TaggerError as exc:  # e.g. every seed diverged: the next experiments still run
            print(f"run_cv: error: {exc}", file=sys.stderr)
            failed.append(e.name)
    if failed:
        print(f"run_cv: {len(failed)} of {len(exps)} experiments failed: {', '.join(failed)}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
