"""One real-browser test: the Streamlit app in Debian's Chromium, driven by Playwright."""

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = ROOT / "tests" / "artifacts"

pytestmark = pytest.mark.browser


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def server():
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "streamlit_app.py"), "--server.port", str(port),
         "--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env={**os.environ})
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).status == 200:
                    break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("the Streamlit server did not start")
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_tag_a_sentence_in_chromium(server):
    if not os.path.exists(CHROMIUM):
        if os.environ.get("CI"):
            pytest.fail("chromium is missing: .ci/run installs Debian's chromium")
        pytest.skip("chromium not installed")
    from playwright.sync_api import expect, sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync"])
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        page.goto(server, wait_until="domcontentloaded")
        box = page.get_by_role("textbox", name="Text")
        box.wait_for(timeout=60_000)
        box.fill("Officials said the plan was, as usual, daylight robbery, and critics fear the worst.")
        box.press("Control+Enter")
        page.get_by_role("button", name="Tag").click()
        marks = page.locator("div.tagged mark")
        expect(marks.first).to_be_visible(timeout=60_000)
        texts = marks.all_inner_texts()
        assert texts, "no highlighted span"
        expect(page.get_by_role("button", name="This document (JSONL)")).to_be_visible(timeout=60_000)
        page.wait_for_timeout(1500)  # let the token table finish drawing before the screenshot
        page.screenshot(path=str(ARTIFACTS / "streamlit_app.png"), full_page=True)
        browser.close()
