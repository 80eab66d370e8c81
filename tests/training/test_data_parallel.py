"""Data-parallel training (``train --devices``) on two virtual CPU devices under JAX:
the same losses and dev score as one device, the global batch split across the
devices, the model's variables replicated on both."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("jax", reason="jax not installed")
ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow

SCRIPT = r"""
import json, sys
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/tests"]
import numpy as np
import jax, keras
from conftest import make_sample
from opinion_tagger.config import TaggerConfig
from opinion_tagger.corpus import MPQACorpus, mpqa_sentences
from opinion_tagger.training.data_parallel import data_parallel, select_devices, train_data_parallel
from opinion_tagger.training.run import train

out = sys.argv[2]
sents = list(mpqa_sentences(MPQACorpus(make_sample.write_sample(out + "/mpqa"))))
cfg = TaggerConfig.from_dict({
    "task": "joint",
    "model.recurrent": {"cell": "elman", "depth": 1, "hidden": 12, "input_dropout": 0.0, "dropout": 0.0},
    "model.embeddings": {"features": "random", "dim": 12},
    "training": {"batch_size": 4, "optimizer": {"learning_rate": 0.02}, "stopping": {"max_epochs": 6, "patience": 6}},
})
res = {"devices": jax.device_count()}
_, one = train(cfg, sents, sents, out + "/one", progress=False)
tagger, two = train_data_parallel(cfg, sents, sents, out + "/two", devices="2", progress=False)
res["loss"] = [[h["loss"] for h in m["training"]["history"]] for m in (one, two)]
res["dev"] = [{t: m["scores"]["dev"][t]["proportional"]["f1"] for t in ("DSE", "ESE")} for m in (one, two)]
res["record"] = two["training"]["data_parallel"]
res["weight_devices"] = len(tagger.network.model.weights[0].value.sharding.device_set)
with data_parallel(select_devices("all"), 4) as dist:  # how a global batch of 4 is laid out
    x = jax.device_put(np.zeros((4, 7)), dist.get_data_layout((4, 7)).backend_layout)
    res["shards"] = sorted(s.data.shape for s in x.addressable_shards)
res["after"] = type(keras.distribution.distribution()).__name__
print("RESULT " + json.dumps(res))
"""


def test_two_virtual_devices_match_one(tmp_path):
    env = {
        **os.environ,
        "KERAS_BACKEND": "jax",
        "XLA_FLAGS": "--xla_force_host_platform_device_count=2",
        "PYTHONPATH": str(ROOT),
    }
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(ROOT), str(tmp_path)], capture_output=True, text=True, env=env, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(next(ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT "))[7:])
    assert res["devices"] == 2
    assert res["record"] == {"devices": ["cpu:0", "cpu:1"], "global_batch": 4, "per_device_batch": 2}
    assert res["shards"] == [[2, 7], [2, 7]]  # the global batch split in two
    assert res["weight_devices"] == 2  # variables replicated on both devices
    assert res["after"] == "NoneType"  # the distribution is removed afterwards
    one, two = res["loss"]
    assert len(one) == len(two) == 6
    assert two == pytest.approx(one, rel=1e-3)  # the same computation, summed in another order
    for t in ("DSE", "ESE"):
        assert abs(res["dev"][0][t] - res["dev"][1][t]) <= 0.05


def test_devices_needs_jax_and_an_even_split():
    import keras

    from opinion_tagger.config import TaggerConfig
    from opinion_tagger.errors import TaggerError
    from opinion_tagger.training.data_parallel import data_parallel, select_devices, train_data_parallel

    with pytest.raises(TaggerError, match="runs on one device"):
        train_data_parallel(
            TaggerConfig.from_dict(
                {"training.trainer": "fast", "model.recurrent.cell": "elman", "model.head.output": "softmax"}
            ),
            [],
            [],
            "unused",
            "2",
        )
    if keras.backend.backend() != "jax":
        with pytest.raises(TaggerError, match="needs the JAX backend"):
            select_devices("2")
    with pytest.raises(TaggerError, match="--batch-size 5 cannot be split evenly over 2 devices"):
        with data_parallel(["cpu:0", "cpu:1"], 5):
            pass
