"""The recurrent cells, each declared once: its parameters and its step.

A cell (``CELLS[name]``) declares

- its parameters: name, shape (from the sizes: input width, units, factors), the kind of initialiser
  (``kernel``, ``recurrent``, ``bias``, ``decay``) and the attribute of the Keras cell that holds it;
- ``project``: the input terms of every time step, computed before the recurrence (a matrix product over
  all steps at once);
- ``step``: one time step from those terms and the previous state -> (output, new state), the state a
  tuple of arrays;
- for a linear recurrence (IRLM), ``linear``: the step as h_t = a * h_{t-1} + u_t, which the fast
  trainer computes with ``jax.lax.associative_scan`` on an accelerator (step by step on a CPU, faster there).

The functions take an array namespace ``xp`` with ``matmul``, ``tanh``, ``sigmoid`` and ``relu``:
``keras.ops`` in the Keras cell (``opinion_tagger.model.network.RecurrentCell``, any Keras back end, and what
ONNX export traces), ``jax_ops()`` in the fast JAX trainer (``opinion_tagger.training.fast_network``), so both
run the same arithmetic.  Elman, LSTM and GRU run in Keras's own layers (``SimpleRNN``, ``LSTM``,
``GRU``: cuDNN, and the bundles already written); their entries declare the layout of those layers'
weights (``keras_layer``) and the arithmetic the layers compute, for the fast trainer.

The cells:

- ``elman``: h_t = act(W x_t + U h_{t-1} + b), act ReLU (Irsoy & Cardie 2014) or tanh;
- ``lstm``: Keras's LSTM (gates i, f, c, o);
- ``gru``: Keras's GRU (z, r, h; ``reset_after``: input bias ``b[0]``, recurrent bias ``b[1]``);
- ``mrnn``: the multiplicative RNN (Sutskever, Martens & Hinton 2011): the input chooses the
  transition through factors, f_t = (W_fx x_t) * (W_fh h_{t-1}), h_t = act(W_hf f_t + W_hx x_t + b),
  act tanh (or ReLU, linear);
- ``irlm``: impulse-response units (Pachitariu & Sahani 2013): h_t = d * h_{t-1} + W x_t + b with a
  diagonal decay d = tanh(decay_raw) in (-1, 1) and no off-diagonal recurrent weights; the layer
  outputs act(h_t), act linear by default (the paper's IRLM is a linear recurrent model), or tanh, ReLU.

Parameter budgets (the paper's 24k and 200k): ``recurrent_parameters`` counts a network's recurrent
parameters as the paper solved its hidden sizes (both directions of every layer, 300-d word vectors in);
``budget_units`` gives the units whose count is nearest the budget (``TaggerConfig.hidden_size`` uses it
for the cells the paper's table does not cover).  Importing this module imports neither Keras nor JAX.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import NamedTuple

PAPER_INPUT_DIM = 300  # the paper's word2vec vectors, for which its budgets' hidden sizes were solved
ACTIVATIONS = ("relu", "tanh", "linear")


class Sizes(NamedTuple):
    inputs: int  # the width of a layer's input
    units: int  # hidden units per direction
    factors: int  # mrnn: factor units (the others ignore it)


@dataclass(frozen=True)
class Param:
    name: str  # the key in the fast trainer's parameter tree
    shape: Callable[[Sizes], tuple[int, ...]]
    init: str  # kernel (Glorot uniform) | recurrent (orthogonal) | bias | decay (zeros); init: uniform: all U(-s, s)
    keras: str  # the attribute of the Keras cell holding it


@dataclass(frozen=True)
class Cell:
    name: str
    params: tuple[Param, ...]
    project: Callable  # (p, x, xp) -> input terms of each step (x: [..., inputs])
    step: Callable  # (p, terms, state, xp, act) -> (output, new state); state: a tuple of [..., units]
    states: int = 1  # arrays in the state (LSTM: h and c)
    activations: tuple[str, ...] = ()  # the nonlinearities it may take, its default first (none: fixed by the cell)
    keras_layer: str | None = (
        None  # a Keras layer class computing the cell (else opinion_tagger.model.network.RecurrentCell)
    )
    linear: Callable | None = None  # (p, terms, xp) -> (a, u) of h_t = a * h_{t-1} + u_t, for a linear cell

    @property
    def activation(self) -> str | None:
        """The default nonlinearity (None: fixed by the cell)."""
        return self.activations[0] if self.activations else None


def activation_fn(name: str, xp):
    """The nonlinearity ``name`` (one of ACTIVATIONS) in namespace ``xp``."""
    return {"relu": xp.relu, "tanh": xp.tanh, "linear": lambda z: z}[name]


# --------------------------------------------------------------------------- the Keras layers' layouts
_W = Param("W", lambda s: (s.inputs, s.units), "kernel", "kernel")
_U = Param("U", lambda s: (s.units, s.units), "recurrent", "recurrent_kernel")
_B = Param("b", lambda s: (s.units,), "bias", "bias")


def _gated(gates: int, bias_rows: int = 1) -> tuple[Param, ...]:
    return (
        Param("W", lambda s: (s.inputs, gates * s.units), "kernel", "kernel"),
        Param("U", lambda s: (s.units, gates * s.units), "recurrent", "recurrent_kernel"),
        Param(
            "b",
            (lambda s: (gates * s.units,)) if bias_rows == 1 else (lambda s: (bias_rows, gates * s.units)),
            "bias",
            "bias",
        ),
    )


def _affine(p, x, xp):
    return xp.matmul(x, p["W"]) + p["b"]


def _elman_step(p, xw, state, xp, act):
    (h,) = state
    h = act(xw + xp.matmul(h, p["U"]))
    return h, (h,)


def _lstm_step(p, xw, state, xp, act):
    h, c = state
    z = xw + xp.matmul(h, p["U"])
    n = p["U"].shape[0]
    i, f, g, o = (z[..., k * n : (k + 1) * n] for k in range(4))
    c = xp.sigmoid(f) * c + xp.sigmoid(i) * xp.tanh(g)
    h = xp.sigmoid(o) * xp.tanh(c)
    return h, (h, c)


def _gru_project(p, x, xp):
    return xp.matmul(x, p["W"]) + p["b"][0]


def _gru_step(p, xw, state, xp, act):
    (h,) = state
    n = p["U"].shape[0]
    r_all = xp.matmul(h, p["U"]) + p["b"][1]
    xz, xr, xh = (xw[..., k * n : (k + 1) * n] for k in range(3))
    rz, rr, rh = (r_all[..., k * n : (k + 1) * n] for k in range(3))
    z = xp.sigmoid(xz + rz)
    hh = xp.tanh(xh + xp.sigmoid(xr + rr) * rh)
    h = z * h + (1 - z) * hh
    return h, (h,)


# --------------------------------------------------------------------------- the multiplicative RNN
def _mrnn_project(p, x, xp):
    return xp.matmul(x, p["W_fx"]), xp.matmul(x, p["W_hx"]) + p["b"]


def _mrnn_step(p, terms, state, xp, act):
    xf, xh = terms
    (h,) = state
    f = xf * xp.matmul(h, p["W_fh"])
    h = act(xp.matmul(f, p["W_hf"]) + xh)
    return h, (h,)


# --------------------------------------------------------------------------- impulse-response units
def _irlm_step(p, u, state, xp, act):
    (h,) = state
    h = xp.tanh(p["decay_raw"]) * h + u
    return act(h), (h,)


def _irlm_linear(p, u, xp):
    return xp.tanh(p["decay_raw"]), u


CELLS: dict[str, Cell] = {
    "elman": Cell(
        "elman", (_W, _U, _B), _affine, _elman_step, activations=("relu", "tanh"), keras_layer="SimpleRNN"
    ),  # ONNX's RNN operator (opinion_tagger.export.onnx_recurrent) has both
    "lstm": Cell("lstm", _gated(4), _affine, _lstm_step, states=2, keras_layer="LSTM"),
    "gru": Cell("gru", _gated(3, bias_rows=2), _gru_project, _gru_step, keras_layer="GRU"),
    "mrnn": Cell(
        "mrnn",
        (
            Param("W_fx", lambda s: (s.inputs, s.factors), "kernel", "W_fx"),
            Param("W_fh", lambda s: (s.units, s.factors), "recurrent", "W_fh"),
            Param("W_hf", lambda s: (s.factors, s.units), "recurrent", "W_hf"),
            Param("W_hx", lambda s: (s.inputs, s.units), "kernel", "W_hx"),
            Param("b", lambda s: (s.units,), "bias", "b"),
        ),
        _mrnn_project,
        _mrnn_step,
        activations=("tanh", "relu", "linear"),
    ),
    "irlm": Cell(
        "irlm",
        (
            Param("W", lambda s: (s.inputs, s.units), "kernel", "W"),
            Param("decay_raw", lambda s: (s.units,), "decay", "decay_raw"),
            Param("b", lambda s: (s.units,), "bias", "b"),
        ),
        _affine,
        _irlm_step,
        activations=("linear", "tanh", "relu"),
        linear=_irlm_linear,
    ),
}


# --------------------------------------------------------------------------- parameter budgets
def recurrent_parameters(
    cell: str, depth: int, units: int, factors: int | None = None, inputs: int = PAPER_INPUT_DIM
) -> int:
    """The recurrent parameters of a deep bidirectional network: both directions of every layer, the first
    reading ``inputs``-wide vectors, each above it both directions of the one below (``factors``: mrnn's
    factor units, default ``units``)."""
    spec = CELLS[cell]
    total = 0
    for k in range(depth):
        sizes = Sizes(inputs if k == 0 else 2 * units, units, factors or units)
        total += 2 * sum(math.prod(p.shape(sizes)) for p in spec.params)
    return total


@cache
def budget_units(cell: str, depth: int, budget: int, factors: int | None = None) -> int:
    """The hidden units per direction whose ``recurrent_parameters`` (the paper's 300-d inputs) are nearest
    ``budget`` (the smaller on a tie).  For Elman this gives the paper's table but at depth 4, 24k (23 where
    the paper has 22, 24,564 parameters against 23,056)."""
    best, units = 1, 1
    while True:
        n = recurrent_parameters(cell, depth, units, factors)
        if abs(n - budget) < abs(recurrent_parameters(cell, depth, best, factors) - budget):
            best = units
        if n > budget:
            return best
        units += 1
