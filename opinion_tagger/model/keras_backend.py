"""The Keras back end of the runtime: a bundle's network in Keras (the ``train`` extra), for training and for
``--backend keras`` (e.g. Keras's JAX back end on a GPU).  Registered as the ``keras`` entry of the
``opinion_tagger.backends`` entry-point group, which ``opinion_tagger.runtime.network`` reads: the runtime
itself never imports Keras."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from opinion_tagger.config import TaggerConfig
from opinion_tagger.errors import BundleError, TaggerError
from opinion_tagger.extras import require
from opinion_tagger.model.keras_file import check_network, keras_config_json
from opinion_tagger.model.weights import read_weights
from opinion_tagger.runtime.batching import bucket_length, network_inputs
from opinion_tagger.runtime.bundle import (
    DELTA,
    KERAS,
    read_config,
    read_vocab,
    training_state,
    training_state_file,
    verify_file,
)
from opinion_tagger.runtime.frame_heads import STATES
from opinion_tagger.runtime.sentence_tagger import SentenceTagger

WORD_ALIGNED = ("words", "word_starts", "context")  # network inputs with one row per word


def import_keras(verbose: bool) -> None:
    """Import TensorFlow (and Keras) for a command that trains or exports, with standard error closed below
    Python unless ``verbose``: importing it prints absl, oneDNN and CUDA lines there that no setting turns
    off (``TF_CPP_MIN_LOG_LEVEL`` does not reach the lines logged before absl starts)."""
    if verbose or "tensorflow" in sys.modules:
        import keras  # noqa: F401

        return
    sys.stderr.flush()
    saved, null = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 2)
    try:
        import keras  # noqa: F401
        import tensorflow  # noqa: F401
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)


class KerasNetwork:
    """A Keras model as the runtime's ``Network``."""

    fixed_lengths = True  # a compiled graph per input shape: inputs padded to a few lengths

    def __init__(self, model, config: TaggerConfig):
        self.model, self.config = model, config
        self._fn: Callable[[Any], Any] | None = None
        self.context_encoder: Any = None  # frozen encoder vectors (``MiniLMEncoder``), made when first needed

    def forward(self, inputs) -> dict[str, np.ndarray]:
        """``inputs``: the word-id array, or a dict of arrays (``features.network_inputs``)."""
        import keras

        if keras.backend.backend() != "tensorflow":  # jax compiles one function per input shape:
            return self._forward_padded(inputs)  # pad the words to a few lengths
        import tensorflow as tf

        if self._fn is None:
            spec = lambda a: tf.TensorSpec([None] * a.ndim, tf.as_dtype(a.dtype))
            sig = {k: spec(v) for k, v in inputs.items()} if isinstance(inputs, dict) else spec(inputs)
            self._fn = tf.function(lambda x: self.model(x, training=False), input_signature=[sig])
        return self._outputs(self._fn(inputs), None)

    def _outputs(self, out, n: int | None) -> dict[str, np.ndarray]:
        """Per type [B, n, 3]; with frame heads, the states [B, n, D] too."""
        kept = {t: np.asarray(out[t])[:, :n, :3] for t in self.config.types}
        if self.config.model.frames.enabled:
            kept[STATES] = np.asarray(out[STATES])[:, :n]
        return kept

    def _forward_padded(self, inputs) -> dict[str, np.ndarray]:
        words = inputs["words"] if isinstance(inputs, dict) else inputs
        n = words.shape[1]
        extra = bucket_length(n) - n

        def pad(a):
            return np.pad(a, [(0, 0), (0, extra)] + [(0, 0)] * (a.ndim - 2))

        if extra:  # padding words are masked (id 0), so the real words' outputs do not change
            inputs = (
                {k: pad(v) if k in WORD_ALIGNED else v for k, v in inputs.items()}
                if isinstance(inputs, dict)
                else pad(inputs)
            )
        return self._outputs(self.model.predict_on_batch(inputs), n)

    def crf_params(self, typ: str):
        crf = self.model.get_layer(typ)
        return tuple(np.asarray(w) for w in (crf.transitions, crf.start, crf.end))

    def frozen_inputs(self, ids: np.ndarray, words) -> dict[str, np.ndarray]:
        """The inputs of a network on frozen encoder vectors, made by the Keras encoder (cached per sentence)."""
        if self.context_encoder is None:
            from opinion_tagger.model.minilm import MiniLMEncoder

            self.context_encoder = MiniLMEncoder(self.config.model.encoder.pooling)
        return network_inputs(ids, words, context=self.context_encoder.encode(words))


def sentence_tagger(model, vocab, config: TaggerConfig, meta: dict | None = None, heads=None) -> SentenceTagger:
    """A ``SentenceTagger`` on a Keras model in memory (training's dev evaluation and the bundle it writes);
    ``heads``: its frame heads (``opinion_tagger.runtime.frame_heads.FrameHeads``), where it has them."""
    return SentenceTagger(KerasNetwork(model, config), vocab, config, meta, heads)


def load(path: Path, config: TaggerConfig, vocab, meta: dict, threads: int | None = None) -> KerasNetwork:
    """The ``keras`` back end (entry point ``opinion_tagger.backends``): a checked bundle's network in Keras."""
    require("train", "the keras back end")
    import_keras(logging.getLogger().isEnabledFor(logging.WARNING))
    return KerasNetwork(load_keras_model(path), config)


def load_delta_model(path: str | Path):
    """Rebuild the network of a ``weights.npz`` bundle from its config.json (the encoder from the
    pinned base weights) and put the bundle's weights in, each checked by name and shape."""
    from opinion_tagger.model.network import build_model

    path = Path(path)
    config, vocab = read_config(path / "config.json"), read_vocab(path / "vocab.txt")
    dim = config.word_dim
    try:  # the encoder comes from the pinned base weights: one line naming what is missing or damaged
        model = build_model(config, len(vocab), dim, pretrained=True)
    except TaggerError as exc:
        raise BundleError(f"{path}: {exc}") from None
    read_weights(model, path / DELTA, base=False)
    return model


def load_keras_model(path: str | Path):
    """The bundle's Keras network, from its training state where it has one (``model.keras``, loaded in safe
    mode: no arbitrary code; or ``weights.npz``), checked against the manifest and config.json; else rebuilt
    from the weights of its model.onnx (``opinion_tagger.model.onnx_weights``).  ``load_bundle_files`` has
    checked the rest of the bundle."""
    path = Path(path)
    state = training_state(path)
    if state is None:  # the bundled models: the network rebuilt from model.onnx's weights
        from opinion_tagger.model.onnx_weights import model_from_onnx

        return model_from_onnx(path)
    verify_file(path, state)
    config, vocab = read_config(path / "config.json"), read_vocab(path / "vocab.txt")
    if training_state_file(config) != state:
        raise BundleError(
            f"{path / 'config.json'}: field context_lora_rank asks for {training_state_file(config)} "
            f"but the bundle has {state}"
        )
    if state == DELTA:
        return load_delta_model(path)
    check_network(path, config, len(vocab))
    import keras

    import opinion_tagger.model.network  # noqa: F401  (registers the custom layers)

    if '"BertBackbone"' in keras_config_json(path / KERAS):
        try:
            import keras_hub  # noqa: F401  (registers the fine-tuned encoder's layers)
        except ImportError:
            raise BundleError(
                f"{path}: this model contains the MiniLM encoder, which needs keras-hub: "
                "pip install 'opinion-tagger[train]'"
            ) from None
    try:
        model = keras.models.load_model(path / KERAS, compile=False, safe_mode=True)
    except Exception as exc:  # keras raises many types for a damaged file
        raise BundleError(f"{path / KERAS}: cannot load the model: {str(exc).splitlines()[0]}") from None
    return model
