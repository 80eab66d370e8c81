"""Evaluation: the paper's binary and proportional overlap metrics and seqeval's exact match (``metrics``),
the scores of opinion frames: polarity, intensity and holder (``frames``), scoring predicted tags and frames
against gold sentences (``scoring``), and summaries of cross-validation results with paired comparisons and
the sign test (``results``; the study's own report is ``experiments/study.py``)."""
