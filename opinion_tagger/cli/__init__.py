"""``opinion-tagger``: the command-line interface, a thin layer over the library.

A module per command group adds its parser and runs it over the library: ``corpus`` (stats, convert, agreement),
``train`` (its configuration options made in ``options``, one per field of ``TaggerConfig``, named from the field's
path), ``evaluate``, ``tag``, ``summarize``, ``annotate``, ``models`` (download, export-onnx); ``common`` holds what
several share.  Building the parser imports only light modules; a command imports what it runs (a network, an engine,
a trainer) when it runs, so ``tag`` never loads TensorFlow.  ``main`` maps errors to exit statuses: a ``TaggerError``
or ``OSError`` is one line and 2, a closed pipe 141, usage errors 2 (argparse); ``console``, the program, ends the
process without the interpreter's teardown (``quick_exit``).
"""

from __future__ import annotations

import logging
import os
import sys
from typing import NoReturn

from opinion_tagger.cli import adapt, annotate, corpus, evaluate, models, summarize, tag, train
from opinion_tagger.cli.common import Parser
from opinion_tagger.cli.quick_exit import BROKEN_PIPE, run_and_exit
from opinion_tagger.errors import TaggerError


def build_parser() -> Parser:
    parser = Parser(
        prog="opinion-tagger", description="Find opinion expressions (DSE, ESE) with deep bidirectional RNNs."
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="print every skipped item")
    sub = parser.add_subparsers(dest="command", required=True)
    corpus.add_parser(sub)
    train.add_parser(sub)
    adapt.add_parser(sub)
    evaluate.add_parser(sub)
    models.add_parsers(sub)
    tag.add_parser(sub)
    summarize.add_parser(sub)
    annotate.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING if args.verbose else logging.ERROR, format="%(levelname)s: %(message)s")
    try:
        return args.func(args)
    except TaggerError as exc:
        print(f"opinion-tagger: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader went away (e.g. | head): stop quietly, as Unix tools do
        _silence_stdout()
        return BROKEN_PIPE  # the status of a tool the signal ended
    except OSError as exc:  # e.g. the disk filled up while writing
        print(
            f"opinion-tagger: error: {exc.filename or ''}{': ' if exc.filename else ''}{exc.strerror or exc}",
            file=sys.stderr,
        )
        return 2


def console() -> NoReturn:
    """The ``opinion-tagger`` program (and ``python -m opinion_tagger``): ``main``, then the exit handlers and a
    flush of standard output and error as at any exit, without the interpreter's teardown of every object
    (``opinion_tagger.cli.quick_exit``)."""
    run_and_exit(main)


def _silence_stdout() -> None:
    """Point standard output at /dev/null so that flushing it at exit raises nothing."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
