"""One real-browser test: the annotator page in Debian's Chromium, driven by Playwright.

The flow an annotator lives: import two documents, select a word with the mouse, label it
with a key, reload (the span is still there), accept with a key, export and check the
export.  Screenshots of each step go to tests/artifacts/annotator/ (git-ignored)."""

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = ROOT / "tests" / "artifacts" / "annotator"

pytestmark = pytest.mark.browser

# invented sentences (no corpus text)
DOCS = [
    {"id": "bridge", "text": "Maria said the new bridge was a complete disaster, as usual."},
    {"id": "rain", "text": "Rain fell on the village all night."},
]


def text_top(page) -> float:
    """Where the text box starts on the screen, measured on the box as it is now (a redraw replaces the
    element: ``bounding_box`` of the old one is None, ``evaluate`` waits for the current one)."""
    return page.locator(".ot-text").evaluate("e => e.getBoundingClientRect().top")


def text_top_after_redraw(page, expected: float, within: float = 10.0) -> float:
    """``text_top`` once the page has settled: measured again every 0.1 s while it is not ``expected`` (within
    1 px), for at most ``within`` seconds, since a box measured in the middle of Streamlit's redraw is not laid
    out yet (top 0); returns the last measurement, so a box that stays moved is still seen."""
    deadline = time.monotonic() + within
    top = text_top(page)
    while abs(top - expected) > 1 and time.monotonic() < deadline:
        page.wait_for_timeout(100)
        top = text_top(page)
    return top


def editor_at(page, version: int) -> None:
    """Wait until the span editor shows ``version`` of its document: after a save, until then its keys still
    act on the version before it, and the page refuses them ("Not saved: the document changed since version ...")."""
    from playwright.sync_api import expect

    expect(page.locator(f".ot-editor[data-version='{version}']")).to_have_count(1, timeout=30_000)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def server(tmp_path):
    port = _free_port()
    env = {**os.environ, "OPINION_TAGGER_PROJECT": str(tmp_path / "study.sqlite")}
    # the server's log goes to a file: an unread pipe fills up and blocks the server mid-run
    log = open(tmp_path / "streamlit.log", "wb")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            str(ROOT / "streamlit_app.py"),
            "--server.port",
            str(port),
            "--server.address",
            "127.0.0.1",
            "--server.headless",
            "true",
            "--browser.gatherUsageStats",
            "false",
            "--client.toolbarMode",
            "minimal",
        ],  # as annotate serve starts it
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
    )
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
        log.close()


def _server_log(tmp_path) -> str:
    text = (tmp_path / "streamlit.log").read_text(encoding="utf-8", errors="replace")
    return "\n--- Streamlit server log (tail) ---\n" + text[-4000:]


def _need_chromium():
    if not os.path.exists(CHROMIUM):
        if os.environ.get("CI"):
            pytest.fail("chromium is missing: .ci/run installs Debian's chromium")
        pytest.skip("chromium not installed")


def _choose_name(page, name):
    """A browser session on a loopback server without --annotator gives its annotator's name first."""
    from playwright.sync_api import expect

    box = page.get_by_label("Your name (recorded with each of your changes; chosen once for this browser session)")
    expect(box).to_be_visible(timeout=120_000)
    box.fill(name)
    page.get_by_role("button", name="Start annotating").click()
    expect(page.locator("[data-testid='stSidebar']").get_by_text(f"Annotator {name}")).to_be_visible(timeout=60_000)


def _settled(page) -> None:
    """Wait until the page's rerun is over: no element of the previous run is still shown beside the new ones
    (Streamlit marks those ``data-stale``), so a button's name matches one button."""
    from playwright.sync_api import expect

    expect(page.locator("[data-testid='stElementContainer'][data-stale='true']")).to_have_count(0, timeout=60_000)


def _choose(page, box, option: str) -> None:
    """Choose ``option`` in a select ``box``: its list opened again if a rerun of the page closed it."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for wait in (10_000, 10_000, 30_000):
        box.click()
        try:
            page.get_by_role("option", name=option, exact=True).click(timeout=wait)
            return
        except PlaywrightTimeout:
            page.keyboard.press("Escape")
    raise AssertionError(f"no option {option!r}")


def _launch(p):
    return p.chromium.launch(
        executable_path=CHROMIUM,
        args=[
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ],
    )


def test_annotate_in_chromium(server, tmp_path):
    _need_chromium()
    from playwright.sync_api import expect, sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    upload = tmp_path / "two.jsonl"
    upload.write_text("".join(json.dumps(d) + "\n" for d in DOCS), encoding="utf-8")
    with sync_playwright() as p:
        browser = _launch(p)
        page = browser.new_page(viewport={"width": 1280, "height": 900}, accept_downloads=True)

        def shot(name):
            page.wait_for_timeout(300)
            page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)

        page.goto(server, wait_until="domcontentloaded")
        _choose_name(page, "maria")
        # 1. import two documents (pre-annotated by the bundled model)
        page.locator("input[type=file]").first.set_input_files(str(upload))
        # the upload is an HTTP request of its own: submit only once the uploader lists the file
        expect(page.get_by_text(upload.name)).to_be_visible(timeout=30_000)
        import_button = page.get_by_role("button", name="Import")
        expect(import_button).to_be_enabled(timeout=30_000)
        import_button.click()
        words = page.locator(".ot-word")
        try:
            expect(words.first).to_be_visible(timeout=120_000)
        except AssertionError as exc:
            shot("00-import-failed")
            raise AssertionError(str(exc) + _server_log(tmp_path)) from None
        expect(page.get_by_text("0 of 2 done")).to_be_visible()
        shot("01-imported")
        # 2. select a word with the mouse and label it with a key
        token = page.locator(".ot-tok", has=page.locator(".ot-word", has_text="bridge"))
        ese_lane = token.locator(".ot-lane").nth(1)
        expect(ese_lane).not_to_have_class("ot-lane on")
        token.locator(".ot-word").click()
        expect(token).to_have_class("ot-tok sel")
        shot("02-selected")
        page.keyboard.press("e")
        expect(page.get_by_text("Saved ESE “bridge”.")).to_be_visible(timeout=30_000)
        expect(ese_lane).to_have_class("ot-lane on")
        shot("03-labelled")
        # 2b. label a word with a key and at once click a toolbar button: the click waits for the saved
        # document (where nothing is selected any more) instead of acting on the one the key changed
        token = page.locator(".ot-tok", has=page.locator(".ot-word", has_text="new"))
        dse_lane, ese_lane = token.locator(".ot-lane").nth(0), token.locator(".ot-lane").nth(1)
        expect(dse_lane).not_to_have_class("ot-lane on")
        expect(ese_lane).not_to_have_class("ot-lane on")
        token.locator(".ot-word").click()
        expect(token).to_have_class("ot-tok sel")
        # the key and the click in one task of the page, so the click always comes while the edit is on its way
        page.locator(".ot-label[data-type=ESE]").evaluate(
            """(button) => {
                document.dispatchEvent(new KeyboardEvent("keydown", { key: "d", bubbles: true }));
                button.click();
            }"""
        )
        expect(page.get_by_text("Saved DSE “new”.")).to_be_visible(timeout=30_000)
        editor_at(page, 2)
        expect(dse_lane).to_have_class("ot-lane on")
        expect(ese_lane).not_to_have_class("ot-lane on")
        expect(page.get_by_text("Not saved")).to_have_count(0)
        # 3. reload (a new browser session: the name is asked again): the span is still there
        page.reload(wait_until="domcontentloaded")
        _choose_name(page, "maria")
        token = page.locator(".ot-tok", has=page.locator(".ot-word", has_text="bridge"))
        expect(token.locator(".ot-lane").nth(1)).to_have_class("ot-lane on", timeout=60_000)
        expect(token.locator(".ot-chip")).to_have_text("ESE ✎")
        shot("04-reloaded")
        # 4. accept with a key: the next document comes up
        page.keyboard.press("a")
        expect(page.get_by_text("1 of 2 done")).to_be_visible(timeout=60_000)
        expect(page.locator(".ot-word", has_text="village")).to_be_visible()
        shot("05-accepted")
        # 5. export JSONL and check it
        page.get_by_text("Export", exact=True).click()
        jsonl = page.get_by_role("button", name="JSONL")
        expect(jsonl).to_be_enabled(timeout=60_000)
        with page.expect_download(timeout=90_000) as dl:  # the file is made on the server when clicked
            jsonl.click()
        shot("06-exported")
        records = [json.loads(line) for line in Path(dl.value.path()).read_text(encoding="utf-8").splitlines()]
        browser.close()
    assert [(r["id"], r["status"]) for r in records] == [("bridge", "done")]  # the accepted documents, by default
    spans = [(s["type"], s["text"], s["source"]) for s in records[0]["spans"]]
    assert ("ESE", "bridge", "human") in spans and ("DSE", "new", "human") in spans
    assert ("ESE", "new", "human") not in spans
    assert all(s["source"] == "model" for s in records[0]["spans"] if s["text"] not in ("bridge", "new"))


MARKED = {"DSE": ("said",), "ESE": ("said", "a", "big", "fat", "lie")}


class _EveryWordItsSpan:
    """A stand-in network: a low-confidence span of its own on each ``MARKED`` word."""

    types = ("DSE", "ESE")
    heads = None  # no frame heads

    def predict(self, sentences, batch_size=64):
        return [
            {t: (["B-" + t if w in MARKED[t] else "O" for w in words], [0.4] * len(words)) for t in self.types}
            for words in sentences
        ]


def test_chips_apart_types_distinct_text_still(server, tmp_path):
    """Adjacent chips do not cover each other, a word in a DSE and an ESE shows
    both (DSE background, ESE underline), and a message after a key does not move the text."""
    _need_chromium()
    from playwright.sync_api import expect, sync_playwright

    from opinion_tagger.annotation.importing import import_records
    from opinion_tagger.annotation.store import Project
    from opinion_tagger.tagging.formats import COLORS, LINE_COLORS
    from opinion_tagger.tagging.inputs import Record
    from opinion_tagger.tagging.tagger import OpinionTagger

    with Project(tmp_path / "study.sqlite", create=True) as project:  # the server's project, before the page opens
        import_records(
            project,
            [Record("lie", "Officials said a big fat lie was told.")],
            OpinionTagger(_EveryWordItsSpan()),
            model_name="marker",
        )
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = _launch(p)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(server, wait_until="domcontentloaded")
        _choose_name(page, "maria")
        chips = page.locator(".ot-chip")
        expect(chips).to_have_count(6, timeout=120_000)
        expect(chips.nth(2)).to_have_text("⚠ ESE 0.40")
        boxes = [chips.nth(k).bounding_box() for k in range(6)]
        for k, a in enumerate(boxes):
            for b in boxes[k + 1 :]:
                apart = (
                    a["x"] + a["width"] <= b["x"] + 0.5
                    or b["x"] + b["width"] <= a["x"] + 0.5
                    or a["y"] + a["height"] <= b["y"] + 0.5
                    or b["y"] + b["height"] <= a["y"] + 0.5
                )
                assert apart, (a, b)
        said = page.locator(".ot-word", has_text="said")
        style = said.evaluate("w => [getComputedStyle(w).backgroundColor, getComputedStyle(w).boxShadow]")
        rgb = [
            f"rgb({int(c[1:3], 16)}, {int(c[3:5], 16)}, {int(c[5:7], 16)})" for c in (COLORS["DSE"], LINE_COLORS["ESE"])
        ]
        assert style[0] == rgb[0] and rgb[1] in style[1], style
        page.wait_for_timeout(300)
        page.screenshot(path=str(ARTIFACTS / "10-chips-and-types.png"), full_page=True)
        top = text_top(page)
        page.locator(".ot-word", has_text="told").click()
        page.keyboard.press("d")
        expect(page.get_by_text("Saved DSE “told”.")).to_be_visible(timeout=30_000)
        expect(page.locator(".ot-text")).to_be_visible()  # (redrawn after the save: measured once it is there)
        assert text_top_after_redraw(page, top) == pytest.approx(top, abs=1)
        page.screenshot(path=str(ARTIFACTS / "11-message-in-its-slot.png"), full_page=True)
        browser.close()


TEAM_MARKED = {"DSE": ("said", "grumbled"), "ESE": ()}


class _SaidIsADse:
    """A stand-in network: a DSE on "said" and "grumbled" (confidence 0.55), nothing else."""

    types = ("DSE", "ESE")
    heads = None  # no frame heads

    def predict(self, sentences, batch_size=64):
        return [
            {t: (["B-" + t if w in TEAM_MARKED[t] else "O" for w in words], [0.55] * len(words)) for t in self.types}
            for words in sentences
        ]


# invented sentences (no corpus text)
TEAM_DOCS = [
    ("harbour", "The mayor said the new harbour was a triumph, but the fishermen called it a costly mistake."),
    ("market", "Traders grumbled that the market had moved again."),
]


def _clip(page, first, last):
    """The page's region from the top of locator ``first`` to the bottom of ``last``, full width of the main column."""
    a, b = first.bounding_box(), last.bounding_box()
    main = page.locator("[data-testid='stMainBlockContainer']").bounding_box()
    return {"x": main["x"], "y": a["y"] - 8, "width": main["width"], "height": b["y"] + b["height"] - a["y"] + 16}


def test_a_team_in_chromium(server, tmp_path):
    """The team flow: two annotators (names chosen in their browser sessions) annotate
    their own copies of the same documents, one rejects a copy; a reviewer sees the agreement,
    merges the two copies of one document (the page stays on it, the final version in the editor;
    opened again, its ticks are the final version's, and a merge that would remove a span asks
    first), goes on to the next and rejects it; the export has the merged version."""
    _need_chromium()
    from playwright.sync_api import expect, sync_playwright

    from opinion_tagger.annotation.importing import import_records
    from opinion_tagger.annotation.store import Project
    from opinion_tagger.tagging.inputs import Record
    from opinion_tagger.tagging.tagger import OpinionTagger

    with Project(tmp_path / "study.sqlite", create=True) as project:  # the server's project, before the page opens
        import_records(
            project, [Record(n, t) for n, t in TEAM_DOCS], OpinionTagger(_SaidIsADse()), model_name="marker", overlap=2
        )
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = _launch(p)

        def session(name):
            """A browser session of its own (as another annotator's machine) that chose ``name``."""
            context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
            page = context.new_page()
            page.goto(server, wait_until="domcontentloaded")
            expect(page.get_by_role("button", name="Start annotating")).to_be_visible(timeout=120_000)
            expect(page.locator(".ot-word")).to_have_count(0)  # nothing to annotate before the name
            _choose_name(page, name)
            return page

        def word(page, text):
            return page.locator(".ot-word", has_text=text).first

        # 1. ann: ESE "triumph" in her copy of harbour, accepted; market: her copy rejected
        ann = session("ann")
        expect(word(ann, "harbour")).to_be_visible(timeout=60_000)
        expect(ann.get_by_role("combobox", name="Document")).to_have_value("1. harbour — ○ to do (1 span · your copy)")
        word(ann, "triumph").click()
        ann.keyboard.press("e")
        expect(ann.get_by_text("Saved ESE “triumph”.")).to_be_visible(timeout=30_000)
        editor_at(ann, 1)
        ann.screenshot(path=str(ARTIFACTS / "20-ann-copy.png"), full_page=True)
        # the README's picture of the annotator (docs/annotator.png)
        ann.screenshot(
            path=str(ARTIFACTS / "readme-annotator.png"),
            full_page=True,
            clip=_clip(ann, ann.locator("[data-testid='stProgress']"), ann.locator(".ot-text")),
        )
        ann.keyboard.press("a")
        expect(ann.get_by_text("1 of 2 done")).to_be_visible(timeout=30_000)
        expect(word(ann, "Traders")).to_be_visible()
        ann.keyboard.press("r")
        expect(ann.get_by_text("Rejected (your copy; the reviewer decides).")).to_be_visible(timeout=30_000)
        # 2. ben: ESE "triumph" and "a costly mistake"; rejects market too
        ben = session("ben")
        expect(word(ben, "harbour")).to_be_visible(timeout=60_000)
        word(ben, "triumph").click()
        ben.keyboard.press("e")
        expect(ben.get_by_text("Saved ESE “triumph”.")).to_be_visible(timeout=30_000)
        editor_at(ben, 1)
        word(ben, "costly").click()
        word(ben, "mistake").click(modifiers=["Shift"])
        ben.keyboard.press("e")
        ben.keyboard.press("a")  # at once: held until the editor shows the saved span, then it accepts that version
        expect(ben.get_by_text("1 of 2 done")).to_be_visible(timeout=30_000)
        expect(ben.get_by_text("Not saved")).to_have_count(0)
        expect(word(ben, "Traders")).to_be_visible()
        ben.keyboard.press("r")
        expect(ben.get_by_text("Rejected (your copy; the reviewer decides).")).to_be_visible(timeout=30_000)
        # 3. rita reviews: the agreement, the two copies side by side, a merge, a rejection
        rita = session("rita")
        expect(rita.get_by_text("Nothing for you here")).to_be_visible(timeout=60_000)  # both have their two
        rita.locator("[data-testid='stSidebar']").get_by_text("Review", exact=True).click()
        expect(rita.get_by_text("Reviewing study")).to_be_visible(timeout=30_000)
        expect(rita.get_by_text("ESE “triumph” — ann, ben")).to_be_visible(timeout=30_000)
        expect(rita.get_by_text("ESE “costly mistake” — ben")).to_be_visible()
        rita.get_by_text("Agreement between annotators").click()
        table = rita.locator("[data-testid='stTable']")
        expect(table).to_contain_text("ann / ben", timeout=30_000)
        # harbour: ann ESE triumph, ben ESE triumph + costly mistake: ESE binary F1 2/3 (P 1/2, R 1)
        expect(table.locator("tr", has_text="ESE")).to_contain_text("66.7")
        rita.set_viewport_size({"width": 1280, "height": 1800})  # the page scrolls inside itself: room for it all
        rita.wait_for_timeout(800)
        rita.screenshot(path=str(ARTIFACTS / "21-review.png"), full_page=True)
        # the README's picture of the review (docs/review.png)
        rita.screenshot(
            path=str(ARTIFACTS / "readme-review.png"),
            full_page=True,
            clip=_clip(rita, rita.locator("[data-testid='stSelectbox']", has_text="Document to review"), table),
        )
        rita.set_viewport_size({"width": 1280, "height": 900})
        # before the review, the final version (the import's) is not shown as if it were one
        expect(rita.get_by_text("Not reviewed yet")).to_be_visible()
        expect(rita.locator(".ot-word")).to_have_count(0)
        rita.get_by_text("ESE “costly mistake” — ben").click()  # tick it: the final version keeps it
        rita.get_by_role("button", name="Merge the ticked spans").click()
        expect(rita.get_by_text("Merged 3 spans into the final version: correct it below, or go on.")).to_be_visible(
            timeout=30_000
        )
        # the page stays on harbour, reviewed, its final version in the editor
        box = rita.get_by_role("combobox", name="Document to review")
        expect(box).to_have_value("harbour — ● reviewed (ann: accepted, ben: accepted)", timeout=30_000)
        expect(word(rita, "costly").locator("xpath=..").locator(".ot-lane").nth(1)).to_have_class("ot-lane on")
        # opened again in a new session, the review shows the final version's choices
        rita.reload(wait_until="domcontentloaded")
        _choose_name(rita, "rita")
        rita.locator("[data-testid='stSidebar']").get_by_text("Review", exact=True).click()
        box = rita.get_by_role("combobox", name="Document to review")
        expect(box).to_have_value("market — ○ to review (ann: rejected, ben: rejected)", timeout=30_000)
        _choose(rita, box, "harbour — ● reviewed (ann: accepted, ben: accepted)")
        costly = rita.locator("[data-testid='stCheckbox']", has_text="ESE “costly mistake” — ben")
        expect(costly.locator("input")).to_be_checked(timeout=30_000)
        # unticked and merged again: the merge asks before it removes the span, and nothing changes when told so
        costly.get_by_text("ESE “costly mistake” — ben").click()
        expect(costly.locator("input")).not_to_be_checked()
        rita.get_by_role("button", name="Merge the ticked spans").click()
        expect(rita.get_by_text("removes 1 span of the final version: ESE “costly mistake”")).to_be_visible(
            timeout=30_000
        )
        rita.screenshot(path=str(ARTIFACTS / "23-review-asks.png"), full_page=True)
        rita.get_by_role("button", name="Keep the final version as it is").click()
        expect(rita.get_by_text("Nothing changed.")).to_be_visible(timeout=30_000)
        _settled(rita)
        # the next step: on to the next document awaiting review
        rita.get_by_role("button", name="Next to review (n)").click()
        expect(box).to_have_value("market — ○ to review (ann: rejected, ben: rejected)", timeout=30_000)
        reject = rita.get_by_role("button", name="Reject", exact=True)  # (no key: no editor before a review)
        # while the page reruns for the new document, harbour's button can still be shown beside market's
        expect(reject).to_have_count(1, timeout=30_000)
        reject.click()
        expect(rita.get_by_text("1 of 2 reviewed")).to_be_visible(timeout=30_000)
        expect(rita.get_by_text("1 rejected")).to_be_visible()
        expect(rita.get_by_text("Every document ready for review is reviewed.")).to_be_visible()
        expect(box).to_have_value("market — ✕ rejected (ann: rejected, ben: rejected)")
        # 4. the export has harbour's merged version with its provenance; market, rejected, is left out
        rita.get_by_text("Export", exact=True).click()
        jsonl = rita.get_by_role("button", name="JSONL")
        expect(jsonl).to_be_enabled(timeout=60_000)
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        for wait in (30_000, 90_000):  # a click that lands while the page reruns is lost: once more then
            try:
                with rita.expect_download(timeout=wait) as dl:
                    jsonl.click()
                break
            except PlaywrightTimeout:
                rita.screenshot(path=str(ARTIFACTS / "22-download-retried.png"), full_page=True)
        records = [json.loads(line) for line in Path(dl.value.path()).read_text(encoding="utf-8").splitlines()]
        browser.close()
    assert [(r["id"], r["status"]) for r in records] == [("harbour", "done")]
    rec = records[0]
    assert rec["review"]["method"] == "merged" and rec["review"]["reviewer"] == "rita"
    assert rec["review"]["annotators"] == ["ann", "ben"]
    assert [(s["type"], s["text"], s["source"], s.get("annotators")) for s in rec["spans"]] == [
        ("DSE", "said", "model", ["ann", "ben"]),
        ("ESE", "triumph", "human", ["ann", "ben"]),
        ("ESE", "costly mistake", "human", ["ben"]),
    ]
    with Project(tmp_path / "study.sqlite") as project:
        assert [(o, s) for _, o, s, _ in project.copies()] == [
            ("ann", "done"),
            ("ben", "done"),
            ("ann", "rejected"),
            ("ben", "rejected"),
        ]
        assert project.document(2).status == "rejected"


# the controls of the page's main area that are cut: outside the area, their text (or the text of an element
# inside) cut short ("Set attrib…", "(u": the element scrolls), or a box's label on more than one line
NOT_IN_VIEW = """main => {
    const area = main.getBoundingClientRect();
    const shown = (e) => e.offsetParent !== null && e.getBoundingClientRect().width > 0;
    const name = (e) => (e.innerText || "").trim().split("\\n")[0].slice(0, 50) || e.dataset.testid || e.tagName;
    const controls = main.querySelectorAll(
        "button, [data-testid='stSelectbox'], [data-testid='stCheckbox'], [data-testid='stAlert'], .ot-bar > *, " +
        "[data-testid='stTable'], [data-testid='stTable'] th, [data-testid='stTable'] td, [data-testid='stDataFrame']"
    );
    const out = [];
    for (const c of [...controls].filter(shown)) {
        const r = c.getBoundingClientRect();
        if (r.left < area.left - 0.5 || r.right > area.right + 0.5) out.push(`outside the page: ${name(c)}`);
        // (an element 1 px wide is a screen reader's alone)
        const scrolls = (e) => e.clientWidth > 1 && e.scrollWidth > e.clientWidth + 0.5;
        if ([c, ...c.querySelectorAll("*")].some(scrolls)) out.push(`cut short: ${name(c)}`);
    }
    const labels = main.querySelectorAll("[data-testid='stSelectbox'] [data-testid='stWidgetLabel']");
    for (const label of [...labels].filter(shown)) {
        const line = parseFloat(getComputedStyle(label.querySelector("p") || label).lineHeight);
        if (label.getBoundingClientRect().height > 1.5 * line) out.push(`label on more than one line: ${name(label)}`);
    }
    return out;
}"""
# the words and the gaps between them as the editor draws them, in order (a line break as "\\n")
DRAWN = """text => [...text.querySelectorAll(".ot-word, .ot-gap, br")]
    .map(e => e.tagName === "BR" ? "\\n" : e.textContent).join("")"""
WORD_BOXES = """words => words.map(w => {
    const r = w.getBoundingClientRect();
    return [w.textContent, r.left, r.right, r.top];
})"""
SPACING = "They said it was a waste of money. I'd say so,\nand it's true."  # invented


def test_the_page_fits_common_widths_and_draws_the_texts_own_spacing(server, tmp_path):
    """At 1024, 1280 and 1920 px every control of the annotator's view (the editor's bar, the spans table, the
    attributes form) and of the reviewer's (the spans to keep, the buttons, the question before a merge that
    removes spans) is in view whole: none outside the page, none with its text cut short, no box's label on
    more than one line (a screenshot of each).  The editor draws the text's own spacing: nothing before "." or
    inside "I'd" (spaCy's two tokens), one space after a word whose span's chip is wider than the word."""
    _need_chromium()
    from playwright.sync_api import expect, sync_playwright

    from opinion_tagger.annotation.importing import import_records
    from opinion_tagger.annotation.store import Project
    from opinion_tagger.tagging.inputs import Record
    from opinion_tagger.tagging.tagger import OpinionTagger

    with Project(tmp_path / "study.sqlite", create=True) as project:  # the server's project, before the page opens
        import_records(project, [Record("spacing", SPACING)], OpinionTagger(_SaidIsADse()), model_name="marker")
        said = project.document(1).spans[0].id  # values of a person's, the widest the table shows
        project.set_attributes(1, 0, said, "ann", intensity="extreme", polarity="negative", holder="implicit")
        import_records(project, [Record(*TEAM_DOCS[0])], OpinionTagger(_SaidIsADse()), model_name="marker", overlap=2)
        for who in ("ann", "ben"):  # a document awaiting review
            project.claim(2, who)
            project.set_status(2, 0, "done", who, layer=who)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = _launch(p)
        for width in (1024, 1280, 1920):
            page = browser.new_page(viewport={"width": width, "height": 1400})
            main = page.locator("[data-testid='stMainBlockContainer']")
            page.goto(server, wait_until="domcontentloaded")
            _choose_name(page, "rita")
            expect(page.locator(".ot-word").first).to_be_visible(timeout=120_000)
            expect(page.get_by_role("button", name="Undo (u)")).to_be_visible()
            page.get_by_text("Spans of this document").click()
            expect(page.get_by_role("button", name="Set attributes")).to_be_visible(timeout=30_000)
            expect(main.locator("[data-testid='stTable']", has_text="confidence")).to_contain_text("extreme ✎")
            page.wait_for_timeout(500)  # laid out
            page.screenshot(path=str(ARTIFACTS / f"30-annotate-{width}.png"), full_page=True)
            assert main.evaluate(NOT_IN_VIEW) == [], f"annotate view at {width} px"
            assert page.locator(".ot-text").evaluate(DRAWN) == SPACING
            boxes = page.locator(".ot-word").evaluate_all(WORD_BOXES)
            gap = {(a[0], b[0]): b[1] - a[2] for a, b in zip(boxes, boxes[1:]) if a[3] == b[3]}
            assert abs(gap[("money", ".")]) < 0.5 and abs(gap[("I", "'d")]) < 0.5 and abs(gap[("so", ",")]) < 0.5
            assert 2 < gap[("waste", "of")] < 10 and 2 < gap[("said", "it")] < 10  # one space, a chip or not
            page.locator("[data-testid='stSidebar']").get_by_text("Review", exact=True).click()
            merge = page.get_by_role("button", name="Merge the ticked spans")
            expect(merge).to_be_visible(timeout=30_000)
            _settled(page)  # the annotate view's buttons, stale while the page reruns, gone
            reject = page.get_by_role("button", name=re.compile(r"^Reject"))  # (r) once reviewed: the editor's key
            expect(reject).to_have_count(1, timeout=30_000)
            expect(reject).to_be_visible()
            page.wait_for_timeout(500)
            page.screenshot(path=str(ARTIFACTS / f"31-review-{width}.png"), full_page=True)
            assert main.evaluate(NOT_IN_VIEW) == [], f"review view at {width} px"
            if width == 1024:  # reviewed once: then the final version is in the editor
                merge.click()
                expect(page.get_by_text("Merged 1 span into the final version")).to_be_visible(timeout=30_000)
            said = page.locator("[data-testid='stCheckbox']", has_text="DSE “said”")
            expect(said.locator("input")).to_be_checked(timeout=30_000)  # the final version has it
            said.get_by_text("DSE “said”").click()
            merge.click()
            keep = page.get_by_role("button", name="Keep the final version as it is")
            expect(keep).to_be_visible(timeout=30_000)
            page.wait_for_timeout(500)
            page.screenshot(path=str(ARTIFACTS / f"32-review-asks-{width}.png"), full_page=True)
            assert main.evaluate(NOT_IN_VIEW) == [], f"the review's question at {width} px"
            keep.click()
            expect(keep).to_have_count(0, timeout=30_000)
            page.close()
        browser.close()


def test_a_holder_is_set_in_chromium(server, tmp_path):
    """A DSE whose holder the model got wrong: clicked, its holder is outlined; the right words selected and h
    pressed, they are its holder, a person's, in the project."""
    _need_chromium()
    from playwright.sync_api import expect, sync_playwright

    from opinion_tagger.annotation.importing import stored_parts
    from opinion_tagger.annotation.store import Project, StoredSpan
    from opinion_tagger.tagging.tagger import tokenised

    # invented sentence: "hated" is Tom's, the model says Maria's
    (doc,) = tokenised([("bridge", "Maria said that Tom hated the new bridge.")])
    tokens, _ = stored_parts(doc)
    hated = StoredSpan(None, "DSE", 4, 5, "model", 0.8, holder="span", holder_start=0, holder_end=1)
    hated.holder_source, hated.holder_score = "model", 0.6
    with Project(tmp_path / "study.sqlite", create=True) as project:  # the server's project, before the page opens
        project.add_documents([("bridge", doc.text, tokens, [hated], "marker")])
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = _launch(p)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(server, wait_until="domcontentloaded")
        _choose_name(page, "maria")
        tok = lambda word: page.locator(".ot-tok", has=page.locator(".ot-word", has_text=word))
        tok("hated").locator(".ot-lane").nth(0).click()
        expect(tok("Maria")).to_have_class("ot-tok holder", timeout=60_000)
        expect(page.locator(".ot-info")).to_contain_text("holder “Maria” (model 0.60)")
        tok("Tom").locator(".ot-word").click()
        expect(page.locator(".ot-info")).to_contain_text("h to make them the holder of DSE “hated”")
        page.keyboard.press("h")
        expect(page.get_by_text("Holder saved: “Tom”.")).to_be_visible(timeout=30_000)
        editor_at(page, 1)
        expect(tok("Tom")).to_have_class("ot-tok holder")  # the DSE is still clicked: its new holder outlined
        expect(tok("Maria")).to_have_class("ot-tok")
        expect(page.locator(".ot-info")).to_contain_text("holder “Tom” ✎")
        page.wait_for_timeout(300)
        page.screenshot(path=str(ARTIFACTS / "40-holder.png"), full_page=True)
        browser.close()
    with Project(tmp_path / "study.sqlite") as project:
        (span,) = project.document(1).spans
        assert (span.holder_value, span.holder_source, span.holder_score) == ((3, 4), "human", None)


def test_a_dses_attitude_and_targets_are_shown_and_set_with_keys_in_chromium(server, tmp_path):
    """A DSE with the model's attitude and target: clicked, its target is outlined and the line above the text
    names both; k takes the next attitude, a person's, kept across a reload; a word selected and t make it a
    target too."""
    _need_chromium()
    from playwright.sync_api import expect, sync_playwright

    from opinion_tagger.annotation.importing import stored_parts
    from opinion_tagger.annotation.store import Project, StoredSpan, StoredTarget
    from opinion_tagger.tagging.tagger import tokenised

    # invented sentence: "feared" is sentiment-neg (the model's 0.70), about "the new tax" (0.55)
    (doc,) = tokenised([("tax", "Omar feared the new tax.")])
    tokens, _ = stored_parts(doc)
    feared = StoredSpan(None, "DSE", 1, 2, "model", 0.8, attitude="sentiment-neg", attitude_source="model")
    feared.attitude_score, feared.targets, feared.targets_source = 0.7, (StoredTarget(2, 5, "model", 0.55),), "model"
    with Project(tmp_path / "study.sqlite", create=True) as project:  # the server's project, before the page opens
        project.add_documents([("tax", doc.text, tokens, [feared], "marker")])
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = _launch(p)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(server, wait_until="domcontentloaded")
        _choose_name(page, "omar")
        info = page.locator(".ot-info")
        tok = lambda word: page.locator(".ot-tok", has=page.locator(".ot-word", has_text=re.compile(f"^{word}$")))
        target = re.compile(r"\btarget\b")
        tok("feared").locator(".ot-lane").nth(0).click()
        expect(info).to_contain_text("attitude sentiment-neg (model 0.70) · targets “the new tax” (model 0.55)")
        for word in ("the", "new", "tax"):
            expect(tok(word)).to_have_class(target)
        expect(tok("Omar")).not_to_have_class(target)
        page.keyboard.press("k")  # the attitude after sentiment-neg
        expect(page.get_by_text("Attitude saved: arguing-pos.")).to_be_visible(timeout=30_000)
        editor_at(page, 1)
        expect(info).to_contain_text("attitude arguing-pos ✎")  # the DSE still selected
        tok("Omar").locator(".ot-word").click()
        expect(info).to_contain_text("t to add them to its targets")
        page.keyboard.press("t")
        expect(page.get_by_text("Target added: “Omar”.")).to_be_visible(timeout=30_000)
        editor_at(page, 2)
        expect(tok("Omar")).to_have_class(target)
        expect(info).to_contain_text("targets “Omar” ✎, “the new tax” (model 0.55)")
        page.screenshot(path=str(ARTIFACTS / "45-attitude-and-targets.png"), full_page=True)
        page.reload(wait_until="domcontentloaded")  # a new browser session (the name asked again): saved
        _choose_name(page, "omar")
        expect(tok("feared")).to_be_visible(timeout=120_000)
        tok("feared").locator(".ot-lane").nth(0).click()
        expect(info).to_contain_text("attitude arguing-pos ✎ · targets “Omar” ✎, “the new tax” (model 0.55)")
        browser.close()
    with Project(tmp_path / "study.sqlite") as project:
        (span,) = project.document(1).spans
        assert (span.attitude, span.attitude_source, span.attitude_score) == ("arguing-pos", "human", None)
        assert [(t.tokens, t.source, t.score) for t in span.targets] == [
            ((0, 1), "human", None),
            ((2, 5), "model", 0.55),
        ]


# invented sentence: tokens and spans of its own (no tagger): DSE "said" (its holder "Maria", the model's), ESE
# "a disaster" (intensity high, the model's 0.57) and DSE "disaster" inside it
CLICK_TEXT = "Maria said the plan was a disaster."
CLICK_WORDS = [(0, 5), (6, 10), (11, 14), (15, 19), (20, 23), (24, 25), (26, 34), (34, 35)]


def _click_spans():
    from opinion_tagger.annotation.store import StoredSpan

    said = StoredSpan(None, "DSE", 1, 2, "model", 0.9, polarity="negative", polarity_source="model", polarity_score=0.8)
    said.holder, said.holder_start, said.holder_end, said.holder_source, said.holder_score = "span", 0, 1, "model", 0.6
    ese = StoredSpan(None, "ESE", 5, 7, "model", 0.85, intensity="high", intensity_source="model", intensity_score=0.57)
    return [said, ese, StoredSpan(None, "DSE", 6, 7, "model", 0.7)]


def test_a_click_on_a_word_selects_its_span_and_keys_act_on_it(server, tmp_path):
    """A click on a word in a span selects the span (in two, the innermost; again, the next, then the word alone);
    the span stays selected after i, p and h, a key pressed again (even at once) taking the next value; a key with
    nothing to act on says so.  In an annotator's copy, whose first change makes the copy (new span ids)."""
    _need_chromium()
    from playwright.sync_api import expect, sync_playwright

    from opinion_tagger.annotation.store import Project, StoredToken

    tokens = [StoredToken(k, 0, a, b) for k, (a, b) in enumerate(CLICK_WORDS)]
    with Project(tmp_path / "study.sqlite", create=True) as project:  # the server's project, before the page opens
        project.add_documents([("plan", CLICK_TEXT, tokens, _click_spans(), "marker")], overlap=2)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = _launch(p)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(server, wait_until="domcontentloaded")
        _choose_name(page, "maria")
        info = page.locator(".ot-info")
        tok = lambda n: page.locator(".ot-tok").nth(n)  # by position: "a" is also in "Maria"
        lane = lambda n, ty: tok(n).locator(".ot-lane").nth(0 if ty == "DSE" else 1)
        picked = re.compile(r"\bpicked\b")
        expect(tok(1)).to_be_visible(timeout=120_000)
        # a key with nothing selected
        page.keyboard.press("i")
        expect(info).to_have_text("i sets a span's intensity: click a span (or a word in it) first.")
        expect(info).to_have_class(re.compile(r"\bot-notice\b"))
        # a click on "said" selects its DSE; p twice at once: both act on it (the second waits for the first)
        tok(1).locator(".ot-word").click()
        expect(lane(1, "DSE")).to_have_class(picked)
        expect(info).to_contain_text("DSE “said”")
        page.keyboard.press("p")
        page.keyboard.press("p")
        editor_at(page, 2)
        expect(lane(1, "DSE")).to_have_class(picked)
        expect(info).to_contain_text("polarity both ✎")
        page.keyboard.press("i")  # not set: the first intensity
        editor_at(page, 3)
        expect(info).to_contain_text("intensity low ✎")
        page.keyboard.press("h")  # a holder of words: next, writer
        editor_at(page, 4)
        expect(lane(1, "DSE")).to_have_class(picked)
        expect(info).to_contain_text("holder writer ✎")
        page.screenshot(path=str(ARTIFACTS / "50-span-selected-after-keys.png"), full_page=True)
        # "disaster" is in the ESE "a disaster" and the DSE "disaster": the innermost first, then the next
        word = tok(6).locator(".ot-word")
        word.click()
        expect(lane(6, "DSE")).to_have_class(picked)
        expect(info).to_contain_text("DSE “disaster”")
        word.click()
        expect(lane(6, "ESE")).to_have_class(picked)
        expect(lane(6, "DSE")).not_to_have_class(picked)
        page.keyboard.press("h")
        expect(info).to_have_text("h sets a DSE's holder: only a DSE has one, and this is an ESE.")
        word.click()  # the word alone
        expect(tok(6)).to_have_class(re.compile(r"\bsel\b"))
        expect(page.locator(".ot-lane.picked")).to_have_count(0)
        expect(info).to_contain_text("click the word again for its span")
        page.keyboard.press("x")
        expect(info).to_have_text("x deletes a span: click a span (or a word in it) first.")
        word.click()  # round again to the innermost
        expect(lane(6, "DSE")).to_have_class(picked)
        # p on the ESE sets its polarity alone: the model's intensity stays
        tok(5).locator(".ot-word").click()
        expect(lane(5, "ESE")).to_have_class(picked)
        page.keyboard.press("p")
        editor_at(page, 5)
        expect(lane(5, "ESE")).to_have_class(picked)
        expect(info).to_contain_text("intensity high (model 0.57) · polarity positive ✎")
        expect(page.get_by_text("Not saved")).to_have_count(0)
        browser.close()
    with Project(tmp_path / "study.sqlite") as project:
        said, ese, dse = project.document(1, "maria").spans
        assert (said.polarity, said.polarity_source, said.intensity, said.holder_value) == (
            "both",
            "human",
            "low",
            "writer",
        )
        assert (ese.intensity, ese.intensity_source, ese.intensity_score) == ("high", "model", 0.57)
        assert (ese.polarity, ese.polarity_source) == ("positive", "human")
        assert (dse.polarity, dse.intensity, dse.holder_value) == (None, None, None)
        assert project.document(1).spans[0].polarity == "negative"  # the final version: untouched


def test_set_attributes_starts_at_the_spans_values_and_changes_only_those_changed(server, tmp_path):
    """Spans of this document: a span chosen, its boxes show its values; its polarity set alone, its intensity
    (the model's, 0.57) stays.  A span a person made has confidence 1.00, and the table shows who as written."""
    _need_chromium()
    from playwright.sync_api import expect, sync_playwright

    from opinion_tagger.annotation.store import Project, StoredToken

    tokens = [StoredToken(k, 0, a, b) for k, (a, b) in enumerate(CLICK_WORDS)]
    with Project(tmp_path / "study.sqlite", create=True) as project:  # the server's project, before the page opens
        project.add_documents([("plan", CLICK_TEXT, tokens, _click_spans(), "marker")])
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = _launch(p)
        page = browser.new_page(viewport={"width": 1280, "height": 1200})
        page.goto(server, wait_until="domcontentloaded")
        _choose_name(page, "*maria* <b>")  # Markdown and HTML in a name: shown as written
        expect(page.locator(".ot-tok").nth(1)).to_be_visible(timeout=120_000)
        page.get_by_text("Spans of this document").click()
        box = lambda name: page.get_by_role("combobox", name=name)
        expect(box("Span")).to_have_value("DSE “said”", timeout=30_000)
        expect(box("Intensity")).to_have_value("—")
        expect(box("Polarity")).to_have_value("negative")
        expect(box("Holder")).to_have_value("“Maria”")
        _choose(page, box("Span"), "ESE “a disaster”")
        expect(box("Intensity")).to_have_value("high", timeout=30_000)
        expect(box("Polarity")).to_have_value("—")
        expect(box("Holder")).to_be_disabled()
        _choose(page, box("Polarity"), "positive")
        page.get_by_role("button", name="Set attributes").click()
        expect(page.get_by_text("Attributes saved.")).to_be_visible(timeout=30_000)
        table = page.locator("[data-testid='stTable']", has_text="confidence")
        row = table.locator("tr", has_text="ESE “a disaster”")
        expect(row).to_contain_text("high (model 0.57)", timeout=30_000)
        expect(row).to_contain_text("positive ✎")
        expect(box("Span")).to_have_value("ESE “a disaster”")  # the span chosen stays, its boxes at its values now
        expect(box("Intensity")).to_have_value("high")
        expect(box("Polarity")).to_have_value("positive")
        # a person's span: confidence 1.00 (as exports write it)
        page.locator(".ot-tok").nth(3).locator(".ot-word").click()  # "plan"
        page.keyboard.press("e")
        expect(page.get_by_text("Saved ESE “plan”.")).to_be_visible(timeout=30_000)
        expect(table.locator("tr", has_text="ESE “plan”")).to_contain_text("1.00")
        expect(table.locator("tr", has_text="ESE “plan”").locator("td").nth(2)).to_have_text("*maria* <b>")
        page.screenshot(path=str(ARTIFACTS / "60-set-attributes.png"), full_page=True)
        browser.close()
    with Project(tmp_path / "study.sqlite") as project:
        said, plan, ese, _ = project.document(1).spans
        assert (ese.intensity, ese.intensity_source, ese.intensity_score) == ("high", "model", 0.57)
        assert (ese.polarity, ese.polarity_source) == ("positive", "human")
        assert (said.polarity, said.polarity_source, said.holder_value) == ("negative", "model", (0, 1))
        assert (plan.source, plan.score, plan.confidence) == ("human", None, 1.0)
