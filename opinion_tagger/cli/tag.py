"""``opinion-tagger tag``: texts, files and directories through a bundle, on the local engine (one process,
or a worker process per core) or on Ray, one output record per input record."""

from __future__ import annotations

import os
import stat
import sys
from collections import Counter
from pathlib import Path

from opinion_tagger.cli.common import BUNDLED_NAMES, add_backend_arg, add_precision_arg, positive_int
from opinion_tagger.errors import TaggerError
from opinion_tagger.paths import DEFAULT_NAME
from opinion_tagger.tagging.formats import FORMATS, Writer
from opinion_tagger.tagging.inputs import INPUT_FORMATS, MAX_CHARS, input_prefixes, read_records
from opinion_tagger.wording import counted


def add_parser(sub) -> None:
    p = sub.add_parser("tag", help="tag text, files or directories with a model bundle")
    p.add_argument(
        "text",
        nargs="*",
        help="texts to tag (each one document); an argument that names an existing file or directory is read as "
        "--input would read it, - is standard input; without TEXT or --input, text piped to standard input",
    )
    p.add_argument(
        "--input",
        action="append",
        metavar="FILE|DIR|-",
        help="plain-text file (one document), .html/.htm file, .jsonl file (a 'text' field per line, "
        "'id' kept), directory, or - for standard input; repeatable",
    )
    p.add_argument(
        "--input-format",
        choices=INPUT_FORMATS,
        default="auto",
        help="html: tag the text the HTML shows, offsets into the HTML; text: everything as plain text; "
        "auto (default): .html/.htm files are HTML, the rest text",
    )
    p.add_argument(
        "--model",
        default=None,
        metavar="NAME|PATH",
        help=f"model bundle directory or bundled model name: {BUNDLED_NAMES} (default: {DEFAULT_NAME})",
    )
    p.add_argument(
        "--format",
        choices=(*FORMATS, "parquet"),
        default="jsonl",
        help="(default: %(default)s; parquet with --engine ray)",
    )
    p.add_argument(
        "--out", type=Path, help="output file (a directory for brat and --engine ray); default: standard output"
    )
    add_backend_arg(
        p,
        "onnx: the bundle's model.onnx in ONNX Runtime; keras: the Keras network (the train extra; e.g. "
        "KERAS_BACKEND=jax on a GPU)",
    )
    add_precision_arg(p)
    p.add_argument(
        "--max-chars",
        type=positive_int,
        default=MAX_CHARS,
        help="longer records become error records (default: %(default)s)",
    )
    p.add_argument("--chunk", type=positive_int, default=256, help="records tagged together (default: %(default)s)")
    p.add_argument(
        "--batch-size",
        type=positive_int,
        metavar="SENTENCES",
        help="sentences in a batch of the network, whatever their length, e.g. 1024 on a GPU (default: up to "
        "128 within a budget of words or wordpieces, the CPU's best)",
    )
    p.add_argument(
        "--lang-check",
        choices=("on", "off"),
        default="on",
        help="on (default): a record whose text looks like another language than English gets a warning field "
        "(JSONL, CoNLL, HTML) and standard error counts them, as the models are trained on English; texts of "
        "a few words are never judged; off: no check",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    g = p.add_argument_group("distributed tagging (the ray extra: pip install 'opinion-tagger[ray]')")
    g.add_argument(
        "--engine",
        choices=("local", "ray"),
        default="local",
        help="local: this process (default); ray: Ray Data actors, partitioned output in --out DIR, "
        "restartable; --input may also be a glob or .parquet files (a 'text' column)",
    )
    g.add_argument("--address", help="Ray cluster to join: auto, or ray://HOST:PORT (default: start a local one)")
    p.add_argument(
        "--workers",
        type=positive_int,
        help="processes that tag, each with the model loaded; local "
        "engine, with --input: one per core for a model on word vectors, one (using every core) for a "
        "model with the MiniLM encoder; ray: actors, one per CPU",
    )
    g.add_argument(
        "--gpus-per-worker",
        type=float,
        help="GPUs reserved per actor, e.g. 0.25 (default: 0); "
        "ONNX Runtime computes on a GPU with the onnxruntime-gpu package installed",
    )
    g.add_argument(
        "--partition-size",
        type=positive_int,
        default=1000,
        help="records (files, JSONL lines, Parquet rows) per output partition (default: %(default)s)",
    )
    p.set_defaults(func=run)


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


# what a file name given as TEXT ends with: such an argument is refused when it names no file, never tagged
PATH_SUFFIXES = (".txt", ".text", ".jsonl", ".json", ".html", ".htm", ".md", ".csv", ".tsv", ".xml", ".parquet")


def _names_a_path(text: str) -> bool:
    """Whether a TEXT argument names an existing file or directory (``-``: standard input)."""
    if text == "-":
        return True
    if not text or len(text) > 4096 or "\n" in text or "\0" in text:
        return False
    try:
        return Path(text).exists()
    except (OSError, ValueError):  # e.g. a name too long for the file system
        return False


def _looks_like_a_path(text: str) -> bool:
    """Whether a TEXT argument that names nothing reads as a file or directory name: one word that ends with a
    path separator or a text file's suffix (``texts/movie.txt``, ``d/``), never a sentence."""
    if not text or any(c.isspace() for c in text):
        return False
    return text.endswith(("/", os.sep)) or text.lower().endswith(PATH_SUFFIXES)


def _stdin_is_piped() -> bool:
    """Whether standard input is a pipe, a file or a socket (not a terminal, /dev/null or closed)."""
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (AttributeError, OSError, ValueError):  # no standard input, or one without a file descriptor
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode) or stat.S_ISSOCK(mode)


def resolve_sources(args) -> tuple[list[str], list[str]]:
    """``(texts, inputs)`` to tag: TEXT arguments that name existing files or directories (or ``-``) are read as
    --input would read them, said on standard error; a mix of such names and texts, or a file name that names
    nothing, is refused in one line that names --input: a path is never tagged as text."""
    texts, inputs = list(args.text), list(args.input or ())
    paths = [t for t in texts if _names_a_path(t)]
    if paths and len(paths) < len(texts):
        raise TaggerError(
            f"{paths[0]!r} names {_what(paths[0])} but other arguments are text: give files and directories "
            f"with --input (--input {paths[0]}) and texts as arguments"
        )
    if paths:
        for path in paths:
            if path != "-":
                print(
                    f"opinion-tagger: {path} is {_what(path)}: tagging its {_content(path)} (as --input {path})",
                    file=sys.stderr,
                )
        return [], [*paths, *inputs]
    for text in texts:
        if _looks_like_a_path(text):
            raise TaggerError(
                f"{text}: no such file or directory (give a file with --input FILE; a text that only looks like a "
                "file name can come on standard input)"
            )
    return texts, inputs


def _what(path: str) -> str:
    return "standard input" if path == "-" else "a directory" if Path(path).is_dir() else "a file"


def _content(path: str) -> str:
    return "files" if Path(path).is_dir() else "content"


def run_local(args) -> int:
    from tqdm.auto import tqdm

    from opinion_tagger.engines.local import default_workers, tag_stream

    if not args.text and not args.input:
        if not _stdin_is_piped():
            raise TaggerError("nothing to tag: give TEXT arguments, --input FILE|DIR|-, or text on standard input")
        args.input = ["-"]  # text piped in: read as --input - reads it
    workers = args.workers or (default_workers(args.model) if args.input else 1)
    out_fh, directory = _tag_output(args)
    writer = Writer(args.format, out_fh, directory, prefixes=input_prefixes(args.input or ()))
    counts = {"tagged": 0, "errors": 0}
    languages: Counter[str] = Counter()  # records that look like another language than English
    bar = tqdm(unit="doc", disable=not sys.stderr.isatty() or args.quiet, desc="tagging")

    def records():
        for rec in read_records(args.text, args.input or (), max_chars=args.max_chars, input_format=args.input_format):
            bar.update(1)
            yield rec

    try:  # one document or error record per input record, in order
        for rid, error, text, doc, language in tag_stream(
            records(),
            args.model,
            args.backend,
            args.format,
            workers=workers,
            chunk=args.chunk,
            batch_size=args.batch_size,
            precision=args.precision,
            lang_check=args.lang_check == "on",
        ):
            if language is not None:
                languages[language] += 1
            if text is not None:
                writer.formatted(text)
            else:
                writer.document(doc)  # type: ignore[arg-type]  # a TaggedDocument when text is None
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
    if writer.conf_kept is not None:
        print(f"opinion-tagger: {writer.conf_kept}: kept as it was (not written by opinion-tagger)", file=sys.stderr)
    print(f"tagged {counted(counts['tagged'], 'record')}, {counted(counts['errors'], 'error')}", file=sys.stderr)
    _language_summary(languages)
    return 1 if counts["errors"] else 0


def _language_summary(languages: dict[str, int]) -> None:
    """The language check's line on standard error, when records looked like other languages."""
    from opinion_tagger.tagging.language import summary_line

    line = summary_line(languages)
    if line is not None:
        print(f"opinion-tagger: warning: {line} (--lang-check off hides this)", file=sys.stderr)


def _require_lang_check(args) -> None:
    """A one-line error now, before tagging, when the language check is on and its detector is not installed."""
    import importlib.util

    if args.lang_check == "on" and importlib.util.find_spec("py3langid") is None:
        raise TaggerError("--lang-check on needs py3langid (pip install py3langid); or give --lang-check off")


def run_ray(args) -> int:
    """``tag --engine ray``: partitioned output in --out DIR (opinion_tagger.engines.ray_engine)."""
    from opinion_tagger.engines.ray_engine import ClusterOptions, ModelOptions, OutputOptions, tag_with_ray

    if args.text or not args.input:
        raise TaggerError("--engine ray tags files: give --input FILE|DIR|GLOB (no TEXT arguments)")
    if args.out is None:
        raise TaggerError("--engine ray writes partitioned output: give --out DIRECTORY")
    totals = tag_with_ray(
        args.input,
        args.out,
        model=ModelOptions(args.model, args.backend, args.precision, args.batch_size, args.lang_check == "on"),
        output=OutputOptions(args.format, args.max_chars, args.chunk, args.partition_size),
        cluster=ClusterOptions(args.address, args.workers, args.gpus_per_worker or 0.0),
        progress=not args.quiet,
    )
    for rid, reason in totals["error_records"]:
        print(f"opinion-tagger: {rid}: {reason}", file=sys.stderr)
    print(
        f"tagged {counted(totals['records'] - totals['errors'], 'record')}, {counted(totals['errors'], 'error')}, "
        f"{counted(totals['tokens'], 'token')} in {counted(totals['partitions'], 'partition')} "
        f"({totals['skipped']} finished before) in {args.out}",
        file=sys.stderr,
    )
    _language_summary(totals["languages"])
    return 1 if totals["errors"] else 0


def run(args) -> int:
    args.text, args.input = resolve_sources(args)
    _require_lang_check(args)
    if args.engine == "ray":
        if args.input_format == "html":
            raise TaggerError("--input-format html needs --engine local (--engine ray reads every file as text)")
        return run_ray(args)
    ray_only = [
        f for f, v in (("--address", args.address), ("--gpus-per-worker", args.gpus_per_worker)) if v is not None
    ]
    if ray_only or args.format == "parquet":
        raise TaggerError(f"{ray_only[0] if ray_only else '--format parquet'} needs --engine ray")
    return run_local(args)
