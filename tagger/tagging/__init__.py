"""Tagging text: input records with one output or error record each (``inputs``),
``annotate.OpinionTagger`` (sentences, tokens and spans with character offsets) and
the output formats JSONL, CoNLL, BRAT and HTML (``formats``)."""
