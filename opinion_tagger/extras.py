"""The optional parts of the installation (pip extras) and the one-line error of a command whose extra is
missing.

The core installation tags and evaluates (ONNX Runtime, spaCy, tokenizers, NumPy); the rest comes by extra:
``train`` (TensorFlow, Keras, keras-hub, tf2onnx, onnx, python-crfsuite: training, ``export-onnx``,
``--backend keras``), ``fast`` (JAX and optax: the fast trainer), ``annotate`` (Streamlit: the annotator's
page), ``ray`` (``tag --engine ray``), ``report`` (matplotlib: the plots of the experiment report and of
``summarize``'s report), ``all``.
"""

from __future__ import annotations

import importlib.util

from opinion_tagger.errors import TaggerError

# the modules each extra brings, by import name
EXTRAS: dict[str, tuple[str, ...]] = {
    "train": ("tensorflow", "keras", "keras_hub", "tf2onnx", "onnx", "pycrfsuite"),
    "fast": ("jax", "optax"),
    "bf16": ("openvino", "onnx"),
    "annotate": ("streamlit",),
    "ray": ("ray",),
    "report": ("matplotlib",),
}


class MissingExtra(TaggerError):
    """A command or back end whose optional dependencies are not installed."""


def missing(extra: str) -> list[str]:
    """The modules of ``extra`` that cannot be imported here."""
    return [m for m in EXTRAS[extra] if importlib.util.find_spec(m) is None]


def missing_line(extra: str, what: str, absent: list[str]) -> str:
    """One line: ``what`` needs ``extra``, whose modules ``absent`` are not installed, and the pip command."""
    return f"{what} needs the {extra} extra ({', '.join(absent)} not installed): pip install 'opinion-tagger[{extra}]'"


def require(extra: str, what: str) -> None:
    """Raise ``MissingExtra`` (``missing_line``) unless every module of ``extra`` is installed."""
    absent = missing(extra)
    if absent:
        raise MissingExtra(missing_line(extra, what, absent))
