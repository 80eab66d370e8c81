"""A corpus's opinions at a glance, from the JSONL that ``opinion-tagger tag`` writes: who holds which opinion about
what, how often and how strongly (``opinion-tagger summarize``).

``records`` reads and checks the tagged records and turns each span's frame into an ``Opinion`` (holders and
targets by normalized text); ``table`` groups them by holder, target and attitude or polarity into rows, written
as CSV, Parquet or a short text table; ``report`` writes the self-contained HTML report, with the plots of
``plots`` (matplotlib: the ``report`` extra).  It reads tagging's output only: no model, no runtime, no
training stack.
"""
