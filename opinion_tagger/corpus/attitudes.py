"""A DSE's attitude and targets, read from MPQA 2.0's attitude and target annotations (docs/frames.md, *Targets
and attitudes in the corpus*).

What the corpus holds (``mpqa_2_0_readme.txt``, sections 2.2 and 4.3 to 4.6): a DSE (``GATE_direct-subjective``)
names its attitudes in ``attitude-link``, a comma-separated list of ids of ``GATE_attitude`` annotations; an
attitude has an ``attitude-type`` (sentiment-pos/neg, arguing-pos/neg, agree-pos/neg, intention-pos/neg,
speculation, other-attitude), an ``intensity``, possibly ``inferred`` (a less prominent attitude that can be
inferred), and names its targets in ``target-link``: ids of ``GATE_target`` annotations, or ``none``.  Only
the documents of the attitude subset (``doclist.attitudeSubset``: 349 of the original 535) and the newer ones
(ULA, ULA-LU, XBank) carry them.

The rules (those of ``read_roles``; after Marasović & Frank (2018), who keep a DSE's targets in its sentence):

- A document *carries attitudes* when it has at least one ``GATE_attitude`` annotation.  Only its DSEs get an
  attitude and targets (``Frame.attitude``, ``Frame.targets``); elsewhere both stay None (not read).
- Ids: a link names the annotation whose ``id`` it equals (spaces around it ignored), else one whose ``id``
  equals it regardless of case; a link that names none (a typo in the corpus: ``t37`` for ``t-37``) is dropped
  and counted.  ``none`` and empty elements are no links.  An id that several attitudes share names the first
  of them in the file.
- The attitude: of the resolved attitudes of the DSE's ``attitude-link``, one, by priority: (1) not
  ``inferred`` before inferred (an inferred attitude is the less prominent one); (2) by the family of its type:
  sentiment, arguing, agreement, intention, speculation, other, then an attitude with no type; (3) the one
  listed first.  Its type (ATTITUDE_TYPES; ``other`` is read as ``other-attitude`` and ``specilation`` as
  ``speculation``; anything else as None) is ``Frame.attitude``; a DSE without a resolved attitude has None.
- The targets: those of *every* resolved attitude of the DSE (inferred ones too), as Marasović & Frank keep
  them, not only the chosen attitude's.  A target id with several ``GATE_target`` spans gives the one in the
  DSE's sentence nearest the DSE (the fewest characters between them, then the earlier); a target is kept when
  it overlaps a token of the DSE's sentence, as the tokens it overlaps there (a target that crosses the
  sentence boundary is cut at it and counted); a target wholly outside the sentence is dropped and counted.
  Targets that give the same tokens are one; ``Frame.targets`` lists them in token order, empty where none is
  left.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from opinion_tagger.corpus.labels import token_range
from opinion_tagger.corpus.mpqa import Annotation, Document, MPQACorpus
from opinion_tagger.sentences import ATTITUDE_TYPES, Span, Token

ATTITUDE, TARGET, DSE_ANNOTATION = "GATE_attitude", "GATE_target", "GATE_direct-subjective"
# the priority of an attitude type's family when a DSE has several attitudes (after not-inferred first)
FAMILIES = ("sentiment", "arguing", "agree", "intention", "speculation", "other")
# misspelt values of attitude-type in the corpus, read as the type they mean
ALIASES = {"other": "other-attitude", "specilation": "speculation"}


def attitude_value(raw: str | None) -> str | None:
    """An ``attitude-type`` attribute as one of ATTITUDE_TYPES (a misspelling of ALIASES read as meant), None
    if absent or unknown."""
    if raw is None:
        return None
    value = raw.strip().lower()
    value = ALIASES.get(value, value)
    return value if value in ATTITUDE_TYPES else None


def link_ids(raw: str | None) -> list[str]:
    """The ids of an ``attitude-link`` or ``target-link`` attribute (``none`` and empty elements dropped)."""
    return [e.strip() for e in (raw or "").split(",") if e.strip() and e.strip().lower() != "none"]


def is_inferred(attitude: Annotation) -> bool:
    return attitude.attrs.get("inferred", "").strip().lower() in ("yes", "true")


def priority(attitude: Annotation, position: int) -> tuple[int, int, int]:
    """The sort key of an attitude among a DSE's (smallest first): not inferred, its type's family, its place in
    the link."""
    value = attitude_value(attitude.attrs.get("attitude-type"))
    family = FAMILIES.index(value.split("-")[0]) if value else len(FAMILIES)
    return (is_inferred(attitude), family, position)


def _by_id(annotations: list[Annotation]) -> tuple[dict[str, list[Annotation]], dict[str, list[Annotation]]]:
    """Annotations by their ``id`` (in file order), and by the id in lower case."""
    exact: dict[str, list[Annotation]] = {}
    for a in sorted(annotations, key=lambda a: a.line):
        key = a.attrs.get("id", "").strip()
        if key:
            exact.setdefault(key, []).append(a)
    folded: dict[str, list[Annotation]] = {}
    for k, found in exact.items():
        folded.setdefault(k.lower(), []).extend(found)
    return exact, folded


class Attitudes:
    """A document's attitudes and targets by id."""

    def __init__(self, annotations: list[Annotation]):
        atts = [a for a in annotations if a.type == ATTITUDE]
        self.present = bool(atts)  # the document carries attitudes
        self._attitudes = _by_id(atts)
        self._targets = _by_id([a for a in annotations if a.type == TARGET and not a.is_empty])

    @staticmethod
    def _find(tables: tuple[dict, dict], key: str) -> list[Annotation] | None:
        exact, folded = tables
        found = exact.get(key)
        return found if found is not None else folded.get(key.lower())

    def attitude(self, key: str) -> Annotation | None:
        """The attitude an ``attitude-link`` id names (the first of several with that id), None if none."""
        found = self._find(self._attitudes, key)
        return found[0] if found else None

    def target(self, key: str) -> list[Annotation] | None:
        """The spans of the target a ``target-link`` id names, None if none."""
        return self._find(self._targets, key)


@dataclass
class RoleCounts:
    """What ``read_roles`` found for the DSEs it read (a counter per name; ``to_dict`` says what each is) and the
    types of the attitudes it chose."""

    n: Counter = field(default_factory=Counter)
    attitude: Counter = field(default_factory=Counter)

    def add(self, other: RoleCounts) -> None:
        self.n.update(other.n)
        self.attitude.update(other.attitude)

    def to_dict(self) -> dict:
        n = self.n
        return {
            "dses": n["dses"],
            "attitude_links": {
                "total": n["attitude_links"],
                "resolved": n["attitude_links_resolved"],
                "unresolved": n["attitude_links"] - n["attitude_links_resolved"],
            },
            "dses_with_attitude": n["with_attitude"],
            "dses_without_attitude": {
                "no_link": n["no_attitude_link"],
                "links_unresolved": n["dses"] - n["with_attitude"] - n["no_attitude_link"],
            },
            "chosen_among_several": {k: n[f"chosen_by_{k}"] for k in ("inferred", "type", "order")},
            "attitude_type": dict(sorted(self.attitude.items(), key=lambda kv: (-kv[1], kv[0]))),
            "target_links": {
                "total": n["target_links"],
                "none": n["target_none"],
                "resolved": n["target_links_resolved"],
                "unresolved": n["target_links"] - n["target_links_resolved"],
                "in_sentence": n["targets_in_sentence"],
                "cut_at_sentence_boundary": n["targets_cut"],
                "outside_sentence_dropped": n["targets_outside"],
                "nearest_of_several_spans": n["targets_several_spans"],
            },
            "dses_with_targets": n["with_targets"],
            "targets": n["targets"],
        }


def read_roles(
    dse: Annotation, attitudes: Attitudes, tokens: Sequence[Token], counts: RoleCounts | None = None
) -> tuple[str | None, tuple[tuple[int, int], ...]]:
    """The attitude type and target token spans of DSE annotation ``dse`` in the sentence of ``tokens`` (with
    document offsets), by the module's rules; what was kept and dropped is added to ``counts``."""
    c = RoleCounts() if counts is None else counts
    c.n["dses"] += 1
    ids = link_ids(dse.attrs.get("attitude-link"))
    c.n["no_attitude_link"] += not ids
    c.n["attitude_links"] += len(ids)
    linked = [(a, k) for k, a in enumerate(attitudes.attitude(i) for i in ids) if a is not None]
    c.n["attitude_links_resolved"] += len(linked)
    attitude = None
    if linked:
        c.n["with_attitude"] += 1
        ranked = sorted(linked, key=lambda p: priority(*p))
        attitude = attitude_value(ranked[0][0].attrs.get("attitude-type"))
        c.attitude[str(attitude)] += 1
        if len(ranked) > 1:
            first, second = priority(*ranked[0]), priority(*ranked[1])
            decided = "inferred" if first[0] != second[0] else "type" if first[1] != second[1] else "order"
            c.n[f"chosen_by_{decided}"] += 1
    found: set[tuple[int, int]] = set()
    for a, _ in linked:
        tids = link_ids(a.attrs.get("target-link"))
        c.n["target_none"] += not tids
        c.n["target_links"] += len(tids)
        for t in tids:
            spans = attitudes.target(t)
            if spans is None:
                continue
            c.n["target_links_resolved"] += 1
            c.n["targets_several_spans"] += len(spans) > 1
            best = None
            for m in spans:
                where = token_range(list(tokens), Span("TARGET", m.start, m.end))
                if where is None:
                    continue
                key = (max(0, m.start - dse.end, dse.start - m.end), m.start)
                if best is None or key < best[0]:
                    best = (key, where, m)
            if best is None:
                c.n["targets_outside"] += 1
                continue
            _, where, m = best
            c.n["targets_in_sentence"] += 1
            c.n["targets_cut"] += m.start < tokens[where[0]].start or tokens[where[1] - 1].end < m.end
            found.add(where)
    c.n["with_targets"] += bool(found)
    c.n["targets"] += len(found)
    return attitude, tuple(sorted(found))


class AttitudeCounts:
    """Over the annotations of the documents added (whatever the tagging keeps): documents and those that carry
    attitudes; their DSE annotations (with a span or not), attitude links and how many resolve; attitude
    annotations by type (as read here; ``None``: absent or unknown), the inferred ones and those without a target;
    target annotations and the target links of the attitudes, resolved or not."""

    def __init__(self) -> None:
        self.n: Counter = Counter()
        self.types: Counter = Counter()

    def add(self, doc: Document) -> None:
        n = self.n
        atts = Attitudes(doc.annotations)
        n["documents"] += 1
        n["documents_with_attitudes"] += atts.present
        for a in doc.annotations:
            if a.type == DSE_ANNOTATION and atts.present:
                ids = link_ids(a.attrs.get("attitude-link"))
                n["dses"] += 1
                n["dses_with_link"] += bool(ids)
                n["attitude_links"] += len(ids)
                n["attitude_links_resolved"] += sum(atts.attitude(i) is not None for i in ids)
            elif a.type == ATTITUDE:
                n["attitudes"] += 1
                n["inferred"] += is_inferred(a)
                self.types[str(attitude_value(a.attrs.get("attitude-type")))] += 1
                tids = link_ids(a.attrs.get("target-link"))
                n["attitudes_without_target"] += not tids
                n["target_links"] += len(tids)
                n["target_links_resolved"] += sum(atts.target(t) is not None for t in tids)
            elif a.type == TARGET:
                n["targets"] += 1

    def to_dict(self) -> dict:
        n = self.n
        return {
            "documents": n["documents"],
            "documents_with_attitudes": n["documents_with_attitudes"],
            "dse_annotations": n["dses"],
            "dse_annotations_with_attitude_link": n["dses_with_link"],
            "attitude_links": {"total": n["attitude_links"], "resolved": n["attitude_links_resolved"]},
            "attitudes": n["attitudes"],
            "attitudes_inferred": n["inferred"],
            "attitudes_without_target": n["attitudes_without_target"],
            "attitude_type": dict(sorted(self.types.items(), key=lambda kv: (-kv[1], kv[0]))),
            "target_annotations": n["targets"],
            "target_links": {"total": n["target_links"], "resolved": n["target_links_resolved"]},
        }


def attitude_counts(corpus: MPQACorpus) -> dict:
    """``AttitudeCounts`` of every document of ``corpus``."""
    counts = AttitudeCounts()
    for doc in corpus:
        counts.add(doc)
    return counts.to_dict()
