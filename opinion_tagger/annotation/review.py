"""Review: a document's final version made from its annotators' copies (Prodigy's review,
INCEpTION's curation).  The reviewer sees two copies side by side and either accepts one
annotator's spans or merges: keeps the spans ticked among all the copies' spans (by default
those both annotators made).  Each span of the final version keeps its provenance (source,
score or annotator and time, its frame: polarity, intensity, holder, attitude, targets, each with its source) from
the copy it came from (in a merge, the first of the annotators compared that has it), and ``origin`` lists the
annotators whose copies had exactly that span; the document records the review (reviewer,
time, method, annotators compared).

Once a document is reviewed, its review starts from the final version's own choices: the spans it holds are
those ticked (with any the reviewer added in it), and a merge keeps each of them as the final version has it
(the reviewer's corrections with it); ``dropped`` names the spans a review would remove from it, which the page
asks about first."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from opinion_tagger.annotation.frames import summary
from opinion_tagger.annotation.store import FINAL, Document, Project, ProjectError, StoredSpan

FINISHED = ("done", "rejected")


@dataclass
class Candidate:
    """One span (type and tokens) of the copies compared, with the annotators who made it."""

    key: tuple[str, int, int]
    text: str
    by: list[str]
    span: StoredSpan  # as the first of ``by`` has it (a span of the final version alone: as it has it)
    frames: dict[str, str] = field(default_factory=dict)  # annotator -> the frame values of their span (summary)
    final: StoredSpan | None = None  # a reviewed document's final version's span of this type and tokens
    final_frame: str = ""  # its frame values (summary)

    def frame_text(self) -> str:
        """``negative, high`` when the copies agree on the span's frame; ``ann: negative; ben: positive`` when
        they differ ("no values" for a copy without); "" when no copy has a value.  A span of the final version
        alone: its values there."""
        if not self.frames:
            return self.final_frame
        if len(set(self.frames.values())) <= 1:
            return next(iter(self.frames.values()), "")
        return "; ".join(f"{a}: {v or 'no values'}" for a, v in self.frames.items())


def reviewable(project: Project) -> list[tuple[int, str, str, list[tuple[str, str]]]]:
    """Documents with an overlap that at least two annotators finished (accepted or rejected their
    copies), in import order: ``(doc_id, name, final status, [(annotator, copy status)])``."""
    copies: dict[int, list[tuple[str, str]]] = {}
    for doc_id, owner, status, _ in project.copies():
        copies.setdefault(doc_id, []).append((owner, status))
    out = []
    for info in project.documents():
        own = copies.get(info.id, [])
        if info.overlap and sum(1 for _, s in own if s in FINISHED) >= 2:
            out.append((info.id, info.name, info.status, own))
    return out


def next_to_review(project: Project, after: int | None = None) -> int | None:
    """The first document awaiting review (``reviewable``, not yet reviewed or rejected) after ``after`` in
    import order, wrapping round; None when none awaits review."""
    waiting = [doc_id for doc_id, _, status, _ in reviewable(project) if status not in FINISHED]
    later = [doc_id for doc_id in waiting if after is None or doc_id > after]
    return (later or waiting)[0] if waiting else None


def copies_of(project: Project, doc_id: int, annotators: Sequence[str]) -> list[Document]:
    if len(annotators) < 1 or len(set(annotators)) != len(annotators) or FINAL in annotators:
        raise ProjectError("compare the copies of different annotators")
    return [project.document(doc_id, a) for a in annotators]


def candidates(project: Project, doc_id: int, annotators: Sequence[str]) -> list[Candidate]:
    """Every span of the annotators' copies, once per type and tokens, in token order, with each copy's frame
    values of it (the span kept, with its values, is the first annotator's); for a reviewed document, the final
    version's spans too (``Candidate.final``; one no copy has, with ``by`` empty)."""
    out: dict[tuple[str, int, int], Candidate] = {}
    for doc in copies_of(project, doc_id, annotators):
        for sp in doc.spans:
            if sp.key in out:
                out[sp.key].by.append(doc.layer)
            else:
                a, b = doc.span_chars(sp)
                out[sp.key] = Candidate(sp.key, doc.text[a:b], [doc.layer], sp)
            out[sp.key].frames[doc.layer] = summary(doc, sp)
    final = project.document(doc_id)
    for sp in final.spans if final.review is not None else []:
        if sp.key not in out:
            a, b = final.span_chars(sp)
            out[sp.key] = Candidate(sp.key, final.text[a:b], [], sp)
        out[sp.key].final, out[sp.key].final_frame = sp, summary(final, sp)
    return sorted(out.values(), key=lambda c: (c.key[1], c.key[2], c.key[0]))


def ticked(cands: Iterable[Candidate], annotators: Sequence[str], reviewed: bool) -> set[tuple[str, int, int]]:
    """The spans a review starts with ticked: a reviewed document's, those its final version holds; else those
    every annotator compared made."""
    return {c.key for c in cands if (c.final is not None if reviewed else len(c.by) == len(annotators))}


def dropped(project: Project, doc_id: int, keep: Iterable[tuple[str, int, int]]) -> list[str]:
    """The spans a review keeping ``keep`` (types and tokens) would remove from a reviewed document's final
    version, as people read them (``ESE “costly mistake”``), in token order; none for a document not reviewed."""
    final, keep = project.document(doc_id), set(keep)
    if final.review is None:
        return []
    words = lambda sp: " ".join(final.text[slice(*final.span_chars(sp))].split())
    return [f"{sp.type} “{words(sp)}”" for sp in final.spans if sp.key not in keep]


def copy_keys(project: Project, doc_id: int, annotator: str) -> list[tuple[str, int, int]]:
    """The spans (types and tokens) of ``annotator``'s copy: what accepting their version keeps."""
    return [sp.key for sp in project.document(doc_id, annotator).spans]


def _final(cands: Iterable[Candidate]) -> list[StoredSpan]:
    """The final version's spans from the candidates kept: the final version's own as it has it (a reviewed
    document's), else the copies' with the annotators whose copies had it."""
    return [
        replace(c.final, id=None)
        if c.final is not None
        else replace(c.span, id=None, origin=json.dumps(c.by, ensure_ascii=False))
        for c in cands
    ]


def accept_copy(
    project: Project, doc_id: int, version: int, chosen: str, annotators: Sequence[str], reviewer: str | None
) -> int:
    """The final version becomes ``chosen``'s copy (``annotators``: the copies compared, for each
    span's origin).  ``version``: the final version's, as the reviewer saw it."""
    if chosen not in annotators:
        raise ProjectError(f"{chosen} is not among the annotators compared")
    keep = [c for c in candidates(project, doc_id, [chosen, *(a for a in annotators if a != chosen)]) if chosen in c.by]
    spans = [replace(c.span, id=None, origin=json.dumps(c.by, ensure_ascii=False)) for c in keep]  # the copy's
    return project.review(doc_id, version, spans, reviewer, f"accepted {chosen}", annotators)


def merge(
    project: Project,
    doc_id: int,
    version: int,
    keep: Iterable[tuple[str, int, int]],
    annotators: Sequence[str],
    reviewer: str | None,
) -> int:
    """The final version is the spans ``keep`` (keys of ``candidates``) of the copies of ``annotators`` (of a
    reviewed document, a span its final version has stays as it is there); ProjectError for a key no copy (nor
    the final version) has, or two kept spans of a type that overlap."""
    keep = set(keep)
    cands = candidates(project, doc_id, annotators)
    unknown = keep - {c.key for c in cands}
    if unknown:
        typ, start, end = min(unknown)
        doc = project.document(doc_id)
        words = (
            f"“{' '.join(doc.text[doc.tokens[start].start : doc.tokens[end - 1].end].split())}”"
            if 0 <= start < end <= len(doc.tokens)
            else f"over tokens {start}..{end}"
        )
        raise ProjectError(f"no copy has the {typ} span {words}")
    return project.review(doc_id, version, _final(c for c in cands if c.key in keep), reviewer, "merged", annotators)
