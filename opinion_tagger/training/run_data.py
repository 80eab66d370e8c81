"""The data a training run learns from: documents from a corpus source or an annotation project, divided
into training and dev sentences (the paper's fold, or a project's fixed division), with the record of
where they came from that the bundle keeps."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from opinion_tagger.corpus.auxiliary import tag_auxiliary
from opinion_tagger.corpus.frames import tag_frames
from opinion_tagger.corpus.sources import SOURCES, corpus_words, load_documents, select
from opinion_tagger.corpus.split import load_split
from opinion_tagger.errors import Problems, TaggerError
from opinion_tagger.paths import default_mpqa, default_reference
from opinion_tagger.sentences import Sentence

DATA_SOURCES = (*SOURCES, "annotations")


def load_data(
    source: str,
    path: str | Path,
    problems: Problems | None = None,
    frames: bool = False,
    doclist: str | Path | None = None,
) -> dict[str, list[Sentence]]:
    """Sentences by document name: a corpus source (``opinion_tagger.corpus.sources``) or ``annotations``, the
    accepted documents of an annotation project; with ``frames``, their spans' frames too (what frame heads
    learn from and are scored on: ``add_training_labels``); ``doclist``: only the documents it names."""
    if source == "annotations":
        from opinion_tagger.annotation.accepted import (
            accepted_documents,  # the project's data; nothing of it imports training
        )

        docs = accepted_documents(path)  # with their frames already
        if doclist is not None:
            raise TaggerError("--doclist names documents of a corpus directory or file, not of an annotation project")
    elif source not in SOURCES:
        raise TaggerError(f"--data: unknown source {source!r}; choose from {', '.join(DATA_SOURCES)}")
    else:
        docs = load_documents(source, path, problems=problems, doclist=doclist)
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


MIN_DOCUMENTS = 3  # training without a fold: at least two documents to learn from and one to choose the epoch


def hold_out(names: list[str], every: int = 10) -> tuple[list[str], list[str]]:
    """Training and dev documents of a corpus without a split: every ``every``-th document (in the given order)
    is dev, and with fewer than ``every`` documents the last one; fewer than ``MIN_DOCUMENTS`` raise TaggerError
    saying what is missing (a model chosen on its own training documents would be chosen blind)."""
    if len(names) < MIN_DOCUMENTS:
        raise TaggerError(
            f"{len(names)} document{'s' * (len(names) != 1)} to train on: training needs at least {MIN_DOCUMENTS} "
            f"({MIN_DOCUMENTS - 1} to learn from and 1 held out to choose the epoch); add "
            f"{MIN_DOCUMENTS - len(names)} more"
        )
    dev = [n for k, n in enumerate(names) if k % every == every - 1] or names[-1:]
    return [n for n in names if n not in set(dev)], dev


def training_data(
    source: str,
    path: str | Path,
    datasplit: str | Path,
    fold: int | None,
    problems: Problems | None = None,
    auxiliary: tuple[str, ...] = (),
    frames: bool = False,
    doclist: str | Path | None = None,
) -> TrainingData:
    """The training and dev sentences of ``fold`` of the paper's split in ``datasplit``; of the documents a
    ``doclist`` names (with a fold, those of its parts; without, ``hold_out``'s division); or for an annotation
    project ``hold_out``'s division of its accepted documents; with the ``auxiliary`` types' tags
    (``opinion_tagger.corpus.auxiliary``) and the spans' ``frames`` (``opinion_tagger.corpus.frames``) where
    asked.  The record names every document trained on and held out (``train_documents``, ``dev_documents``)."""
    docs = load_data(source, path, problems, doclist=doclist)
    labels = add_training_labels(docs, source, path, auxiliary, frames)
    division: dict
    if source == "annotations" or (doclist is not None and fold is None):
        train_names, dev_names = hold_out(list(docs))
        division = {"documents": {"train": len(train_names), "dev": len(dev_names)}}
        where = str(path) if doclist is None else f"{doclist} ({len(docs)} documents)"
    else:
        fold = 0 if fold is None else fold
        split = load_split(datasplit, fold)
        train_names, dev_names = list(split.train), list(split.dev)
        if doclist is not None:
            train_names, dev_names = [n for n in train_names if n in docs], [n for n in dev_names if n in docs]
        division = {"fold": fold, "datasplit": str(Path(datasplit).resolve())}
        where = f"fold {fold}"
    if doclist is not None:
        division["doclist"] = str(Path(doclist).resolve()) if Path(doclist).is_file() else str(doclist)
    train, dev = select(docs, train_names), select(docs, dev_names)
    record = {
        "source": source,
        "path": str(Path(path).resolve()),
        **division,
        "sentences": {"train": len(train), "dev": len(dev)},
        "train_documents": train_names,
        "dev_documents": dev_names,
        **labels,
    }
    return TrainingData(train, dev, corpus_words(docs), record, where)


def trained_documents(meta: dict) -> set[str]:
    """The documents a bundle learnt from (``train_documents`` of its training record, or of the network's record
    for frame heads fitted afterwards), as far as it says."""
    training = meta.get("training", {})
    names: set[str] = set()
    for record in (training.get("data", {}), training.get("network", {}).get("data", {})):
        names.update(record.get("train_documents", ()))
    if "adapted" in training:  # and those of the bundle it was adapted from
        names |= trained_documents({"training": training["adapted"].get("from_training", {})})
    return names


def recorded_data_path(model: str | Path, source: str, path: str) -> str:
    """The data a bundle records it was trained on, if that path exists here; else the
    default location of that corpus (../shared, see opinion_tagger.paths); else a one-line error."""
    if Path(path).exists():
        return path
    default = {"mpqa": default_mpqa, "reference": default_reference}.get(source)
    if default is not None and default().exists():
        print(f"data: {model} records {source} data as {path!r}, not a path here; using {default()}", file=sys.stderr)
        return str(default())
    where = f" (nor is the default location {default()})" if default is not None else ""
    raise TaggerError(
        f"{model}: the {source} data it was trained on, {path!r}, is not found here{where}; "
        f"give --data {source} {'DIR' if source != 'conll' else 'FILE'}"
    )
