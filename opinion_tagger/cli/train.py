"""``opinion-tagger train``: configuration and data from the command line, then
``opinion_tagger.training.run.train_bundle``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from opinion_tagger.cli.common import Help, add_data_args, headline_scores, problems_line
from opinion_tagger.cli.options import add_config_options, config_from_args
from opinion_tagger.errors import Problems, TaggerError
from opinion_tagger.paths import default_mpqa, resolve_model


def add_parser(sub) -> None:
    p = sub.add_parser("train", help="train a DSE, ESE or joint tagger on one fold", formatter_class=Help)
    add_data_args(p, required=False)
    p.set_defaults(data=("mpqa", str(default_mpqa())))
    add_config_options(p)
    p.add_argument("--out", type=Path, required=True, help="model bundle directory to write")
    p.add_argument("--resume", action="store_true", help="continue from the checkpoint in --out")
    p.add_argument(
        "--init-from",
        metavar="NAME|PATH",
        help="continue training a bundle (e.g. default) on the data; its configuration is the "
        "base, options change training fields only",
    )
    p.add_argument(
        "--heads-only",
        action="store_true",
        help="with --init-from: train only opinion-frame heads (implies --frames) on the bundle's network, "
        "which stays as it is: frames for a bundle trained without them, in minutes",
    )
    p.add_argument(
        "--devices",
        metavar="all|N",
        help="data-parallel training over all or N devices, each global "
        "batch split across them (keras.distribution.DataParallel; needs KERAS_BACKEND=jax)",
    )
    p.add_argument(
        "--keep-checkpoints",
        action="store_true",
        help="keep the epochs' checkpoints in --out once the bundle is written (by default they go: a finished "
        "run needs no resume)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args) -> int:
    from opinion_tagger.extras import require

    require("train", "train")
    from opinion_tagger.model.keras_backend import import_keras

    import_keras(args.verbose)
    from opinion_tagger.runtime.bundle import load_bundle_files
    from opinion_tagger.training.run import train_bundle
    from opinion_tagger.training.run_data import training_data

    init = resolve_model(args.init_from) if args.init_from else None
    from opinion_tagger.training.distillation import without_teacher

    # training goes on from the bundle's configuration without the teacher it learnt from (unless the flags name one)
    config = config_from_args(args, base=without_teacher(load_bundle_files(init)[1]) if init is not None else None)
    if args.heads_only:
        if init is None:
            raise TaggerError("--heads-only trains frame heads on a bundle's network: give --init-from")
        config = config.replace({"model.frames.enabled": True, "model.frames.detach": True})
    if config.training.trainer == "fast":
        require("fast", "trainer fast")
    problems = Problems()
    source, path = args.data
    data = training_data(
        source,
        path,
        args.datasplit,
        args.fold,
        problems,
        config.auxiliary_types,
        config.model.frames.enabled,
        doclist=args.doclist,
    )
    if problems.messages:
        print(f"data: {problems_line(problems)}", file=sys.stderr)
    r, enc = config.model.recurrent, config.model.encoder
    encoder = f" + {config.encoder.title}{' fine-tuned' if enc.fine_tune else ''}" if enc.name else ""
    print(
        f"training {config.task} {r.cell} depth {r.depth} hidden {config.hidden_size}{encoder} "
        f"{'from ' + str(init) + ' ' if init else ''}on {data.where}: "
        f"{len(data.train)} train / {len(data.dev)} dev sentences",
        file=sys.stderr,
    )
    _, meta = train_bundle(
        config,
        data,
        args.out,
        init=init,
        devices=args.devices,
        resume=args.resume,
        progress=not args.quiet,
        heads_only=args.heads_only,
        keep_checkpoints=args.keep_checkpoints,
    )
    t = meta["training"]
    print(
        f"saved {args.out}: best epoch {t['best_epoch']} of {t['epochs']}, {t['train_seconds']:.0f}s "
        f"training on {t['device']}",
        file=sys.stderr,
    )
    print(json.dumps({"model": str(args.out), "dev": headline_scores(meta["scores"]["dev"])}))
    return 0
