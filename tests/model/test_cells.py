"""The cell registry (opinion_tagger.cells): the multiplicative RNN and IRLM steps by hand in the Keras cell and
in the fast trainer, the IRLM's associative scan against the sequential one, parameter counts and budgets,
and the configuration fields of the cells."""

import json
from pathlib import Path

import numpy as np
import pytest

from opinion_tagger.cells import CELLS, budget_units, recurrent_parameters
from opinion_tagger.config import TaggerConfig
from opinion_tagger.paths import BUNDLED

ROOT = Path(__file__).resolve().parents[2]

# --------------------------------------------------------------------------- parameter counts and budgets


def test_parameter_counts_by_hand():
    # mrnn, depth 2, 3 units, 2 factors, 4-d inputs.  Layer 1, per direction: W_fx 4x2, W_fh 3x2, W_hf 2x3,
    # W_hx 4x3, b 3 = 8 + 6 + 6 + 12 + 3 = 35; layer 2 reads both directions (6-d): 12 + 6 + 6 + 18 + 3 = 45
    assert recurrent_parameters("mrnn", 2, 3, factors=2, inputs=4) == 2 * 35 + 2 * 45
    # irlm: W 4x3, decay 3, b 3 = 18; layer 2: 18 + 3 + 3 = 24
    assert recurrent_parameters("irlm", 2, 3, inputs=4) == 2 * 18 + 2 * 24
    # elman at the paper's 300-d inputs, depth 3, 100 units (the table's 200k): 2 (300*100 + 100*100 + 100)
    # + 2 * 2 (200*100 + 100*100 + 100)
    assert recurrent_parameters("elman", 3, 100) == 80_200 + 120_400
    assert recurrent_parameters("mrnn", 1, 2) == 2 * (300 * 2 + 2 * 2 + 2 * 2 + 300 * 2 + 2)  # factors = units


def test_budget_units_are_nearest_the_budget():
    # irlm depth 1: 2 (300 H + 2 H) = 604 H; 24,000 / 604 = 39.7: 40 (24,160) is nearer than 39 (23,556)
    assert budget_units("irlm", 1, 24_000) == 40
    assert (
        TaggerConfig.from_dict(
            {"model.recurrent.cell": "irlm", "model.recurrent.depth": 1, "model.recurrent.budget": "24k"}
        ).hidden_size
        == 40
    )
    # the paper's Elman table but for depth 4, 24k (22 in the paper: 23,056 against 24,564 for 23)
    table = {"24k": (24_000, (36, 29, 25, 23, 21)), "200k": (200_000, (200, 125, 100, 86, 77))}
    for n, sizes in table.values():
        assert [budget_units("elman", d, n) for d in range(1, 6)] == list(sizes)
    for cell in ("mrnn", "irlm"):
        for budget, n in (("24k", 24_000), ("200k", 200_000)):
            for depth in (1, 3):
                h = TaggerConfig.from_dict(
                    {"model.recurrent.cell": cell, "model.recurrent.depth": depth, "model.recurrent.budget": budget}
                ).hidden_size
                near = abs(recurrent_parameters(cell, depth, h) - n)
                assert near <= abs(recurrent_parameters(cell, depth, h - 1) - n)
                assert near <= abs(recurrent_parameters(cell, depth, h + 1) - n)
    # the factor units given, the units are solved with them
    assert TaggerConfig.from_dict(
        {"model.recurrent.cell": "mrnn", "model.recurrent.depth": 3, "model.recurrent.factors": 20}
    ).hidden_size == budget_units("mrnn", 3, 200_000, 20)
    # elman, lstm and gru keep the paper's table
    assert (
        TaggerConfig.from_dict(
            {"model.recurrent.cell": "lstm", "model.recurrent.depth": 4, "model.recurrent.budget": "24k"}
        ).hidden_size
        == 22
    )


@pytest.mark.parametrize("cell", ["elman", "gru", "mrnn", "irlm"])
def test_the_keras_network_has_the_counted_parameters(cell):
    from opinion_tagger.model.network import build_model

    cfg = TaggerConfig.from_dict(
        {
            "model.recurrent.cell": cell,
            "model.recurrent.depth": 2,
            "model.recurrent.budget": "24k",
            "model.embeddings.features": "random",
            "model.embeddings.dim": 300,
        }
    )
    model = build_model(cfg, 10, 300)
    weights = [w for k in (1, 2) for w in model.get_layer(f"birnn_{k}").trainable_weights]
    assert sum(int(np.prod(w.shape)) for w in weights) == recurrent_parameters(cell, 2, cfg.hidden_size)


# --------------------------------------------------------------------------- the steps by hand
def _keras_rnn(cfg, weights, x):
    """One direction in Keras: the configuration's recurrent layer on x [B, T, D]."""
    import keras

    from opinion_tagger.model.network import _recurrent

    layer = _recurrent(cfg, "rnn_1")
    layer.zero_output_for_mask = True  # as Bidirectional sets it in the network
    layer.build((None, None, x.shape[-1]))
    for p in CELLS[cfg.model.recurrent.cell].params:
        getattr(layer.cell, p.keras).assign(np.asarray(weights[p.name], "float32"))
    mask = keras.ops.convert_to_tensor(np.any(x != 0, axis=-1))
    return np.asarray(layer(x, mask=mask))


def _fast_direction(cfg, weights, x, parallel=True):
    """The forward direction in the fast trainer (both directions with the same weights)."""
    pytest.importorskip("jax")
    from opinion_tagger.training.fast_network import _birnn

    layer = {k: np.stack([np.asarray(v, "float32")] * 2) for k, v in weights.items()}
    mask = np.any(x != 0, axis=-1).astype("float32")
    return np.asarray(_birnn(layer, x, mask, cfg, parallel))[..., : cfg.hidden_size]


MRNN = {"W_fx": [[1, 2]], "W_fh": [[1, 0], [0, 1]], "W_hf": [[1, 0], [0, -1]], "W_hx": [[0.5, -0.5]], "b": [0, 0.1]}


def test_mrnn_two_steps_by_hand():
    """x = 1 then 2 (1-d), 2 units and 2 factors.  Step 1: h_0 = 0, so the factors are 0 and h_1 =
    tanh(W_hx x + b) = tanh([0.5, -0.4]).  Step 2: f = (W_fx 2) * (W_fh h_1) = [2, 4] * h_1;
    W_hf f = [2 tanh 0.5, -4 tanh(-0.4)]; W_hx 2 + b = [1, -0.9]."""
    cfg = TaggerConfig.from_dict(
        {
            "model.recurrent.cell": "mrnn",
            "model.recurrent.hidden": 2,
            "model.recurrent.budget": None,
            "model.recurrent.depth": 1,
        }
    )
    x = np.array([[[1.0], [2.0], [0.0]]], "float32")  # the third step is padding
    h1 = np.tanh([0.5, -0.4])
    h2 = np.tanh([2 * np.tanh(0.5) + 1, 4 * np.tanh(0.4) - 0.9])
    want = np.array([[h1, h2, [0, 0]]])
    np.testing.assert_allclose(_keras_rnn(cfg, MRNN, x), want, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(_fast_direction(cfg, MRNN, x), want, rtol=1e-6, atol=1e-7)


IRLM = {"W": [[1, -1]], "decay_raw": np.arctanh([0.5, -0.25]), "b": [0, 0.5]}


@pytest.mark.parametrize("parallel", [True, False])
def test_irlm_two_steps_by_hand(parallel):
    """Decays 0.5 and -0.25, x = 2 then 4 then padding.  h_1 = W 2 + b = [2, -1.5];
    h_2 = d h_1 + W 4 + b = [1 + 4, 0.375 - 3.5] = [5, -3.125]; linear output; padding outputs 0."""
    cfg = TaggerConfig.from_dict(
        {
            "model.recurrent.cell": "irlm",
            "model.recurrent.hidden": 2,
            "model.recurrent.budget": None,
            "model.recurrent.depth": 1,
        }
    )
    x = np.array([[[2.0], [4.0], [0.0]]], "float32")
    want = np.array([[[2, -1.5], [5, -3.125], [0, 0]]])
    np.testing.assert_allclose(_keras_rnn(cfg, IRLM, x), want, rtol=1e-6)
    np.testing.assert_allclose(_fast_direction(cfg, IRLM, x, parallel), want, rtol=1e-6)
    # tanh between layers: the layer outputs tanh(h), the state stays linear
    tanh = cfg.replace({"model.recurrent.activation": "tanh"})
    np.testing.assert_allclose(_keras_rnn(tanh, IRLM, x)[0, :2], np.tanh(want[0, :2]), rtol=1e-6)
    np.testing.assert_allclose(_fast_direction(tanh, IRLM, x, parallel)[0, :2], np.tanh(want[0, :2]), rtol=1e-6)


def test_irlm_decay_init_sets_every_decay():
    from opinion_tagger.model.network import _recurrent

    layer = _recurrent(
        TaggerConfig.from_dict(
            {
                "model.recurrent.cell": "irlm",
                "model.recurrent.hidden": 3,
                "model.recurrent.budget": None,
                "model.recurrent.depth": 1,
                "model.recurrent.decay_init": 0.9,
            }
        ),
        "rnn_1",
    )
    layer.build((None, None, 2))
    np.testing.assert_allclose(np.tanh(np.asarray(layer.cell.decay_raw)), [0.9] * 3, rtol=1e-6)


@pytest.mark.integration
def test_irlm_associative_scan_equals_the_sequential_scan():
    """Both directions of a layer, sentences of different lengths (padding), decays near -1 and 1 over 60
    steps: within 1e-5 of the step-by-step scan."""
    jax = pytest.importorskip("jax")
    from opinion_tagger.training.fast_network import _birnn

    rng = np.random.default_rng(4)
    cfg = TaggerConfig.from_dict(
        {
            "model.recurrent.cell": "irlm",
            "model.recurrent.hidden": 5,
            "model.recurrent.budget": None,
            "model.recurrent.depth": 1,
            "model.recurrent.activation": "tanh",
        }
    )
    decay = np.array([[0.99, -0.99, 0.5, 0.0, -0.3], [0.95, 0.2, -0.9, 0.7, 0.999]])
    layer = {"W": rng.normal(0, 0.3, (2, 4, 5)), "decay_raw": np.arctanh(decay), "b": rng.normal(0, 0.1, (2, 5))}
    layer = {k: np.asarray(v, "float32") for k, v in layer.items()}
    lengths = [60, 37, 1, 12]
    mask = (np.arange(60)[None] < np.array(lengths)[:, None]).astype("float32")
    x = (rng.normal(size=(4, 60, 4)) * mask[..., None]).astype("float32")
    par = np.asarray(jax.jit(lambda w, x, m: _birnn(w, x, m, cfg, parallel=True))(layer, x, mask))
    seq = np.asarray(_birnn(layer, x, mask, cfg, parallel=False))
    assert par.shape == (4, 60, 10)
    np.testing.assert_allclose(par, seq, atol=1e-5)

    def loss(w, parallel):
        return (_birnn(w, x, mask, cfg, parallel=parallel) ** 2).sum()

    grads = [jax.grad(loss)(layer, parallel) for parallel in (True, False)]
    for k in layer:  # and their gradients
        np.testing.assert_allclose(grads[0][k], grads[1][k], rtol=1e-4, atol=1e-4, err_msg=k)
    assert not par[mask == 0].any()  # padding outputs zeros
    # the backward direction of the one-word sentence is its word alone: tanh(W x + b)
    np.testing.assert_allclose(par[2, 0, 5:], np.tanh(x[2, 0] @ layer["W"][1] + layer["b"][1]), rtol=1e-5)


def test_params_round_trip_through_the_keras_model():
    pytest.importorskip("jax")
    from opinion_tagger.model.network import build_model
    from opinion_tagger.training import fast_network as ft

    for cell in ("mrnn", "irlm"):
        cfg = TaggerConfig.from_dict(
            {
                "model.recurrent.cell": cell,
                "model.recurrent.depth": 2,
                "model.recurrent.hidden": 3,
                "model.recurrent.budget": None,
                "model.embeddings.features": "random",
                "model.embeddings.dim": 4,
                "training.trainer": "fast",
                "task": "joint",
            }
        )
        model = build_model(cfg, 8, 4)
        params, _ = ft.params_from_model(model, cfg)
        changed = {**params, "layers": [{k: v + 1.0 for k, v in layer.items()} for layer in params["layers"]]}
        ft.params_to_model(changed, model, cfg)
        again, _ = ft.params_from_model(model, cfg)
        for a, b in zip(again["layers"], params["layers"]):
            assert set(a) == {p.name for p in CELLS[cell].params}
            for k in a:
                np.testing.assert_allclose(a[k], b[k] + 1.0)
        assert again["layers"][0]["b"].shape == (2, 3)  # stacked over the two directions


# --------------------------------------------------------------------------- configuration
def test_cell_fields_round_trip_and_are_checked(tmp_path):
    cfg = TaggerConfig.from_dict(
        {
            "model.recurrent.cell": "mrnn",
            "model.recurrent.factors": 7,
            "model.recurrent.activation": "relu",
            "model.recurrent.depth": 2,
        }
    )
    cfg.save(tmp_path / "c.json")
    assert TaggerConfig.load(tmp_path / "c.json") == cfg
    irlm = TaggerConfig.from_dict(
        {"model.recurrent.cell": "irlm", "model.recurrent.decay_init": -0.5, "model.recurrent.activation": "tanh"}
    )
    assert TaggerConfig.from_dict(json.loads(json.dumps(irlm.to_dict()))) == irlm
    activation = {c: TaggerConfig.from_dict({"model.recurrent.cell": c}).cell_activation for c in ("irlm", "mrnn")}
    assert irlm.cell_activation == "tanh" and activation == {"irlm": "linear", "mrnn": "tanh"}
    assert TaggerConfig().cell_activation == "relu"
    assert TaggerConfig.from_dict({"model.recurrent.cell": "lstm"}).cell_activation is None
    for bad, match in (
        ({"cell": "elman", "factors": 3}, "factors: 3 is for cell mrnn, not elman"),
        ({"cell": "mrnn", "factors": 0}, "factors: 0 must be greater than 0"),
        ({"cell": "mrnn", "decay_init": 0.5}, "decay_init: 0.5 is for cell irlm, not mrnn"),
        ({"cell": "irlm", "decay_init": 1.0}, "decay_init: 1.0 must be less than 1"),
        ({"cell": "lstm", "activation": "tanh"}, "is not for cell lstm .the cell has its own: leave it unset"),
        ({"cell": "elman", "activation": "linear"}, "is not for cell elman .it takes relu or tanh"),
        ({"cell": "irlm", "activation": "sigmoid"}, '"sigmoid" is not one of relu, tanh, linear'),
        ({"cell": "rnn"}, 'model.recurrent.cell: "rnn" is not one of'),
    ):
        with pytest.raises(ValueError, match=match):
            TaggerConfig.from_dict({"model": {"recurrent": bad}})


@pytest.mark.parametrize("name", ["fast", "accurate"])
def test_configurations_written_before_the_cell_fields_load_and_keep_their_digest(name):
    """``accurate`` was exported before the cell fields existed, ``fast`` (retrained with a teacher) after: the
    digest of each configuration is the one its meta.json records."""
    from opinion_tagger.export.onnx_export import config_digest

    data = json.loads((BUNDLED / name / "config.json").read_text())
    cfg = TaggerConfig.from_dict(data)
    assert (cfg.model.recurrent.activation, cfg.model.recurrent.factors, cfg.model.recurrent.decay_init) == (
        None,
        None,
        None,
    )
    meta = json.loads((BUNDLED / name / "meta.json").read_text())
    assert config_digest(cfg) == meta["onnx"]["config_sha256"]
    assert config_digest(cfg.replace({"model.recurrent.cell": "irlm"})) != config_digest(
        cfg.replace({"model.recurrent.cell": "irlm", "model.recurrent.decay_init": 0.5})
    )


def test_train_options_set_the_cell_fields():
    from opinion_tagger.cli import build_parser
    from opinion_tagger.cli.options import config_from_args

    def config(*options):
        return config_from_args(build_parser().parse_args(["train", "--data", "mpqa", "x", "--out", "y", *options]))

    cfg = config("--cell", "irlm", "--activation", "tanh", "--decay-init", "0.8", "--depth", "1", "--budget", "24k")
    assert (
        cfg.model.recurrent.cell,
        cfg.model.recurrent.activation,
        cfg.model.recurrent.decay_init,
        cfg.hidden_size,
    ) == ("irlm", "tanh", 0.8, 40)
    assert config("--cell", "mrnn", "--factors", "12").model.recurrent.factors == 12


def test_irlm_memory_lengths_by_hand(tmp_path):
    """experiments/irlm_memory.py: d = 0.5 remembers 1 / (1 - 0.5) = 2 words, d = -0.75 four."""

    from experiments import irlm_memory as memory
    from opinion_tagger.model.network import build_model

    cfg = TaggerConfig.from_dict(
        {
            "model.recurrent.cell": "irlm",
            "model.recurrent.depth": 2,
            "model.recurrent.hidden": 3,
            "model.recurrent.budget": None,
            "model.embeddings.features": "random",
            "model.embeddings.dim": 4,
            "model.recurrent.decay_init": 0.5,
        }
    )
    model = build_model(cfg, 6, 4)
    model.get_layer("birnn_2").backward_layer.cell.decay_raw.assign(np.arctanh([0.5, -0.75, 0.5]).astype("float32"))
    lengths = memory.memory_lengths(model, 2)
    assert sorted(lengths) == [(1, "backward"), (1, "forward"), (2, "backward"), (2, "forward")]
    np.testing.assert_allclose(lengths[(1, "forward")], [2, 2, 2], rtol=1e-5)
    np.testing.assert_allclose(lengths[(2, "backward")], [2, 4, 2], rtol=1e-5)
    lines = memory.summary_lines({"DSE": lengths})
    assert lines[2:] == [
        "| DSE | 1 | backward | 3 | 2.00 | 2.00 | 2.00 | 0.0% |",
        "| DSE | 1 | forward | 3 | 2.00 | 2.00 | 2.00 | 0.0% |",
        "| DSE | 2 | backward | 3 | 2.00 | 3.60 | 4.00 | 0.0% |",
        "| DSE | 2 | forward | 3 | 2.00 | 2.00 | 2.00 | 0.0% |",
    ]
    memory.plot({"DSE": lengths}, tmp_path / "m.png")
    assert (tmp_path / "m.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
