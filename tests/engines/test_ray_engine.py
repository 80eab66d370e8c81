"""``tag --engine ray``: a local Ray cluster with 2 workers gives the local engine's
output record for record, restarts skip finished partitions, and the local
engine never imports Ray.  One Ray instance for the module (``ray.init(num_cpus=2)``)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

if os.environ.get("CI"):
    import ray  # CI installs the ray extra: a missing Ray is a failure there
else:
    ray = pytest.importorskip("ray", reason="ray extra not installed")
import pyarrow as pa
import pyarrow.parquet as pq

from opinion_tagger.cli import main
from opinion_tagger.engines.partitions import parquet_row, parquet_schema
from opinion_tagger.engines.ray_engine import ClusterOptions, OutputOptions, tag_with_ray

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow
TWO_WORKERS = ClusterOptions(workers=2)
OUTPUT_2 = OutputOptions(partition_size=2)
ONE_A_PARTITION = OutputOptions(partition_size=1)

GOOD = [
    "Officials said the plan was daylight robbery, as usual.",
    "The minister fears that the talks will fail.\n\nCritics called it a disgrace.",
    "Rain fell on Tuesday.",
    "I love this idea, she said, but nobody else does.",
]


@pytest.fixture(scope="module", autouse=True)
def cluster():
    # the workers import this checkout's tagger, as the driver does
    ray.init(
        num_cpus=2, include_dashboard=False, logging_level="ERROR", runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}}
    )
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """Good and bad records: plain-text files and a JSONL file, in a directory."""
    d = tmp_path_factory.mktemp("mixed")
    (d / "a.txt").write_text(GOOD[0], encoding="utf-8")
    (d / "b.txt").write_text("  \n", encoding="utf-8")
    (d / "c.txt").write_bytes(b"caf\xe9 au lait")
    (d / "d.txt").write_bytes(b"\x00\x01\x02")
    lines = [json.dumps({"id": f"j{k}", "text": t}) for k, t in enumerate(GOOD)]
    lines[2:2] = ["{broken", "", json.dumps({"id": "no-text"}), json.dumps({"text": GOOD[3]})]
    (d / "e.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (d / "f.txt").write_text(GOOD[1], encoding="utf-8")
    return d


def _local(inputs, tmp_path) -> list[dict]:
    out = tmp_path / "local.jsonl"
    main(["tag", "--quiet", "--out", str(out), *[a for i in inputs for a in ("--input", str(i))]])
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def _parts(out: Path) -> list[dict]:
    return [json.loads(line) for f in sorted(out.glob("part-*.jsonl")) for line in f.read_text("utf-8").splitlines()]


def test_two_workers_give_the_local_output_record_for_record(mixed, tmp_path):
    totals = tag_with_ray([str(mixed)], tmp_path / "out", output=OUTPUT_2, cluster=TWO_WORKERS, progress=False)
    local = _local([mixed], tmp_path)
    assert len(local) == 13 and sum("error" in r for r in local) == 6
    assert _parts(tmp_path / "out") == local
    assert (totals["partitions"], totals["skipped"], totals["records"], totals["errors"]) == (7, 0, 13, 6)
    assert totals["error_records"] == [[r["id"], r["error"]] for r in local if "error" in r]
    assert totals["tokens"] == sum(len(s["tokens"]) for r in local if "error" not in r for s in r["sentences"])


def test_restart_skips_finished_partitions(mixed, tmp_path):
    out = tmp_path / "out"
    tag_with_ray([str(mixed)], out, output=ONE_A_PARTITION, cluster=TWO_WORKERS, progress=False)
    first = _parts(out)
    (out / "part-00003.jsonl").unlink()  # lost
    with open(out / "part-00005.jsonl", "r+b") as fh:  # cut short by a crash
        fh.truncate(10)
    (out / "part-00007.done.json").unlink()  # written, never recorded as done
    kept = {
        f.name: f.stat().st_mtime_ns
        for f in out.glob("part-*.jsonl")
        if f.name not in ("part-00005.jsonl", "part-00007.jsonl")
    }
    totals = tag_with_ray([str(mixed)], out, output=ONE_A_PARTITION, cluster=TWO_WORKERS, progress=False)
    assert (totals["partitions"], totals["skipped"]) == (13, 10)  # 4 files, 8 JSONL lines, 1 file
    assert (totals["records"], totals["errors"]) == (13, 6)
    assert _parts(out) == first
    assert {n: (out / n).stat().st_mtime_ns for n in kept} == kept  # finished partitions untouched


def test_a_failing_partition_is_one_line_and_the_rest_is_kept(mixed, tmp_path, capsys):
    out = tmp_path / "out"
    args = [
        "tag",
        "--engine",
        "ray",
        "--workers",
        "2",
        "--partition-size",
        "4",
        "--quiet",
        "--input",
        str(mixed),
        "--out",
        str(out),
    ]
    assert main(args) == 1
    plan = json.loads((out / "_plan.json").read_text())
    plan["partitions"][1]["kind"] = "damaged"  # a worker fails on this one
    (out / "_plan.json").write_text(json.dumps(plan))
    (out / "part-00001.done.json").unlink()
    capsys.readouterr()
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(
        "opinion-tagger: error: ray: the run failed (ValueError: unknown partition kind "
        "'damaged'); finished partitions are kept"
    )
    assert "Traceback" not in "\n".join(err)
    assert sorted(p.name for p in out.glob("*.done.json")) == [f"part-0000{k}.done.json" for k in (0, 2, 3)]


def test_parquet_in_and_out(tmp_path):
    ids = ["p0", None, "p2", "p3", "p4"]
    texts = [GOOD[0], GOOD[2], None, "", GOOD[3]]
    pq.write_table(pa.table({"id": ids, "text": texts}), tmp_path / "in.parquet", row_group_size=2)
    parquet = OutputOptions(fmt="parquet", partition_size=2)
    tag_with_ray([str(tmp_path / "*.parquet")], tmp_path / "out", output=parquet, cluster=TWO_WORKERS, progress=False)
    rows = pq.read_table(sorted((tmp_path / "out").glob("part-*.parquet"))).to_pylist()
    assert [r["id"] for r in rows] == ["p0", f"{tmp_path / 'in.parquet'}:2", "p2", "p3", "p4"]
    assert [r["error"] for r in rows] == [None, None, "text must be a string, not NoneType", "empty text", None]
    # the good rows hold the local engine's records, a DSE's holder in the columns parquet_row puts it in
    src = tmp_path / "same.jsonl"
    src.write_text("\n".join(json.dumps({"id": r["id"], "text": t}) for r, t in zip(rows, texts) if t) + "\n")
    local = [{"error": None, **parquet_row(r)} for r in _local([src], tmp_path) if "error" not in r]
    expected = pa.Table.from_pylist(local, schema=parquet_schema(("DSE", "ESE"), frames=True)).to_pylist()
    assert [r for r in rows if r["error"] is None] == expected
    said = [s for r in rows if r["error"] is None for s in r["spans"] if s["type"] == "DSE"]
    assert said and all(s["polarity"] and s["intensity"] for s in said)  # the default model's frames


def test_cli_engine_ray_and_local_path_without_ray(mixed, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = tmp_path / "out"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "opinion_tagger",
            "tag",
            "--engine",
            "ray",
            "--workers",
            "2",
            "--model",
            "default",
            "--partition-size",
            "3",
            "--input",
            str(mixed / "*.txt"),
            "--input",
            str(mixed / "e.jsonl"),
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
    )
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "tagged 7 records, 6 errors" in proc.stderr and "partition 0 done" in proc.stderr
    # quiet: no lines of Ray's own processes ("[2026-... E core_worker.cc: ...") nor Python warnings
    assert not [ln for ln in proc.stderr.splitlines() if ln.startswith("[") or "Warning" in ln], proc.stderr
    assert f"opinion-tagger: {mixed / 'd.txt'}: binary data (NUL bytes), not text" in proc.stderr
    assert _parts(out) == _local(
        [mixed / f for f in ("a.txt", "b.txt", "c.txt", "d.txt", "f.txt", "e.jsonl")], tmp_path
    )
    # the local engine: no Ray import on its path
    code = (
        "import sys; from opinion_tagger.cli import main; main(['tag', '--quiet', 'Officials said so.']); "
        "sys.stdout.flush(); assert 'ray' not in sys.modules and 'opinion_tagger.engines.ray_engine' not in sys.modules"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--engine", "ray", "--input", "-", "--out", "o"], "standard input (-) needs --engine local"),
        (["--engine", "ray", "Some text."], "give --input FILE|DIR|GLOB"),
        (["--engine", "ray", "--input", "x"], "give --out DIRECTORY"),
        (["--engine", "ray", "--input", "x", "--out", "o", "--format", "html"], "writes jsonl, conll, parquet"),
        (["--engine", "ray", "--input", "x", "--out", "o", "--model", "nothing"], "nothing: model bundle not found"),
        (["--format", "parquet", "Some text."], "--format parquet needs --engine ray"),
    ],
)
def test_cli_usage_errors(argv, message, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["tag", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
