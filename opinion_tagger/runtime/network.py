"""A bundle's network, whatever computes it: the ``Network`` protocol and the back ends that load one.

``onnx`` (ONNX Runtime, ``opinion_tagger.runtime.onnx_network``) is the runtime's own and the default.  Any
other back end is a plug-in: an entry of the ``opinion_tagger.backends`` entry-point group, a function
``load(path, config, vocab, meta, threads) -> Network``.  The package declares one, ``keras``
(``opinion_tagger.model.keras_backend``, the ``train`` extra: the trained Keras network, on any Keras back
end); the runtime never imports it.
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from opinion_tagger.config import TaggerConfig
from opinion_tagger.errors import BundleError, TaggerError
from opinion_tagger.runtime.bundle import onnx_supported
from opinion_tagger.runtime.vocabulary import Vocabulary

DEFAULT_BACKEND = "onnx"
# the arithmetic of the bundle's model.onnx: fp32 in ONNX Runtime (the default), or bf16 in the back end that
# runs it in bf16: ``openvino`` (opinion_tagger.plugins.openvino_backend, the bf16 extra: a plug-in, so that
# nothing of the runtime imports OpenVINO unless asked)
PRECISIONS = ("fp32", "bf16")
DEFAULT_PRECISION = "fp32"
PRECISION_BACKENDS = {"bf16": "openvino"}
ENTRY_POINTS = "opinion_tagger.backends"
# the extra that provides each back end the package declares
BACKEND_EXTRAS = {"keras": "train", "openvino": "bf16"}


class Network(Protocol):
    """What the sentence tagger needs of a network."""

    # inputs padded to a few fixed lengths (a compiled graph per shape) rather than to the batch's longest
    fixed_lengths: bool

    def forward(self, inputs: Any) -> dict[str, np.ndarray]:
        """Per type, [B, T, 3] softmax probabilities or CRF emission scores; ``inputs``: the word-id array, or
        a dict of arrays (``opinion_tagger.runtime.batching.network_inputs``)."""
        ...

    def crf_params(self, typ: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """A CRF head's transition [3, 3], start [3] and end [3] scores."""
        ...


def backends() -> tuple[str, ...]:
    """The back ends this installation can name: onnx and every registered plug-in."""
    return (DEFAULT_BACKEND, *sorted({e.name for e in metadata.entry_points(group=ENTRY_POINTS)} | set(BACKEND_EXTRAS)))


def _check_onnx(path: Path, config: TaggerConfig, meta: dict) -> None:
    if "onnx" not in meta:
        why = onnx_supported(config)
        if why:
            raise BundleError(f"{path}: the network cannot run in ONNX Runtime ({why}): use --backend keras")
        raise BundleError(
            f"{path}: no model.onnx: add it with `opinion-tagger export-onnx {path}` "
            f"(needs the train extra: pip install 'opinion-tagger[train]')"
        )


def load_network(
    path: Path,
    config: TaggerConfig,
    vocab: Vocabulary,
    meta: dict,
    backend: str = DEFAULT_BACKEND,
    threads=None,
    precision: str = DEFAULT_PRECISION,
) -> Network:
    """The network of a checked bundle (``load_bundle_files``) on ``backend`` at ``precision``."""
    if precision not in PRECISIONS:
        raise TaggerError(f"unknown precision {precision!r}: one of {', '.join(PRECISIONS)}")
    if precision != DEFAULT_PRECISION and backend != DEFAULT_BACKEND:
        raise TaggerError(f"--precision {precision} runs the bundle's model.onnx: give it with --backend onnx")
    if backend == DEFAULT_BACKEND and precision != DEFAULT_PRECISION:
        _check_onnx(path, config, meta)
        backend = PRECISION_BACKENDS[precision]
    if backend == DEFAULT_BACKEND:
        _check_onnx(path, config, meta)
        from opinion_tagger.runtime.onnx_network import OnnxNetwork

        return OnnxNetwork(path, meta["onnx"], threads)
    found = [e for e in metadata.entry_points(group=ENTRY_POINTS) if e.name == backend]
    if not found:
        raise TaggerError(f"unknown back end {backend!r}: one of {', '.join(backends())}")
    try:
        load = found[0].load()
    except ImportError as exc:
        extra = BACKEND_EXTRAS.get(backend, backend)
        raise TaggerError(
            f"the {backend} back end needs the {extra} extra ({exc.name or exc} is not installed): "
            f"pip install 'opinion-tagger[{extra}]'"
        ) from None
    return load(path, config, vocab, meta, threads)
