"""``opinion-tagger evaluate``: a bundle's binary, proportional and exact scores on a fold's dev or test
documents, or on an annotation project's accepted documents."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from opinion_tagger.cli.common import (
    BUNDLED_NAMES,
    add_backend_arg,
    add_data_args,
    add_precision_arg,
    headline_scores,
    problems_line,
)
from opinion_tagger.errors import Problems, TaggerError
from opinion_tagger.paths import DEFAULT_NAME, default_mpqa, default_reference, resolve_model
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
    add_backend_arg(p, "onnx: model.onnx in ONNX Runtime; keras: the Keras network (the train extra)")
    add_precision_arg(p)
    p.set_defaults(func=run)


def recorded_data_path(model: Path, source: str, path: str) -> str:
    """The data a bundle records it was trained on, if that path exists here; else the
    default location of that corpus (../shared, see opinion_tagger.paths); else a one-line error."""
    if Path(path).exists():
        return path
    default = {"mpqa": default_mpqa, "reference": default_reference}.get(source)
    if default is not None and default().exists():
        print(f"data: {model} records {source} data as {path!r}, not a path here; using {default()}", file=sys.stderr)
        return str(default())
    where = f" (nor is the default location {default()})" if default is not None else ""
    raise TaggerError(
        f"{model}: the {source} data it was trained on, {path!r}, is not found here{where}; "
        f"give --data {source} {'DIR' if source != 'conll' else 'FILE'}"
    )


def run(args) -> int:
    from opinion_tagger.corpus.sources import select
    from opinion_tagger.corpus.split import load_split
    from opinion_tagger.evaluation.scoring import evaluate_tagger, evaluate_with_frames
    from opinion_tagger.runtime.sentence_tagger import SentenceTagger
    from opinion_tagger.training.run_data import load_data

    tagger = SentenceTagger.load(resolve_model(args.model), backend=args.backend, precision=args.precision)
    if args.data:
        source, path = args.data
    else:
        data = tagger.meta.get("training", {}).get("data")
        if not data:
            raise TaggerError(f"{args.model}: the bundle does not say what data it was trained on; give --data")
        source, path = data["source"], recorded_data_path(args.model, data["source"], data["path"])
    problems = Problems()
    docs = load_data(source, path, problems, frames=tagger.heads is not None)  # frame heads: the gold frames too
    if problems.messages:
        print(f"data: {problems_line(problems)}", file=sys.stderr)
    if source == "annotations":  # every accepted document
        sentences = [s for sents in docs.values() for s in sents]
        where = f"the {len(docs)} accepted documents of {path}"
    else:
        sentences = select(docs, load_split(args.datasplit, args.fold).part(args.split))
        where = f"fold {args.fold} {args.split}"
    frames = None
    if tagger.heads is not None:  # the span and frame scores from one pass of the network
        spans, frames = evaluate_with_frames(tagger, sentences)
    else:
        spans = evaluate_tagger(tagger, sentences)
    report = headline_scores(spans)
    if args.json:
        print(json.dumps({**report, "frames": frames} if frames is not None else report))
    else:
        print(f"{args.model} on {where} ({counted(len(sentences), 'sentence')}, {source} data)")
        print(f"{'type':5} {'metric':13} {'P':>7} {'R':>7} {'F1':>7}")
        for t, r in report.items():
            for m in ("binary", "proportional", "exact"):
                s = r[m]
                print(f"{t:5} {m:13} {100 * s['precision']:7.2f} {100 * s['recall']:7.2f} {100 * s['f1']:7.2f}")
        if frames is not None:
            print_frames(frames)
    return 0


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
