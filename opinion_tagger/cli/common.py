"""What several commands share: the parser's one-line usage errors, --help with defaults, argument types,
the --data and --backend options, the summary of skipped items and of scores.  Imports nothing heavy."""

from __future__ import annotations

import argparse
from pathlib import Path

from opinion_tagger.paths import bundled_models, default_datasplit

BUNDLED_NAMES = ", ".join(bundled_models()) or "none installed"


class Help(argparse.ArgumentDefaultsHelpFormatter):
    """Shows an option's default unless it is None (configuration options name their own default)."""

    def _get_help_string(self, action):
        return action.help if action.default is None else super()._get_help_string(action)


class Parser(argparse.ArgumentParser):
    """Usage errors in one line that names the option, then exit status 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def backend(text: str) -> str:
    """argparse type of --backend: ``numpy`` (the NumPy runtime that ONNX Runtime replaced) and ``auto`` (which
    once fell back to Keras) are onnx."""
    return "onnx" if text in ("numpy", "auto") else text


def positive_int(text: str) -> int:
    """argparse type: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not a positive integer")
    return value


def add_backend_arg(p: argparse.ArgumentParser, help: str) -> None:
    p.add_argument("--backend", choices=("onnx", "keras"), default="onnx", type=backend, help=help)


def add_precision_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--precision",
        choices=("fp32", "bf16"),
        default="fp32",
        help="fp32 (default): ONNX Runtime; bf16: OpenVINO in bfloat16, faster on a CPU with native bf16 "
        "(AVX512_BF16 or AMX; refused on any other), tags within a few tenths of F1 (the bf16 extra)",
    )


def add_data_args(p: argparse.ArgumentParser, required: bool) -> None:
    p.add_argument(
        "--data",
        nargs=2,
        metavar=("SOURCE", "PATH"),
        required=required,
        help="mpqa DIR (raw MPQA 2.0, spaCy tokens), reference DIR (Irsoy & Cardie's "
        "files, PTB tokens), conll FILE (from corpus convert) or annotations PROJECT "
        "(the accepted documents of an annotation project; no fold: every 10th is dev)",
    )
    p.add_argument(
        "--datasplit",
        type=Path,
        default=default_datasplit(),
        help="directory with the paper's doclist and fold files (default: %(default)s)",
    )
    p.add_argument(
        "--doclist",
        type=Path,
        metavar="FILE",
        help="only the documents this list names, relative to the data's directory as MPQA's doclist files do "
        "(a path, or a file in the MPQA directory); without --fold: these documents, no split",
    )
    p.add_argument(
        "--fold",
        type=int,
        choices=range(10),
        metavar="0..9",
        help="fold of the paper's split (default: 0, or none with --doclist)",
    )


def problems_line(problems) -> str:
    """The summary of skipped or repaired items, pointing to -v when there are any."""
    if not problems.messages:
        return problems.summary()
    return f"{problems.summary()} (opinion-tagger -v ... lists each)"


def headline_scores(report: dict) -> dict:
    """Binary, proportional and exact scores per type, without the rest of a scoring report."""
    return {t: {k: v for k, v in r.items() if k in ("binary", "proportional", "exact")} for t, r in report.items()}
