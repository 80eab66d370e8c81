"""spaCy's blank English tokenizer, with character offsets kept."""

from __future__ import annotations

from functools import lru_cache

from opinion_tagger.sentences import Token


@lru_cache(maxsize=1)
def _nlp():
    import spacy
    from spacy.attrs import IS_PUNCT, IS_SPACE

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.max_length = 10**8  # inputs are bounded by the caller (see opinion_tagger.tagging.inputs)
    # a word's attributes are computed when the word is first seen: keep only the two read here (whitespace
    # tokens are dropped, the sentencizer reads punctuation).  Tokens and sentences are the same; a process's
    # first pass over new words is shorter (experiments/README.md)
    getters = nlp.vocab.lex_attr_getters
    for attr in [a for a in getters if a not in (IS_PUNCT, IS_SPACE)]:
        del getters[attr]
    return nlp


def tokenize(text: str, offset: int = 0) -> list[Token]:
    """Tokens of ``text`` (whitespace tokens dropped), offsets shifted by ``offset``."""
    doc = _nlp().make_doc(text)
    return [Token(t.text, offset + t.idx, offset + t.idx + len(t.text)) for t in doc if not t.is_space]


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Sentence spans (character offsets) from spaCy's rule-based sentencizer."""
    doc = _nlp()(text)
    spans = []
    for sent in doc.sents:
        toks = [t for t in sent if not t.is_space]
        if toks:
            spans.append((toks[0].idx, toks[-1].idx + len(toks[-1].text)))
    return spans
