"""Inter-annotator agreement on the documents that several annotators annotated (an overlap):
per pair of annotators and per span type, over the documents both accepted in their copies.

- Binary and proportional span F1: ``opinion_tagger.evaluation.metrics.overlap_scores`` with one
  annotator's spans as gold and the other's as predicted (both F1 are symmetric: swapping
  the two swaps precision and recall).  As there, with no spans on either side F1 is 1.
- Cohen's kappa over tokens: each token labelled "in a span of this type" or not by each
  annotator; ``(p_o - p_e) / (1 - p_e)`` with ``p_o`` the share of tokens labelled alike and
  ``p_e`` the agreement expected by chance from each annotator's own label shares.  Undefined
  (None) when ``p_e`` is 1: both gave every token one and the same label.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Hashable, Sequence
from itertools import combinations

from opinion_tagger.annotation.store import Document, Project
from opinion_tagger.evaluation.metrics import overlap_scores
from opinion_tagger.wording import counted


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float | None:
    """Cohen's kappa of two labellings of the same items; None when it is undefined (no items,
    or chance agreement 1)."""
    if len(a) != len(b):
        raise ValueError(f"{len(a)} labels against {len(b)}")
    n = len(a)
    if n == 0:
        return None
    observed = sum(x == y for x, y in zip(a, b)) / n
    ca, cb = Counter(a), Counter(b)
    expected = sum(ca[k] * cb[k] for k in ca) / (n * n)
    if expected == 1:
        return None
    return (observed - expected) / (1 - expected)


def sentence_tags(doc: Document, typ: str) -> list[list[str]]:
    """The document's sentences as untyped IOB2 tags (``B``, ``I``, ``O``) of its spans of ``typ``."""
    tags = ["O"] * len(doc.tokens)
    for sp in doc.spans:
        if sp.type == typ:
            for k in range(sp.tok_start, sp.tok_end):
                tags[k] = "B" if k == sp.tok_start else "I"
    out: list[list[str]] = []
    current = None
    for tok, tag in zip(doc.tokens, tags):
        if tok.sentence != current:
            out.append([])
            current = tok.sentence
        out[-1].append(tag)
    return out


def pair_agreement(pairs: Sequence[tuple[Document, Document]], typ: str) -> dict:
    """Agreement of two annotators' copies of the same documents on spans of ``typ``."""
    gold, pred = [], []
    for a, b in pairs:
        gold.extend(sentence_tags(a, typ))
        pred.extend(sentence_tags(b, typ))
    scores = overlap_scores(gold, pred)
    in_a = [t != "O" for s in gold for t in s]
    in_b = [t != "O" for s in pred for t in s]
    return {
        "documents": len(pairs),
        "tokens": len(in_a),
        "spans": [scores["counts"]["gold"], scores["counts"]["predicted"]],
        "binary_f1": scores["binary"]["f1"],
        "proportional_f1": scores["proportional"]["f1"],
        "kappa": cohen_kappa(in_a, in_b),
    }


def agreement(project: Project) -> list[dict]:
    """Per pair of annotators (names in alphabetical order) and per type, over the documents
    both accepted (their copies done): ``{"annotators": [a, b], "type", "documents", "tokens",
    "spans": [a's, b's], "binary_f1", "proportional_f1", "kappa"}``; pairs without such a
    document are left out."""
    done: dict[int, list[str]] = defaultdict(list)
    for doc_id, owner, status, _ in project.copies():
        if status == "done":
            done[doc_id].append(owner)
    docs_of: dict[tuple[str, str], list[int]] = defaultdict(list)
    for doc_id, owners in done.items():
        for a, b in combinations(sorted(owners), 2):
            docs_of[(a, b)].append(doc_id)
    out = []
    for (a, b), doc_ids in sorted(docs_of.items()):
        pairs = [(project.document(d, a), project.document(d, b)) for d in sorted(doc_ids)]
        for typ in project.types:
            out.append({"annotators": [a, b], "type": typ, **pair_agreement(pairs, typ)})
    return out


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}"


def agreement_lines(stats: dict) -> list[str]:
    """The team part of ``annotate stats`` (``exporting.stats``) as text lines."""
    team = stats.get("team") or {}
    if not team.get("documents"):
        return []
    lines = [
        (
            f"team: {counted(team['documents'], 'document')} with an overlap, "
            f"{team['awaiting_review']} awaiting review, {team['reviewed']} reviewed"
        )
    ]
    for name, by in sorted(stats.get("copies", {}).items()):
        lines.append(
            f"copies of {name}: {by['done']} done, {by['in_progress']} in progress, {by['todo']} to do, "
            f"{by['rejected']} rejected"
        )
    if not stats.get("agreement"):
        lines.append("agreement: no document accepted by two annotators yet")
    else:
        lines.append("agreement (documents both accepted): pair  type  documents  binary F1  proportional F1  kappa")
        for row in stats["agreement"]:
            a, b = row["annotators"]
            kappa = "-" if row["kappa"] is None else f"{row['kappa']:.3f}"
            lines.append(
                f"  {a} / {b}  {row['type']}  {row['documents']}  {_pct(row['binary_f1'])}  "
                f"{_pct(row['proportional_f1'])}  {kappa}"
            )
    return lines
