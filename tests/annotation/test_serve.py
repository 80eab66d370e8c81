"""``opinion-tagger annotate serve``: the Streamlit command it builds (loopback by default, a
password for any other address, never on the command line), and the real server: it listens
on loopback only, stops when its parent is stopped, and dies with a parent that is killed."""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from opinion_tagger.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
LINUX = sys.platform.startswith("linux") and Path("/proc/self/stat").exists()


def _plan(tmp_path, *argv, environ=None):
    from opinion_tagger.annotation import serving

    args = build_parser().parse_args(["annotate", "serve", str(tmp_path / "p.sqlite"), *argv])
    return serving.plan(args, {} if environ is None else environ)


def _option(cmd, name):
    return cmd[cmd.index(name) + 1]


def _one_line_error(capsys, *parts):
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for part in parts:
        assert part in err, err


# --------------------------------------------------------------------------- the command
def test_the_default_command_listens_on_loopback_without_a_deploy_button(tmp_path):
    cmd, env = _plan(tmp_path, environ={"PATH": "/bin", "OPINION_TAGGER_PASSWORD": ""})
    assert cmd[:4] == [sys.executable, "-m", "streamlit", "run"]
    assert _option(cmd, "--server.address") == "127.0.0.1"
    assert _option(cmd, "--server.enableXsrfProtection") == "true"
    assert _option(cmd, "--server.maxUploadSize") == "50"
    assert _option(cmd, "--client.toolbarMode") == "minimal"
    assert _option(cmd, "--server.port") == "8501"
    assert _option(cmd, "--server.fileWatcherType") == "none" and _option(cmd, "--runner.postScriptGC") == "false"
    assert env["OPINION_TAGGER_PROJECT"] == str((tmp_path / "p.sqlite").resolve()) and env["PATH"] == "/bin"
    assert "OPINION_TAGGER_PASSWORD" not in env and "OPINION_TAGGER_ANNOTATOR" not in env


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.7", "annotate.example.org", ""])
def test_a_non_loopback_host_needs_a_password(tmp_path, capsys, monkeypatch, host):
    monkeypatch.delenv("OPINION_TAGGER_PASSWORD", raising=False)
    assert main(["annotate", "serve", str(tmp_path / "p.sqlite"), "--host", host]) == 2
    _one_line_error(capsys, f"--host {host!r}", "OPINION_TAGGER_PASSWORD", "--password-file")
    assert not (tmp_path / "p.sqlite").exists()  # refused before anything is made or started


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "localhost", "::1"])
def test_loopback_hosts_need_no_password(tmp_path, host):
    cmd, env = _plan(tmp_path, "--host", host)
    assert _option(cmd, "--server.address") == host and "OPINION_TAGGER_PASSWORD" not in env


def test_the_password_reaches_the_page_through_its_environment_only(tmp_path, capsys):
    secret = tmp_path / "secret"
    secret.write_text("correct horse battery\n", encoding="utf-8")
    cmd, env = _plan(tmp_path, "--host", "0.0.0.0", "--password-file", str(secret))
    assert env["OPINION_TAGGER_PASSWORD"] == "correct horse battery"
    assert not any("correct horse" in part for part in cmd)
    cmd, env = _plan(tmp_path, "--host", "0.0.0.0", environ={"OPINION_TAGGER_PASSWORD": "from the environment"})
    assert env["OPINION_TAGGER_PASSWORD"] == "from the environment" and "from the environment" not in cmd
    for bad, why in ((tmp_path / "missing", "cannot read"), (tmp_path / "empty", "empty")):
        (tmp_path / "empty").write_text("\n")
        assert (
            main(["annotate", "serve", str(tmp_path / "p.sqlite"), "--host", "0.0.0.0", "--password-file", str(bad)])
            == 2
        )
        _one_line_error(capsys, f"--password-file {bad}", why)


def test_annotator_fixes_the_name_on_a_loopback_server(tmp_path, capsys, monkeypatch):
    _, env = _plan(tmp_path, "--annotator", "Ana López")
    assert env["OPINION_TAGGER_ANNOTATOR"] == "Ana López"
    for bad in ("", "a\nb", "x" * 65):
        assert main(["annotate", "serve", str(tmp_path / "p.sqlite"), "--annotator", bad]) == 2
        _one_line_error(capsys, "--annotator")
    monkeypatch.setenv("OPINION_TAGGER_PASSWORD", "pw")  # with a login, each annotator gives a name there
    assert main(["annotate", "serve", str(tmp_path / "p.sqlite"), "--annotator", "ana"]) == 2
    _one_line_error(capsys, "--annotator", "login")


def test_reviewers_reach_the_page_through_its_environment(tmp_path, capsys):
    import json

    from opinion_tagger.annotation import serving

    _, env = _plan(tmp_path, "--reviewers", "rita, Ana López,rita", environ={"OPINION_TAGGER_REVIEWERS": '["x"]'})
    assert json.loads(env["OPINION_TAGGER_REVIEWERS"]) == ["rita", "Ana López"]
    assert serving.reviewers(env) == ["rita", "Ana López"]
    _, env = _plan(tmp_path, environ={"OPINION_TAGGER_REVIEWERS": '["x"]'})  # not the caller's: everyone reviews
    assert "OPINION_TAGGER_REVIEWERS" not in env and serving.reviewers(env) is None
    for bad, why in ((" , ", "give the reviewers' names"), ("rita,a\tb", "control characters"), ("x" * 65, "64")):
        assert main(["annotate", "serve", str(tmp_path / "p.sqlite"), "--reviewers", bad]) == 2
        _one_line_error(capsys, "--reviewers", why)
    assert not (tmp_path / "p.sqlite").exists()


def test_a_models_directory_reaches_the_page(tmp_path, capsys):
    (tmp_path / "models").mkdir()
    _, env = _plan(tmp_path, "--models", str(tmp_path / "models"))
    assert env["OPINION_TAGGER_MODELS"] == str((tmp_path / "models").resolve())
    assert main(["annotate", "serve", str(tmp_path / "p.sqlite"), "--models", str(tmp_path / "none")]) == 2
    _one_line_error(capsys, f"--models {tmp_path / 'none'}", "not a directory")


def test_streamlits_own_messages_only_with_verbose(tmp_path):
    quiet, _ = _plan(tmp_path)
    assert _option(quiet, "--logger.level") == "error" and _option(quiet, "--logger.hideWelcomeMessage") == "true"
    from opinion_tagger.annotation import serving

    args = build_parser().parse_args(["-v", "annotate", "serve", str(tmp_path / "p.sqlite")])
    loud, _ = serving.plan(args, {})
    assert "--logger.level" not in loud and "--logger.hideWelcomeMessage" not in loud


# --------------------------------------------------------------------------- the project served
@pytest.fixture
def started(monkeypatch):
    """``annotate serve``'s server as a stub: the command lines it would have run."""
    from opinion_tagger.annotation import serving

    calls = []
    monkeypatch.setattr(serving, "run", lambda cmd, env: calls.append((cmd, env)) or 0)
    return calls


def test_a_missing_project_is_refused_without_create(tmp_path, capsys, started):
    typo = tmp_path / "typo.sqlite"
    assert main(["annotate", "serve", str(typo)]) == 2
    _one_line_error(capsys, str(typo), "no such project file", "annotate import", "--create")
    assert not typo.exists() and started == []  # nothing made, nothing started


def test_create_starts_a_new_empty_project(tmp_path, capsys, started):
    from opinion_tagger.annotation.store import Project

    new = tmp_path / "sub" / "new.sqlite"
    assert main(["annotate", "serve", str(new), "--create"]) == 0
    assert len(started) == 1 and started[0][1]["OPINION_TAGGER_PROJECT"] == str(new.resolve())
    with Project(new) as project:
        assert sum(project.counts().values()) == 0
    assert f"annotating {new} at http://127.0.0.1:8501" in capsys.readouterr().err


def test_an_existing_project_is_served_as_it_is(tmp_path, started):
    from opinion_tagger.annotation.store import Project

    path, doc = tmp_path / "study.sqlite", tmp_path / "a.txt"
    doc.write_text("The senator strongly condemned the decision.", encoding="utf-8")
    assert main(["annotate", "import", str(path), str(doc), "--model", "none"]) == 0  # import makes the project
    with Project(path) as project:
        before = project.counts()
    assert sum(before.values()) == 1
    for argv in ([], ["--create"]):  # --create changes nothing on a project that exists
        assert main(["annotate", "serve", str(path), *argv]) == 0
        with Project(path) as project:
            assert project.counts() == before
    assert len(started) == 2


def test_a_directory_is_not_a_project(tmp_path, capsys, started):
    assert main(["annotate", "serve", str(tmp_path), "--create"]) == 2
    _one_line_error(capsys, str(tmp_path), "not a file")
    assert started == []


# --------------------------------------------------------------------------- the real server
needs_linux = pytest.mark.skipif(not LINUX, reason="reads processes and sockets from Linux's /proc")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (state, ppid, ...); None when gone."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _children(pid: int) -> list[int]:
    kids = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            fields = _stat(int(d.name))
            if fields and int(fields[1]) == pid:
                kids.append(int(d.name))
    return kids


def _alive(pid: int) -> bool:
    fields = _stat(pid)
    return fields is not None and fields[0] not in ("Z", "X")  # a zombie has stopped


def _listening(port: int) -> set[str]:
    """The local addresses (hex, as in /proc/net/tcp*) listening on ``port``."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            address, hexport = local.split(":")
            if state == "0A" and int(hexport, 16) == port:
                found.add(address)
    return found


@pytest.fixture
def serve(tmp_path):
    """Start ``opinion-tagger annotate serve`` on a free port; wait until the port answers."""
    started = []

    def start():
        port = _free_port()
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        env.pop("OPINION_TAGGER_PASSWORD", None)
        with open(tmp_path / "serve.log", "wb") as log:  # an unread pipe would fill up and block the server
            proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "opinion_tagger",
                    "annotate",
                    "serve",
                    str(tmp_path / "p.sqlite"),
                    "--create",
                    "--port",
                    str(port),
                ],
                cwd=tmp_path,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
            )
        started.append((proc, []))
        deadline = time.monotonic() + 120
        while not _answers(port):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail("the server did not start:\n" + (tmp_path / "serve.log").read_text(errors="replace"))
            time.sleep(0.3)
        kids = _children(proc.pid)
        assert kids, "the server runs in a child process"
        started[-1][1].extend(kids)
        return proc, port, kids

    yield start
    for proc, kids in started:  # whatever the test left running
        for kid in kids:
            if _alive(kid):
                os.kill(kid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _stops(port: int, kids: list[int], within: float = 15) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not _answers(port) and not any(_alive(k) for k in kids):
            return True
        time.sleep(0.2)
    return False


@needs_linux
@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=lambda s: s.name)
def test_a_stopped_parent_stops_its_server(serve, signum):
    proc, port, kids = serve()
    if signum == signal.SIGTERM:  # and a real start listens on loopback only, not on every interface
        assert _listening(port) == {"0100007F"}, _listening(port)
    proc.send_signal(signum)
    assert _stops(port, kids), "the server still answers (or its process lives) after the parent was stopped"
    assert proc.wait(timeout=15) in (0, 128 + signum)  # Streamlit stops cleanly on SIGTERM and SIGINT
    assert _children(proc.pid) == []


@needs_linux
@pytest.mark.slow
def test_a_server_beyond_loopback_keeps_streamlits_messages_off_standard_error(tmp_path):
    """Serving on every interface, Streamlit looks for this machine's external address and, where it finds
    none, warns "Did not auto detect external IP" on standard error; without -v only serve's own line is there."""
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    env["OPINION_TAGGER_PASSWORD"] = "correct horse"
    cmd = [sys.executable, "-m", "opinion_tagger", "annotate", "serve", str(tmp_path / "p.sqlite"), "--create"]
    with open(tmp_path / "err", "wb") as err, open(tmp_path / "out", "wb") as out:
        proc = subprocess.Popen([*cmd, "--host", "0.0.0.0", "--port", str(port)], stdout=out, stderr=err, env=env)
    try:
        deadline = time.monotonic() + 120
        while not _answers(port):
            assert proc.poll() is None and time.monotonic() < deadline, (tmp_path / "err").read_text()
            time.sleep(0.3)
        time.sleep(4)  # the external address is looked for (1 s per try) after the server starts
    finally:
        kids = _children(proc.pid)
        proc.terminate()
        proc.wait(timeout=30)
        for kid in kids:
            if _alive(kid):
                os.kill(kid, signal.SIGKILL)
    line = f"annotating {tmp_path / 'p.sqlite'} at http://0.0.0.0:{port}; annotators log in with the password\n"
    assert (tmp_path / "err").read_text() == line
    assert "You can now view" not in (tmp_path / "out").read_text()  # nor Streamlit's banner: serve's line has it


@needs_linux
@pytest.mark.slow
def test_a_killed_parent_takes_its_server_along(serve):
    proc, port, kids = serve()
    proc.kill()  # no chance to forward anything: the kernel tells the child (PR_SET_PDEATHSIG)
    proc.wait(timeout=15)
    assert _stops(port, kids), "the server outlived its killed parent"


@pytest.mark.integration
@pytest.mark.parametrize("child_exit, expected", [(0, 0), (1, 128 + signal.SIGINT)])
def test_a_signal_that_stops_the_server_is_the_status(child_exit, expected):
    """SIGINT to the parent reaches the child; a child that exits cleanly gives 0, one that stops with an error
    (as Streamlit may when the signal interrupts its work) gives 128 + the signal, as a shell reports it."""
    import threading

    from opinion_tagger.annotation.serving import run

    child = (
        "import signal, sys, time\n"
        f"signal.signal(signal.SIGINT, lambda *a: sys.exit({child_exit}))\n"
        "time.sleep(30)\n"
        "sys.exit(3)\n"
    )
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        assert run([sys.executable, "-c", child], dict(os.environ)) == expected
    finally:
        timer.cancel()
