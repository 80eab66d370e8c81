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
same documents in the same run, and the ratio printed.

    python experiments/benchmarks/bench_annotation.py [--docs 1000] [--repeats 7] [--saves 200] [--browser]
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from tagger.annotation.editor import editor_data
from tagger.annotation.importing import import_records
from tagger.annotation.store import Project
from tagger.tagging.annotate import OpinionTagger
from tagger.tagging.inputs import Record

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


def open_like_the_page(path: Path) -> None:
    with Project(path) as p:
        p.documents()
        p.counts()
        doc = p.document(p.next_unfinished())
        editor_data(doc, p.types, 0.6)


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
    args = ap.parse_args()
    rng = random.Random(0)
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

        big_ms = median_ms(lambda: open_like_the_page(path), args.repeats)
        small_ms = median_ms(lambda: open_like_the_page(small), args.repeats)
        print(
            f"open (library, as each page run): {big_ms:.1f} ms (baseline {small_ms:.1f} ms, "
            f"ratio {big_ms / small_ms:.1f}), medians of {args.repeats}"
        )
        (first, rerun), (_, small_rerun) = page_runs_ms(path, args.repeats), page_runs_ms(small, args.repeats)
        print(
            f"page, first run: {first:.0f} ms; rerun: {rerun:.0f} ms (baseline {small_rerun:.0f} ms, "
            f"ratio {rerun / small_rerun:.1f}), medians of {args.repeats}"
        )

        with Project(path) as p:
            doc = p.document(p.next_unfinished())
            state = {"v": doc.version}

            def save():
                state["v"] = p.add_span(doc.id, state["v"], "ESE", 0, 1, "bench")

            save_ms = median_ms(save, args.saves)
        raw = sqlite3.connect(Path(tmp) / "raw.sqlite", isolation_level=None)
        raw.execute("PRAGMA journal_mode=WAL")
        raw.execute("PRAGMA synchronous=FULL")
        raw.execute("CREATE TABLE t (a INTEGER, b TEXT)")
        base_ms = median_ms(lambda: raw.execute("INSERT INTO t VALUES (1, 'x')"), args.saves)
        raw.close()
        print(
            f"save a change: {save_ms:.2f} ms median of {args.saves} "
            f"(bare durable INSERT: {base_ms:.2f} ms; ratio {save_ms / base_ms:.1f})"
        )
        if args.browser:
            load_ms, edit_ms = browser_times(path, args.repeats)
            small_load, small_edit = browser_times(small, args.repeats)
            print(
                f"browser: page load to words drawn {load_ms:.0f} ms (baseline {small_load:.0f} ms, ratio "
                f"{load_ms / small_load:.1f}); key press to saved span drawn {edit_ms:.0f} ms (baseline "
                f"{small_edit:.0f} ms, ratio {edit_ms / small_edit:.1f}); medians of {args.repeats}"
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
        env={**os.environ, "OPINION_TAGGER_PROJECT": str(path)},
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
