"""Training: the Keras trainer with checkpoints and epoch selection on dev
(``trainer``), the fast JAX trainer of the paper grid that trains several folds
at once (``fast_trainer``), data-parallel training over devices (``data_parallel``)
and the paper's CRF baseline (``crf_baseline``)."""
