"""``opinion-tagger adapt``: a bundle adapted to annotated documents of a new genre
(``opinion_tagger.training.adapt``); ``annotate adapt`` runs it on a project's accepted documents."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from opinion_tagger.cli.common import BUNDLED_NAMES, Help, headline_scores, problems_line
from opinion_tagger.errors import Problems
from opinion_tagger.paths import DEFAULT_NAME, resolve_model


def add_parser(sub) -> None:
    p = sub.add_parser(
        "adapt",
        help="adapt a model to annotated documents of a new genre (with a replay of its own training data)",
        formatter_class=Help,
    )
    p.add_argument(
        "--data",
        nargs=2,
        metavar=("SOURCE", "PATH"),
        required=True,
        help="the new documents: annotations PROJECT (its accepted documents), mpqa DIR (with --doclist) or "
        "conll FILE (from corpus convert)",
    )
    p.add_argument("--doclist", type=Path, metavar="FILE", help="only the documents this list names")
    add_adapt_options(p)
    p.set_defaults(func=run)


def add_adapt_options(p: argparse.ArgumentParser) -> None:
    """--model, --out and the adaptation's settings, shared with ``annotate adapt``."""
    from opinion_tagger.training.adapt import AdaptSettings

    d = AdaptSettings()
    p.add_argument(
        "--model",
        default=DEFAULT_NAME,
        metavar="NAME|PATH",
        help=f"the bundle to adapt, or a bundled model's name ({BUNDLED_NAMES}; default: %(default)s)",
    )
    p.add_argument("--out", type=Path, required=True, help="the adapted bundle's directory")
    p.add_argument(
        "--replay",
        type=float,
        default=d.replay,
        help="sentences of the model's own training data replayed for each new training sentence, so it keeps "
        "what it knew (0: none)",
    )
    p.add_argument("--epochs", type=int, default=d.epochs, help="at most this many epochs; the best is kept")
    p.add_argument("--learning-rate", type=float, default=d.learning_rate, help="Adam's learning rate (constant)")
    p.add_argument(
        "--held-out-every",
        type=int,
        default=d.held_out_every,
        help="one new document in this many is held out to choose the epoch (the last one when fewer)",
    )
    p.add_argument("--seed", type=int, default=d.seed)
    p.add_argument(
        "--freeze-encoder",
        action="store_true",
        help="only the recurrent layers and the heads learn (the encoder and word vectors stay): faster, no "
        "better on the genres measured (docs/adapt.md)",
    )
    p.add_argument("--keep-checkpoints", action="store_true", help="keep the epochs' checkpoints in --out")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def run(args) -> int:
    source, path = args.data
    return adapt(args, source, path, args.doclist)


def adapt(args, source: str, path: str, doclist: Path | None) -> int:
    """Run the adaptation the parsed ``args`` describe; the one line of JSON (the bundle, its held-out scores)."""
    from opinion_tagger.extras import require

    require("train", "adapt")
    from opinion_tagger.model.keras_backend import import_keras

    import_keras(args.verbose)
    from opinion_tagger.training.adapt import AdaptSettings, adapt_bundle, gain_line

    settings = AdaptSettings.from_namespace(args)
    problems = Problems()
    _, meta = adapt_bundle(
        resolve_model(args.model),
        source,
        path,
        args.out,
        doclist=doclist,
        settings=settings,
        progress=not args.quiet,
        problems=problems,
        keep_checkpoints=args.keep_checkpoints,
        say=lambda line: print(line, file=sys.stderr),
    )
    if problems.messages:
        print(f"data: {problems_line(problems)}", file=sys.stderr)
    t = meta["training"]
    print(
        f"saved {args.out}: best epoch {t['best_epoch']} of {t['epochs']}, {t['train_seconds']:.0f}s training",
        file=sys.stderr,
    )
    print(f"adapt: {gain_line(meta, args.model)}", file=sys.stderr)
    held_out = {"held_out": meta["scores"]["dev"], "held_out_before": t["adapted"]["held_out_before"]}
    print(json.dumps({"model": str(args.out), **{k: headline_scores(v) for k, v in held_out.items()}}))
    return 0
