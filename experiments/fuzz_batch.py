"""Fuzz the batch path and the Python API with hostile input (issue 13).

Generates JSONL files of arbitrary bytes and arbitrary JSON values
(experiments/hostile_inputs.py) and runs each through ``opinion-tagger tag`` (the CLI's
``main``, in process, the bundled model loaded once), then lists of arbitrary
values through ``OpinionTagger.tag_many``.  Prints, per path: records
generated, crashes (exceptions that escaped or an exit status other than 0/1),
records lost (fewer output records than input records), records out of order
or with a wrong id, and records that failed inside the tagger ("internal error").

    TF_NUM_INTRAOP_THREADS=1 TF_NUM_INTEROP_THREADS=1 python -m experiments.fuzz_batch [--records 10000] [--seed 0]
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import json
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, seed, settings

from experiments.hostile_inputs import api_inputs, api_records, expected_records, jsonl_files
from opinion_tagger.cli import main
from opinion_tagger.tagging.inputs import printable_id
from opinion_tagger.tagging.tagger import OpinionTagger

SETTINGS = dict(deadline=None, database=None, phases=[Phase.generate], suppress_health_check=list(HealthCheck))


def _run(check, strategy, examples: int, at_seed: int) -> None:
    """``check`` on ``examples`` values of ``strategy`` (a fresh function: hypothesis decorates it)."""
    given(strategy)(settings(max_examples=examples, **SETTINGS)(seed(at_seed)(lambda value: check(value))))()


def fuzz_cli(target: int, first_seed: int, work: Path) -> Counter:
    c = Counter()
    inp, out = work / "in.jsonl", work / "out.jsonl"

    def one(sample):
        data, declared = sample
        want = expected_records(data)
        c["examples"] += 1
        c["records"] += want
        out.unlink(missing_ok=True)
        inp.write_bytes(data)
        try:
            with contextlib.redirect_stderr(io.StringIO()):
                rc = main(["tag", "--input", str(inp), "--out", str(out), "--quiet", "--chunk", "8"])
            lines = [json.loads(x) for x in out.read_text(encoding="utf-8").split("\n")[:-1]]
        except BaseException:  # noqa: BLE001 - counting crashes is the point
            c["crashes"] += 1
            if c["crashes"] <= 3:
                print(f"crash on {data[:200]!r}:\n{traceback.format_exc()}", file=sys.stderr)
            return
        if rc not in (0, 1) or rc != (1 if any("error" in x for x in lines) else 0):
            c["crashes"] += 1
        c["lost"] += max(0, want - len(lines))
        c["extra"] += max(0, len(lines) - want)
        c["wrong id or order"] += sum(
            x["id"] not in (f"{inp}:{i}", rid) for i, (x, rid) in enumerate(zip(lines, declared), 1)
        )
        c["error records"] += sum("error" in x for x in lines)
        c["internal errors"] += sum("internal error" in x.get("error", "") for x in lines)

    k = 0
    while c["records"] < target:
        _run(one, jsonl_files(max_lines=30), 50, first_seed + k)
        k += 1
    return c


def fuzz_api(target: int, first_seed: int) -> Counter:
    c = Counter()
    ot = OpinionTagger.load()

    def one(values):
        records = api_records(values)
        c["examples"] += 1
        c["records"] += len(records)
        try:
            docs = list(ot.tag_many(iter(records), chunk=8))
            for d in docs:
                json.dumps(d.to_dict(), ensure_ascii=False).encode("utf-8")
        except BaseException:  # noqa: BLE001
            c["crashes"] += 1
            if c["crashes"] <= 3:
                print(f"crash on {values!r:.200}:\n{traceback.format_exc()}", file=sys.stderr)
            return
        c["lost"] += max(0, len(records) - len(docs))
        c["extra"] += max(0, len(docs) - len(records))
        want = [
            printable_id(str(r[0])) if isinstance(r, (tuple, list)) and len(r) == 2 else str(n)
            for n, r in enumerate(records)
        ]
        c["wrong id or order"] += sum(d.id != w for d, w in zip(docs, want))
        c["error records"] += sum(d.error is not None for d in docs)
        c["internal errors"] += sum("internal error" in (d.error or "") for d in docs)

    k = 0
    while c["records"] < target:
        _run(one, api_inputs, 100, first_seed + k)
        k += 1
    return c


def main_(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=10_000, help="records to generate per path (default 10000)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    # the CLI loads the model on every call: load the bundled model once for the whole run
    OpinionTagger.load = staticmethod(functools.lru_cache(maxsize=2)(OpinionTagger.load))
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, run in (
            ("batch (opinion-tagger tag)", lambda: fuzz_cli(args.records, args.seed, Path(tmp))),
            ("Python API (tag_many)", lambda: fuzz_api(args.records, args.seed)),
        ):
            t0 = time.perf_counter()
            c = run()
            print(
                f"{name}: {c['records']} records generated in {c['examples']} inputs, {c['crashes']} crashes, "
                f"{c['lost']} records lost, {c['extra']} extra, {c['wrong id or order']} wrong id or order, "
                f"{c['error records']} error records ({c['internal errors']} internal errors), "
                f"{time.perf_counter() - t0:.0f}s"
            )
            bad += c["crashes"] + c["lost"] + c["extra"] + c["wrong id or order"] + c["internal errors"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main_())
