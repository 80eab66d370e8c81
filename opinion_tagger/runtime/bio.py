"""BIO tags back into spans, as tagging, scoring and the corpus readers decode them (the paper's decoding).

Here, in the runtime, so that tagging reads tags without loading the corpus package
(``opinion_tagger.corpus.labels`` makes BIO tags from annotated spans)."""

from __future__ import annotations

from collections.abc import Sequence


def spans_from_bio(tags: Sequence[str]) -> list[tuple[int, int, str]]:
    """Token spans [i, j) with their type from BIO tags, decoded as Irsoy & Cardie do:
    a span starts at B, or at an I that follows O (or a different type) or
    opens the sentence.  Untyped tags (``B``, ``I``) give type ""."""
    tags = list(tags)
    if tags.count("O") == len(tags):  # most sentences have no span of a type: no loop over their tags
        return []
    spans: list[tuple[int, int, str]] = []
    start: int | None = None
    cur = ""
    for k, tag in enumerate(tags + ["O"]):
        prefix, _, typ = tag.partition("-")
        if prefix == "B" or (prefix == "I" and (start is None or typ != cur)):
            if start is not None:
                spans.append((start, k, cur))
            start, cur = k, typ
        elif prefix != "I":
            if start is not None:
                spans.append((start, k, cur))
            start, cur = None, ""
    return spans
