"""A team at once on a served project (``bench_annotation --annotators N --minutes M``).

``opinion-tagger annotate serve`` serves an invented project (``--docs`` documents of random sentences, tokenised,
not pre-annotated), and N annotators work on it at the same time, each in a browser session of their own
driven through the page's own protocol: Streamlit's WebSocket, the same messages a browser sends (a rerun
with the editor's event as its trigger value, as ``static/editor.js`` sends it for a key press; a form's
fields and its button; a list's choice) and the page's answers (its elements, among them the message that
an edit was saved).  No browser runs: the figures are the server's, on this machine.

Each session gives its name on the page's form, then works on documents of its own (the k-th annotator's
are the k-th, (k + N)-th, ... of the project, so no two annotators edit one document) and, until the time
is up, waits a think time and makes an edit: a span over one or two words (the editor's d/e, 70 %), an
undo (u, 15 %) or an accept (a, 15 %; the page then opens the next unfinished document, and the session
chooses its next own one in the document list).  The save time of an edit is from sending it to the page's
message that it is saved ("Saved DSE ...", "Undone.", "Accepted.").  Every acknowledged edit is replayed on
a model of its document; once the server is stopped the project file is checked against the model: each
document's version, spans, status and history.  ``lost``: acknowledged edits the file does not have (a
version short of the model's, or a document whose spans, status or history differ).
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ACKS = ("Saved ", "Undone.", "Accepted.")
EVENT_TRIGGER = "$$STREAMLIT_INTERNAL_KEY_{}__events"  # the editor's trigger widget (streamlit components v2)


@dataclass
class Run:
    """What the page answered to one message: the elements of its last run, each message with the time it
    arrived (seconds after the message was sent), and the fragment each element belongs to (by the element's
    id; a widget in a fragment reruns that fragment alone, as the browser asks it to)."""

    elements: list
    alerts: list[tuple[float, str]]
    fragments: dict[str, str] = field(default_factory=dict)


class PageSession:
    """One browser session of the page, spoken to in Streamlit's protocol."""

    def __init__(self, url: str):
        from websockets.sync.client import connect

        self.ws = connect(url, subprotocols=["streamlit"], max_size=None, open_timeout=120)

    def close(self) -> None:
        self.ws.close()

    def run(self, widgets=(), timeout: float = 120.0, fragment: str = "") -> Run:
        """Send a rerun with ``widgets`` (WidgetState messages), of ``fragment`` alone if given; read until the
        page has finished running (a run that ends in ``st.rerun`` is followed by the next)."""
        from streamlit.proto.BackMsg_pb2 import BackMsg
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        msg = BackMsg()
        msg.rerun_script.query_string = ""
        msg.rerun_script.page_script_hash = ""
        msg.rerun_script.fragment_id = fragment
        msg.rerun_script.widget_states.widgets.extend(widgets)
        t0 = time.perf_counter()
        self.ws.send(msg.SerializeToString())
        elements: list = []
        alerts: list[tuple[float, str]] = []
        fragments: dict[str, str] = {}
        deadline = t0 + timeout
        while True:
            fwd = ForwardMsg()
            fwd.ParseFromString(self.ws.recv(timeout=max(0.1, deadline - time.perf_counter())))
            kind = fwd.WhichOneof("type")
            if kind == "new_session":
                elements = []
            elif kind == "delta" and fwd.delta.WhichOneof("type") == "new_element":
                element = fwd.delta.new_element
                elements.append(element)
                widget = getattr(element, element.WhichOneof("type") or "", None)
                if fwd.delta.fragment_id and getattr(widget, "id", ""):
                    fragments[widget.id] = fwd.delta.fragment_id
                if element.WhichOneof("type") == "alert":
                    alerts.append((time.perf_counter() - t0, element.alert.body.replace("\\", "")))
            elif kind == "script_finished" and fwd.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                return Run(elements, alerts, fragments)

    @staticmethod
    def find(run: Run, kind: str, label: str | None = None):
        for element in run.elements:
            if element.WhichOneof("type") == kind:
                widget = getattr(element, kind)
                if label is None or getattr(widget, "label", None) == label:
                    return widget
        return None

    def login(self, name: str) -> Run:
        """The page's name form (a loopback server without a password)."""
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        first = self.run()
        box = self.find(first, "text_input")
        button = self.find(first, "button", "Start annotating")
        if box is None or button is None:
            raise RuntimeError("the page did not ask for a name")
        return self.run([WidgetState(id=box.id, string_value=name), WidgetState(id=button.id, trigger_value=True)])

    @classmethod
    def editor(cls, run: Run) -> tuple[str, dict] | None:
        """The span editor's element id and data (the document it shows, its version, tokens and spans)."""
        component = cls.find(run, "bidi_component")
        return None if component is None else (component.id, json.loads(component.json))

    def choose(self, run: Run, name: str) -> Run:
        """Open the document named ``name`` from the document list."""
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        box = self.find(run, "selectbox", "Document")
        option = next((o for o in box.options if re.match(rf"\d+\. {re.escape(name)} — ", o)), None)
        if option is None:
            raise RuntimeError(f"{name} is not in the document list")
        return self.run([WidgetState(id=box.id, string_value=option)], fragment=run.fragments.get(box.id, ""))

    def edit(self, run: Run, event: dict) -> tuple[Run, str | None, float]:
        """Send an editor event, as a key press does; the next run, the page's message on it and its time."""
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        component_id, _ = self.editor(run) or (None, None)
        payload = json.dumps([{"event": "event", "value": event}])
        state = WidgetState(id=EVENT_TRIGGER.format(component_id), json_trigger_value=payload)
        after = self.run([state], fragment=run.fragments.get(component_id or "", ""))
        told = next(((t, body) for t, body in after.alerts if body.startswith((*ACKS, "Not saved"))), None)
        return after, (told[1] if told else None), (told[0] if told else float("nan"))


@dataclass
class DocModel:
    """A document as the acknowledged edits make it: spans (type, first token, end), status, version, history
    (version, action, annotator) and the states before each change not undone."""

    spans: set = field(default_factory=set)
    status: str = "todo"
    version: int = 0
    history: list = field(default_factory=list)
    before: list = field(default_factory=list)

    def apply(self, event: dict, who: str) -> None:
        op = event["op"]
        if op == "undo":  # back to the state before the last change not undone, whose history row goes
            self.spans, self.status = self.before.pop()
            del self.history[max(k for k, h in enumerate(self.history) if h[1] != "undo")]
            self.history.append((self.version + 1, "undo", who))
        else:
            self.before.append((set(self.spans), self.status))
            if op == "add":
                typ, a, b = event["type"], event["start"], event["end"]
                self.spans = {s for s in self.spans if s[0] != typ or s[2] <= a or s[1] >= b} | {(typ, a, b)}
                self.status = "in_progress" if self.status == "todo" else self.status
                action = f"add {typ}"
            else:  # accept
                self.status = "done"
                action = "status done"
            self.history.append((self.version + 1, action, who))
        self.version += 1


@dataclass
class Annotator:
    name: str
    docs: list[tuple[int, str]]  # (id, name) of their own documents
    saves: list[float] = field(default_factory=list)
    counts: dict = field(default_factory=lambda: {"add": 0, "undo": 0, "accept": 0, "refused": 0, "unanswered": 0})
    models: dict = field(default_factory=dict)
    unsure: set = field(default_factory=set)  # documents with an edit whose answer never came
    error: str | None = None
    runs: dict = field(default_factory=lambda: {"login": [], "choose": [], "edit": []})  # each run's whole time

    def timed(self, kind: str, call, *args):
        t0 = time.perf_counter()
        out = call(*args)
        self.runs[kind].append(time.perf_counter() - t0)
        return out


def annotate(url: str, who: Annotator, until: float, seed: int) -> None:
    """One annotator's session until ``until`` (time.monotonic)."""
    rng = random.Random(seed)
    page = PageSession(url)
    try:
        run = who.timed("login", page.login, who.name)
        turn = 0
        run = who.timed("choose", page.choose, run, who.docs[turn][1])
        while time.monotonic() < until:
            time.sleep(rng.uniform(1.0, 4.0))  # selecting words with the mouse, reading
            if time.monotonic() >= until:
                break
            shown = page.editor(run)
            doc_id, name = who.docs[turn]
            if shown is None or shown[1]["doc"] != doc_id:
                run = who.timed("choose", page.choose, run, name)
                continue
            data = shown[1]
            model = who.models.setdefault(doc_id, DocModel(version=data["version"]))
            roll = rng.random()
            if roll < 0.15 and model.before:
                event = {"op": "undo"}
            elif roll < 0.30:
                event = {"op": "accept"}
            else:
                event = add_event(rng, data)
            event.update(doc=doc_id, version=data["version"])
            run, told, seconds = who.timed("edit", page.edit, run, event)
            if told is None:
                who.counts["unanswered"] += 1
                who.unsure.add(doc_id)
            elif told.startswith(ACKS):
                model.apply(event, who.name)
                who.counts[event["op"]] += 1
                who.saves.append(seconds)
            else:
                who.counts["refused"] += 1
            if event["op"] == "accept":  # on to their next document
                turn = (turn + 1) % len(who.docs)
                run = who.timed("choose", page.choose, run, who.docs[turn][1])
    except Exception as exc:  # reported with the figures; the other sessions go on
        who.error = f"{type(exc).__name__}: {exc}"
    finally:
        page.close()


def add_event(rng: random.Random, data: dict) -> dict:
    """A new span over one word, or two words with a space between them (never across a sentence's end)."""
    tokens, text = data["tokens"], data["text"]
    k = rng.randrange(len(tokens))
    end = k + 1
    if k + 1 < len(tokens) and rng.random() < 0.4:
        gap = text[tokens[k]["end"] : tokens[k + 1]["start"]]
        if gap == " " and text[tokens[k]["start"] : tokens[k]["end"]] not in (".", "!", "?"):
            end = k + 2
    return {"op": "add", "type": rng.choice(data["types"]), "start": k, "end": end}


def check(path: Path, team: list[Annotator]) -> tuple[int, int]:
    """(lost, documents checked): the project file against every annotator's acknowledged edits."""
    from opinion_tagger.annotation.store import Project

    lost, checked = 0, 0
    with Project(path) as project:
        for who in team:
            for doc_id, model in who.models.items():
                if doc_id in who.unsure:
                    continue
                checked += 1
                doc = project.document(doc_id)
                history = [(h["version"], h["action"], h["annotator"]) for h in project.history(doc_id)]
                spans = {(s.type, s.tok_start, s.tok_end) for s in doc.spans}
                if doc.version != model.version:
                    lost += max(1, model.version - doc.version)
                elif (spans, doc.status, history) != (model.spans, model.status, model.history):
                    lost += 1  # (a version beyond the model's too: an edit saved that was never acknowledged)
    return lost, checked


def cpu_seconds(pid: int) -> float:
    """CPU seconds (user and system) of process ``pid`` and its children (Linux's /proc; 0 elsewhere)."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(stat.parent.name) == pid or int(fields[1]) == pid:
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def cpu_name() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    found = re.search(r"Model name:\s*(.+)", out)
    return found.group(1).strip() if found else "unknown"


def serve(path: Path, port: int, log: Path) -> subprocess.Popen:
    """``opinion-tagger annotate serve`` on ``path`` (loopback, no password: each session gives a name)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPINION_TAGGER_")}
    cmd = [sys.executable, "-m", "opinion_tagger", "annotate", "serve", str(path), "--port", str(port)]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT)
    for _ in range(240):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2)
            return proc
        except OSError:
            if proc.poll() is not None:
                break
            time.sleep(0.5)
    proc.kill()
    raise RuntimeError("the server did not start:\n" + log.read_text(errors="replace")[-2000:])


def team_bench(annotators: int, minutes: float, docs: int, texts) -> dict:
    """Build the project (``texts``: the documents' invented texts), serve it, run the team, check the file."""
    from opinion_tagger.annotation.importing import import_records
    from opinion_tagger.annotation.store import Project
    from opinion_tagger.tagging.inputs import Record

    tmp = Path(tempfile.mkdtemp(prefix="bench-team-"))
    try:
        path = tmp / "team.sqlite"
        with Project(path, create=True) as project:
            import_records(project, [Record(f"doc{k:04d}", t) for k, t in enumerate(texts)])
            infos = project.documents()
        team = [
            Annotator(f"annotator{a + 1:02d}", [(i.id, i.name) for i in infos[a::annotators][:10]])
            for a in range(annotators)
        ]
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        proc = serve(path, port, tmp / "serve.log")
        server_cpu = cpu_seconds(proc.pid)
        client_cpu = sum(os.times()[:2])
        try:
            until = time.monotonic() + 60 * minutes
            threads = [
                threading.Thread(target=annotate, args=(f"ws://127.0.0.1:{port}/_stcore/stream", who, until, k))
                for k, who in enumerate(team)
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            server_cpu = cpu_seconds(proc.pid) - server_cpu
            client_cpu = sum(os.times()[:2]) - client_cpu
        finally:
            proc.terminate()
            proc.wait(timeout=60)
        lost, checked = check(path, team)
        saves = sorted(s for who in team for s in who.saves)
        quantile = lambda q: round(saves[min(len(saves) - 1, int(q * len(saves)))], 3) if saves else None
        total = lambda key: sum(who.counts[key] for who in team)
        return {
            "annotators": annotators,
            "minutes": minutes,
            "documents": docs,
            "edits": len(saves),
            "adds": total("add"),
            "undos": total("undo"),
            "accepts": total("accept"),
            "refused": total("refused"),
            "unanswered": total("unanswered"),
            "documents_checked": checked,
            "lost": lost,
            "median_save_s": round(statistics.median(saves), 3) if saves else None,
            "p95_save_s": quantile(0.95),
            "max_save_s": round(saves[-1], 3) if saves else None,
            "session_errors": [who.error for who in team if who.error],
            "median_run_s": {
                kind: round(statistics.median(times), 3) if times else None
                for kind in ("login", "choose", "edit")
                for times in [[t for who in team for t in who.runs[kind]]]
            },
            "server_cpu_s": round(server_cpu, 1),
            "client_cpu_s": round(client_cpu, 1),
            "cpu": cpu_name(),
            "cores": os.cpu_count(),
            "load_before": round(LOAD_BEFORE, 2),
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


LOAD_BEFORE = os.getloadavg()[0]
