"""Character-level scores of a bundle as a new user gets them: each MPQA sentence's text tagged by
``OpinionTagger`` (what ``opinion-tagger tag`` runs: spaCy's tokens and sentences, the language check) and its
spans, as character offsets, scored against the corpus's DSE and ESE annotations (``LabelRules``' defaults:
what the token-level figures read), with no tokenization shared between the two.

A span's characters are the unit: binary and proportional overlap (``opinion_tagger.evaluation.metrics``) over
BIO tags of each sentence's characters, spaces inside a span included.  Parts: all ULA documents, each ULA genre
(``experiments.genre_study.genre``) and the paper's fold-0 test news.

    python -m experiments.char_level --models accurate accurate-mpnet fast

prints a table and writes ``experiments/results/genre-char-level.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from experiments.genre_study import GENRES, ULA, genre
from opinion_tagger.corpus.labels import opinion_spans, ranges_to_bio
from opinion_tagger.corpus.mpqa import Document, MPQACorpus
from opinion_tagger.corpus.split import load_split
from opinion_tagger.evaluation.metrics import span_report
from opinion_tagger.paths import default_datasplit, default_mpqa, resolve_model
from opinion_tagger.provenance import git_commit
from opinion_tagger.tagging.tagger import OpinionTagger

HERE = Path(__file__).resolve().parent
TYPES = ("DSE", "ESE")


def sentence_tags(start: int, end: int, spans: list[tuple[str, int, int]]) -> dict[str, list[str]]:
    """Per type, BIO tags of the characters [start, end) from spans (type, start, end) in document offsets:
    each span clipped to the sentence, overlapping spans of a type merged (as the token-level labels do)."""
    out = {}
    for t in TYPES:
        ranges = [(max(a, start) - start, min(b, end) - start) for typ, a, b in spans if typ == t]
        out[t] = ranges_to_bio(end - start, [(a, b) for a, b in ranges if a < b], t)
    return out


def gold_spans(doc: Document) -> list[tuple[str, int, int]]:
    return [(s.type, s.start, s.end) for s in opinion_spans(doc.annotations, doc.text) if s.type in TYPES]


def tagged_spans(tagger: OpinionTagger, doc: Document) -> list[tuple[str, int, int]]:
    """The spans the tagger finds in each of the document's sentences, tagged as one text each."""
    records = [(str(k), doc.text[a:b]) for k, (a, b) in enumerate(doc.sentences)]
    out = []
    for (a, _), tagged in zip(doc.sentences, tagger.tag_many(records), strict=True):
        out += [(s.type, a + s.start, a + s.end) for s in tagged.spans if s.type in TYPES]
    return out


def score_part(tagger: OpinionTagger, docs: list[Document]) -> dict:
    """Binary and proportional precision, recall and F1 per type over the documents' sentences' characters."""
    gold: dict[str, list[list[str]]] = {t: [] for t in TYPES}
    pred: dict[str, list[list[str]]] = {t: [] for t in TYPES}
    for doc in docs:
        g, p = gold_spans(doc), tagged_spans(tagger, doc)
        for a, b in doc.sentences:
            gs, ps = sentence_tags(a, b, g), sentence_tags(a, b, p)
            for t in TYPES:
                gold[t].append(gs[t])
                pred[t].append(ps[t])
    out = {}
    for t in TYPES:
        r = span_report(gold[t], pred[t], [t])[t]
        out[t] = {m: {k: round(r[m][k], 4) for k in ("precision", "recall", "f1")} for m in ("binary", "proportional")}
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", nargs="+", default=["accurate"])
    p.add_argument("--ula", type=Path, default=ULA)
    p.add_argument("--out", type=Path, default=HERE / "results" / "genre-char-level.json")
    args = p.parse_args(argv)
    ula = list(MPQACorpus(args.ula, doclist="doclist.ulaSubset"))
    test = set(load_split(default_datasplit(), 0).test)
    news = [d for d in MPQACorpus(default_mpqa()) if d.name in test]
    parts = {"all ULA": ula, **{g: [d for d in ula if genre(d.name) == g] for g in GENRES}, "news fold-0 test": news}
    results = []
    for name in args.models:
        tagger = OpinionTagger.load(resolve_model(name), lang_check=False)
        for part, docs in parts.items():
            scores = score_part(tagger, docs)
            results.append({"model": name, "part": part, "documents": len(docs), "scores": scores})
            cells = "  ".join(
                f"{t} P {100 * s['proportional']['precision']:5.1f} R {100 * s['proportional']['recall']:5.1f} "
                f"F {100 * s['proportional']['f1']:5.1f}"
                for t, s in scores.items()
            )
            print(f"{name:15} {part:17} {cells}", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"results": results, "git_commit": git_commit()}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
