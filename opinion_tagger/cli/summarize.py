"""``opinion-tagger summarize``: a corpus's opinions from ``tag``'s JSONL, grouped by holder, target and attitude or
polarity; a short text table on standard output, or with ``--out DIR`` the whole table as CSV and Parquet and an
HTML report (``opinion_tagger.summary``)."""

from __future__ import annotations

import sys
from pathlib import Path

from opinion_tagger.cli.common import positive_int
from opinion_tagger.errors import TaggerError

FILES = ("summary.csv", "summary.parquet", "report.html")


def add_parser(sub) -> None:
    p = sub.add_parser(
        "summarize",
        help="who holds which opinion about what, how often, how strongly: a table and a report of tag's JSONL",
    )
    p.add_argument(
        "tagged",
        nargs="+",
        metavar="TAGGED.jsonl",
        help="the JSONL that opinion-tagger tag writes; a directory: its .jsonl files (tag --engine ray's parts); "
        "- for standard input",
    )
    p.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help=f"write {', '.join(FILES)} here (default: a short text table on standard output)",
    )
    p.add_argument(
        "--top",
        type=positive_int,
        default=20,
        metavar="N",
        help="groups in the text table; holders and targets in the report's plots and tables (default: %(default)s)",
    )
    p.set_defaults(func=run)


def _out_dir(out: Path) -> Path:
    if out.exists() and not out.is_dir():
        raise TaggerError(f"--out {out}: exists and is not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise TaggerError(f"--out {out}: cannot create the directory: {exc.strerror or exc}") from None
    return out


def run(args) -> int:
    from opinion_tagger.extras import missing, missing_line
    from opinion_tagger.storage import atomic_path, atomic_write_text
    from opinion_tagger.summary.records import input_files, read
    from opinion_tagger.summary.report import report_html
    from opinion_tagger.summary.table import Summary, text_table, write_csv, write_parquet

    files = input_files(args.tagged)
    out = _out_dir(args.out) if args.out is not None else None
    summary = Summary()
    for name in files:
        for line in read(name):
            summary.add(line)
            if line.problem is not None:
                print(f"opinion-tagger: {summary.bad[-1]}", file=sys.stderr)
    if out is None:
        sys.stdout.write(text_table(summary, args.top))
    else:
        rows = summary.rows()
        with atomic_path(out / FILES[0]) as tmp:
            write_csv(rows, tmp)
        with atomic_path(out / FILES[1]) as tmp:
            write_parquet(rows, tmp)
        absent = missing("report")
        note = ""
        if absent:
            note = missing_line("report", "drawing the report's plots", absent) + "; report.html has the tables"
        sources = ["standard input" if f == "-" else f for f in args.tagged]
        atomic_write_text(out / FILES[2], report_html(summary, sources, args.top, plots=not absent, note=note))
        if note:
            print(f"opinion-tagger: {note}", file=sys.stderr)
        print(f"opinion-tagger: wrote {', '.join(FILES)} in {out}", file=sys.stderr)
    print(summary.summary_line(), file=sys.stderr)
    if summary.spans == 0 and summary.unframed:
        print(
            "opinion-tagger: the spans have no frames: tag with a model with frame heads (accurate, accurate-mpnet)",
            file=sys.stderr,
        )
    return 1 if summary.bad else 0
