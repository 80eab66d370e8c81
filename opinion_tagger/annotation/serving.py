"""``opinion-tagger annotate serve``: the Streamlit command line and environment of the
annotator page, and the server run as a child process that stops with this one.

The page listens on loopback (127.0.0.1) unless ``--host`` names another address; then
annotators log in with a password set outside the command line (``OPINION_TAGGER_PASSWORD``
or ``--password-file``), which reaches the page through its environment, never its
arguments.  Streamlit's XSRF protection stays on and uploads are limited in size.

The other serve options travel to the page through its environment too: the annotator fixed by
``--annotator`` (``OPINION_TAGGER_ANNOTATOR``), the reviewers named by ``--reviewers``
(``OPINION_TAGGER_REVIEWERS``, a JSON list; unset: everyone may review) and the directory of
model bundles of ``--models`` (``OPINION_TAGGER_MODELS``).  Streamlit's own messages (its welcome
banner, warnings such as "Did not auto detect external IP") are left out unless ``-v`` is given.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import signal
import subprocess
import sys
from functools import partial
from pathlib import Path

from opinion_tagger.errors import TaggerError

APP = Path(__file__).resolve().parent / "app.py"
PROJECT_ENV = "OPINION_TAGGER_PROJECT"
PASSWORD_ENV = "OPINION_TAGGER_PASSWORD"
ANNOTATOR_ENV = "OPINION_TAGGER_ANNOTATOR"
REVIEWERS_ENV = "OPINION_TAGGER_REVIEWERS"
MODELS_ENV = "OPINION_TAGGER_MODELS"
MAX_UPLOAD_MB = 50
FORWARDED = ("SIGTERM", "SIGINT", "SIGHUP")  # passed on to the server; a second one kills it
_NAME = re.compile(r"[^\x00-\x1f\x7f-\x9f]{1,64}")


def annotator_problem(name: str) -> str | None:
    """Why ``name`` cannot be an annotator's name (1 to 64 characters, no control characters), or None."""
    if not name.strip():
        return "an empty name"
    if not _NAME.fullmatch(name.strip()):
        return "a name is 1 to 64 characters, without control characters"
    return None


def parse_reviewers(text: str) -> list[str]:
    """``--reviewers``' names (comma-separated, each an annotator's name), in order, once each; a TaggerError
    naming the option when one is not a name or none is given."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise TaggerError(f"--reviewers {text!r}: give the reviewers' names, separated by commas")
    for name in names:
        problem = annotator_problem(name)
        if problem:
            raise TaggerError(f"--reviewers: {name[:70]!r}: {problem}")
    return list(dict.fromkeys(names))


def reviewers(environ=None) -> list[str] | None:
    """The annotators who may review (``--reviewers``, through the page's environment); None: everyone."""
    text = (os.environ if environ is None else environ).get(REVIEWERS_ENV)
    if not text:
        return None
    try:
        names = json.loads(text)
    except ValueError:
        names = None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise TaggerError(f"${REVIEWERS_ENV}: a JSON list of names is expected (annotate serve --reviewers writes it)")
    return names


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or ``localhost``) reaches this machine only."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def read_password(path: Path) -> str:
    """The password in the first line of ``path`` (its line ending dropped)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TaggerError(f"--password-file {path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise TaggerError(f"--password-file {path}: not UTF-8 text") from None
    password = text.splitlines()[0] if text else ""
    if not password:
        raise TaggerError(f"--password-file {path}: the first line is empty: write the password there")
    return password


def password_for(host: str, password_file: Path | None, environ) -> str | None:
    """The page's password (``--password-file``, else ``$OPINION_TAGGER_PASSWORD``); None when none is
    set, which only a loopback ``host`` allows."""
    password = read_password(password_file) if password_file is not None else environ.get(PASSWORD_ENV) or None
    if password is None and not is_loopback(host):
        raise TaggerError(
            f"--host {host!r} is not a loopback address: annotators must log in there; set their "
            f"password in ${PASSWORD_ENV} or with --password-file FILE"
        )
    return password


def streamlit_command(port: int, host: str, app: Path = APP, verbose: bool = False) -> list[str]:
    """Streamlit's command line for the page; Streamlit's own messages only when ``verbose`` (-v)."""
    quiet = [] if verbose else ["--logger.level", "error", "--logger.hideWelcomeMessage", "true"]
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(app),
        "--server.port",
        str(port),
        "--server.address",
        host,
        "--server.headless",
        "true",
        "--server.enableXsrfProtection",
        "true",
        "--server.maxUploadSize",
        str(MAX_UPLOAD_MB),
        "--client.toolbarMode",
        "minimal",
        "--browser.gatherUsageStats",
        "false",
        # a served page's code does not change: no file watcher (which read every module's path after each
        # run of each session's page) and no full garbage collection after each run: with many annotators at
        # once the two took much of the server's CPU (experiments/benchmarks/bench_annotation.py --annotators)
        "--server.fileWatcherType",
        "none",
        "--runner.postScriptGC",
        "false",
        *quiet,
    ]


def plan(args, environ) -> tuple[list[str], dict[str, str]]:
    """The server's command line and environment for ``annotate serve`` ``args``; a TaggerError
    (one line naming the option) when they are not allowed."""
    password = password_for(args.host, args.password_file, environ)
    env = {k: v for k, v in environ.items() if k not in (PASSWORD_ENV, ANNOTATOR_ENV, REVIEWERS_ENV, MODELS_ENV)}
    env[PROJECT_ENV] = str(args.project.resolve())
    if password is not None:
        env[PASSWORD_ENV] = password
    if args.annotator is not None:
        if password is not None:
            raise TaggerError(
                "--annotator: with a password login each annotator gives a name on the login form; "
                f"leave --annotator out (or {PASSWORD_ENV} unset on a loopback server)"
            )
        problem = annotator_problem(args.annotator)
        if problem:
            raise TaggerError(f"--annotator {args.annotator!r}: {problem}")
        env[ANNOTATOR_ENV] = args.annotator.strip()
    if getattr(args, "reviewers", None) is not None:
        env[REVIEWERS_ENV] = json.dumps(parse_reviewers(args.reviewers), ensure_ascii=False)
    if getattr(args, "models", None) is not None:
        if not args.models.is_dir():
            raise TaggerError(f"--models {args.models}: not a directory (a directory of model bundles is expected)")
        env[MODELS_ENV] = str(args.models.resolve())
    return streamlit_command(args.port, args.host, verbose=bool(getattr(args, "verbose", False))), env


# --------------------------------------------------------------------------- the child
def _die_with_parent(parent: int) -> None:
    """In the child before it runs the server (Linux): SIGTERM when the parent dies, however it dies."""
    import ctypes

    pr_set_pdeathsig = 1
    try:
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, int(signal.SIGTERM), 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before prctl took effect
        os.kill(os.getpid(), signal.SIGTERM)


def _exit_status(code: int) -> int:
    return 128 - code if code < 0 else code  # killed by signal N: 128 + N, as a shell reports it


def run(cmd: list[str], env: dict[str, str]) -> int:
    """Run the server as a child and wait for it.  SIGTERM, SIGINT and SIGHUP sent to this
    process are passed on to the child (a second one kills it); on Linux the child also gets
    SIGTERM if this process dies without passing anything on.  Returns the child's status, or 128 + N
    when signal N stopped it and it did not exit cleanly."""
    import threading

    state: dict = {"proc": None, "signals": []}

    def forward(signum, _frame):
        state["signals"].append(signum)
        proc = state["proc"]
        if proc is None or proc.poll() is not None:
            return
        if len(state["signals"]) == 1:
            proc.send_signal(signum)
        else:
            proc.kill()

    previous = {}
    if threading.current_thread() is threading.main_thread():
        for name in FORWARDED:
            sig = getattr(signal, name, None)
            if sig is not None:
                previous[sig] = signal.signal(sig, forward)
    linux = sys.platform.startswith("linux")
    try:
        proc = state["proc"] = subprocess.Popen(  # this process runs no other thread: preexec_fn is safe
            cmd, env=env, preexec_fn=partial(_die_with_parent, os.getpid()) if linux else None
        )  # noqa: PLW1509
        if state["signals"]:  # one came while the child was starting
            proc.send_signal(state["signals"][0])
        status = _exit_status(proc.wait())
        if state["signals"] and status != 0:  # stopped by a signal: report it as a shell does (128 + N), not
            return 128 + state["signals"][0]  # the server's own status when the signal interrupted its work
        return status
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
