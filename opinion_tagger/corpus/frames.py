"""Opinion frames: the polarity, intensity and holder of every tagged DSE and ESE span, read from MPQA 2.0.

What the corpus holds (``mpqa_2_0_readme.txt``, sections 4 and 8; docs/frames.md gives the counts):

- ESEs (``GATE_expressive-subjectivity``): ``polarity`` (neutral, negative, positive, both, and
  ``uncertain-`` forms of each) and ``intensity`` (low, medium, high, extreme) on all but two;
- DSEs (``GATE_direct-subjective``): ``polarity`` on most (about six in ten), ``intensity`` (the private
  state's, low to extreme, a few neutral) on all but a few, and ``expression-intensity`` (how strongly the words
  themselves express it: neutral to extreme) on all but the implicit ones;
- both: ``nested-source``, the chain of sources from the writer (``w``) to the holder, its last element: ``w``
  (the writer), ``implicit``, or the id of an agent whose mentions are ``GATE_agent`` annotations of the
  document (with that ``id=``, or a ``nested-source`` ending in it).

The mapping to a ``opinion_tagger.sentences.Frame``'s values:

- polarity: ``neutral``, ``negative``, ``positive``, ``both``; an ``uncertain-X`` value is read as ``X``.
  ``both`` is kept as a class of its own here; whether a polarity head merges it into ``neutral`` is to be
  chosen on fold-0 dev (configuration ``model.frames.both``).  A span whose annotation has no polarity has None.
- intensity: the annotation's ``intensity`` (both types); a DSE's ``expression-intensity`` is kept beside it
  as ``expression_intensity``.  Which of the two a DSE's intensity head learns is to be chosen on fold-0 dev
  (configuration ``model.frames.dse_intensity``; ``intensity`` by default, the one every DSE has).  Values: neutral,
  low, medium, high, extreme; a value ``a-b`` reads as ``a``; anything else as None.
- holder: ``writer`` (source ``w``), ``implicit``, or the token span of the source's mention nearest the
  expression in its sentence (the fewest characters between them; a tie goes to the earlier mention), or
  ``none`` when the source has no mention in the sentence; None when the annotation gives no source or one
  that names no agent of the document (a trailing comma is ignored, and an id is also matched regardless of
  case).

- attitude and targets (DSEs of a document that carries attitudes, ``opinion_tagger.corpus.attitudes``): the
  type of one of the attitudes the annotation links to (not inferred first, then sentiment, arguing,
  agreement, intention, speculation, other, then the first listed), and the token spans in the sentence of the
  targets of all of them; both None elsewhere (not read).

A tagged span (a span of the sentence's BIO tags: annotations that share a token merged, as
``opinion_tagger.corpus.labels`` tags them; or a span of Irsoy & Cardie's files) takes the values of the
annotation of its type that overlaps it by the most characters (ties: the longer annotation, then the one
listed first); a span that no annotation overlaps gets a frame of None values.  Reference sentences are aligned
to the document as the auxiliary tags align them (``opinion_tagger.corpus.auxiliary.document_tokens``), and
matched against every DSE annotation with a span (implicit ones too), since the reference kept its own.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from opinion_tagger.corpus.attitudes import Attitudes, RoleCounts, read_roles
from opinion_tagger.corpus.auxiliary import document_tokens
from opinion_tagger.corpus.labels import LabelRules, opinion_annotations, token_range
from opinion_tagger.corpus.mpqa import Annotation, Document, MPQACorpus
from opinion_tagger.errors import CorpusError
from opinion_tagger.runtime.bio import spans_from_bio
from opinion_tagger.sentences import HOLDER_CLASSES, INTENSITIES, POLARITIES, TYPES, Frame, Sentence, Span, Token

WRITER, IMPLICIT, NO_HOLDER = HOLDER_CLASSES
ANNOTATION_TYPES = {"DSE": "GATE_direct-subjective", "ESE": "GATE_expressive-subjectivity"}


def polarity_value(raw: str | None) -> str | None:
    """A ``polarity`` attribute as a class of POLARITIES (``uncertain-X`` -> ``X``), None if absent or unknown."""
    if raw is None:
        return None
    value = raw.strip().lower().removeprefix("uncertain-")
    return value if value in POLARITIES else None


def intensity_value(raw: str | None) -> str | None:
    """An ``intensity`` or ``expression-intensity`` attribute as a class of INTENSITIES (``a-b`` -> ``a``)."""
    if raw is None:
        return None
    value = raw.strip().lower()
    value = value if value in INTENSITIES else value.split("-")[0]
    return value if value in INTENSITIES else None


def source_chain(attrs: dict[str, str]) -> list[str]:
    """The ``nested-source`` chain, writer first (empty elements dropped)."""
    return [e.strip() for e in attrs.get("nested-source", "").split(",") if e.strip()]


class Agents:
    """The mentions (``GATE_agent`` annotations with a span) of a document's agents, by agent id."""

    def __init__(self, annotations: list[Annotation]):
        self.by_id: dict[str, list[Annotation]] = {}
        for a in annotations:
            if a.type != "GATE_agent":
                continue
            keys = {a.attrs["id"].strip()} if a.attrs.get("id", "").strip() else set()
            chain = source_chain(a.attrs)
            keys |= {chain[-1]} if chain else set()
            for k in sorted(keys):
                self.by_id.setdefault(k, [])
                if not a.is_empty:
                    self.by_id[k].append(a)
        self.folded: dict[str, list[Annotation]] = {}
        for k, mentions in self.by_id.items():
            self.folded.setdefault(k.lower(), []).extend(mentions)

    def mentions(self, source: str) -> list[Annotation] | None:
        """The mentions of agent ``source`` (an empty list for one without any: the writer); None if no agent
        has that id."""
        found = self.by_id.get(source)
        return found if found is not None else self.folded.get(source.lower())


def holder_of(ann: Annotation, agents: Agents, tokens: list[Token]) -> tuple[int, int] | str | None:
    """The holder of ``ann`` in the sentence of ``tokens`` (see the module's docstring)."""
    chain = source_chain(ann.attrs)
    if not chain:
        return None
    source = chain[-1]
    if source == "w":
        return WRITER
    if source == IMPLICIT:
        return IMPLICIT
    mentions = agents.mentions(source)
    if mentions is None:
        return None
    best: tuple[tuple[int, int], tuple[int, int]] | None = None
    for m in mentions:
        where = token_range(tokens, Span("AGENT", m.start, m.end))
        if where is None:  # not in this sentence
            continue
        key = (max(0, m.start - ann.end, ann.start - m.end), m.start)
        if best is None or key < best[0]:
            best = (key, where)
    return best[1] if best is not None else NO_HOLDER


def span_frames(
    typ: str,
    tokens: list[Token],
    tags: list[str],
    candidates: list[Annotation],
    agents: Agents,
    attitudes: Attitudes | None = None,
    roles: RoleCounts | None = None,
) -> tuple[list[Frame], list[bool], int]:
    """The frames of a sentence's spans of ``typ`` (tokens with document offsets), from the annotations
    ``candidates`` of that type; whether an annotation matched each; and how many spans several annotations of
    different polarities overlap.  With the document's ``attitudes`` (one that carries them), a DSE's attitude
    and targets too, what they kept and dropped added to ``roles``."""
    frames, matched, conflicts = [], [], 0
    for i, j, _ in spans_from_bio(tags):
        start, end = tokens[i].start, tokens[j - 1].end
        over = [(min(end, a.end) - max(start, a.start), a) for a in candidates if a.start < end and start < a.end]
        over = [(n, a) for n, a in over if n > 0]
        matched.append(bool(over))
        if not over:
            frames.append(Frame(typ, i, j))
            continue
        _, ann = max(over, key=lambda p: (p[0], p[1].end - p[1].start, -p[1].line))
        conflicts += len({polarity_value(a.attrs.get("polarity")) for _, a in over}) > 1
        attitude, targets = None, None
        if typ == "DSE" and attitudes is not None and attitudes.present:
            attitude, targets = read_roles(ann, attitudes, tokens, roles)
        frames.append(
            Frame(
                typ,
                i,
                j,
                polarity_value(ann.attrs.get("polarity")),
                intensity_value(ann.attrs.get("intensity")),
                intensity_value(ann.attrs.get("expression-intensity")) if typ == "DSE" else None,
                holder_of(ann, agents, tokens),
                attitude,
                targets,
            )
        )
    return frames, matched, conflicts


def holder_kind(holder: tuple[int, int] | str | None) -> str:
    """``writer``, ``implicit``, ``none``, ``span`` or ``unknown`` (None)."""
    if holder is None:
        return "unknown"
    return holder if isinstance(holder, str) else "span"


@dataclass
class FrameCounts:
    """What reading the frames found, per type: tagged spans, those an annotation matched, those that
    annotations of different polarities overlap, and the values; the documents whose reference sentences
    could not be matched to MPQA's (their spans get frames of None values); for the DSEs of documents that carry
    attitudes, what reading their attitudes and targets kept and dropped (``roles``), and how many documents
    carry them."""

    spans: Counter = field(default_factory=Counter)
    matched: Counter = field(default_factory=Counter)
    conflicts: Counter = field(default_factory=Counter)
    polarity: dict[str, Counter] = field(default_factory=lambda: {t: Counter() for t in TYPES})
    intensity: dict[str, Counter] = field(default_factory=lambda: {t: Counter() for t in TYPES})
    expression_intensity: dict[str, Counter] = field(default_factory=lambda: {t: Counter() for t in TYPES})
    holder: dict[str, Counter] = field(default_factory=lambda: {t: Counter() for t in TYPES})
    unmatched_documents: list[str] = field(default_factory=list)
    roles: RoleCounts = field(default_factory=RoleCounts)
    attitude_documents: int = 0

    def add(self, frame: Frame, matched: bool) -> None:
        t = frame.type
        self.spans[t] += 1
        self.matched[t] += matched
        self.polarity[t][str(frame.polarity)] += 1
        self.intensity[t][str(frame.intensity)] += 1
        self.expression_intensity[t][str(frame.expression_intensity)] += 1
        self.holder[t][holder_kind(frame.holder)] += 1

    def to_dict(self) -> dict:
        """For records: plain dicts, the unmatched documents counted (the first named)."""
        out: dict = {k: dict(v) for k, v in (("spans", self.spans), ("matched", self.matched))}
        out["conflicts"] = dict(self.conflicts)
        for name in ("polarity", "intensity", "expression_intensity", "holder"):
            out[name] = {t: dict(sorted(c.items())) for t, c in getattr(self, name).items() if c}
        out = {**out, "unmatched_documents": len(self.unmatched_documents), "e.g.": self.unmatched_documents[:1]}
        if self.attitude_documents:  # only data with attitudes: other records stay as they were
            out["attitudes"] = {"documents": self.attitude_documents, **self.roles.to_dict()}
        return out


def add_frames(
    docs: dict[str, list[Sentence]], corpus: MPQACorpus, source: str, rules: LabelRules | None = None
) -> FrameCounts:
    """Set ``frames`` of every sentence of ``docs`` (by document name, as ``load_documents`` returns them), one
    per span of its DSE and ESE tags, from ``corpus``'s annotations.  ``source``: ``mpqa`` (tokens carry
    document offsets; ``rules``: those the tags were made with) or ``reference`` (tokens aligned here; every
    DSE and ESE annotation with a span matched)."""
    if source not in ("mpqa", "reference"):
        raise CorpusError(f"opinion frames need MPQA or reference sentences, not source {source!r}")
    counts = FrameCounts()
    for name, sentences in docs.items():
        doc = corpus.read(name)
        if doc is None:
            raise CorpusError(f"{name}: document not in the MPQA corpus at {corpus.root}")
        document_frames(doc, sentences, source, rules, counts)
    return counts


def document_frames(
    doc: Document, sentences: list[Sentence], source: str, rules: LabelRules | None = None, counts=None
) -> FrameCounts:
    """``add_frames`` for one document's sentences (added to ``counts``, which is returned)."""
    rules = rules or (LabelRules() if source == "mpqa" else LabelRules(dse_implicit="all"))
    counts = counts if counts is not None else FrameCounts()
    tokens = document_tokens(doc.text, doc.sentences, sentences, source)
    if tokens is None:
        counts.unmatched_documents.append(doc.name)
    kept = opinion_annotations(doc.annotations, doc.text, rules)
    candidates = {t: [a for span, a in kept if span.type == t] for t in TYPES}
    agents = Agents(doc.annotations)
    attitudes = Attitudes(doc.annotations)
    counts.attitude_documents += attitudes.present
    for k, sent in enumerate(sentences):
        frames: list[Frame] = []
        for t in TYPES:
            if t not in sent.tags:
                continue
            if tokens is None:
                found = [Frame(t, i, j) for i, j, _ in spans_from_bio(sent.tags[t])]
                matched = [False] * len(found)
            else:
                found, matched, conflicts = span_frames(
                    t, tokens[k], sent.tags[t], candidates[t], agents, attitudes, counts.roles
                )
                counts.conflicts.update({t: conflicts} if conflicts else {})
            for f, m in zip(found, matched):
                counts.add(f, m)
            frames += found
        sent.frames = frames
    return counts


def tag_frames(docs: dict[str, list[Sentence]], source: str, path, mpqa=None) -> FrameCounts:
    """``add_frames`` for sentences read from ``source`` at ``path``: MPQA itself, or the reference files with
    MPQA from ``mpqa`` (default: its place beside the checkout, ``opinion_tagger.paths.default_mpqa``)."""
    from opinion_tagger.paths import default_mpqa

    where = path if source == "mpqa" else (mpqa or default_mpqa())
    if source not in ("mpqa", "reference"):
        raise CorpusError(f"opinion frames need MPQA or reference sentences, not source {source!r}")
    return add_frames(docs, MPQACorpus(where), source)


def attribute_counts(corpus: MPQACorpus) -> dict[str, dict[str, Counter]]:
    """Per type, over the corpus's DSE and ESE annotations (all of them, with a span or not): how many there
    are (``annotations``: ``all``) and the values of polarity, intensity and expression-intensity as mapped here
    (``None``: absent or unknown), and the kind of their source (``writer``, ``implicit``, ``agent``: an agent
    of the document, ``unknown``)."""
    keys = ("annotations", "polarity", "intensity", "expression_intensity", "source")
    out: dict[str, dict[str, Counter]] = {t: {k: Counter() for k in keys} for t in TYPES}
    for doc in corpus:
        agents = Agents(doc.annotations)
        for a in doc.annotations:
            t = next((t for t, g in ANNOTATION_TYPES.items() if g == a.type), None)
            if t is None:
                continue
            c = out[t]
            c["annotations"]["all"] += 1
            c["polarity"][str(polarity_value(a.attrs.get("polarity")))] += 1
            c["intensity"][str(intensity_value(a.attrs.get("intensity")))] += 1
            c["expression_intensity"][str(intensity_value(a.attrs.get("expression-intensity")))] += 1
            chain = source_chain(a.attrs)
            last = chain[-1] if chain else None
            kind = {"w": WRITER, IMPLICIT: IMPLICIT}.get(last or "", "agent")
            c["source"]["unknown" if last is None or (kind == "agent" and agents.mentions(last) is None) else kind] += 1
    return out
