"""Training: ``run`` is the one way in (it chooses the trainer: ``trainer``, the Keras loop;
``fast_trainer`` and ``fast_network``, the fast JAX trainer that trains several folds at once;
``data_parallel``, the Keras loop over several devices), ``run_data`` the data a run learns from;
``checkpoints``, ``stopping``, ``progress`` and ``models`` are shared by the trainers; ``crf_baseline``
is the paper's CRF baseline."""
