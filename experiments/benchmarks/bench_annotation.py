"""Speed of the annotation store and the annotator page on a 1,000-document project.

Documents are invented (random sentences over a small made-up vocabulary, about
60 tokens each), imported and pre-annotated by the bundled model.  Then:

1. Import: documents per second (tokenising, tagging, one transaction per 64).
2. Opening the project, as the page does on each run: open the SQLite file, list
   every document with its status and span count, count statuses, load the next
   unfinished document and build the editor's data.  Median of --repeats.
3. The page itself: one full run of the Streamlit page (AppTest, no browser) on the
   project, median of --repeats reruns.
4. Saving a change (a span added, with its version check and undo record, durably
   committed: WAL, synchronous=FULL): median over --saves changes; the baseline is
   a bare one-row INSERT committed the same way in the same file system, same run.
5. With --browser (Debian's chromium): the same in a real browser on a Streamlit
   server: from loading the page to the document's words drawn (median of
   --repeats reloads), and from a key press labelling a selected word to the saved
   span drawn again (median of --repeats edits).

Each figure is also measured on a small project (--baseline-docs, default 10) of the
same documents in the same run, and the ratio printed.  Steps 2 to 4 are repeated on a team
project: the same documents with an overlap of 2, two annotators half-way through (copies of
every other document), the page showing one annotator's work and saving in their copy.

The issue's targets (issue 34): a 1,000-document project opens and shows a document within
2 s, a key press is saved within 0.5 s; each is printed with the figure that answers it.

    python -m experiments.benchmarks.bench_annotation [--docs 1000] [--repeats 7] [--saves 200] [--browser]

With ``--annotators N`` it measures instead a team at once: N annotators' sessions on a served project of
``--docs`` documents for ``--minutes``, saving edits, accepts and undos; the time from an edit sent to its
"saved" message, and the project file checked against every acknowledged edit (``team_sessions``):

    python -m experiments.benchmarks.bench_annotation --annotators 10 --minutes 2 --json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from opinion_tagger.annotation.editor import editor_data
from opinion_tagger.annotation.importing import import_records
from opinion_tagger.annotation.store import Project
from opinion_tagger.tagging.inputs import Record
from opinion_tagger.tagging.tagger import OpinionTagger

WORDS = (
    "the council said plan bridge river we fear hope strongly new old village mayor claimed awful "
    "wonderful report people were told as usual critics praised failed market rain night"
).split()


def invented_text(rng: random.Random, sentences: int = 5) -> str:
    out = []
    for _ in range(sentences):
        words = [rng.choice(WORDS) for _ in range(rng.randint(8, 16))]
        out.append(" ".join(words).capitalize() + ".")
    return " ".join(out)


def median_ms(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1000 * statistics.median(times)


ANNOTATOR = "bench"


def open_like_the_page(path: Path, annotator: str = ANNOTATOR) -> None:
    """What a page run reads: the annotator's documents with their statuses, the next unfinished
    one (their copy where it has an overlap), the editor's data."""
    with Project(path) as p:
        docs = p.work_list(annotator)
        layer = {d.id: d.layer for d in docs}
        doc_id = p.next_unfinished(annotator=annotator)
        doc = p.document(doc_id, layer[doc_id], preview=True)
        editor_data(doc, p.types, 0.6)


def make_team(path: Path, team: Path) -> None:
    """``team``: ``path``'s documents with an overlap of 2; ``ANNOTATOR`` and "other" have copies of
    every other document, "other" accepted them."""
    import shutil

    shutil.copy(path, team)
    with Project(team) as p:
        p.db.execute("UPDATE documents SET overlap = 2")
        for info in p.documents()[::2]:
            for who in (ANNOTATOR, "other"):
                p.claim(info.id, who)
            p.set_status(info.id, 0, "done", "other", layer="other")


def build(path: Path, records: list[Record], ot: OpinionTagger) -> float:
    """Import and pre-annotate; seconds taken."""
    t0 = time.perf_counter()
    with Project(path, create=True) as p:
        import_records(p, records, ot, model_name="default")
    return time.perf_counter() - t0


def page_runs_ms(path: Path, repeats: int) -> tuple[float, float]:
    """(first run, median rerun) of the page on ``path``, in ms (AppTest, no browser)."""
    from streamlit.testing.v1 import AppTest

    os.environ["OPINION_TAGGER_PROJECT"] = str(path)
    os.environ["OPINION_TAGGER_ANNOTATOR"] = ANNOTATOR  # no name to choose first
    os.environ.pop("OPINION_TAGGER_PASSWORD", None)
    app = Path(__file__).resolve().parents[2] / "streamlit_app.py"
    at = AppTest.from_file(str(app), default_timeout=120)
    first = median_ms(lambda: at.run(), 1)
    assert not at.exception, at.exception
    return first, median_ms(lambda: at.run(), repeats)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--baseline-docs", type=int, default=10, help="the small project compared with")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--saves", type=int, default=200)
    ap.add_argument("--browser", action="store_true", help="also time the page in Chromium")
    ap.add_argument(
        "--annotators",
        type=int,
        help="instead: this many annotators at once on a served project of --docs documents "
        "(experiments/benchmarks/team_sessions.py)",
    )
    ap.add_argument("--minutes", type=float, default=2.0, help="with --annotators: how long they work")
    ap.add_argument("--json", action="store_true", help="with --annotators: the figures as JSON on the last line")
    args = ap.parse_args()
    rng = random.Random(0)
    if args.annotators:
        from experiments.benchmarks.team_sessions import team_bench

        result = team_bench(args.annotators, args.minutes, args.docs, [invented_text(rng) for _ in range(args.docs)])
        print(
            f"{result['annotators']} annotators for {result['minutes']} min on {result['documents']} documents: "
            f"{result['edits']} edits saved ({result['adds']} spans, {result['undos']} undos, {result['accepts']} "
            f"accepts), {result['refused']} refused, {result['unanswered']} unanswered; save time median "
            f"{result['median_save_s']} s, p95 {result['p95_save_s']} s, max {result['max_save_s']} s; "
            f"{result['lost']} lost of the edits on {result['documents_checked']} documents checked; "
            f"{result['cpu']}, {result['cores']} cores, load {result['load_before']} before"
        )
        for error in result["session_errors"]:
            print(f"a session stopped: {error}")
        if args.json:
            print(json.dumps(result))
        return
    with tempfile.TemporaryDirectory() as tmp:
        path, small = Path(tmp) / "bench.sqlite", Path(tmp) / "small.sqlite"
        records = [Record(f"doc{k:04d}", invented_text(rng)) for k in range(args.docs)]
        ot = OpinionTagger.load()
        seconds = build(path, records, ot)
        build(small, records[: args.baseline_docs], ot)
        with Project(path) as p:
            n_tokens = p.db.execute("SELECT COUNT(*) FROM tokens").fetchone()[0]
            n_spans = p.db.execute("SELECT COUNT(*) FROM spans").fetchone()[0]
        print(
            f"project: {args.docs} documents, {n_tokens} tokens, {n_spans} model spans, "
            f"{path.stat().st_size / 1e6:.1f} MB (baseline: a {args.baseline_docs}-document project)"
        )
        print(f"import + pre-annotation: {seconds:.1f} s ({args.docs / seconds:.0f} documents/s)")

        team = Path(tmp) / "team.sqlite"
        make_team(path, team)
        results = {}
        for label, big in (("shared", path), ("team", team)):
            big_ms = median_ms(lambda big=big: open_like_the_page(big), args.repeats)
            small_ms = median_ms(lambda: open_like_the_page(small), args.repeats)
            print(
                f"[{label}] open (library, as each page run): {big_ms:.1f} ms (baseline {small_ms:.1f} ms, "
                f"ratio {big_ms / small_ms:.1f}), medians of {args.repeats}"
            )
            (first, rerun), (_, small_rerun) = page_runs_ms(big, args.repeats), page_runs_ms(small, args.repeats)
            print(
                f"[{label}] page, first run: {first:.0f} ms; rerun: {rerun:.0f} ms (baseline {small_rerun:.0f} ms, "
                f"ratio {rerun / small_rerun:.1f}), medians of {args.repeats}"
            )
            with Project(big) as p:
                doc_id = p.next_unfinished(annotator=ANNOTATOR)
                layer = ANNOTATOR if label == "team" else ""
                if layer:
                    p.claim(doc_id, ANNOTATOR)
                state = {"v": p.document(doc_id, layer).version}

                def save(p=p, doc_id=doc_id, state=state, layer=layer):
                    state["v"] = p.add_span(doc_id, state["v"], "ESE", 0, 1, ANNOTATOR, layer=layer)

                save_ms = median_ms(save, args.saves)
            print(f"[{label}] save a change: {save_ms:.2f} ms median of {args.saves}")
            results[label] = (first, rerun, save_ms)
        raw = sqlite3.connect(Path(tmp) / "raw.sqlite", isolation_level=None)
        raw.execute("PRAGMA journal_mode=WAL")
        raw.execute("PRAGMA synchronous=FULL")
        raw.execute("CREATE TABLE t (a INTEGER, b TEXT)")
        base_ms = median_ms(lambda: raw.execute("INSERT INTO t VALUES (1, 'x')"), args.saves)
        raw.close()
        print(
            f"bare durable INSERT in the same file system: {base_ms:.2f} ms (save / INSERT: "
            f"{results['shared'][2] / base_ms:.1f}, team {results['team'][2] / base_ms:.1f})"
        )
        verdict = lambda ms, limit: f"{ms:.0f} ms, {'within' if ms <= 1000 * limit else 'OVER'} {limit} s"
        for label, (first, _rerun, save_ms) in results.items():
            print(
                f"target [{label}]: opens and shows a document (page's first run): {verdict(first, 2)}; "
                f"a change saved (store): {verdict(save_ms, 0.5)}"
            )
        if args.browser:
            for label, big in (("shared", path), ("team", team)):
                load_ms, edit_ms = browser_times(big, args.repeats)
                small_load, small_edit = browser_times(small, args.repeats)
                print(
                    f"[{label}] browser: page load to words drawn {load_ms:.0f} ms (baseline {small_load:.0f} ms, "
                    f"ratio {load_ms / small_load:.1f}); key press to saved span drawn {edit_ms:.0f} ms (baseline "
                    f"{small_edit:.0f} ms, ratio {edit_ms / small_edit:.1f}); medians of {args.repeats}"
                )
                print(
                    f"target [{label}] in the browser: opens and shows a document: {verdict(load_ms, 2)}; "
                    f"a key press saved and drawn: {verdict(edit_ms, 0.5)}"
                )


def browser_times(path: Path, repeats: int) -> tuple[float, float]:
    """(ms from page load to words drawn, ms from a labelling key press to the saved span drawn)."""
    import shutil
    import socket
    import subprocess
    import sys
    import urllib.request

    from playwright.sync_api import expect, sync_playwright

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    app = Path(__file__).resolve().parents[2] / "streamlit_app.py"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            str(app),
            "--server.port",
            str(port),
            "--server.headless",
            "true",
            "--browser.gatherUsageStats",
            "false",
        ],
        env={**os.environ, "OPINION_TAGGER_PROJECT": str(path), "OPINION_TAGGER_ANNOTATOR": ANNOTATOR},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(f"{url}/_stcore/health", timeout=2)
                break
            except OSError:
                time.sleep(0.5)
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=shutil.which("chromium") or "/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"]
            )
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(url)
            page.locator(".ot-word").first.wait_for(timeout=120_000)  # first load: not counted
            loads = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                page.reload(wait_until="commit")
                page.locator(".ot-word").first.wait_for(timeout=120_000)
                loads.append(time.perf_counter() - t0)
            saves, k = [], 0
            while len(saves) < repeats:  # label words that are in no ESE yet
                lane = page.locator(".ot-tok").nth(k).locator(".ot-lane").nth(1)
                if "on" not in (lane.get_attribute("class") or "").split():
                    page.locator(".ot-word").nth(k).click()
                    t0 = time.perf_counter()
                    page.keyboard.press("e")
                    expect(lane).to_have_class("ot-lane on", timeout=30_000)
                    saves.append(time.perf_counter() - t0)
                    page.wait_for_timeout(500)  # the page settles before the next edit
                k += 2
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    return 1000 * statistics.median(loads), 1000 * statistics.median(saves)


if __name__ == "__main__":
    main()
