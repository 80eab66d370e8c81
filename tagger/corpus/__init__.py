"""Corpus reading: raw MPQA 2.0, Irsoy & Cardie's reference files, the split,
and the project's converted format."""

from tagger.corpus.convert import document_sentences, mpqa_sentences, read_conll, write_conll
from tagger.corpus.labels import LabelRules
from tagger.corpus.mpqa import MPQACorpus
from tagger.corpus.reference import read_reference
from tagger.corpus.split import Split, load_split

__all__ = [
    "LabelRules",
    "MPQACorpus",
    "Split",
    "document_sentences",
    "load_split",
    "mpqa_sentences",
    "read_conll",
    "read_reference",
    "write_conll",
]
