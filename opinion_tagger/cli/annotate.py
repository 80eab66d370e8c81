"""``opinion-tagger annotate import|export|stats|serve|adapt``: annotation projects (``opinion_tagger.annotation``)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from opinion_tagger.annotation import serving
from opinion_tagger.annotation.agreement import agreement_lines
from opinion_tagger.annotation.exporting import DEFAULT_STATUSES, EXPORT_FORMATS, export, export_stream, stats
from opinion_tagger.annotation.importing import import_records, input_records
from opinion_tagger.annotation.store import STATUSES, Project
from opinion_tagger.cli.adapt import adapt, add_adapt_options
from opinion_tagger.cli.common import BUNDLED_NAMES, Help
from opinion_tagger.errors import TaggerError
from opinion_tagger.paths import DEFAULT_NAME
from opinion_tagger.tagging.inputs import MAX_CHARS
from opinion_tagger.wording import counted

EXPORT_RULE = (
    "Writes the accepted documents only (status done; for a document annotated by several annotators, its "
    "final version as the reviewer made it), each with its status and provenance; --status and "
    "--include-rejected choose other statuses (--status todo --status in_progress --status done: all the "
    "work so far)."
)


def add_parser(sub) -> None:
    ann = sub.add_parser("annotate", help="annotation projects: import, export, statistics, the annotator page")
    asub = ann.add_subparsers(dest="annotate_command", required=True)
    p = asub.add_parser("import", help="add documents to a project (created if needed), pre-annotated by a model")
    p.add_argument("project", type=Path, help="project file (SQLite)")
    p.add_argument(
        "input",
        nargs="+",
        help="plain-text file, .jsonl file ('text' per line, 'id' kept), "
        "directory, or - for standard input; a document's name is its "
        "path in the directory given (sub/b.txt) or a file's name",
    )
    p.add_argument(
        "--model",
        default=None,
        metavar="NAME|PATH|none",
        help=f"pre-annotate with this bundle or bundled model ({BUNDLED_NAMES}); none: tokens only "
        f"(default: {DEFAULT_NAME}, as for tag)",
    )
    p.add_argument("--max-chars", type=int, default=MAX_CHARS, help="longer records are refused (default: %(default)s)")
    p.add_argument(
        "--overlap",
        type=_overlap,
        default=0,
        metavar="N",
        help="N annotators (2 or more) annotate each new document independently, each in a copy of "
        "their own, then a reviewer makes the final version (default: one shared version)",
    )
    p.set_defaults(func=run_import)
    p = asub.add_parser(
        "export",
        help="write a project's accepted documents with their spans and provenance",
        description=EXPORT_RULE,
    )
    p.add_argument("project", type=Path)
    p.add_argument("--format", choices=EXPORT_FORMATS, default="jsonl", help="(default: %(default)s)")
    p.add_argument(
        "--out", type=Path, help="output file (a directory for brat); default: standard output (jsonl, conll)"
    )
    p.add_argument(
        "--status",
        action="append",
        choices=STATUSES,
        help="documents with this status; repeatable (default: done, the accepted documents)",
    )
    p.add_argument(
        "--include-rejected",
        action="store_true",
        help="the rejected documents too (with --status: added to those statuses)",
    )
    p.set_defaults(func=run_export)
    p = asub.add_parser("stats", help="progress, spans by type and source, annotators, inter-annotator agreement")
    p.add_argument("project", type=Path)
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.set_defaults(func=run_stats)
    p = asub.add_parser("serve", help="start the annotator page on a project")
    p.add_argument("project", type=Path, help="project file (SQLite), made by annotate import or --create")
    p.add_argument(
        "--create",
        action="store_true",
        help="start a new, empty project when PROJECT does not exist (documents are then imported in the page); "
        "without it a missing PROJECT is refused",
    )
    p.add_argument("--port", type=int, default=8501, help="(default: %(default)s)")
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default: %(default)s, this machine only); any other address "
        "needs a password: $OPINION_TAGGER_PASSWORD or --password-file",
    )
    p.add_argument(
        "--password-file",
        type=Path,
        metavar="FILE",
        help="the annotators' password, the file's first line (instead of $OPINION_TAGGER_PASSWORD); "
        "with a password each annotator logs in with a name, recorded with their changes",
    )
    p.add_argument(
        "--annotator",
        metavar="NAME",
        help="the annotator recorded with every change (a server without a password login)",
    )
    p.add_argument(
        "--reviewers",
        metavar="NAMES",
        help="the annotators who may review (comma-separated names): only they see the Review view "
        "(default: everyone may review)",
    )
    p.add_argument(
        "--models",
        type=Path,
        metavar="DIR",
        help="a directory of model bundles (e.g. trained with --out DIR/NAME): the page's model box lists them "
        f"beside the bundled models ({BUNDLED_NAMES})",
    )
    p.set_defaults(func=run_serve)
    p = asub.add_parser(
        "adapt",
        help="adapt a model to the project's accepted documents (as opinion-tagger adapt --data annotations)",
        formatter_class=Help,
    )
    p.add_argument("project", type=Path)
    add_adapt_options(p)
    p.set_defaults(func=run_adapt)


def run_adapt(args) -> int:
    if not args.project.is_file():
        raise TaggerError(f"{args.project}: no such project")
    return adapt(args, "annotations", str(args.project), None)


def _overlap(text: str) -> int:
    """argparse type of --overlap: a number of annotators."""
    try:
        n = int(text)
    except ValueError:
        n = -1
    if n < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: a number of annotators (2 or more; 1 is the default)")
    return n


def run_import(args) -> int:
    from opinion_tagger.tagging.tagger import OpinionTagger

    model = args.model or DEFAULT_NAME
    tagger = None if model == "none" else OpinionTagger.load(model)
    own = {Path(str(args.project.resolve()) + suffix) for suffix in ("", "-wal", "-shm", "-journal")}
    records = input_records(args.input, args.max_chars, skip=own)  # not the project file, inside an input directory
    with Project(args.project, create=True) as project:
        report = import_records(
            project, records, tagger, model_name=None if tagger is None else model, overlap=args.overlap
        )
        counts = project.counts()
    for rid, reason in report.errors:
        print(f"opinion-tagger: {rid}: {reason}", file=sys.stderr)
    print(f"{args.project}: {report.summary()}; {counts['done']} of {sum(counts.values())} done", file=sys.stderr)
    return 1 if report.errors else 0


def run_export(args) -> int:
    statuses = tuple(args.status) if args.status else None
    if args.include_rejected:
        statuses = tuple(dict.fromkeys((*(statuses or DEFAULT_STATUSES), "rejected")))
    if args.out is None and args.format == "brat":
        raise TaggerError("--format brat writes .txt/.ann files: give --out DIRECTORY")
    if args.out is not None and args.format == "brat" and args.out.exists() and not args.out.is_dir():
        raise TaggerError(f"--out {args.out}: exists and is not a directory (--format brat writes a directory)")
    if args.out is not None and args.format != "brat" and args.out.is_dir():
        raise TaggerError(f"--out {args.out}: is a directory; give a file name (a directory only with --format brat)")
    with Project(args.project) as project:
        if args.out is None:
            n = export_stream(project, args.format, sys.stdout, statuses)
        else:
            n = export(project, args.format, args.out, statuses)
    print(f"wrote {counted(n, 'document')} to {args.out or 'standard output'}", file=sys.stderr)
    return 0


def run_stats(args) -> int:

    with Project(args.project) as project:
        s = stats(project)
    if args.json:
        print(json.dumps(s))
    else:
        print(
            f"{s['project']}: {s['progress']} ({s['status']['in_progress']} in progress, "
            f"{s['status']['todo']} to do, {s['status']['rejected']} rejected), {counted(s['tokens'], 'token')}"
        )
        for typ, by in s["spans"].items():
            print(f"{typ} spans  {by['model']} from the model, {by['human']} by hand")
        print(f"annotators {', '.join(s['annotators']) or '-'}")
        for line in agreement_lines(s):
            print(line)
    return 0


def run_serve(args) -> int:
    from opinion_tagger.extras import require

    require("annotate", "annotate serve")
    cmd, env = serving.plan(args, os.environ)  # refused before anything is made or started
    if not args.create and not args.project.exists():  # a mistyped name must not become a new, empty project
        raise TaggerError(
            f"{args.project}: no such project file; create one with annotate import {args.project} FILES, "
            "or give --create to start an empty one"
        )
    Project(args.project, create=args.create).close()  # a clear error now rather than in the page
    host = f"[{args.host}]" if ":" in args.host else args.host
    login = "; annotators log in with the password" if serving.PASSWORD_ENV in env else ""
    named = serving.reviewers(env)
    review = f"; reviewers: {', '.join(named)}" if named else ""
    print(f"annotating {args.project} at http://{host}:{args.port}{login}{review}", file=sys.stderr)
    return serving.run(cmd, env)
