"""Corpus reading: raw MPQA 2.0, Irsoy & Cardie's reference files, the split, opinion frames (``frames``),
and the project's converted format."""

from opinion_tagger.corpus.convert import document_sentences, mpqa_sentences, read_conll, write_conll
from opinion_tagger.corpus.labels import LabelRules
from opinion_tagger.corpus.mpqa import MPQACorpus
from opinion_tagger.corpus.reference import read_reference
from opinion_tagger.corpus.split import Split, load_split

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
