"""How the bundled models carry over from news to other genres, zero-shot: each model on the 48 documents of
MPQA 2.0's ULA subset (letters, oral histories, telephone conversations, Slate articles, history and travel,
book chapters), by genre, beside the paper's fold-0 test news, which none of them trained on; and whether
biasing the decoder towards O (fewer, surer spans: a CRF's O emission raised by ``b`` before Viterbi) buys
precision on the other genres at a price on the news.

    python -m experiments.genre_study --models accurate fast accurate-mpnet --o-bias 0 0.5 1 1.5 2

prints a table and writes ``experiments/results/genre-zero-shot.json`` (proportional and binary overlap
precision, recall and F1 per type, genre and model, over each genre's sentences).  Two more questions go with
it: how densely each part is annotated (gold spans a sentence, the share of low-intensity ones: ``density``), and
whether dropping the spans a model is least sure of (its frame heads' intensity ``low``, or a mean tag
confidence under a threshold) buys the other genres' precision (``filters``, for models with frame heads).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from opinion_tagger.config import TaggerConfig
from opinion_tagger.corpus.split import load_split
from opinion_tagger.evaluation.metrics import span_report
from opinion_tagger.paths import default_datasplit, default_mpqa, resolve_model
from opinion_tagger.provenance import git_commit
from opinion_tagger.runtime.decoding import viterbi_batch
from opinion_tagger.runtime.sentence_tagger import SentenceTagger
from opinion_tagger.training.run_data import load_data

HERE = Path(__file__).resolve().parent
ULA = default_mpqa().parents[1] / "mpqa-2.0-ula" / "database.mpqa.2.0"
GENRES = ("letters", "oral history", "telephone", "slate", "history/travel", "book")


def genre(name: str) -> str:
    """A ULA document's genre, from its name (``../shared/README.md``)."""
    leaf = name.rsplit("/", 1)[-1]
    if leaf.startswith("sw"):
        return "telephone"
    if leaf.startswith("Article247"):
        return "slate"
    if leaf.startswith("History"):
        return "history/travel"
    if leaf in ("chapter-10", "ch5"):
        return "book"
    if re.match(r"\d", leaf):
        return "letters"
    return "oral history"


def decode(tagger: SentenceTagger, emissions: Sequence[dict], o_bias: float) -> dict[str, list[list[str]]]:
    """Viterbi tags of a CRF tagger from its emission scores, the O column raised by ``o_bias``."""
    out: dict[str, list[list[str]]] = {}
    for t in tagger.types:
        transitions, start, end = tagger.crf_params(t)
        rows = []
        for e in emissions:
            x = e[t].copy()
            if len(x) == 0:
                rows.append([])
                continue
            x[:, 0] += o_bias
            ids = viterbi_batch(x[None], [len(x)], transitions, start, end)[0]
            rows.append(["O" if i == 0 else f"{'B' if i == 1 else 'I'}-{t}" for i in ids])
        out[t] = rows
    return out


def scores(sentences, tags: dict) -> dict:
    out = {}
    for t, rows in tags.items():
        r = span_report([s.tags[t] for s in sentences], rows, [t])[t]
        out[t] = {m: {k: round(r[m][k], 4) for k in ("precision", "recall", "f1")} for m in ("binary", "proportional")}
        out[t]["predicted"] = sum(tag.startswith("B-") for row in rows for tag in row)
        out[t]["gold"] = sum(tag.startswith("B-") for s in sentences for tag in s.tags[t])
    return out


def density(sentences) -> dict:
    """Per type: gold spans a sentence and a hundred words (the genres' sentences differ in length) and, of the
    spans whose frame has an intensity, the share ``low``."""
    out = {}
    words = sum(len(s.words) for s in sentences)
    for t in ("DSE", "ESE"):
        spans = sum(tag.startswith("B-") for s in sentences for tag in s.tags[t])
        rated = [f.intensity for s in sentences for f in s.frames or () if f.type == t and f.intensity]
        out[t] = {
            "per_sentence": round(spans / max(1, len(sentences)), 4),
            "per_100_words": round(100 * spans / max(1, words), 4),
            "low_intensity": round(sum(i == "low" for i in rated) / max(1, len(rated)), 4),
        }
    return out


FILTERS = ("none", "intensity low", "confidence < 0.6", "confidence < 0.7", "fillers alone")
# the words of conversation that carry no opinion of their own (spaCy splits "uh-huh" into uh, -, huh): the
# upper bound of teaching a model that they are O, as augmenting news with them would
FILLERS = frozenset(
    "uh um hum huh - yeah yes oh okay ok well like right so anyway you i know mean guess see let 's".split()
)


def filtered(tagger: SentenceTagger, sentences) -> dict:
    """Per rule of ``FILTERS``: ``scores`` of the tagger's spans less those the rule drops (a span's confidence:
    the mean of its tokens' tag probabilities; its intensity: the frame heads'; ``fillers alone``: spans of
    ``FILLERS`` only, such as "yeah", "you know", "uh - huh")."""
    predicted = tagger.predict_frames([s.words for s in sentences])

    def dropped(rule: str, frame, conf, words) -> bool:
        if rule == "fillers alone":
            return all(w.lower() in FILLERS for w in words[frame.start : frame.end])
        if rule == "intensity low":
            return frame.intensity == "low"
        if rule.startswith("confidence"):
            return sum(conf[frame.start : frame.end]) / (frame.end - frame.start) < float(rule.split()[-1])
        return False

    out = {}
    for rule in FILTERS:
        tags: dict[str, list[list[str]]] = {t: [] for t in tagger.types}
        for s, (tagged, frames) in zip(sentences, predicted, strict=True):
            for t in tagger.types:
                row, conf = list(tagged[t][0]), tagged[t][1]
                for f in frames:
                    if f.type == t and dropped(rule, f, conf, s.words):
                        row[f.start : f.end] = ["O"] * (f.end - f.start)
                tags[t].append(row)
        out[rule] = scores(sentences, tags)
    return out


def student_record(bundle: Path, how: str, base: Path | None = None) -> dict:
    """What the table of teachers shows of a student bundle: ``how`` it was trained, its teacher (by name), the
    teacher's share of the loss, the noisy copies (their number, noise and style), the fields of its configuration
    that differ from the ``base`` bundle's outside distillation and frame heads (``changes``: path to value), and
    the commit its network was trained at."""
    config = json.loads((bundle / "config.json").read_text())
    training = json.loads((bundle / "meta.json").read_text())["training"]
    d = config["training"]["distillation"]
    teacher = d.get("teacher")
    changes = {}
    if base is not None:
        own = TaggerConfig.from_dict(config).dotted()
        theirs = TaggerConfig.from_dict(json.loads((base / "config.json").read_text())).dotted()
        changes = {
            k: v
            for k, v in own.items()
            if v != theirs.get(k) and not k.startswith(("training.distillation.", "model.frames."))
        }
    return {
        "bundle": how,
        "teacher": Path(teacher).name if teacher else None,
        "weight": d.get("weight", 0.0),
        "copies": d.get("copies", 0),
        "noise": d.get("noise"),
        "style": d.get("style", "words"),
        "changes": changes,
        "git_commit": training.get("network", training)["git_commit"],
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", nargs="+", default=["accurate", "fast"])
    p.add_argument("--o-bias", type=float, nargs="+", default=[0.0])
    p.add_argument("--ula", type=Path, default=ULA)
    p.add_argument("--out", type=Path, default=HERE / "results" / "genre-zero-shot.json")
    p.add_argument(
        "--distillation",
        metavar="HOW",
        help="one model, a student: record its teacher, teacher weight and noisy copies (from its configuration), "
        "the commit it was trained at and HOW it was trained, for the report's table of teachers "
        "(results/genre-distillation/)",
    )
    p.add_argument(
        "--base",
        default="accurate",
        help="with --distillation: the bundle whose configuration the student's is compared with (default: accurate)",
    )
    args = p.parse_args(argv)
    if args.distillation is not None and len(args.models) != 1:
        p.error("--distillation: one model")
    ula = load_data("mpqa", args.ula, doclist="doclist.ulaSubset", frames=True)
    news = load_data("mpqa", default_mpqa(), frames=True)
    parts = {g: [s for n, sents in ula.items() if genre(n) == g for s in sents] for g in GENRES}
    parts = {"all ULA": [s for sents in ula.values() for s in sents], **parts}
    parts["news fold-0 test"] = [s for n in load_split(default_datasplit(), 0).test for s in news[n]]
    documents = {g: sum(genre(n) == g for n in ula) for g in GENRES}
    results = []
    densities = {part: density(sentences) for part, sentences in parts.items()}
    filters = []
    for part, d in densities.items():
        print(
            f"{part:17} gold spans a sentence, share low intensity: "
            + "  ".join(f"{t} {v['per_sentence']:.2f} {100 * v['low_intensity']:.0f}%" for t, v in d.items())
        )
    for name in args.models:
        tagger = SentenceTagger.load(resolve_model(name))
        if tagger.heads is not None:
            for part in ("all ULA", "news fold-0 test"):
                filters.append({"model": name, "part": part, "scores": filtered(tagger, parts[part])})
        for part, sentences in parts.items():
            crf = tagger.config.model.head.output == "crf"
            emissions = tagger.distributions([s.words for s in sentences], scores=True) if crf else None
            for bias in args.o_bias if crf else [0.0]:
                if emissions is not None:
                    tags = decode(tagger, emissions, bias)
                else:
                    tags = tagger.predict_tags([s.words for s in sentences])
                row = {"model": name, "part": part, "o_bias": bias, "sentences": len(sentences)}
                results.append({**row, "scores": scores(sentences, tags)})
                cells = []
                for t, r in results[-1]["scores"].items():
                    prop = {k: 100 * v for k, v in r["proportional"].items()}
                    cells.append(
                        f"{t} P {prop['precision']:5.1f} R {prop['recall']:5.1f} F {prop['f1']:5.1f} "
                        f"({r['predicted']}/{r['gold']})"
                    )
                print(f"{name:15} {part:17} bias {bias:3.1f} " + "  ".join(cells), flush=True)
    record = {"git_commit": git_commit()}
    if args.distillation is not None:
        record = student_record(resolve_model(args.models[0]), args.distillation, resolve_model(args.base))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {
                "documents": documents,
                "density": densities,
                "results": results,
                "filters": filters,
                **record,
            },
            indent=1,
        )
        + "\n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
