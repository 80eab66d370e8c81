"""The data a training run learns from: documents from a corpus source or an annotation project, divided
into training and dev sentences (the paper's fold, or a project's fixed division), with the record of
where they came from that the bundle keeps."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from opinion_tagger.corpus.auxiliary import tag_auxiliary
from opinion_tagger.corpus.frames import tag_frames
from opinion_tagger.corpus.sources import SOURCES, corpus_words, load_documents, select
from opinion_tagger.corpus.split import load_split
from opinion_tagger.errors import Problems, TaggerError
from opinion_tagger.sentences import Sentence

DATA_SOURCES = (*SOURCES, "annotations")


def load_data(
    source: str, path: str | Path, problems: Problems | None = None, frames: bool = False
) -> dict[str, list[Sentence]]:
    """Sentences by document name: a corpus source (``opinion_tagger.corpus.sources``) or ``annotations``, the
    accepted documents of an annotation project; with ``frames``, their spans' frames too (what frame heads
    learn from and are scored on: ``add_training_labels``)."""
    if source == "annotations":
        from opinion_tagger.annotation.accepted import (
            accepted_documents,  # the project's data; nothing of it imports training
        )

        docs = accepted_documents(path)  # with their frames already
    elif source not in SOURCES:
        raise TaggerError(f"--data: unknown source {source!r}; choose from {', '.join(DATA_SOURCES)}")
    else:
        docs = load_documents(source, path, problems=problems)
        if frames:
            add_training_labels(docs, source, path, frames=True)
    return docs


def add_training_labels(
    docs: dict[str, list[Sentence]], source: str, path: str | Path, auxiliary: tuple[str, ...] = (), frames=False
) -> dict:
    """Add to ``docs`` the ``auxiliary`` types' tags (``opinion_tagger.corpus.auxiliary``) and, with ``frames``,
    the spans' frames (``opinion_tagger.corpus.frames``; a project's accepted documents have theirs already); what
    each found, by name (``auxiliary``, ``frames``)."""
    out = {}
    if auxiliary:
        out["auxiliary"] = tag_auxiliary(docs, auxiliary, source, path).to_dict()
    if frames and source == "annotations":  # a project's sentences carry their frames (accepted_documents)
        from opinion_tagger.annotation.frames import frame_counts

        out["frames"] = frame_counts(docs).to_dict()
    elif frames:
        out["frames"] = tag_frames(docs, source, path).to_dict()
    return out


@dataclass
class TrainingData:
    train: list[Sentence]
    dev: list[Sentence]
    extra_words: set[str]  # every word of the data: GloVe rows for words outside the training documents
    record: dict  # what the bundle records: source, path, fold or documents, sentences
    where: str  # "fold 0", or the project's path


def training_data(
    source: str,
    path: str | Path,
    datasplit: str | Path,
    fold: int,
    problems: Problems | None = None,
    auxiliary: tuple[str, ...] = (),
    frames: bool = False,
) -> TrainingData:
    """The training and dev sentences of ``fold`` of the paper's split in ``datasplit``, or for an annotation
    project its fixed division (every 10th accepted document is dev); with the ``auxiliary`` types' tags
    (``opinion_tagger.corpus.auxiliary``) and the spans' ``frames`` (``opinion_tagger.corpus.frames``) where
    asked."""
    docs = load_data(source, path, problems)
    labels = add_training_labels(docs, source, path, auxiliary, frames)
    if source == "annotations":
        from opinion_tagger.annotation.accepted import train_dev

        train_names, dev_names = train_dev(list(docs))
        division: dict = {"documents": {"train": len(train_names), "dev": len(dev_names)}}
        where = str(path)
    else:
        split = load_split(datasplit, fold)
        train_names, dev_names = list(split.train), list(split.dev)
        division = {"fold": fold, "datasplit": str(Path(datasplit).resolve())}
        where = f"fold {fold}"
    train, dev = select(docs, train_names), select(docs, dev_names)
    record = {
        "source": source,
        "path": str(Path(path).resolve()),
        **division,
        "sentences": {"train": len(train), "dev": len(dev)},
        **labels,
    }
    return TrainingData(train, dev, corpus_words(docs), record, where)
