"""Frame heads for a trained network (``opinion-tagger train --init-from BUNDLE --heads-only``): the network
stays as it is, and only the frame heads (``opinion_tagger.model.frame_heads``) learn, on its states.

The heads of ``model.frames.detach`` send no gradient into the network, so training them beside the network or after
it differ only in the states they see: here the finished network's, as the runtime gives them.  Those are
computed once per training sentence (inference: no dropout), then the heads train on them for up to
``max_epochs`` epochs (Adam at the peak learning rate, constant; batches of ``batch_size`` in a seeded order;
dropout on the states at the network's own rate, as the joint training's heads see them), the epoch kept by
the frames' loss on the dev sentences (without dev sentences: the last).  The heads' output weights start at
zero, every probability uniform: a trained network's states can run large (a ReLU cell's to tens), on which
random weights would start a softmax saturated on a class that its clipped log-likelihood then never leaves.
Minutes where training the network takes hours; the bundle written is the network unchanged with its heads
(``frames.onnx``)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from opinion_tagger.config import TaggerConfig
from opinion_tagger.errors import TaggerError
from opinion_tagger.sentences import Sentence


def heads_config(saved: TaggerConfig, config: TaggerConfig, init: str | Path) -> TaggerConfig:
    """The configuration of the bundle with heads: the trained bundle's (``saved``) with the frame fields of
    ``config`` (heads on, detached); TaggerError where ``config`` describes another network."""
    if not config.model.frames.enabled:
        raise TaggerError("--heads-only trains frame heads: give --frames")
    frames = {p: v for p, v in config.dotted().items() if p.startswith("model.frames.")}
    frames["model.frames.detach"] = True
    if saved.replace({**frames, **config.training_fields()}) != config.replace({"model.frames.detach": True}):
        raise TaggerError(f"{init}: --heads-only keeps the bundle's network: give no option that changes it")
    return saved.replace(frames)


# the heads' output weights, which start at zero (see the module's docstring)
ZERO_STARTS = ("polarity/kernel", "intensity/kernel", "classes", "start_v", "end_v", "attitude/kernel", "targets/out")


def _network_inputs(inputs):
    """The network's part of a batch's inputs (without the heads' span inputs)."""
    net = {k: v for k, v in inputs.items() if not k.endswith("_spans")}
    return net["words"] if list(net) == ["words"] else net


class _States:
    """A set of sentences as the heads read them: per length-bucketed batch, the network's states, the word
    ids, the spans and the frames' targets."""

    def __init__(self, network, vocab, config: TaggerConfig, sentences: Sequence[Sentence], pieces, size, progress):
        from opinion_tagger.runtime.batching import batches
        from opinion_tagger.runtime.frame_heads import STATES
        from opinion_tagger.training.progress import EpochProgress
        from opinion_tagger.training.trainer import batch_arrays

        self.batches: list[tuple[dict, dict]] = []
        for idx in EpochProgress(batches([len(s) for s in sentences], size), 0, progress):
            inputs, targets, _ = batch_arrays(vocab, config, sentences, idx, len(idx), None, pieces)
            states = np.asarray(network.predict_on_batch(_network_inputs(inputs))[STATES], dtype="float32")
            ids = inputs["words"] if isinstance(inputs, dict) else inputs
            x = {"states": states, "words": ids, **{k: v for k, v in inputs.items() if k in _span_names(config)}}
            y = {k: v for k, v in targets.items() if k not in config.trained_types}
            self.batches.append((x, y))

    def loss(self, heads) -> float:
        """The heads' mean loss over the batches (inference)."""
        return float(np.mean([heads.test_on_batch(x, y, return_dict=True)["loss"] for x, y in self.batches]))


def _span_names(config: TaggerConfig) -> set[str]:
    return {f"{t}_spans" for t in config.types}


def head_network(config: TaggerConfig, width: int, learning_rate: float):
    """The heads alone, on inputs ``states`` [B, T, width], ``words`` [B, T] and each type's spans: the same
    layers (names and weights) as the training network's, compiled with the heads' losses (Adam at
    ``learning_rate``)."""
    import keras
    from keras import layers

    from opinion_tagger.model.frame_heads import add_frame_heads, frame_losses

    states = keras.Input(shape=(None, width), dtype="float32", name="states")
    words = keras.Input(shape=(None,), dtype="int32", name="words")
    rate = config.model.recurrent.dropout if config.model.recurrent.depth else config.model.recurrent.input_dropout
    dropped = layers.Dropout(rate, name="states_dropout")(states)
    spans, outputs = add_frame_heads(config, dropped, words, {"dtype": "float32"})
    model = keras.Model({"states": states, "words": words, **spans}, outputs, name="frame_heads")
    for weight in model.weights:  # every output starts uniform (see the module's docstring)
        if weight.path.endswith(ZERO_STARTS):
            weight.assign(np.zeros(weight.shape, "float32"))
    model.compile(optimizer=keras.optimizers.Adam(learning_rate), loss=frame_losses(config))
    return model


def fit_frame_heads(
    config: TaggerConfig,
    train: Sequence[Sentence],
    dev: Sequence[Sentence],
    out_dir: str | Path,
    init: str | Path,
    record: dict | None = None,
    progress: bool = True,
):
    """Train frame heads on the network of the bundle ``init`` and write the bundle with them to ``out_dir``;
    returns (SentenceTagger, meta) as training does.  ``config``: the bundle's configuration with the frame
    fields wanted (``heads_config``) and the heads' training: its ``learning_rate``, ``max_epochs``, ``patience``,
    ``batch_size`` and ``seed`` (recorded in meta.json's ``training.heads_only``; the bundle's configuration keeps
    its network's training)."""
    from opinion_tagger.evaluation.scoring import evaluate_tagger
    from opinion_tagger.model.frame_heads import head_arrays, set_head_arrays
    from opinion_tagger.model.keras_backend import load_keras_model, sentence_tagger
    from opinion_tagger.model.network import build_model, build_training_model
    from opinion_tagger.runtime.bundle import load_bundle_files
    from opinion_tagger.training.frame_data import check_frames
    from opinion_tagger.training.models import save_trained, set_seeds
    from opinion_tagger.training.progress import EpochProgress, say
    from opinion_tagger.training.stopping import judge, out_of_patience
    from opinion_tagger.training.trainer import device_name

    if not train:
        raise TaggerError("no training sentences")
    check_frames(train)
    vocab, saved, before = load_bundle_files(init)
    fit = config.training  # the heads' training; the bundle's configuration keeps its network's
    config = heads_config(saved, config, init)
    set_seeds(fit.seed)
    trained = load_keras_model(init)
    dim = trained.get_layer("embedding").dim
    network = build_model(config, len(vocab), dim, pretrained=False)  # float32 and with states, as the runtime's
    for layer in trained.layers:
        network.get_layer(layer.name).set_weights(layer.get_weights())
    pieces = None
    if config.model.encoder.fine_tune:
        from opinion_tagger.runtime.wordpieces import word_pieces

        pieces = word_pieces(config.encoder)
    elif config.model.encoder.name:
        raise TaggerError(f"{init}: --heads-only needs a network without frozen encoder vectors")
    t0 = time.perf_counter()
    say(f"the network's states on {len(train)} training and {len(dev)} dev sentences", progress)
    train_states = _States(network, vocab, config, train, pieces, fit.batch_size, progress)
    dev_states = _States(network, vocab, config, dev, pieces, fit.batch_size, progress) if dev else None
    dev_report = evaluate_tagger(sentence_tagger(network, vocab, config), dev) if dev else {}
    heads = head_network(config, train_states.batches[0][0]["states"].shape[-1], fit.optimizer.learning_rate)
    best: dict[str, np.ndarray] = {}
    history: list[dict] = []
    best_score, bad, best_epoch = None, 0, 0
    stopping = fit.stopping
    for epoch in range(1, stopping.max_epochs + 1):
        start = time.perf_counter()
        order = np.random.default_rng([fit.seed, epoch]).permutation(len(train_states.batches))
        losses = [
            float(heads.train_on_batch(*train_states.batches[k], return_dict=True)["loss"])
            for k in EpochProgress(order, epoch, progress)
        ]
        entry: dict[str, Any] = {"epoch": epoch, "loss": float(np.mean(losses)), "seconds": time.perf_counter() - start}
        if dev_states is not None:
            entry["dev_loss"] = dev_states.loss(heads)
        entry["dev"] = dev_report
        history.append(entry)
        dev_part = f", dev loss {entry['dev_loss']:.4f}" if "dev_loss" in entry else ""
        say(f"heads epoch {epoch}: loss {entry['loss']:.4f}{dev_part}, {entry['seconds']:.1f}s", progress)
        if dev_states is None:  # nothing to choose on: the last epoch's heads
            best_epoch, best = epoch, head_arrays(heads, config)
            continue
        # a loss, not a dev F1: every evaluation without a lower one counts against the patience
        improved, bad = judge(best_score, bad, -entry["dev_loss"], has_dev=False)
        if improved:
            best_score, best_epoch, best = -entry["dev_loss"], epoch, head_arrays(heads, config)
        if out_of_patience(stopping.patience, bad):
            break
    model = build_training_model(config, len(vocab), dim, pretrained=False)
    for layer in network.layers:
        model.get_layer(layer.name).set_weights(layer.get_weights())
    set_head_arrays(model, config, best)
    heads_only = {
        "optimizer": "adam",
        "learning_rate": fit.optimizer.learning_rate,
        "batch_size": fit.batch_size,
        "max_epochs": stopping.max_epochs,
        "patience": stopping.patience,
        "seed": fit.seed,
        "best_epoch": best_epoch,
    }
    network_record = before.get("training", {})  # the network's own training, also when heads were fitted before
    network_record = network_record.get("network", network_record) if "heads_only" in network_record else network_record
    record = {**(record or {}), "init": str(init), "heads_only": heads_only, "network": network_record}
    return save_trained(
        config,
        model,
        vocab,
        out_dir,
        record,
        history,
        best_epoch,
        time.perf_counter() - t0,
        device_name(),
        dev,
    )
