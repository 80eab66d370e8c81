"""Tagging text: input records with one output or error record each (``inputs``),
``tagger.OpinionTagger`` (sentences, tokens and spans with character offsets), HTML
input tagged on its visible text with offsets into the source (``html_input``) and
the output formats JSONL, CoNLL, BRAT and HTML (``formats``)."""
