"""Where a training run's network comes from and where it goes, the same for both trainers: a fresh
network for a configuration, a trained bundle to continue (only the configuration's training fields may
differ), and the bundle written at the end."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from opinion_tagger.config import TaggerConfig
from opinion_tagger.errors import TaggerError
from opinion_tagger.model.embeddings import build_vocabulary, initial_embeddings
from opinion_tagger.sentences import Sentence


def set_seeds(seed: int) -> None:
    import keras

    keras.utils.set_random_seed(seed)


def fresh_model(config: TaggerConfig, train: Sequence[Sentence], extra_words: Iterable[str]):
    """(Vocabulary, Keras model) to train from scratch: the vocabulary of ``train`` and ``extra_words``, the
    initial word vectors set (pretrained ones frozen unless ``fine_tune``).  Call ``set_seeds`` first."""
    from opinion_tagger.model.network import build_training_model, set_embeddings

    vocab = build_vocabulary(config, (w for s in train for w in s.words), extra_words)
    matrix, pretrained = initial_embeddings(config, vocab)
    model = build_training_model(config, len(vocab), matrix.shape[1])
    set_embeddings(model, matrix, np.zeros(len(vocab), "float32") if config.model.embeddings.fine_tune else pretrained)
    return vocab, model


def bundle_start(init: str | Path, config: TaggerConfig):
    """(Vocabulary, Keras model) of a trained bundle that training continues from (either trainer); its
    network must be the one ``config`` describes (only the training fields may differ)."""
    from opinion_tagger.model.keras_backend import load_keras_model
    from opinion_tagger.runtime.bundle import load_bundle_files

    if config.auxiliary_types:
        raise TaggerError(f"{init}: auxiliary heads train from scratch, not from a bundle")
    if config.training.precision != "float32":
        raise TaggerError(
            f"{init}: training from a bundle is in float32 (precision {config.training.precision} trains from scratch)"
        )
    vocab, saved, _ = load_bundle_files(init)
    if saved.replace(config.training_fields()) != config:
        raise TaggerError(
            f"{init}: training can continue only with the bundle's network (its task, cell, depth, sizes and features)"
        )
    model = load_keras_model(init)
    return vocab, with_frame_heads(model, config, len(vocab), init) if config.model.frames.enabled else model


def with_frame_heads(model, config: TaggerConfig, vocab_size: int, init: str | Path):
    """The training network (the frame heads and their span inputs) of a bundle with frame heads: the weights of
    its network, ``model``, and the heads' from its ``frames.onnx`` (checked by the bundle's manifest)."""
    from opinion_tagger.model.frame_heads import set_head_arrays
    from opinion_tagger.model.network import build_training_model
    from opinion_tagger.model.onnx_weights import bundle_head_arrays

    training = build_training_model(config, vocab_size, model.get_layer("embedding").dim)
    for layer in model.layers:
        training.get_layer(layer.name).set_weights(layer.get_weights())
    set_head_arrays(training, config, bundle_head_arrays(init, config))
    return training


def save_trained(
    config: TaggerConfig,
    model,
    vocab,
    out_dir: str | Path,
    record: dict,
    history: list[dict],
    best_epoch: int,
    train_seconds: float,
    device: str,
    dev: Sequence[Sentence] = (),
):
    """Write the bundle of a finished training run (the weights in ``model`` are the kept epoch's) and
    return (SentenceTagger, meta); meta holds the run's record, history without dev reports, and its dev scores
    (with frame heads, the frames' on ``dev`` too: ``dev_frames``).  Both trainers end here."""
    from opinion_tagger.export.bundle_writer import save_bundle
    from opinion_tagger.model.keras_backend import sentence_tagger
    from opinion_tagger.model.network import build_model, count_parameters

    clean = build_model(config, len(vocab), model.get_layer("embedding").dim, pretrained=False)
    for layer in clean.layers:  # a fresh model: no optimizer state, no auxiliary heads in the bundle
        layer.set_weights(model.get_layer(layer.name).get_weights())
    best = next(h for h in history if h["epoch"] == best_epoch)
    meta = {
        "training": {
            **record,
            "epochs": history[-1]["epoch"] if history else 0,
            "best_epoch": best_epoch,
            "train_seconds": train_seconds,
            "device": device,
            "parameters": count_parameters(clean),
            "history": [{k: v for k, v in h.items() if k != "dev"} for h in history],
        },
        "scores": {"dev": best["dev"]},
    }
    heads = None
    runtime_heads = None
    if config.model.frames.enabled:  # the heads go to frames.onnx, which the runtime runs in ONNX Runtime
        from opinion_tagger.export.frames_export import frame_heads
        from opinion_tagger.model.frame_heads import head_arrays

        heads = head_arrays(model, config)
        runtime_heads = frame_heads(heads, config)
        if dev:
            from opinion_tagger.evaluation.scoring import evaluate_frames

            tagger = sentence_tagger(clean, vocab, config, heads=runtime_heads)
            meta["scores"]["dev_frames"] = evaluate_frames(tagger, dev)
    save_bundle(out_dir, clean, vocab, config, meta, frame_heads=heads)
    return sentence_tagger(clean, vocab, config, meta, runtime_heads), meta
