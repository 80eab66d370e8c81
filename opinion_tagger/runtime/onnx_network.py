"""The network of a bundle in ONNX Runtime: how every bundle is run when tagging.

Needs onnxruntime and NumPy (and, for a model with the MiniLM encoder, the pinned weights package and
safetensors), never TensorFlow or Keras, so a process that tags starts without loading them.  The bundle's
``model.onnx`` is written by ``opinion_tagger.export.onnx_export`` when the bundle is saved; meta.json's ``onnx``
entry names its inputs and outputs, its CRF transitions, and the *external* weights that the file does
not hold, which are supplied here when the session is created:

- an encoder's name (``minilm``, ``mpnet``: ``opinion_tagger.encoders``): a tensor of its base weights'
  ``model.safetensors`` (``opinion_tagger.runtime.base_weights``, checked by sha256 first), transposed where the
  entry says so and reshaped;
- ``glove``: the word-vector table rebuilt from the GloVe package and the bundle's ``glove_rows.npz``
  (``opinion_tagger.runtime.word_table.table_from_delta``, checked by sha256).

``forward`` takes the same inputs as the Keras network (``opinion_tagger.runtime.batching.network_inputs``) and
gives the same outputs: per type, [B, T, 3] softmax probabilities or CRF emission scores (and with frame heads
the recurrent states, ``states``).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from opinion_tagger.encoders import ENCODERS, Encoder
from opinion_tagger.errors import BundleError, TaggerError
from opinion_tagger.runtime.base_weights import locate
from opinion_tagger.runtime.frame_heads import STATES
from opinion_tagger.runtime.word_table import GLOVE_SOURCE, external_table


def default_threads() -> int:
    """Threads for one session: ``$OPINION_TAGGER_THREADS``, else the cores this process may use."""
    env = os.environ.get("OPINION_TAGGER_THREADS")
    if env and env.isdigit() and int(env) > 0:
        return int(env)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def _base_arrays(enc: Encoder, entries: dict[str, dict], file: Path) -> dict[str, np.ndarray]:
    """The external weights ``entries`` that come from ``enc``'s base weights, rebuilt (transposed, reshaped)."""
    try:
        from safetensors import safe_open
    except ImportError:
        raise BundleError(f"{file}: this model needs the safetensors package: pip install safetensors") from None
    try:
        path = locate(enc)
    except TaggerError as exc:
        raise BundleError(str(exc)) from None
    out = {}
    with safe_open(str(path / "model.safetensors"), framework="numpy") as st:
        names = set(st.keys())
        for key, e in entries.items():
            if e["tensor"] not in names:
                raise BundleError(f"{file}: the {enc.title} base weights have no tensor {e['tensor']}")
            t = st.get_tensor(e["tensor"])
            out[key] = np.ascontiguousarray((t.T if e["transpose"] else t).reshape(e["shape"]))
    return out


def external_arrays(bundle: Path, onnx_meta: dict) -> dict[str, np.ndarray]:
    """The weights ``model.onnx`` leaves out, by initializer name, rebuilt and checked."""
    externals = onnx_meta.get("externals", {})
    out = {}
    for enc in ENCODERS.values():
        entries = {k: e for k, e in externals.items() if e["source"] == enc.name}
        if entries:
            out.update(_base_arrays(enc, entries, bundle / "model.onnx"))
    for key, e in externals.items():
        if e["source"] == GLOVE_SOURCE:
            out[key] = external_table(bundle, e)
        elif e["source"] not in ENCODERS:
            raise BundleError(f"{bundle / 'meta.json'}: unknown source {e['source']!r} of weight {key}")
    return out


def crf_params(onnx_meta: dict, typ: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A CRF head's transition, start and end scores, as meta.json's ``onnx`` entry records them."""
    crf = onnx_meta["crf"][typ]
    transitions, start, end = (np.asarray(crf[k], dtype=np.float32) for k in ("transitions", "start", "end"))
    return transitions, start, end


class OnnxNetwork:
    """A bundle's ``model.onnx`` in an ONNX Runtime session (CPU; CUDA where onnxruntime-gpu sees a GPU)."""

    fixed_lengths = False  # any input length: no padding beyond a batch's longest sentence

    def __init__(self, bundle: str | Path, onnx_meta: dict, threads: int | None = None):
        import onnxruntime as ort

        bundle = Path(bundle)
        self.meta = onnx_meta
        file = bundle / onnx_meta.get("file", "model.onnx")
        arrays = external_arrays(bundle, onnx_meta)
        options = ort.SessionOptions()
        options.log_severity_level = 3  # errors only: no warnings on standard error
        options.intra_op_num_threads = threads or default_threads()
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        if arrays:
            names = list(arrays)
            options.add_external_initializers(names, [ort.OrtValue.ortvalue_from_numpy(arrays[n]) for n in names])
        self._keep = arrays  # the session reads these buffers: keep them alive as long as it
        available = ort.get_available_providers()
        providers = [p for p in ("CUDAExecutionProvider", "CPUExecutionProvider") if p in available]
        try:
            self.session = ort.InferenceSession(str(file), options, providers=providers)
        except Exception as exc:  # onnxruntime raises its own exception types for a damaged file
            raise BundleError(f"{file}: cannot load the network: {str(exc).splitlines()[0]}") from None
        self.inputs = [i.name for i in self.session.get_inputs()]
        self.outputs = [o.name for o in self.session.get_outputs()]

    def forward(self, inputs) -> dict[str, np.ndarray]:
        """``inputs``: the word-id array, or a dict of arrays (``features.network_inputs``)."""
        if not isinstance(inputs, dict):
            inputs = {"words": inputs}
        feed = {k: np.ascontiguousarray(inputs[k], dtype=np.int32) for k in self.inputs}
        return {
            t: out if t == STATES else out[..., :3]
            for t, out in zip(self.outputs, self.session.run(self.outputs, feed))
        }

    def crf_params(self, typ: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return crf_params(self.meta, typ)
