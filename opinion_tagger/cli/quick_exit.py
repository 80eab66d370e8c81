"""Ending the ``opinion-tagger`` process without the interpreter's teardown.

At a normal exit Python joins the program's threads, runs the exit handlers (``atexit``), flushes standard
output and error, and then frees every object it holds, module by module: after tagging, ONNX Runtime's
sessions and spaCy's vocabulary, a noticeable share of a short command's time (experiments/README.md).  A
command needs nothing of that last step.  So ``run_and_exit`` registers one exit handler before the command
runs, which, the handlers running in reverse order of registration, runs after every handler the command
registers; the command's status then goes to ``sys.exit``, the ordinary way out.  That last handler shuts
logging down (``logging.shutdown``: its own handler, registered when ``logging`` was first imported, before the
command, would come after this one), flushes standard output and error, and ends the process with
``os._exit``, which skips the teardown.  A command that raises instead of returning a status exits as Python
does, teardown included."""

from __future__ import annotations

import atexit
import os
import sys
from collections.abc import Callable
from typing import NoReturn

BROKEN_PIPE = 141  # 128 + SIGPIPE: the reader of standard output went away


class _Ending:
    """The last exit handler: ends the process with the command's status once the command has returned one."""

    def __init__(self) -> None:
        self.status: int | None = None

    def __call__(self) -> None:
        if self.status is None:  # the command raised: the interpreter's own exit
            return
        status = self.status
        if "logging" in sys.modules:
            import logging

            logging.shutdown()
        try:
            sys.stdout.flush()
        except BrokenPipeError:  # the reader went away as the last lines were written
            status = BROKEN_PIPE
        except (OSError, ValueError):
            pass
        try:
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        os._exit(status)


def run_and_exit(command: Callable[[], int]) -> NoReturn:
    """Run ``command`` and exit with the status it returns: threads joined, every exit handler run, standard
    output and error flushed, the interpreter's teardown skipped."""
    ending = _Ending()
    atexit.register(ending)
    ending.status = command()
    sys.exit(ending.status)
