"""``opinion-tagger corpus stats|convert|agreement``: the MPQA corpus as the labelling rules read it."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from opinion_tagger.cli.common import problems_line
from opinion_tagger.corpus.agreement import measure_agreement
from opinion_tagger.corpus.attitudes import AttitudeCounts
from opinion_tagger.corpus.convert import document_sentences, mpqa_sentences, write_conll
from opinion_tagger.corpus.frames import FrameCounts, document_frames
from opinion_tagger.corpus.labels import IMPLICIT_CHOICES, OVERLAP_STRATEGIES, LabelRules
from opinion_tagger.corpus.mpqa import SUBSETS, MPQACorpus
from opinion_tagger.corpus.reference import read_reference
from opinion_tagger.paths import default_mpqa, default_reference
from opinion_tagger.runtime.bio import spans_from_bio
from opinion_tagger.sentences import TYPES
from opinion_tagger.wording import counted


def add_parser(sub) -> None:
    corpus = sub.add_parser("corpus", help="read, convert and count the MPQA corpus")
    csub = corpus.add_subparsers(dest="corpus_command", required=True)
    p = csub.add_parser("stats", help="documents, sentences, tokens, DSE/ESE spans and skipped items")
    _corpus_args(p)
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.add_argument(
        "--attitudes",
        action="store_true",
        help="the attitudes and targets too: the annotations' links, and what the tagged DSE spans' frames keep "
        "and drop (docs/frames.md)",
    )
    p.set_defaults(func=run_stats)
    p = csub.add_parser("convert", help="write every sentence with tokens, offsets and DSE/ESE BIO tags")
    _corpus_args(p)
    p.add_argument("--out", type=Path, required=True, help="output file")
    p.set_defaults(func=run_convert)
    p = csub.add_parser("agreement", help="compare the conversion with Irsoy & Cardie's reference files")
    _corpus_args(p)
    p.add_argument(
        "--reference",
        type=Path,
        default=default_reference(),
        help="directory with dse.txt, ese.txt, sentenceid.txt (default: %(default)s)",
    )
    p.add_argument("--json", action="store_true", help="compact JSON")
    p.set_defaults(func=run_agreement)


def _corpus_args(p: argparse.ArgumentParser) -> None:
    """Where the corpus is, which of its documents, and the labelling rules."""
    p.add_argument(
        "--mpqa", type=Path, default=default_mpqa(), help="MPQA 2.0 database directory (default: %(default)s)"
    )
    p.add_argument(
        "--subset",
        default="all",
        choices=["all", *SUBSETS],
        help="which doclist decides the documents (default: all doclists)",
    )
    p.add_argument(
        "--doclist",
        type=Path,
        metavar="FILE",
        help="a document list of one's own instead (a path, or a file in the MPQA directory; names relative to "
        "it); every document it names must be there",
    )
    d = LabelRules()
    g = p.add_argument_group("labelling rules (defaults chosen by agreement with the reference files)")
    g.add_argument(
        "--overlap",
        choices=OVERLAP_STRATEGIES,
        default=d.overlap,
        help="how spans of one type that share a token are resolved (default: %(default)s)",
    )
    g.add_argument(
        "--dse-implicit",
        choices=IMPLICIT_CHOICES,
        default=d.dse_implicit,
        help="implicit DSEs with a non-empty span: drop, keep those on words, keep all (default: %(default)s)",
    )
    g.add_argument("--no-insubstantial", action="store_true", help="drop DSEs marked insubstantial")


def _rules(args) -> LabelRules:
    return LabelRules(overlap=args.overlap, dse_implicit=args.dse_implicit, dse_insubstantial=not args.no_insubstantial)


def run_stats(args) -> int:
    corpus = MPQACorpus(args.mpqa, subset=args.subset, doclist=args.doclist)
    rules = _rules(args)
    docs, sents, toks = set(), 0, 0
    spans = {t: 0 for t in TYPES}
    annotations, frames = AttitudeCounts(), FrameCounts()
    for doc in corpus:
        sentences = document_sentences(doc, rules, corpus.problems)
        if args.attitudes:
            annotations.add(doc)
            document_frames(doc, sentences, "mpqa", rules, frames)
        for s in sentences:
            docs.add(s.doc)
            sents += 1
            toks += len(s)
            for t in TYPES:
                spans[t] += len(spans_from_bio(s.tags[t]))
    stats = {
        "documents": len(docs),
        "documents_listed": len(corpus),
        "sentences": sents,
        "tokens": toks,
        "spans": spans,
        "skipped": corpus.problems.counts_by(True),
        "repaired": corpus.problems.counts_by(False),
        "problems": [m for _, m, _ in corpus.problems.messages],
    }
    found = {"annotations": annotations.to_dict(), "tagged_dses": frames.roles.to_dict()}
    if args.attitudes:
        stats["attitudes"] = found
    if args.json:
        print(json.dumps(stats))
        return 0
    print(f"documents  {len(docs)} (of {len(corpus)} listed)")
    print(f"sentences  {sents}")
    print(f"tokens     {toks}")
    for t in TYPES:
        print(f"{t} spans  {spans[t]}")
    print(f"problems   {problems_line(corpus.problems)}")
    if args.attitudes:
        print_attitudes(found)
    return 0


def _values(counts: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items()) or "none"


def print_attitudes(found: dict) -> None:
    """``corpus stats --attitudes``'s counts (``opinion_tagger.corpus.attitudes``) as lines."""
    a, d = found["annotations"], found["tagged_dses"]
    links, targets = a["attitude_links"], a["target_links"]
    print(f"attitudes  documents that carry them: {a['documents_with_attitudes']} of {a['documents']}")
    print("  annotations (all of those documents' DSEs, with a span or not):")
    print(f"    DSEs {a['dse_annotations']}, {a['dse_annotations_with_attitude_link']} with an attitude-link")
    print(f"    attitude links {links['total']}, resolved {links['resolved']}")
    print(
        f"    attitudes {a['attitudes']} ({a['attitudes_inferred']} inferred, "
        f"{a['attitudes_without_target']} without a target link)"
    )
    print(f"    attitude types: {_values(a['attitude_type'])}")
    print(f"    targets {a['target_annotations']}; target links {targets['total']}, resolved {targets['resolved']}")
    links, targets, without = d["attitude_links"], d["target_links"], d["dses_without_attitude"]
    print("  tagged DSE spans (their frames, by the rules of docs/frames.md):")
    print(f"    DSE spans {d['dses']}; attitude links {links['total']}, resolved {links['resolved']}")
    print(
        f"    with an attitude {d['dses_with_attitude']}; without {without['no_link'] + without['links_unresolved']} "
        f"(no link {without['no_link']}, links unresolved {without['links_unresolved']})"
    )
    print(f"    the attitude chosen among several, decided by: {_values(d['chosen_among_several'])}")
    print(f"    attitude types: {_values(d['attitude_type'])}")
    print(
        f"    target links of their attitudes {targets['total']} (and {targets['none']} attitudes with none); "
        f"resolved {targets['resolved']}"
    )
    print(
        f"    in the DSE's sentence {targets['in_sentence']} (cut at its boundary "
        f"{targets['cut_at_sentence_boundary']}), outside it (dropped) {targets['outside_sentence_dropped']}; "
        f"a target id with several spans {targets['nearest_of_several_spans']}"
    )
    print(f"    DSE spans with targets {d['dses_with_targets']}; targets (distinct token spans) {d['targets']}")


def run_convert(args) -> int:
    t0 = time.perf_counter()
    corpus = MPQACorpus(args.mpqa, subset=args.subset, doclist=args.doclist)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as fh:
        n = write_conll(mpqa_sentences(corpus, _rules(args)), fh)
    print(
        f"wrote {counted(n, 'sentence')} to {args.out} in {time.perf_counter() - t0:.1f}s; "
        f"problems: {problems_line(corpus.problems)}",
        file=sys.stderr,
    )
    return 0


def run_agreement(args) -> int:
    ours = list(mpqa_sentences(MPQACorpus(args.mpqa, subset=args.subset, doclist=args.doclist), _rules(args)))
    result = measure_agreement(ours, read_reference(args.reference)).to_dict()
    result["rules"] = _rules(args).to_dict()
    print(json.dumps(result, indent=None if args.json else 2))
    return 0
