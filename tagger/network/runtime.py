"""A small, exact NumPy forward pass of a bundled network, for tagging without
importing TensorFlow (start-up in well under a second instead of several).

It reads the weights from the bundle's ``model.keras`` (a zip holding the
Keras config and ``model.weights.h5``) and computes the same function as the
Keras model in inference mode: embedding lookup, bidirectional Elman/LSTM/GRU
layers over right-padded batches, and the per-type softmax or CRF emissions.
``tests/test_runtime.py`` checks that its predictions equal the Keras model's
on a corpus slice.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path

import numpy as np

from tagger.config import TaggerConfig
from tagger.errors import BundleError

_BLAS = None  # threadpoolctl controller, made on first use


def _snake(name: str) -> str:
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def read_keras_weights(path: str | Path) -> dict[str, list[np.ndarray]]:
    """Weights of a ``.keras`` file by *layer name* (sub-layers joined with '/')."""
    import h5py

    path = Path(path)
    try:
        with zipfile.ZipFile(path) as zf:
            config = json.loads(zf.read("config.json"))
            h5_bytes = zf.read("model.weights.h5")
    except (OSError, KeyError, zipfile.BadZipFile, ValueError) as exc:
        raise BundleError(f"{path}: cannot read the model file: {exc}") from None
    counters: dict[str, int] = {}
    out: dict[str, list[np.ndarray]] = {}
    with h5py.File(io.BytesIO(h5_bytes), "r") as h5:
        for layer in config["config"]["layers"]:
            base = _snake(layer["class_name"])
            n = counters.get(base, 0)
            counters[base] = n + 1
            key = f"layers/{base}" + (f"_{n}" if n else "")
            if key not in h5:
                continue
            group = h5[key]
            name = layer["config"]["name"]
            if "vars" in group and len(group["vars"]):
                out[name] = [np.asarray(group["vars"][str(i)]) for i in range(len(group["vars"]))]
            for sub in ("forward_layer", "backward_layer"):
                if sub in group:
                    v = group[sub]["cell"]["vars"]
                    out[f"{name}/{sub}"] = [np.asarray(v[str(i)]) for i in range(len(v))]
    return out


class NumpyNetwork:
    """The bundled network as NumPy arrays; ``forward(ids)`` gives per-type scores."""

    def __init__(self, config: TaggerConfig, weights: dict[str, list[np.ndarray]]):
        self.config = config
        try:
            self.table = weights["embedding"][0]
            self.layers = [(weights[f"birnn_{k}/forward_layer"], weights[f"birnn_{k}/backward_layer"])
                           for k in range(1, config.depth + 1)]
            if config.output == "crf":
                self.heads = {t: weights[f"{t}_emissions"] for t in config.types}
                self.crf = {t: weights[t] for t in config.types}
            else:
                self.heads = {t: weights[t] for t in config.types}
                self.crf = {}
        except KeyError as exc:
            raise BundleError(f"model weights lack layer {exc}") from None
        # both directions' weights stacked, so one matmul a step serves both
        self.stacked = []
        for fwd, bwd in self.layers:
            if config.cell == "gru":
                bias_x = np.stack([fwd[2][0], bwd[2][0]])
                bias_h = np.stack([fwd[2][1], bwd[2][1]])[:, None, :]
            else:
                bias_x, bias_h = np.stack([fwd[2], bwd[2]]), None
            self.stacked.append((np.stack([fwd[0], bwd[0]]), np.stack([fwd[1], bwd[1]]), bias_x, bias_h))

    @classmethod
    def load(cls, bundle: str | Path) -> "NumpyNetwork":
        """The network of a bundle, checked (``tagger.network.bundle.load_bundle_files``) like the Keras back end's."""
        from tagger.network.bundle import load_bundle_files

        bundle = Path(bundle)
        return cls(load_bundle_files(bundle)[1], read_keras_weights(bundle / "model.keras"))

    def _run(self, xw: np.ndarray, recurrent: np.ndarray, bias_h: np.ndarray | None) -> np.ndarray:
        """Both directions over time at once: ``xw`` [T, 2, B, G] = inputs times kernel (+ bias),
        ``recurrent`` [2, H, G]; returns hidden states [T, 2, B, H]."""
        t_len, _, b, _ = xw.shape
        h_dim = recurrent.shape[1]
        h = np.zeros((2, b, h_dim), dtype=xw.dtype)
        c = np.zeros_like(h)
        out = np.empty((t_len, 2, b, h_dim), dtype=xw.dtype)
        cell = self.config.cell
        for t in range(t_len):
            if cell == "elman":
                z = np.matmul(h, recurrent)
                z += xw[t]
                h = np.maximum(z, 0.0, out=z)
            elif cell == "lstm":
                z = np.matmul(h, recurrent)
                z += xw[t]
                i, f, g, o = np.split(z, 4, axis=2)
                c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
                h = _sigmoid(o) * np.tanh(c)
            else:  # gru, reset_after=True (Keras default)
                inner = np.matmul(h, recurrent) + bias_h
                x_z, x_r, x_h = np.split(xw[t], 3, axis=2)
                r_z, r_r, r_h = np.split(inner, 3, axis=2)
                z = _sigmoid(x_z + r_z)
                r = _sigmoid(x_r + r_r)
                h = z * h + (1.0 - z) * np.tanh(x_h + r * r_h)
            out[t] = h
        return out

    def _layer(self, x: np.ndarray, k: int, rows: np.ndarray, rev: np.ndarray) -> np.ndarray:
        """One bidirectional layer: [B, T, D] -> [B, T, 2H] (forward states, then backward)."""
        kernel, recurrent, bias_x, bias_h = self.stacked[k]
        both = np.stack([x, x[rows, rev]])  # the backward direction reads each row reversed
        b, t_len, d = x.shape
        xw = np.matmul(both.reshape(2, b * t_len, d), kernel).reshape(2, b, t_len, -1)
        xw += bias_x[:, None, None, :]  # [2, B, T, G]
        states = self._run(np.ascontiguousarray(xw.transpose(2, 0, 1, 3)), recurrent, bias_h)
        fwd = states[:, 0].transpose(1, 0, 2)
        bwd = states[:, 1].transpose(1, 0, 2)[rows, rev]
        return np.concatenate([fwd, bwd], axis=-1)

    def forward(self, ids: np.ndarray) -> dict[str, np.ndarray]:
        """Per-type scores [B, T, 3]: softmax probabilities, or CRF emissions."""
        # The matrices are small: one BLAS thread is several times faster than a pool
        # (measured 0.4 s vs 7 s for the recurrences of 150 documents on 2 busy cores).
        global _BLAS
        if _BLAS is None:
            from threadpoolctl import ThreadpoolController

            _BLAS = ThreadpoolController()
        with _BLAS.limit(limits=1, user_api="blas"):
            return self._forward(ids)

    def _forward(self, ids: np.ndarray) -> dict[str, np.ndarray]:
        ids = np.asarray(ids)
        lengths = (ids != 0).sum(1)
        t_idx = np.arange(ids.shape[1])
        # index that reverses each row within its own length (padding stays in place)
        rev = np.where(t_idx[None, :] < lengths[:, None], lengths[:, None] - 1 - t_idx[None, :], t_idx[None, :])
        rows = np.arange(ids.shape[0])[:, None]
        x = self.table[ids]
        for k in range(len(self.layers)):
            x = self._layer(x, k, rows, rev)
        out = {}
        for t, (w, bias) in self.heads.items():
            z = x @ w + bias
            if self.config.output == "crf":
                out[t] = z
            else:
                z = np.exp(z - z.max(-1, keepdims=True))
                out[t] = z / z.sum(-1, keepdims=True)
        return out

    def crf_params(self, typ: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return tuple(self.crf[typ])  # transitions, start, end
