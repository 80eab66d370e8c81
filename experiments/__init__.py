"""The study: configurations, cross-validation runs, results, the report, benchmarks and tools.

Run its scripts from the repository root as modules, e.g.
``python -m experiments.run_cv experiments/configs/paper.yaml``."""
