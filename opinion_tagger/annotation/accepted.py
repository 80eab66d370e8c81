"""Accepted (``done``) documents of a project as labelled sentences (tags and opinion frames), for training
and evaluation, and the project's fixed train/dev division."""

from __future__ import annotations

from pathlib import Path

from opinion_tagger.annotation.exporting import iter_documents, tagged
from opinion_tagger.annotation.frames import sentence_frames
from opinion_tagger.annotation.store import Project
from opinion_tagger.errors import TaggerError
from opinion_tagger.sentences import Sentence, Token


def accepted_documents(path: str | Path) -> dict[str, list[Sentence]]:
    """Sentences by document name, for every accepted document, tags from its spans and ``frames`` from
    their polarity, intensity and a DSE's holder, attitude and targets
    (``opinion_tagger.annotation.frames.sentence_frames``: the form
    ``opinion_tagger.corpus.frames`` gives MPQA's in, None where a value is not set), for frame heads."""
    with Project(path) as project:
        out: dict[str, list[Sentence]] = {}
        for doc in iter_documents(project, ("done",)):
            td = tagged(doc, project.types)
            frames = sentence_frames(doc, project.types)
            out[doc.name] = [
                Sentence(
                    [Token(t.text, t.start, t.end) for t in s.tokens],
                    {ty: [t.tags[ty] for t in s.tokens] for ty in project.types},
                    doc=doc.name,
                    index=k,
                    text=doc.text[s.start : s.end],
                    start=s.start,
                    end=s.end,
                    frames=frames[k],
                )
                for k, s in enumerate(td.sentences)
            ]
    if not out:
        raise TaggerError(f"{path}: no accepted documents yet (accept documents in the annotator first)")
    return out
