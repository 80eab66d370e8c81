"""Tagging in bfloat16: a bundle's ONNX graph compiled by OpenVINO's CPU plug-in at bf16 (``--precision bf16``).

The same graph as ``onnx_network`` runs, its external weights filled in (``external_arrays``, checked by
sha256), compiled with OpenVINO's ``INFERENCE_PRECISION_HINT``.  bf16 needs a CPU that computes bf16 dot
products natively (AVX512_BF16, AMX): on any other OpenVINO would emulate it, more slowly than fp32, so such
a CPU is refused with one line instead.  The compiled network is cached (``$OPINION_TAGGER_CACHE/openvino``),
keyed by the sha256 of the bundle's manifest, its ONNX entry, the base weights' record, the precision and
OpenVINO's version, and the blob itself checked by its sha256 before it is used: a second start reads the blob
instead of rebuilding and compiling the graph.  Needs the ``bf16`` extra (OpenVINO and onnx).
"""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import numpy as np

from opinion_tagger.errors import BundleError, TaggerError
from opinion_tagger.extras import require
from opinion_tagger.runtime.base_weights import cache_root
from opinion_tagger.runtime.frame_heads import STATES
from opinion_tagger.runtime.onnx_network import crf_params, default_threads, external_arrays
from opinion_tagger.storage import atomic_write_bytes, atomic_write_text

EXTRA = "bf16"
# the inputs whose second axis is the sentence's words, and those whose second axis is its wordpieces
# (``opinion_tagger.runtime.batching.network_inputs``), with the wordpieces' mask
WORD_AXIS = ("words", "word_starts")
PIECE_AXIS = ("token_ids", "segment_ids", "padding_mask")
PIECE_MASK = "padding_mask"


def _openvino():
    require(EXTRA, "--precision bf16")  # OpenVINO, and onnx, which makes the graph whole before OpenVINO reads it
    import openvino as ov

    return ov


def native_bf16(core) -> bool:
    """Whether OpenVINO finds bf16 units on this CPU (``OPTIMIZATION_CAPABILITIES`` names BF16)."""
    return "BF16" in core.get_property("CPU", "OPTIMIZATION_CAPABILITIES")


def refuse_without_bf16(core) -> None:
    if not native_bf16(core):
        name = core.get_property("CPU", "FULL_DEVICE_NAME")
        raise TaggerError(
            f"--precision bf16 needs a CPU with native bf16 (AVX512_BF16 or AMX); this one ({name}) has none "
            "and would only emulate it, more slowly than fp32: use --precision fp32"
        )


def cache_key(meta: dict, hint: str, version: str) -> str:
    """What the compiled network depends on, hashed: the bundle's files (their sha256 in the manifest), its ONNX
    entry (inputs, outputs, externals), the base weights it names, the precision and OpenVINO's version."""
    record = {k: meta.get(k) for k in ("manifest", "onnx", "base_weights")}
    text = json.dumps({**record, "precision": hint, "openvino": version}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def whole_graph(bundle: Path, onnx_meta: dict) -> bytes:
    """``model.onnx`` with its external weights written in (OpenVINO reads no initializer given at run time)."""
    import onnx

    file = bundle / onnx_meta.get("file", "model.onnx")
    try:
        proto = onnx.load(str(file), load_external_data=False)
    except Exception as exc:  # onnx raises protobuf's errors for a damaged file
        raise BundleError(f"{file}: cannot read the network: {str(exc).splitlines()[0]}") from None
    arrays = external_arrays(bundle, onnx_meta)
    for tensor in proto.graph.initializer:
        if tensor.name in arrays:
            tensor.CopyFrom(onnx.numpy_helper.from_array(arrays[tensor.name], tensor.name))
    return proto.SerializeToString()


def load(path: Path, config, vocab, meta: dict, threads: int | None) -> OpenVinoNetwork:
    """The ``openvino`` back end (an entry point of ``opinion_tagger.backends``): the network in bf16."""
    return OpenVinoNetwork(path, meta, threads, "bf16")


class OpenVinoNetwork:
    """A bundle's network compiled by OpenVINO's CPU plug-in at ``precision`` (``bf16``; ``f32`` to check it)."""

    fixed_lengths = False  # any input length, as in ONNX Runtime

    def __init__(self, bundle: str | Path, meta: dict, threads: int | None = None, precision: str = "bf16"):
        ov = _openvino()
        core = ov.Core()
        if precision == "bf16":
            refuse_without_bf16(core)
        bundle = Path(bundle)
        self.meta = meta["onnx"]
        # OpenVINO's precision names are these: bf16 the product's, f32 the check that it runs as ONNX Runtime
        config = {"INFERENCE_NUM_THREADS": threads or default_threads(), "INFERENCE_PRECISION_HINT": precision}
        self.compiled = self._compile(ov, core, bundle, meta, precision, config)
        self.request = self.compiled.create_infer_request()
        self.inputs = [port.get_any_name() for port in self.compiled.inputs]
        self.outputs = [port.get_any_name() for port in self.compiled.outputs]

    @staticmethod
    def _compile(ov, core, bundle: Path, meta: dict, hint: str, config: dict):
        folder = cache_root() / "openvino"
        key = cache_key(meta, hint, ov.__version__)
        blob, record = folder / f"{key}.blob", folder / f"{key}.json"
        if blob.is_file() and record.is_file():
            data = blob.read_bytes()
            try:
                expected = json.loads(record.read_text())["sha256"]
            except (OSError, ValueError, KeyError, TypeError):
                expected = None
            if hashlib.sha256(data).hexdigest() == expected:
                try:
                    return core.import_model(io.BytesIO(data), "CPU", config)
                except RuntimeError:
                    pass  # compiled by another build of the plug-in: compiled again below
        try:
            model = core.read_model(whole_graph(bundle, meta["onnx"]), ov.Tensor(np.empty(0, dtype=np.uint8)))
            compiled = core.compile_model(model, "CPU", config)
        except RuntimeError as exc:
            raise BundleError(f"{bundle}: OpenVINO cannot compile the network: {str(exc).splitlines()[0]}") from None
        try:
            folder.mkdir(parents=True, exist_ok=True)
            exported = compiled.export_model()
            data = exported.getvalue() if hasattr(exported, "getvalue") else bytes(exported)
            atomic_write_bytes(blob, data)  # the blob first: a record always names a whole blob
            atomic_write_text(record, json.dumps({"sha256": hashlib.sha256(data).hexdigest(), "bundle": str(bundle)}))
        except OSError:
            pass  # a read-only cache: the next start compiles again
        return compiled

    def forward(self, inputs) -> dict[str, np.ndarray]:
        """As ``OnnxNetwork.forward``: the word-id array, or a dict of arrays.  The rows are run in groups of
        one length, unpadded: OpenVINO's RNN sequences read a padded row's backward direction from the end of
        the padding, not of the sentence (ONNX's ``sequence_lens``, which ONNX Runtime honours), and their
        states then differ from ONNX Runtime's by up to 0.2 in a probability."""
        if not isinstance(inputs, dict):
            inputs = {"words": inputs}
        arrays = {k: np.asarray(inputs[k], dtype=np.int32) for k in self.inputs}
        words = arrays["words"]
        lengths = (words != 0).sum(axis=1)
        pieces = arrays[PIECE_MASK].sum(axis=1) if PIECE_MASK in arrays else None
        out: dict[str, np.ndarray] = {}
        for length in np.unique(lengths):
            rows = np.flatnonzero(lengths == length)
            width = int(pieces[rows].max()) if pieces is not None else None
            feed = {}
            for k, value in arrays.items():
                value = value[rows]
                if k in WORD_AXIS:
                    value = value[:, : max(int(length), 1)]
                elif width is not None and k in PIECE_AXIS:
                    value = value[:, :width]
                feed[k] = np.ascontiguousarray(value)
            result = {port.get_any_name(): value for port, value in self.request.infer(feed).items()}
            for t in self.outputs:
                got = result[t] if t == STATES else result[t][..., :3]
                if t not in out:
                    out[t] = np.zeros((len(words), words.shape[1], got.shape[-1]), dtype=got.dtype)
                out[t][rows, : got.shape[1]] = got
        return out

    def crf_params(self, typ: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return crf_params(self.meta, typ)
