"""Evaluation: the paper's binary and proportional overlap metrics and seqeval's
exact match (``metrics``), scoring predicted tags against gold sentences
(``scoring``) and the experiments report with its plots (``report``)."""
