"""``opinion-tagger corpus stats|convert|agreement``: the MPQA corpus as the labelling rules read it."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from opinion_tagger.cli.common import problems_line
from opinion_tagger.corpus.agreement import measure_agreement
from opinion_tagger.corpus.convert import mpqa_sentences, write_conll
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
    docs, sents, toks = set(), 0, 0
    spans = {t: 0 for t in TYPES}
    for s in mpqa_sentences(corpus, _rules(args)):
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
    if args.json:
        print(json.dumps(stats))
    else:
        print(f"documents  {len(docs)} (of {len(corpus)} listed)")
        print(f"sentences  {sents}")
        print(f"tokens     {toks}")
        for t in TYPES:
            print(f"{t} spans  {spans[t]}")
        print(f"problems   {problems_line(corpus.problems)}")
    return 0


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
