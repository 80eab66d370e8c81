"""Evaluation: the paper's binary and proportional overlap metrics and seqeval's exact match (``metrics``),
the scores of opinion frames: polarity, intensity and holder (``frames``), scoring predicted tags and frames
against gold sentences (``scoring``).  The summaries of cross-validation results and the study's report live
with the study, under ``experiments/`` in the repository."""
