"""Data-parallel training with Keras 3's distribution API on the JAX backend:
``keras.distribution.DataParallel`` over N devices around the ordinary trainer
(``opinion_tagger.training.trainer``).  The variables are replicated on every device and each
global batch (``--batch-size``) is split along its first axis, so each device
computes ``batch_size / N`` sentences of it; gradients are averaged across
devices by XLA.

    KERAS_BACKEND=jax opinion-tagger train ... --devices all
    KERAS_BACKEND=jax XLA_FLAGS=--xla_force_host_platform_device_count=2 opinion-tagger train ... --devices 2
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from opinion_tagger.errors import TaggerError


def select_devices(spec: str) -> list[str]:
    """``all`` or a count: the first N of Keras's devices (GPUs if there are any, else CPUs)."""
    import keras

    if keras.backend.backend() != "jax":
        raise TaggerError(
            f"--devices needs the JAX backend (KERAS_BACKEND=jax); Keras runs on {keras.backend.backend()}"
        )
    devices = keras.distribution.list_devices()
    if spec == "all":
        return devices
    try:
        n = int(spec)
    except ValueError:
        raise TaggerError(f"--devices {spec!r}: give all or a number") from None
    if not 1 <= n <= len(devices):
        raise TaggerError(f"--devices {n}: {len(devices)} device(s) available ({', '.join(devices)})")
    return devices[:n]


@contextmanager
def data_parallel(devices: list[str], batch_size: int) -> Iterator[object]:
    """Keras's global distribution set to ``DataParallel(devices)`` inside the block."""
    import keras

    if batch_size % len(devices):
        raise TaggerError(f"--batch-size {batch_size} cannot be split evenly over {len(devices)} devices")
    previous = keras.distribution.distribution()
    dist = keras.distribution.DataParallel(devices=devices)
    keras.distribution.set_distribution(dist)
    try:
        yield dist
    finally:
        keras.distribution.set_distribution(previous)


def train_data_parallel(
    config,
    train_sentences,
    dev_sentences,
    out_dir,
    devices: str = "all",
    extra_words=(),
    resume: bool = False,
    progress: bool = True,
    record: dict | None = None,
    context_cache=None,
    init=None,
):
    """The Keras trainer (``opinion_tagger.training.trainer``) under ``DataParallel``; the bundle's training
    record names the devices and the per-device batch."""
    from opinion_tagger.training.trainer import Trainer

    if config.training.trainer != "keras":
        raise TaggerError(
            f"--devices splits the batches of the Keras trainer; trainer {config.training.trainer!r} runs on one device"
        )
    chosen = select_devices(devices)
    record = dict(record or {})
    record["data_parallel"] = {
        "devices": chosen,
        "global_batch": config.training.batch_size,
        "per_device_batch": config.training.batch_size // len(chosen),
    }
    with data_parallel(chosen, config.training.batch_size):
        return Trainer(config, out_dir, progress, context_cache=context_cache, init=init).run(
            train_sentences, dev_sentences, extra_words, resume, record
        )
