"""Load labelled sentences from any supported source, grouped by document."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from opinion_tagger.corpus.convert import mpqa_sentences, read_conll
from opinion_tagger.corpus.labels import LabelRules
from opinion_tagger.corpus.mpqa import MPQACorpus, read_doclist
from opinion_tagger.corpus.reference import read_reference
from opinion_tagger.errors import CorpusError, Problems
from opinion_tagger.sentences import Sentence

SOURCES = ("mpqa", "reference", "conll")


def load_documents(
    source: str,
    path: str | Path,
    rules: LabelRules = LabelRules(),
    problems: Problems | None = None,
    doclist: str | Path | None = None,
) -> dict[str, list[Sentence]]:
    """Sentences by document name from ``source``:

    - ``mpqa``: a raw MPQA 2.0 directory, converted over spaCy tokens with ``rules``;
    - ``reference``: Irsoy & Cardie's ``dse.txt``/``ese.txt`` directory (PTB tokens);
    - ``conll``: a file written by ``opinion-tagger corpus convert``.

    ``doclist``: only the documents it names, in its order (``MPQACorpus``: a path, or a file in the MPQA
    directory); a listed document that is not there raises CorpusError naming it.
    """
    sentences: Iterable[Sentence]
    if source == "mpqa":
        corpus = MPQACorpus(path, problems=problems, doclist=doclist)
        sentences = mpqa_sentences(corpus, rules)
    elif source == "reference":
        sentences = read_reference(path)
    elif source == "conll":
        sentences = read_conll(path)
    else:
        raise CorpusError(f"unknown data source {source!r}; choose from {', '.join(SOURCES)}")
    docs: dict[str, list[Sentence]] = {}
    for s in sentences:
        docs.setdefault(s.doc, []).append(s)
    if doclist is not None and source != "mpqa":
        names = read_doclist(Path(doclist))
        missing = next((n for n in names if n not in docs), None)
        if missing is not None:
            raise CorpusError(f"{doclist}: document {missing!r} is not in {path}")
        docs = {n: docs[n] for n in dict.fromkeys(names)}
    return docs


def select(docs: dict[str, list[Sentence]], names, strict: bool = True) -> list[Sentence]:
    """The sentences of the documents ``names``, in that order.  A listed
    document missing from the corpus raises CorpusError when ``strict``."""
    missing = [n for n in names if n not in docs]
    if missing and strict:
        raise CorpusError(f"{len(missing)} split documents are not in the corpus, e.g. {missing[0]}")
    return [s for n in names for s in docs.get(n, [])]


def corpus_words(docs: dict[str, list[Sentence]]) -> set[str]:
    """Every word of every document: the vocabulary a model's GloVe table is built over, so that words
    outside its training folds still find their pretrained vectors."""
    return {w for sents in docs.values() for s in sents for w in s.words}
