"""The picture of docs/summarize.md: the top of the HTML report of ``opinion-tagger summarize`` on 300 invented
sentences (``corpora/sample/make_opinions.py``; nothing from MPQA), tagged by a bundled model, as Chromium shows
it.  Runs the page's own commands in a temporary directory, then opens ``report.html`` from its file in Debian's
Chromium (Playwright) and saves the top ``--height`` pixels of a ``--width`` wide window:

    python -m experiments.summary_screenshot --out docs/summary-report.png
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def run(args: list[str], cwd: Path, stdout=None) -> None:
    """One command of the page, in ``cwd``; its failure ends the script with the command's own message."""
    done = subprocess.run(args, cwd=cwd, stdout=stdout, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(args)}: exit {done.returncode}: {done.stderr.strip().splitlines()[-1:]}")


def screenshot(report: Path, out: Path, width: int, height: int) -> None:
    """The top ``height`` pixels of ``report`` in Chromium, ``width`` wide, to ``out``."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": width, "height": height})
        page.goto(report.as_uri(), wait_until="load")
        page.screenshot(path=str(out))
        browser.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="accurate", help="the bundled model (or a bundle's path) that tags")
    ap.add_argument("--sentences", type=int, default=300)
    ap.add_argument("--width", type=int, default=1100)
    ap.add_argument("--height", type=int, default=880)
    ap.add_argument("--out", type=Path, required=True, help="the PNG to write")
    args = ap.parse_args(argv)
    if not Path(CHROMIUM).exists():
        sys.exit(f"{CHROMIUM}: not found (Debian's chromium package)")
    out = args.out.resolve()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        with (work / "invented.jsonl").open("w") as f:
            run([sys.executable, str(ROOT / "corpora" / "sample" / "make_opinions.py"), str(args.sentences)], work, f)
        tag = ["tag", "--model", args.model, "--input", "invented.jsonl", "--out", "tagged.jsonl"]
        run([sys.executable, "-m", "opinion_tagger", *tag], work)
        run([sys.executable, "-m", "opinion_tagger", "summarize", "tagged.jsonl", "--out", "summary"], work)
        screenshot(work / "summary" / "report.html", out, args.width, args.height)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
