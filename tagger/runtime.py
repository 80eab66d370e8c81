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

    @classmethod
    def load(cls, bundle: str | Path) -> "NumpyNetwork":
        bundle = Path(bundle)
        return cls(TaggerConfig.load(bundle / "config.json"), read_keras_weights(bundle / "model.keras"))

    def _run(self, xw: np.ndarray, recurrent: np.ndarray, bias_h: np.ndarray | None) -> np.ndarray:
        """One direction over time; ``xw`` = inputs already multiplied by the kernel (+ bias)."""
        b, t_len, _ = xw.shape
        h_dim = recurrent.shape[0]
        h = np.zeros((b, h_dim), dtype=xw.dtype)
        c = np.zeros_like(h)
        out = np.empty((b, t_len, h_dim), dtype=xw.dtype)
        cell = self.config.cell
        for t in range(t_len):
            if cell == "elman":
                h = np.maximum(xw[:, t] + h @ recurrent, 0.0)
            elif cell == "lstm":
                z = xw[:, t] + h @ recurrent
                i, f, g, o = np.split(z, 4, axis=1)
                c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
                h = _sigmoid(o) * np.tanh(c)
            else:  # gru, reset_after=True (Keras default)
                inner = h @ recurrent + bias_h
                x_z, x_r, x_h = np.split(xw[:, t], 3, axis=1)
                r_z, r_r, r_h = np.split(inner, 3, axis=1)
                z = _sigmoid(x_z + r_z)
                r = _sigmoid(x_r + r_r)
                h = z * h + (1.0 - z) * np.tanh(x_h + r * r_h)
            out[:, t] = h
        return out

    def _direction(self, x: np.ndarray, weights: list[np.ndarray]) -> np.ndarray:
        kernel, recurrent, bias = weights
        if self.config.cell == "gru":
            return self._run(x @ kernel + bias[0], recurrent, bias[1])
        return self._run(x @ kernel + bias, recurrent, None)

    def forward(self, ids: np.ndarray) -> dict[str, np.ndarray]:
        """Per-type scores [B, T, 3]: softmax probabilities, or CRF emissions."""
        ids = np.asarray(ids)
        lengths = (ids != 0).sum(1)
        t_idx = np.arange(ids.shape[1])
        # index that reverses each row within its own length (padding stays in place)
        rev = np.where(t_idx[None, :] < lengths[:, None], lengths[:, None] - 1 - t_idx[None, :], t_idx[None, :])
        rows = np.arange(ids.shape[0])[:, None]
        x = self.table[ids]
        for fwd, bwd in self.layers:
            f = self._direction(x, fwd)
            b = self._direction(x[rows, rev], bwd)[rows, rev]
            x = np.concatenate([f, b], axis=-1)
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
