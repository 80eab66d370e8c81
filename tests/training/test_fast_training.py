"""The fast (JAX) trainer against the Keras network it trains, and its recipe options by hand."""

import numpy as np
import pytest

from opinion_tagger.errors import TaggerError

jax = pytest.importorskip("jax")
pytest.importorskip("optax")

import jax.numpy as jnp  # noqa: E402
import keras  # noqa: E402

from opinion_tagger.cells import CELLS  # noqa: E402
from opinion_tagger.config import TaggerConfig  # noqa: E402
from opinion_tagger.model.network import build_model  # noqa: E402
from opinion_tagger.sentences import Sentence, Token  # noqa: E402
from opinion_tagger.training import fast_network as ft  # noqa: E402
from opinion_tagger.training import fast_trainer  # noqa: E402

VOCAB = 12
# a small network the fast trainer trains: random word vectors, its hidden size in units
SMALL = {"model.embeddings.features": "random", "model.recurrent.budget": None, "training.trainer": "fast"}
NO_DROPOUT = {"model.recurrent.input_dropout": 0, "model.recurrent.dropout": 0}
SIX_EPOCHS = {"training.batch_size": 8, "training.stopping": {"max_epochs": 6, "eval_every": 2, "patience": 0}}
# a one-layer network of two units with summed, O-weighted losses: the configuration of the losses by hand
BY_HAND = TaggerConfig.from_dict(
    {
        "task": "dse",
        **SMALL,
        **NO_DROPOUT,
        "model.recurrent": {"depth": 1, "hidden": 2},
        "training": {"o_weight": 0.5, "fast": {"loss_sum": True}},
    }
)


def _model(cfg, seed=3):
    keras.utils.set_random_seed(seed)
    model = build_model(cfg, VOCAB, 5)
    rng = np.random.default_rng(seed)
    frozen = (rng.random(VOCAB) < 0.5).astype("float32")  # half the rows frozen, half trainable
    model.get_layer("embedding").set_weights([rng.normal(size=(VOCAB, 5)).astype("float32"), frozen])
    for layer in model.layers:  # larger weights than the defaults' so that ReLUs are not all zero
        if layer.name.startswith("birnn") or layer.name in cfg.types:
            layer.set_weights([w + rng.normal(0, 0.3, w.shape).astype("float32") for w in layer.get_weights()])
    return model


def _batch():
    ids = np.array([[2, 5, 7, 3, 9, 4], [6, 2, 11, 0, 0, 0], [8, 0, 0, 0, 0, 0]], dtype="int32")
    rng = np.random.default_rng(7)
    tags = {t: (rng.integers(0, 3, ids.shape) * (ids != 0)).astype("int32") for t in ("DSE", "ESE")}
    return ids, tags


def _keras_loss_and_grads(model, cfg, ids, tags, weighted_sum=False):
    """Keras's own loss (masked, mean over real tokens per head, summed over heads) and its gradients."""
    import tensorflow as tf

    with tf.GradientTape() as tape:
        out = model(ids, training=False)
        total = 0.0
        for t in cfg.types:
            if weighted_sum:  # O-weighted token losses summed (sample weights + reduction "sum")
                loss = keras.losses.SparseCategoricalCrossentropy(reduction="sum")
                w = np.where(tags[t] == 0, cfg.training.o_weight, 1.0).astype("float32")
                total += loss(tags[t], out[t], sample_weight=w)
            else:
                total += keras.losses.SparseCategoricalCrossentropy()(tags[t], out[t])
    grads = tape.gradient(total, model.trainable_weights)
    return float(total), {v.path: tf.convert_to_tensor(g) for v, g in zip(model.trainable_weights, grads)}


def _fast_loss_and_grads(model, cfg, ids, tags):
    params, frozen = ft.params_from_model(model, cfg)
    loss, grads = jax.value_and_grad(lambda p: ft.loss_fn(p, frozen, ids, tags, cfg))(params)
    return float(loss), grads


def _compare_grads(model, cfg, kgrads, fgrads):
    """Each Keras weight's gradient against the fast path's (same layout as params_from_model)."""
    emb = model.get_layer("embedding")
    frozen = np.asarray(emb.frozen)
    k_emb = np.asarray(kgrads[emb.table.path])
    assert not k_emb[frozen == 1].any()  # frozen rows get no gradient in Keras; the fast path does not hold them
    np.testing.assert_allclose(np.asarray(fgrads["emb"]), k_emb[frozen == 0], rtol=1e-4, atol=1e-6)
    for k in range(cfg.model.recurrent.depth):
        bi = model.get_layer(f"birnn_{k + 1}")
        for d, cell in enumerate((bi.forward_layer.cell, bi.backward_layer.cell)):
            for p in CELLS[cfg.model.recurrent.cell].params:
                var = getattr(cell, p.keras)
                np.testing.assert_allclose(
                    np.asarray(fgrads["layers"][k][p.name][d]),
                    np.asarray(kgrads[var.path]),
                    rtol=1e-4,
                    atol=1e-6,
                    err_msg=f"layer {k + 1} dir {d} {p.name}",
                )
    for t in cfg.types:
        head = model.get_layer(t)
        np.testing.assert_allclose(
            np.asarray(fgrads["heads"][t]["W"]), np.asarray(kgrads[head.kernel.path]), rtol=1e-4, atol=1e-6
        )
        np.testing.assert_allclose(
            np.asarray(fgrads["heads"][t]["b"]), np.asarray(kgrads[head.bias.path]), rtol=1e-4, atol=1e-6
        )


RECURRENT = {"elman": "U", "lstm": "U", "gru": "U", "mrnn": "W_fh", "irlm": "decay_raw"}  # what carries h_{t-1}


# the models trained together in the tests below: one layer of 5 units, plain SGD, dev scored every other epoch
TOGETHER = {
    "task": "dse",
    **SMALL,
    **NO_DROPOUT,
    "model.recurrent": {"depth": 1, "hidden": 5},
    "training.batch_size": 8,
    "training.optimizer": {"name": "sgd", "momentum": 0.7, "learning_rate": 0.05},
    "training.stopping": {"eval_every": 2, "patience": 0},
}


@pytest.mark.parametrize(
    "depth,cell,extra",
    [
        (1, "elman", {}),
        (2, "elman", {}),
        (2, "lstm", {}),
        (2, "gru", {}),
        (2, "mrnn", {}),
        (2, "mrnn", {"model.recurrent.factors": 3, "model.recurrent.activation": "relu"}),
        (2, "irlm", {}),
        (2, "irlm", {"model.recurrent.activation": "tanh", "model.recurrent.decay_init": 0.5}),
    ],
)
def test_loss_and_gradients_equal_the_keras_model(depth, cell, extra):
    cfg = TaggerConfig.from_dict(
        {
            "task": "joint",
            **SMALL,
            **NO_DROPOUT,
            "model.recurrent": {"cell": cell, "depth": depth, "hidden": 4},
            **extra,
        }
    )
    model = _model(cfg)
    ids, tags = _batch()
    k_loss, k_grads = _keras_loss_and_grads(model, cfg, ids, tags)
    f_loss, f_grads = _fast_loss_and_grads(model, cfg, ids, tags)
    assert f_loss == pytest.approx(k_loss, rel=1e-5)
    _compare_grads(model, cfg, k_grads, f_grads)
    assert set(f_grads["layers"][0]) == {p.name for p in CELLS[cell].params}
    assert np.abs(np.asarray(f_grads["layers"][0][RECURRENT[cell]])).sum() > 0  # the recurrence is exercised


def test_o_weight_and_summed_loss_equal_keras_sample_weights():
    cfg = BY_HAND.replace({"task": "joint", "model.recurrent.depth": 2, "model.recurrent.hidden": 4})
    model = _model(cfg)
    ids, tags = _batch()
    k_loss, k_grads = _keras_loss_and_grads(model, cfg, ids, tags, weighted_sum=True)
    f_loss, f_grads = _fast_loss_and_grads(model, cfg, ids, tags)
    assert f_loss == pytest.approx(k_loss, rel=1e-5)
    _compare_grads(model, cfg, k_grads, f_grads)


def test_o_weight_by_hand():
    """One token per class, uniform predictions (zero output weights): each token loses log 3."""
    cfg = BY_HAND
    model = _model(cfg)
    model.get_layer("DSE").set_weights([np.zeros((4, 3), "float32"), np.zeros(3, "float32")])
    params, frozen = ft.params_from_model(model, cfg)
    ids = np.array([[2, 3, 4]], dtype="int32")
    tags = {"DSE": np.array([[0, 1, 2]], dtype="int32")}  # O (weight 0.5), B, I
    assert float(ft.loss_fn(params, frozen, ids, tags, cfg)) == pytest.approx(2.5 * np.log(3), rel=1e-6)
    mean = cfg.replace({"training.fast.loss_sum": False})  # averaged over the 3 real tokens
    assert float(ft.loss_fn(params, frozen, ids, tags, mean)) == pytest.approx(2.5 * np.log(3) / 3, rel=1e-6)


def test_penalties_by_hand():
    cfg = TaggerConfig.from_dict({"task": "dse", **SMALL, **NO_DROPOUT, "model.recurrent": {"depth": 2, "hidden": 3}})
    model = _model(cfg)
    params, frozen = ft.params_from_model(model, cfg)
    ids, tags = _batch()
    tags = {"DSE": tags["DSE"]}
    base = float(ft.loss_fn(params, frozen, ids, tags, cfg))
    weights = [w for k in range(1, 3) for w in model.get_layer(f"birnn_{k}").get_weights()]
    weights += model.get_layer("DSE").get_weights()  # the embedding is not penalised
    l2 = float(ft.loss_fn(params, frozen, ids, tags, cfg.replace({"training.fast.l2": 0.01})))
    assert l2 - base == pytest.approx(0.005 * sum(float((w.astype("float64") ** 2).sum()) for w in weights), rel=1e-4)
    # activation penalty: the Keras layers' outputs at the real tokens
    sub = keras.Model(model.inputs[0], [model.get_layer("birnn_1").output, model.get_layer("birnn_2").output])
    mask = (ids != 0)[..., None]
    squares = sum(float((np.asarray(h, "float64") ** 2 * mask).sum()) for h in sub(ids))
    act = float(ft.loss_fn(params, frozen, ids, tags, cfg.replace({"training.fast.activation_l2": 0.02})))
    assert act - base == pytest.approx(0.01 * squares, rel=1e-4)


def test_optimizer_steps_by_hand():
    """SGD: v = lr_k g + momentum v, w -= v; lr_k = lr * decay^k; the output layer at output_lr_scale."""
    cfg = TaggerConfig.from_dict(
        {
            "training.trainer": "fast",
            "training.optimizer.name": "sgd",
            "training.optimizer.learning_rate": 0.1,
            "training.optimizer.momentum": 0.5,
            "training.fast.lr_decay": 0.9,
            "training.fast.output_lr_scale": 0.1,
            "training.optimizer.clipnorm": 0,
        }
    )
    opt = ft.optimizer(cfg)
    params = {"emb": jnp.zeros(2), "layers": [{"W": jnp.ones(2)}], "heads": {"DSE": {"W": jnp.ones(1)}}}
    state = opt.init(params)
    g1 = {
        "emb": jnp.array([1.0, 0.0]),
        "layers": [{"W": jnp.array([1.0, 2.0])}],
        "heads": {"DSE": {"W": jnp.array([4.0])}},
    }
    g2 = {
        "emb": jnp.array([0.0, 0.0]),
        "layers": [{"W": jnp.array([2.0, 0.0])}],
        "heads": {"DSE": {"W": jnp.array([1.0])}},
    }
    u1, state = opt.update(g1, state, params)
    u2, state = opt.update(g2, state, params)
    # step 1: v1 = 0.1 g1; step 2: v2 = 0.09 g2 + 0.5 v1; updates are -v
    np.testing.assert_allclose(u1["layers"][0]["W"], [-0.1, -0.2], rtol=1e-6)
    np.testing.assert_allclose(u2["layers"][0]["W"], [-(0.09 * 2 + 0.5 * 0.1), -(0.5 * 0.2)], rtol=1e-6)
    np.testing.assert_allclose(u1["heads"]["DSE"]["W"], [-0.04], rtol=1e-6)
    np.testing.assert_allclose(u2["heads"]["DSE"]["W"], [-(0.009 * 1 + 0.5 * 0.04)], rtol=1e-6)
    np.testing.assert_allclose(u2["emb"], [-0.05, 0.0], rtol=1e-6)


def test_clipnorm_clips_each_weight():
    cfg = TaggerConfig.from_dict(
        {
            "training.trainer": "fast",
            "training.optimizer.name": "sgd",
            "training.optimizer.learning_rate": 1.0,
            "training.optimizer.momentum": 0.0,
            "training.optimizer.clipnorm": 1.0,
        }
    )
    opt = ft.optimizer(cfg)
    params = {"emb": jnp.zeros(2), "layers": [{"W": jnp.zeros(2)}], "heads": {"DSE": {"W": jnp.zeros(1)}}}
    grads = {
        "emb": jnp.array([3.0, 4.0]),
        "layers": [{"W": jnp.array([0.3, 0.4])}],
        "heads": {"DSE": {"W": jnp.array([-2.0])}},
    }
    u, _ = opt.update(grads, opt.init(params), params)
    np.testing.assert_allclose(u["emb"], [-0.6, -0.8], rtol=1e-6)  # norm 5 -> 1
    np.testing.assert_allclose(u["layers"][0]["W"], [-0.3, -0.4], rtol=1e-6)  # under the limit: unchanged
    np.testing.assert_allclose(u["heads"]["DSE"]["W"], [1.0], rtol=1e-6)


def _said_and_fears():
    """60 training and 20 dev sentences of ten words in random order, "said" and "fears" each a DSE."""
    rng = np.random.default_rng(0)
    words = ["said", "the", "plan", "was", "robbery", "as", "usual", "fears", "he", "good"]

    def sent(k):
        n = int(rng.integers(3, 12))
        ws = [words[i] for i in rng.integers(0, len(words), n)]
        tags = ["B-DSE" if w in ("said", "fears") else "O" for w in ws]
        return Sentence([Token(w, 0, len(w)) for w in ws], {"DSE": tags}, doc=f"d{k}", index=k)

    return [sent(k) for k in range(60)], [sent(100 + k) for k in range(20)]


@pytest.mark.slow
def test_fast_training_writes_a_bundle_that_tags_like_the_fast_path(tmp_path):
    """A tiny run: the bundle's own tagging (NumPy runtime) reproduces the dev scores the fast path
    recorded for the best epoch, and a second run with the same seed gives the same scores."""
    from opinion_tagger.evaluation.scoring import evaluate_tagger
    from opinion_tagger.runtime.sentence_tagger import SentenceTagger
    from opinion_tagger.training.run import train
    from opinion_tagger.training.stopping import dev_score

    train_s, dev_s = _said_and_fears()
    cfg = TaggerConfig.from_dict(
        {
            "task": "dse",
            **SMALL,
            **SIX_EPOCHS,
            "model.recurrent": {"depth": 2, "hidden": 6},
            "training.o_weight": 0.5,
            "training.optimizer": {"name": "adam", "learning_rate": 0.02},
            "training.fast": {"l2": 1e-4, "activation_l2": 1e-4},
        }
    )
    _, meta = train(cfg, train_s, dev_s, tmp_path / "a", progress=False)
    for backend in ("keras", "onnx"):
        tagger = SentenceTagger.load(tmp_path / "a", backend=backend)
        assert dev_score(evaluate_tagger(tagger, dev_s)) == pytest.approx(dev_score(meta["scores"]["dev"]), abs=1e-12)
    assert dev_score(meta["scores"]["dev"]) > 0.5  # it learned the two opinion words
    assert [h["epoch"] for h in meta["training"]["history"] if "dev_score" in h] == [2, 4, 6]
    assert meta["training"]["device"].endswith("fast JAX trainer")
    _, again = train(cfg, train_s, dev_s, tmp_path / "b", progress=False)
    assert [h.get("dev_score") for h in again["training"]["history"]] == [
        h.get("dev_score") for h in meta["training"]["history"]
    ]
    # training continues from a bundle: its weights are the starting point (a step too small to move them
    # keeps its dev score), and a different network is refused
    _, cont = train(
        cfg.replace(
            {
                "training.optimizer.learning_rate": 1e-12,
                "training.stopping.max_epochs": 1,
                "training.stopping.eval_every": 1,
            }
        ),
        train_s,
        dev_s,
        tmp_path / "c",
        progress=False,
        init=tmp_path / "a",
    )
    assert dev_score(cont["scores"]["dev"]) == pytest.approx(dev_score(meta["scores"]["dev"]), abs=1e-9)
    with pytest.raises(TaggerError, match="only with the bundle's network"):
        train(
            cfg.replace({"model.recurrent.hidden": 7}),
            train_s,
            dev_s,
            tmp_path / "d",
            progress=False,
            init=tmp_path / "a",
        )


def test_config_rules():
    with pytest.raises(ValueError, match=r"training.fast.l2: 0.0001 needs training.trainer: fast"):
        TaggerConfig.from_dict({"training.fast.l2": 1e-4, "training.o_weight": 0.5})  # O weight: both trainers
    with pytest.raises(ValueError, match="softmax output"):
        TaggerConfig.from_dict({"training.trainer": "fast", "model.head.output": "crf"})
    with pytest.raises(ValueError, match=r"training.fast.lr_decay: 1.5 must be 1 or less"):
        TaggerConfig.from_dict({"training.trainer": "fast", "training.fast.lr_decay": 1.5})
    assert (
        TaggerConfig.from_dict({"training.trainer": "fast", "training.stopping.patience": 0}).training.stopping.patience
        == 0
    )


def test_epoch_plan_covers_every_sentence_once_with_aligned_lengths():
    lengths = [list(np.random.default_rng(1).integers(1, 60, 103)), list(np.random.default_rng(2).integers(1, 60, 77))]
    plan = fast_trainer.epoch_plan(lengths, 10, seed=1, epoch=3)
    assert len(plan) == 11  # ceil(103 / 10) slots; the smaller model has 8 batches spread over them
    for m, lens in enumerate(lengths):
        seen = [i for step in plan if step[m] for i in step[m]]
        assert sorted(seen) == list(range(len(lens)))
        assert sum(step[m] is not None for step in plan) == -(-len(lens) // 10)
    # models' batches at the same step hold sentences of similar length (ranks aligned)
    both = [step for step in plan if all(step)]
    gaps = [abs(np.median([lengths[0][i] for i in a]) - np.median([lengths[1][i] for i in b])) for a, b in both]
    assert np.median(gaps) < 10
    assert fast_trainer.epoch_plan(lengths, 10, 1, 3) == plan and fast_trainer.epoch_plan(lengths, 10, 1, 4) != plan


@pytest.mark.slow
def test_models_trained_together_equal_models_trained_alone(tmp_path):
    """Two folds in one vmapped run give the same losses and dev scores as each alone (same batch count,
    so the same batch order)."""
    from opinion_tagger.training.fast_trainer import train_fast, train_fast_together

    rng = np.random.default_rng(5)
    words = ["said", "the", "plan", "was", "robbery", "as", "usual", "fears", "he", "good"]

    def data(n, k0):
        out = []
        for k in range(n):
            ws = [words[i] for i in rng.integers(0, len(words), int(rng.integers(3, 12)))]
            out.append(
                Sentence(
                    [Token(w, 0, len(w)) for w in ws],
                    {"DSE": ["B-DSE" if w == "said" else "O" for w in ws]},
                    doc=f"d{k0 + k}",
                    index=k,
                )
            )
        return out

    a, b, dev = data(40, 0), data(40, 100), data(15, 200)
    cfg = TaggerConfig.from_dict({**TOGETHER, "training.stopping.max_epochs": 4})
    together = train_fast_together(cfg, [(a, dev, tmp_path / "ja"), (b, dev, tmp_path / "jb")], progress=False)
    for (train_s, name), (_, meta) in zip(((a, "a"), (b, "b")), together):
        _, alone = train_fast(cfg, train_s, dev, tmp_path / name, progress=False)
        h1, h2 = meta["training"]["history"], alone["training"]["history"]
        assert [h["loss"] for h in h1] == pytest.approx([h["loss"] for h in h2], rel=1e-4)
        assert [h.get("dev_score") for h in h1] == pytest.approx([h.get("dev_score") for h in h2], abs=1e-9)
        assert meta["training"]["trained_together"] == 2


def _toy_sentences(seed, n, k0=0):
    rng = np.random.default_rng(seed)
    words = ["said", "the", "plan", "was", "robbery", "as", "usual", "fears", "he", "good"]
    out = []
    for k in range(n):
        ws = [words[i] for i in rng.integers(0, len(words), int(rng.integers(3, 12)))]
        tags = ["B-DSE" if w in ("said", "fears") else "O" for w in ws]
        out.append(Sentence([Token(w, 0, len(w)) for w in ws], {"DSE": tags}, doc=f"d{k0 + k}", index=k))
    return out


def _histories(meta):
    """Epochs, then losses, then dev scores (-1 where an epoch was not evaluated), in one flat list."""
    h = meta["training"]["history"]
    return [e["epoch"] for e in h] + [e["loss"] for e in h] + [e.get("dev_score", -1) for e in h]


@pytest.mark.slow
def test_a_killed_run_resumes_from_its_last_complete_checkpoint_and_ends_as_the_uninterrupted_one(tmp_path, capsys):
    """Momentum, learning-rate decay (the optimizer's step count) and dropout all carry over: a run stopped
    after epoch 4 whose newest checkpoint was damaged resumes from epoch 2 and repeats the 6-epoch run."""
    from opinion_tagger.training import fast_checkpoint
    from opinion_tagger.training.run import train

    train_s, dev_s = _toy_sentences(0, 60), _toy_sentences(1, 20, 100)
    cfg = TaggerConfig.from_dict(
        {
            "task": "dse",
            **SMALL,
            **SIX_EPOCHS,
            "model.recurrent": {"depth": 2, "hidden": 6, "input_dropout": 0.2, "dropout": 0.1},
            "training.optimizer": {"name": "sgd", "momentum": 0.7, "learning_rate": 0.05},
            "training.fast.lr_decay": 0.99,
        }
    )
    _, whole = train(cfg, train_s, dev_s, tmp_path / "whole", progress=False)
    killed = tmp_path / "killed"
    train(
        cfg.replace({"training.stopping.max_epochs": 4}), train_s, dev_s, killed, progress=False
    )  # stands for a run killed after 4
    assert [e for e, _ in fast_checkpoint.checkpoint_dirs(killed)] == [4, 2]  # the two newest are kept
    arrays = killed / "checkpoint" / "epoch-0004" / "arrays.npz"
    arrays.write_bytes(arrays.read_bytes()[:100])  # a damaged (truncated) newest checkpoint
    with pytest.raises(TaggerError, match="a checkpoint exists; pass --resume"):
        train(cfg, train_s, dev_s, killed, progress=False)
    with pytest.raises(TaggerError, match="another configuration"):
        train(
            cfg.replace({"training.optimizer.learning_rate": 0.01}), train_s, dev_s, killed, progress=False, resume=True
        )
    capsys.readouterr()
    _, resumed = train(cfg, train_s, dev_s, killed, progress=False, resume=True)
    err = capsys.readouterr().err
    assert "skipping incomplete checkpoint of epoch 4" in err and "resuming from epoch 2" in err
    assert _histories(resumed) == pytest.approx(_histories(whole), rel=1e-6)
    assert resumed["training"]["best_epoch"] == whole["training"]["best_epoch"]
    assert dev_score_of(resumed) == pytest.approx(dev_score_of(whole), abs=1e-12)


def dev_score_of(meta):
    from opinion_tagger.training.stopping import dev_score

    return dev_score(meta["scores"]["dev"])


@pytest.mark.slow
def test_models_trained_together_resume_from_the_newest_epoch_all_have_checkpointed(tmp_path):
    from opinion_tagger.training.fast_trainer import train_fast_together

    a, b, dev = _toy_sentences(2, 40), _toy_sentences(3, 40, 100), _toy_sentences(4, 15, 200)
    cfg = TaggerConfig.from_dict({**TOGETHER, "training.stopping.max_epochs": 6})
    whole = train_fast_together(cfg, [(a, dev, tmp_path / "wa"), (b, dev, tmp_path / "wb")], progress=False)
    runs = [(a, dev, tmp_path / "ka"), (b, dev, tmp_path / "kb")]
    train_fast_together(cfg.replace({"training.stopping.max_epochs": 4}), runs, progress=False)
    (tmp_path / "kb" / "checkpoint" / "epoch-0004" / "manifest.json").unlink()  # killed while saving b's
    resumed = train_fast_together(cfg, runs, progress=False, resume=True)
    for (_, w), (_, r) in zip(whole, resumed):
        assert _histories(r) == pytest.approx(_histories(w), rel=1e-6)
        assert r["training"]["best_epoch"] == w["training"]["best_epoch"]


def test_distillation_loss_by_hand():
    """Uniform predictions (zero output weights) lose log 3 against any target distribution; a teacher
    distribution equal to the gold one-hot tags gives the gold loss whatever its weight."""
    cfg = BY_HAND
    model = _model(cfg)
    params, frozen = ft.params_from_model(model, cfg)
    ids = np.array([[2, 3, 4]], dtype="int32")
    gold = np.array([[0, 1, 2]], dtype="int32")  # O (weight 0.5), B, I
    one_hot = np.eye(3, dtype="float32")[gold]
    distil = cfg.replace({"training.distillation.teacher": "t", "training.distillation.weight": 0.3})
    plain = float(ft.loss_fn(params, frozen, ids, {"DSE": gold}, cfg))
    assert float(ft.loss_fn(params, frozen, ids, {"DSE": gold, "DSE/soft": one_hot}, distil)) == pytest.approx(
        plain, rel=1e-6
    )
    # by hand on the network's own log-probabilities: 0.7 x gold's cross-entropy + 0.3 x the teacher's
    logits, _, _ = ft.forward(params, frozen, ids, cfg)
    logp = np.asarray(jax.nn.log_softmax(logits["DSE"]))[0]
    teacher = np.array([[[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.1, 0.1, 0.8]]], dtype="float32")
    weights = np.array([0.5, 1.0, 1.0])
    gold_ce = -logp[np.arange(3), gold[0]]
    soft_ce = -(teacher[0] * logp).sum(-1)
    expected = float((weights * (0.7 * gold_ce + 0.3 * soft_ce)).sum())
    got = float(ft.loss_fn(params, frozen, ids, {"DSE": gold, "DSE/soft": teacher}, distil))
    assert got == pytest.approx(expected, rel=1e-5)
    model.get_layer("DSE").set_weights([np.zeros((4, 3), "float32"), np.zeros(3, "float32")])
    params, frozen = ft.params_from_model(model, cfg)
    only_teacher = cfg.replace({"training.distillation.teacher": "t", "training.distillation.weight": 1.0})
    got = float(ft.loss_fn(params, frozen, ids, {"DSE": gold, "DSE/soft": teacher}, only_teacher))
    assert got == pytest.approx(2.5 * np.log(3), rel=1e-6)


def test_distillation_config_rules():
    with pytest.raises(ValueError, match="go together"):
        TaggerConfig.from_dict({"training.trainer": "fast", "training.distillation.teacher": "some/bundle"})
    with pytest.raises(ValueError, match="go together"):
        TaggerConfig.from_dict({"training.trainer": "fast", "training.distillation.weight": 0.5})
    with pytest.raises(ValueError, match=r"training.distillation.weight: 1.5 must be 1 or less"):
        TaggerConfig.from_dict(
            {
                "training.trainer": "fast",
                "training.distillation.teacher": "some/bundle",
                "training.distillation.weight": 1.5,
            }
        )
    TaggerConfig.from_dict(
        {"training.distillation.teacher": "some/bundle", "training.distillation.weight": 0.5}
    )  # both trainers distil
    with pytest.raises(ValueError, match="training.distillation.copies: 2 needs a teacher"):
        TaggerConfig.from_dict({"training.trainer": "fast", "training.distillation.copies": 2})
    with pytest.raises(ValueError, match="training.distillation.copies: -1 must be 0 or more"):
        TaggerConfig.from_dict(
            {
                "training.trainer": "fast",
                "training.distillation.teacher": "some/bundle",
                "training.distillation.weight": 0.5,
                "training.distillation.copies": -1,
            }
        )
    with pytest.raises(ValueError, match=r"training.distillation.noise: 1.5 must be 1 or less"):
        TaggerConfig.from_dict(
            {
                "training.trainer": "fast",
                "training.distillation.teacher": "some/bundle",
                "training.distillation.weight": 0.5,
                "training.distillation.copies": 1,
                "training.distillation.noise": 1.5,
            }
        )
    TaggerConfig.from_dict(
        {
            "training.distillation.teacher": "some/bundle",
            "training.distillation.weight": 0.5,
            "training.distillation.copies": 1,
        }
    )  # noisy copies too


def test_noisy_copies_replace_words_at_the_rate_with_words_of_the_text():
    """Distillation's noisy copies: each sentence ``copies`` times, as long as it, untagged; at noise 0 the
    words themselves, at noise 1 none of a sentence's own words where the text has other words only elsewhere;
    at 0.25, about a quarter replaced (by words of the text); the same seed gives the same copies."""
    from opinion_tagger.sentences import Token
    from opinion_tagger.training.distillation import noisy_copies

    def sentence(words, doc):
        return Sentence([Token(w, 0, 0) for w in words], {"DSE": ["O"] * len(words)}, doc=doc)

    text = [sentence([f"w{k}" for k in range(50)], "a"), sentence([f"v{k}" for k in range(30)], "b")]
    words = {w for s in text for w in s.words}
    assert [c.words for c in noisy_copies(text, 2, 0.0, 1)] == [s.words for s in text] * 2
    copies = noisy_copies(text, 3, 0.25, 7)
    assert [(c.doc, len(c), c.tags) for c in copies] == [(s.doc, len(s), {}) for s in text] * 3
    assert all(w in words for c in copies for w in c.words)
    changed = sum(a != b for c, s in zip(copies, text * 3) for a, b in zip(c.words, s.words))
    assert 0.15 * 240 < changed < 0.3 * 240  # 240 words; a replacement may draw the word itself (1 in 80)
    assert [c.words for c in noisy_copies(text, 3, 0.25, 7)] == [c.words for c in copies]
    assert [c.words for c in noisy_copies(text, 3, 0.25, 8)] != [c.words for c in copies]


@pytest.mark.slow
def test_a_student_trains_on_its_teachers_probabilities(tmp_path):
    """A tiny teacher bundle, then a student distilled from it: the teacher's probabilities reach the loss
    (a student that learns only from the teacher tags as it does), the bundle records its teacher, and a
    teacher that lacks a type, a missing teacher or a {fold} without a fold are refused."""
    from opinion_tagger.runtime.sentence_tagger import SentenceTagger
    from opinion_tagger.training.run import train

    train_s, dev_s = _said_and_fears()
    cfg = TaggerConfig.from_dict(
        {
            "task": "dse",
            **SMALL,
            **SIX_EPOCHS,
            "model.recurrent": {"depth": 1, "hidden": 6},
            "training.optimizer": {"name": "adam", "learning_rate": 0.02},
        }
    )
    trained_on = {"data": {"fold": 0, "documents": {"train": [s.doc for s in train_s]}}}
    train(cfg, train_s, dev_s, tmp_path / "teacher", progress=False, record=trained_on)
    teacher = SentenceTagger.load(tmp_path / "teacher")
    # the student's gold tags say nothing (all O); the teacher's probabilities say where DSEs are
    blind = [Sentence(s.tokens, {"DSE": ["O"] * len(s)}, doc=s.doc, index=s.index) for s in train_s]
    student_cfg = cfg.replace(
        {
            "training.distillation.teacher": str(tmp_path / "teacher"),
            "training.distillation.weight": 1.0,
            "training.stopping.max_epochs": 10,
            "training.o_weight": 1.0,
        }
    )
    student, meta = train(student_cfg, blind, dev_s, tmp_path / "student", progress=False)
    sentences = [s.words for s in dev_s]
    taught = teacher.predict_tags(sentences)
    assert any("B-DSE" in row for row in taught["DSE"])  # not all O: the gold tags alone would teach that
    assert student.predict_tags(sentences) == taught
    assert meta["training"]["teacher"] == {"bundle": str(tmp_path / "teacher"), "data": {"fold": 0}, "copies": 0}
    assert SentenceTagger.load(tmp_path / "student").config.training.distillation.teacher == str(tmp_path / "teacher")
    # with noisy copies of the training text, which the teacher alone tags, the student still tags as it does
    noisy, meta = train(
        student_cfg.replace({"training.distillation.copies": 2}), blind, dev_s, tmp_path / "noisy", progress=False
    )
    assert meta["training"]["teacher"]["copies"] == 2 * len(blind)
    assert noisy.predict_tags(sentences) == taught
    # refused: a teacher trained on the run's held-out documents (as its meta.json and the run's record say), a
    # teacher that does not tag ESE, a teacher that is not there, a {fold} path with no fold
    held_out = {"data": {"documents": {"dev": [s.doc for s in dev_s], "test": [train_s[3].doc]}}}
    with pytest.raises(TaggerError, match="the teacher was trained on 1 of this run's dev and test documents"):
        train(student_cfg, blind, dev_s, tmp_path / "w", progress=False, record=held_out)
    joint = cfg.replace(
        {
            "task": "joint",
            "training.distillation.teacher": str(tmp_path / "teacher"),
            "training.distillation.weight": 0.5,
        }
    )
    both = [Sentence(s.tokens, {"DSE": s.tags["DSE"], "ESE": ["O"] * len(s)}, doc=s.doc) for s in train_s]
    with pytest.raises(TaggerError, match="the teacher does not tag ESE"):
        train(joint, both, [], tmp_path / "x", progress=False)
    for teacher, out, refused in (("nothing", "y", "no such teacher bundle"), ("fold{fold}", "z", "names a {fold}")):
        taught = student_cfg.replace({"training.distillation.teacher": str(tmp_path / teacher)})
        with pytest.raises(TaggerError, match=refused):
            train(taught, train_s, dev_s, tmp_path / out, progress=False)
