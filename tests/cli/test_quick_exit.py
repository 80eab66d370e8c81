"""How ``opinion-tagger`` ends (``opinion_tagger.cli.console``): with the command's status, every exit handler
run, logging shut down and standard output and error flushed, but without the interpreter's teardown; a
command that raises ends as Python ends."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]

PROGRAM = """
import atexit, logging, logging.handlers, sys
from opinion_tagger import cli

class Torn:
    def __del__(self):
        print("torn down", file=sys.stderr)

kept = Torn()  # freed only by the interpreter's teardown

def command():
    atexit.register(lambda: print("handler ran", file=sys.stderr))  # registered while the command runs
    held = logging.handlers.MemoryHandler(1000, target=logging.StreamHandler(sys.stderr))
    logging.getLogger("held").addHandler(held)
    logging.getLogger("held").warning("logged")  # held in memory until logging shuts down
    sys.stdout.write("written, not flushed")  # a pipe: block-buffered, no newline
    if sys.argv[1] == "raise":
        raise RuntimeError("the command failed")
    return 3

cli.main = command
cli.console()
"""


def run(mode: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", PROGRAM, mode], capture_output=True, text=True, env=env, timeout=120)


def test_the_program_exits_with_the_status_after_the_handlers_and_flushes_without_teardown():
    done = run("return")
    assert done.returncode == 3
    assert done.stdout == "written, not flushed"
    assert done.stderr.splitlines() == ["handler ran", "logged"]  # "torn down" never: no teardown


def test_a_command_that_raises_ends_as_python_ends():
    done = run("raise")
    assert done.returncode == 1 and "RuntimeError: the command failed" in done.stderr
    assert done.stdout == "written, not flushed"
    assert "handler ran" in done.stderr and "logged" in done.stderr and "torn down" in done.stderr
