"""Speed and size measurements: each script prints its figures (``python -m experiments.benchmarks.NAME``)."""
