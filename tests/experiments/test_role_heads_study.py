"""The role heads' dev study (experiments/role_heads_study.py): scoring the moving average of the weights."""

import numpy as np
import pytest


def test_a_report_sees_the_moving_average_and_training_goes_on_from_the_weights():
    keras = pytest.importorskip("keras", reason="train extra not installed")
    from experiments.role_heads_study import _averaged

    net = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1, use_bias=False, kernel_initializer="zeros")])
    # the loss is the output itself: with input 1 the kernel's gradient is 1, so SGD at rate 1 takes it to -1, -2
    net.compile(optimizer=keras.optimizers.SGD(1.0, use_ema=True, ema_momentum=0.5), loss=lambda y, p: p)
    for _ in range(2):
        net.train_on_batch(np.ones((1, 1)), np.zeros((1, 1)))
    # the average starts at the first step's weight (-1), then 0.5 * -1 + 0.5 * -2
    seen = _averaged(net, lambda heads: float(heads.get_weights()[0][0, 0]))
    assert seen == -1.5
    assert float(net.get_weights()[0][0, 0]) == -2.0
