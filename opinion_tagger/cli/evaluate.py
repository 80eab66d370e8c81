"""``opinion-tagger evaluate``: a bundle's binary, proportional and exact scores on a fold's dev or test
documents, or on an annotation project's accepted documents."""

from __future__ import annotations

import json
import sys

from opinion_tagger.cli.common import (
    BUNDLED_NAMES,
    add_backend_arg,
    add_data_args,
    add_precision_arg,
    headline_scores,
    problems_line,
)
from opinion_tagger.errors import Problems, TaggerError
from opinion_tagger.paths import DEFAULT_NAME, resolve_model
from opinion_tagger.wording import counted


def add_parser(sub) -> None:
    p = sub.add_parser("evaluate", help="score a model with binary, proportional and exact F1")
    p.add_argument(
        "--model",
        default=DEFAULT_NAME,
        metavar="NAME|PATH",
        help=f"model bundle directory, or a bundled model's name ({BUNDLED_NAMES}; default: %(default)s)",
    )
    add_data_args(p, required=False)
    p.add_argument("--split", choices=("dev", "test"), default="test", help="(default: %(default)s)")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout, values as fractions")
    p.add_argument(
        "--by-document",
        action="store_true",
        help="each document's scores too (under documents in the JSON object; a table otherwise)",
    )
    add_backend_arg(p, "onnx: model.onnx in ONNX Runtime; keras: the Keras network (the train extra)")
    add_precision_arg(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from opinion_tagger.corpus.sources import select
    from opinion_tagger.corpus.split import load_split
    from opinion_tagger.evaluation.scoring import by_document, predict_with_roles, score_predictions
    from opinion_tagger.runtime.sentence_tagger import SentenceTagger
    from opinion_tagger.training.run_data import load_data, recorded_data_path

    tagger = SentenceTagger.load(resolve_model(args.model), backend=args.backend, precision=args.precision)
    if args.data:
        source, path = args.data
    else:
        data = tagger.meta.get("training", {}).get("data")
        if not data:
            raise TaggerError(f"{args.model}: the bundle does not say what data it was trained on; give --data")
        source, path = data["source"], recorded_data_path(args.model, data["source"], data["path"])
    problems = Problems()
    frames = tagger.heads is not None  # frame heads: the gold frames too
    docs = load_data(source, path, problems, frames=frames, doclist=args.doclist)
    if problems.messages:
        print(f"data: {problems_line(problems)}", file=sys.stderr)
    if source == "annotations" or (args.doclist is not None and args.fold is None):  # every document
        names = list(docs)
        where = f"the {len(docs)} accepted documents of {path}" if source == "annotations" else f"{args.doclist}"
    else:
        fold = 0 if args.fold is None else args.fold
        names = [n for n in load_split(args.datasplit, fold).part(args.split) if args.doclist is None or n in docs]
        where = f"fold {fold} {args.split}"
    names = without_trained(args.model, tagger.meta, names)
    sentences = select(docs, names)
    # spans, frames and the roles of the gold DSEs from one pass of the network
    tags, frame_scores, role_scores = predict_with_roles(tagger, sentences)
    report = headline_scores(score_predictions(sentences, tags))
    out = {**report, "frames": frame_scores} if frame_scores is not None else dict(report)
    if role_scores is not None:
        out["roles"] = role_scores
    if args.by_document:
        out["documents"] = {
            d: {**r, "scores": headline_scores(r["scores"])} for d, r in by_document(sentences, tags).items()
        }
    if args.json:
        print(json.dumps(out))
        return 0
    print(f"{args.model} on {where} ({counted(len(sentences), 'sentence')}, {source} data)")
    print(f"{'type':5} {'metric':13} {'P':>7} {'R':>7} {'F1':>7}")
    for t, r in report.items():
        for m in ("binary", "proportional", "exact"):
            s = r[m]
            print(f"{t:5} {m:13} {100 * s['precision']:7.2f} {100 * s['recall']:7.2f} {100 * s['f1']:7.2f}")
    if frame_scores is not None:
        print_frames(frame_scores)
    if role_scores is not None:
        print_roles(role_scores)
    if args.by_document:
        print_documents(out["documents"])
    return 0


def without_trained(model: str, meta: dict, names: list[str]) -> list[str]:
    """``names`` less the documents the bundle learnt from (said on stderr); all of them: TaggerError."""
    from opinion_tagger.training.run_data import trained_documents

    trained = trained_documents(meta)
    seen = [n for n in names if n in trained]
    if not seen:
        return names
    if len(seen) == len(names):
        raise TaggerError(
            f"{model} was trained on all {counted(len(names), 'document')} to be scored; "
            "a model is scored on documents it did not learn from"
        )
    print(
        f"data: left out {counted(len(seen), 'document')} {model} was trained on (e.g. {seen[0]}); "
        f"scoring the other {len(names) - len(seen)}",
        file=sys.stderr,
    )
    return [n for n in names if n not in trained]


def print_documents(documents: dict) -> None:
    """Each document's proportional F1 per type, with its sentence count."""
    types = sorted({t for r in documents.values() for t in r["scores"]})
    print(f"{'document':40} {'sents':>6} " + " ".join(f"{t + ' prop F1':>12}" for t in types))
    for name, r in documents.items():
        cells = " ".join(f"{100 * r['scores'][t]['proportional']['f1']:12.2f}" for t in types)
        print(f"{name[:40]:40} {r['sentences']:6d} {cells}")


def print_frames(frames: dict) -> None:
    """The frame scores (``opinion_tagger.evaluation.frames``) as a table: polarity-aware F1, the accuracies on
    matched spans beside their majority class, a DSE's holder."""
    print(f"{'type':5} {'frames':24} {'P':>7} {'R':>7} {'F1':>7}")
    for t, r in frames.items():
        rows = [(f"polarity-aware {m}", r[f"polarity_{m}"]) for m in ("binary", "proportional")]
        rows += [("holder named", r["holder"])] if "holder" in r else []
        for name, s in rows:
            print(f"{t:5} {name:24} {100 * s['precision']:7.2f} {100 * s['recall']:7.2f} {100 * s['f1']:7.2f}")
    print(f"{'type':5} {'on matched spans':24} {'acc':>7} {'major.':>7} {'spans':>7}")
    for t, r in frames.items():
        for what in ("polarity", "intensity", "holder"):
            if what in r:
                a = r[what]
                print(f"{t:5} {what:24} {100 * a['accuracy']:7.2f} {100 * a['majority']:7.2f} {a['matched']:7d}")


def print_roles(roles: dict) -> None:
    """The DSE roles' scores (``opinion_tagger.evaluation.roles``) as a table: binary and proportional F1 of the
    holder (and targets, when predicted) with the gold DSEs given and end to end; the attitude type's accuracy."""
    print(f"{'role':8} {'DSEs':14} {'overlap':13} {'P':>7} {'R':>7} {'F1':>7} {'gold':>6} {'pred.':>6}")
    for role, r in roles.items():
        if role == "attitude":
            continue
        for setting, name in (("gold_dse_given", "gold given"), ("end_to_end", "end to end")):
            if setting not in r:
                continue
            s, n = r[setting], r[setting]["counts"]
            for m in ("binary", "proportional"):
                p, rc, f1 = (100 * s[m][k] for k in ("precision", "recall", "f1"))
                print(f"{role:8} {name:14} {m:13} {p:7.2f} {rc:7.2f} {f1:7.2f} {n['gold']:6d} {n['predicted']:6d}")
    if "attitude" in roles:
        print(f"{'attitude':8} {'DSEs':14} {'':13} {'acc':>7} {'major.':>7} {'DSEs':>7}")
        for setting, name in (("gold_dse_given", "gold given"), ("matched", "matched")):
            if setting in roles["attitude"]:
                a = roles["attitude"][setting]
                acc, major = 100 * a["accuracy"], 100 * a["majority"]
                print(f"{'attitude':8} {name:14} {'':13} {acc:7.2f} {major:7.2f} {a['matched']:7d}")
