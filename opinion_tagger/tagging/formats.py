"""Output formats for tagged documents: JSONL, CoNLL, BRAT standoff and HTML.

Every writer takes documents and error records one at a time, so batch
tagging streams.  HTML escapes all text.
"""

from __future__ import annotations

import html
import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TextIO

import orjson

from opinion_tagger.sentences import ATTITUDE_TYPES, HOLDER_CLASSES, INTENSITIES, POLARITIES
from opinion_tagger.tagging.documents import SpanFrame, TaggedDocument, TaggedSpan

FORMATS = ("jsonl", "conll", "brat", "html")
COLORS = {"DSE": "#ffd36b", "ESE": "#9fd3ff"}
LINE_COLORS = {"DSE": "#b8860b", "ESE": "#1f6fd1"}  # underlines: darker, to be seen on a DSE's background


def frame_text(frame: SpanFrame | None, holder: bool) -> str:
    """A span's frame in one field: ``polarity/intensity``, and for a DSE ``/holder`` (``writer``,
    ``implicit``, the holder's offsets ``start-end``, or ``_``: none) and, from a model with attitude and target
    heads, ``/attitude/targets``: the attitude type (``_``: none) and the targets' offsets ``start-end`` joined by
    ``+`` (``_``: none); ``_`` without a frame."""
    if frame is None:
        return "_"
    parts = [frame.polarity, frame.intensity]
    if holder:
        h = frame.holder
        parts.append(f"{h['start']}-{h['end']}" if isinstance(h, dict) else h or "_")
        if frame.attitude_score is not None or frame.targets is not None:
            parts.append(frame.attitude or "_")
            parts.append("+".join(f"{t['start']}-{t['end']}" for t in frame.targets or ()) or "_")
    return "/".join(parts)


def conll_lines(doc: TaggedDocument) -> str:
    """``# id``/``# text`` comments, then per sentence ``token start end DSE ESE`` lines; from a model with
    frame heads, a column per type after the tags: the frame of the span the token is in (``frame_text``).  A
    text that is not English (the language check) has a ``# warning`` comment after its id."""
    out = [f"# id = {doc.id}"]
    if doc.warning is not None:
        out.append(f"# warning = {doc.warning}")
    if doc.frames:
        out.append(f"# columns = token start end {' '.join(doc.types)} {' '.join(t + '-frame' for t in doc.types)}")
    for s in doc.sentences:
        out.append(f"# text = {doc.text[s.start : s.end].replace(chr(10), ' ').replace(chr(13), ' ')}")
        inside: dict[tuple[str, int], str] = {}
        if doc.frames:  # each token's frame, by type: the frame of the span that covers it
            for sp in doc.spans:
                if s.start <= sp.start < s.end:
                    text = frame_text(sp.frame, sp.type == "DSE")
                    inside.update({(sp.type, t.start): text for t in s.tokens if sp.start <= t.start < sp.end})
        for t in s.tokens:
            row = [t.text, str(t.start), str(t.end), *(t.tags.get(ty, "O") for ty in doc.types)]
            if doc.frames:
                row += [inside.get((ty, t.start), "_") for ty in doc.types]
            out.append("\t".join(row))
        out.append("")
    return "\n".join(out) + "\n"


def _text_bound(n: int, typ: str, doc: TaggedDocument, start: int, end: int) -> str:
    """``T<n>`` of a text span; one with a line break is written as fragments (``start end;start end``)."""
    frags, pos = [], start
    for part in re.split(r"(\n)", doc.text[start:end]):
        if part and part != "\n":
            frags.append(f"{pos} {pos + len(part)}")
        pos += len(part)
    return f"T{n}\t{typ} {';'.join(frags)}\t{doc.text[start:end].replace(chr(10), ' ')}"


def brat_ann(doc: TaggedDocument) -> str:
    """BRAT standoff: ``T1<TAB>DSE 10 14<TAB>said``; offsets into the document text.
    A span text with a line break is written as fragments (``start end;start end``).  A span's frame (a model
    with frame heads) follows the spans: attributes ``A1<TAB>Polarity T1 negative`` and ``Intensity``; a DSE's
    holder as a ``Holder`` attribute (``writer``, ``implicit``) or as a span of type ``HOLDER`` (after the
    opinion spans, one per distinct holder) and a relation ``R1<TAB>Holder Arg1:T1 Arg2:T5``; from a model with
    attitude and target heads, a DSE's attitude as an ``Attitude`` attribute (``A5<TAB>Attitude T1 sentiment-neg``)
    and each of its targets as a span of type ``TARGET`` (after the holders, one per distinct target) and a
    relation ``R2<TAB>Target Arg1:T1 Arg2:T6``."""
    lines = [_text_bound(n, sp.type, doc, sp.start, sp.end) for n, sp in enumerate(doc.spans, 1)]
    dses = [(n, sp.frame) for n, sp in enumerate(doc.spans, 1) if sp.frame is not None and sp.type == "DSE"]
    holders: dict[tuple[int, int], int] = {}  # a distinct holder's or target's offsets: its T number
    for _, f in dses:
        if isinstance(f.holder, dict) and (f.holder["start"], f.holder["end"]) not in holders:
            holders[(f.holder["start"], f.holder["end"])] = len(doc.spans) + len(holders) + 1
    targets: dict[tuple[int, int], int] = {}
    for _, f in dses:
        for t in f.targets or ():
            targets.setdefault((t["start"], t["end"]), len(doc.spans) + len(holders) + len(targets) + 1)
    lines += [_text_bound(k, "HOLDER", doc, *key) for key, k in holders.items()]
    lines += [_text_bound(k, "TARGET", doc, *key) for key, k in targets.items()]
    attrs: list[str] = []
    relations: list[str] = []
    for n, sp in enumerate(doc.spans, 1):
        if sp.frame is None:
            continue
        attrs.append(f"A{len(attrs) + 1}\tPolarity T{n} {sp.frame.polarity}")
        attrs.append(f"A{len(attrs) + 1}\tIntensity T{n} {sp.frame.intensity}")
        if sp.type != "DSE":
            continue
        h = sp.frame.holder
        if isinstance(h, str):
            attrs.append(f"A{len(attrs) + 1}\tHolder T{n} {h}")
        elif isinstance(h, dict):
            relations.append(f"R{len(relations) + 1}\tHolder Arg1:T{n} Arg2:T{holders[(h['start'], h['end'])]}")
        if sp.frame.attitude is not None:
            attrs.append(f"A{len(attrs) + 1}\tAttitude T{n} {sp.frame.attitude}")
        for t in sp.frame.targets or ():
            relations.append(f"R{len(relations) + 1}\tTarget Arg1:T{n} Arg2:T{targets[(t['start'], t['end'])]}")
    lines += attrs + relations
    return "\n".join(lines) + ("\n" if lines else "")


BRAT_CONF = "annotation.conf"  # brat's configuration of a directory: the types, relations and attributes used
CONF_MARK = "# written by opinion-tagger"  # the first line of an annotation.conf this package wrote
# an attribute's values
KNOWN_VALUES = {"Polarity": POLARITIES, "Intensity": INTENSITIES, "Holder": HOLDER_CLASSES, "Attitude": ATTITUDE_TYPES}


@dataclass
class BratUsage:
    """What a directory's .ann files use, for its ``annotation.conf``: entity types, relations with the types of
    their arguments, attributes with the types they are on and their values (each in the order first seen)."""

    entities: dict[str, None] = field(default_factory=dict)
    relations: dict[str, tuple[dict[str, None], dict[str, None]]] = field(default_factory=dict)
    attributes: dict[str, tuple[dict[str, None], dict[str, None]]] = field(default_factory=dict)

    def add(self, ann: str) -> None:
        """Note what the lines of one .ann file use (``T``, ``A`` and ``R`` lines; notes are skipped)."""
        kinds: dict[str, str] = {}
        for line in ann.splitlines():
            fields = line.split("\t")
            if len(fields) < 2 or not fields[0]:
                continue
            parts = fields[1].split()
            if fields[0][0] == "T" and parts:
                kinds[fields[0]] = parts[0]
                self.entities[parts[0]] = None
            elif fields[0][0] == "A" and len(parts) >= 2:
                on, values = self.attributes.setdefault(parts[0], ({}, {}))
                on[kinds.get(parts[1], "<ENTITY>")] = None
                if len(parts) > 2:
                    values[parts[2]] = None
            elif fields[0][0] == "R" and len(parts) == 3:
                first, second = self.relations.setdefault(parts[0], ({}, {}))
                first[kinds.get(parts[1].partition(":")[2], "<ENTITY>")] = None
                second[kinds.get(parts[2].partition(":")[2], "<ENTITY>")] = None


def brat_config(types: Sequence[str], used: BratUsage) -> str:
    """brat's ``annotation.conf`` for a directory of .ann files: the opinion ``types`` and every other entity type
    ``used`` (``HOLDER``, ``TARGET``), their relations (``Holder``, ``Target``), their attributes (``Polarity``,
    ``Intensity``, ``Holder``, ``Attitude``, each with every value it can take) and overlaps of any kind allowed,
    as DSE and ESE spans (and holders and targets) may overlap."""
    entities = list(dict.fromkeys([*types, *used.entities]))
    lines = [CONF_MARK + " (opinion-tagger tag --format brat, annotate export --format brat)", "", "[entities]"]
    lines += entities
    lines += ["", "[relations]"]
    lines += [f"{name}\tArg1:{'|'.join(a)}, Arg2:{'|'.join(b)}" for name, (a, b) in used.relations.items()]
    lines.append(f"<OVERLAP>\tArg1:{'|'.join(entities)}, Arg2:{'|'.join(entities)}, <OVL-TYPE>:<ANY>")
    lines += ["", "[events]", "", "[attributes]"]
    for name, (on, seen) in used.attributes.items():
        values = list(dict.fromkeys([*KNOWN_VALUES.get(name, ()), *seen]))
        lines.append(f"{name}\tArg:{'|'.join(on)}" + (f", Value:{'|'.join(values)}" if values else ""))
    return "\n".join(lines) + "\n"


def _mark_class(typ: str) -> str:
    """The CSS class of a span type's ``<mark>``: ``dse`` (background), ``ese`` (underline), else ``other``."""
    return typ.lower() if typ in COLORS else "other"


def shown(doc: TaggedDocument) -> tuple[str, list[TaggedSpan]]:
    """The text a reader sees and the spans over it: for a document tagged from HTML (``doc.html``) the
    visible text (``html_input.visible_text``) and each span (and a DSE's targets) mapped from its source range
    to the visible characters that come from inside it; else the text and spans as they are."""
    if not doc.html:
        return doc.text, doc.spans
    from opinion_tagger.tagging.html_input import visible_text

    vis = visible_text(doc.text)

    def visible(start: int, end: int) -> tuple[int, int]:
        return bisect_left(vis.starts, start), bisect_right(vis.ends, end)

    spans = []
    for sp in doc.spans:
        a, b = visible(sp.start, sp.end)
        if a < b:
            frame = sp.frame
            if frame is not None and frame.targets:
                found = [(t, *visible(t["start"], t["end"])) for t in frame.targets]
                shown_targets = [{**t, "start": c, "end": d, "text": vis.text[c:d]} for t, c, d in found if c < d]
                frame = replace(frame, targets=shown_targets)
            spans.append(TaggedSpan(sp.type, a, b, vis.text[a:b], sp.score, frame))
    return vis.text, spans


def _frame_title(sp: TaggedSpan) -> str:
    """The frame's part of a mark's title: ``, negative 0.81, high 0.66, holder: Officials 0.90`` and, from a
    model with attitude and target heads, ``, attitude: sentiment-neg 0.80, targets: the plan 0.90; the vote
    0.70`` (``none`` for no attitude, no target)."""
    f = sp.frame
    if f is None:
        return ""
    out = f", {f.polarity} {f.polarity_score:.2f}, {f.intensity} {f.intensity_score:.2f}"
    if sp.type == "DSE":
        h = f.holder
        name = h["text"] if isinstance(h, dict) else h or "none"
        out += f", holder: {name}" + (f" {f.holder_score:.2f}" if f.holder_score is not None else "")
        if f.attitude_score is not None:
            out += f", attitude: {f.attitude or 'none'} {f.attitude_score:.2f}"
        if f.targets is not None:
            out += ", targets: " + ("; ".join(f"{t['text']} {t['score']:.2f}" for t in f.targets) or "none")
    return out


def _frame_data(f: SpanFrame) -> str:
    return f' data-polarity="{html.escape(f.polarity)}" data-intensity="{html.escape(f.intensity)}"'


# a target's mark: a dotted underline in the colour of a DSE's (styled in place, so the page's head stays as it was)
TARGET_STYLE = f"text-decoration: underline dotted {LINE_COLORS['DSE']} 2px; text-underline-offset: 0.3em"


def render_html(doc: TaggedDocument, prefix: str = "") -> str:
    """One document's text with spans marked (``<mark>``), every character escaped; a document tagged
    from HTML shows its visible text (``shown``), not its source.
    A DSE is a background highlight and an ESE an underline, so text in both shows both;
    the marks nest (DSE outside); a mark's title gives type and score (and a frame's polarity, intensity and
    holder, which ``data-polarity`` and ``data-intensity`` attributes also give, and a DSE's attitude and
    targets).  A DSE's targets (a model with target heads) are marks of their own, innermost, with a dotted
    underline: ``<mark class="target" data-of="ID">``, where ID is the ``id`` of the DSE's first mark (``op`` and
    the DSE's number among the spans, after ``prefix``: the page's writer makes each document's ids its own) and
    ``data-opinion`` of every one of its marks.  The text is cut wherever a mark starts or ends and each piece is
    wrapped in the marks that cover it, so marks that overlap (a target over its own DSE's words, say) never
    cross each other's tags."""
    text, spans = shown(doc)
    ids: dict[int, str] = {}  # a DSE with targets: the id of its first mark
    targets: list[tuple[int, int, int, dict]] = []  # (start, end, the DSE's index, the target)
    for k, sp in enumerate(spans):
        if sp.type == "DSE" and sp.frame is not None and sp.frame.targets is not None:
            ids[k] = f"{prefix}op{k + 1}"
            targets += [(t["start"], t["end"], k, t) for t in sp.frame.targets if t["start"] < t["end"]]
    events = sorted(
        {p for sp in spans for p in (sp.start, sp.end)} | {p for t in targets for p in t[:2]} | {0, len(text)}
    )
    parts, placed = [], set()
    for a, b in zip(events, events[1:]):
        covering = [(k, sp) for k, sp in enumerate(spans) if sp.start <= a and b <= sp.end]
        piece = html.escape(text[a:b]).replace("\n", "<br>")
        for _, _, k, t in (t for t in targets if t[0] <= a and b <= t[1]):
            title = html.escape(f"target {t['score']:.2f} of {spans[k].type}: {spans[k].text}")
            piece = (
                f'<mark class="target" data-of="{html.escape(ids[k])}" style="{TARGET_STYLE}" title="{title}">'
                f"{piece}</mark>"
            )
        for k, sp in sorted(covering, key=lambda c: (c[1].type == "DSE", c[1].type)):  # innermost first, DSE last
            title = html.escape(f"{sp.type} {sp.score:.2f}{_frame_title(sp)}")
            data = "" if sp.frame is None else _frame_data(sp.frame)
            if k in ids:
                data = ("" if k in placed else f' id="{html.escape(ids[k])}"') + data
                data += f' data-opinion="{html.escape(ids[k])}"'
                placed.add(k)
            piece = f'<mark class="{_mark_class(sp.type)}"{data} title="{title}">{piece}</mark>'
        parts.append(piece)
    return "".join(parts)


def record_text(doc: TaggedDocument, fmt: str) -> str | None:
    """What a stream format writes for one record, the tagged document or its error record (jsonl: one
    JSON line; conll: the sentences' lines and a blank line); None for the formats that are not a
    sequence of independent records (brat, html)."""
    if fmt == "jsonl":  # orjson, much faster than json.dumps; UTF-8, no spaces
        return orjson.dumps(doc.to_dict()).decode() + "\n"
    if fmt == "conll":
        return f"# id = {doc.id}\n# error = {doc.error}\n\n" if doc.error is not None else conll_lines(doc) + "\n"
    return None


TEXT_SUFFIXES = (".txt", ".text", ".html", ".htm")  # a text file's suffix: not repeated in its BRAT files' names


def file_stem(rid: str, prefixes: Sequence[str] = ()) -> str:
    """The stem of a record's BRAT files (``STEM.txt``, ``STEM.ann``), made from its id: the longest of
    ``prefixes`` it starts with left out (the directories its input was read from: ``docs/sub/a.txt``
    read from ``docs`` is ``sub/a.txt``), a path that would still name a place on this machine (absolute,
    or climbing with ``..``) cut to its last part, a text file's suffix dropped (``a.txt`` is ``a``), and
    every character but ASCII letters, digits, ``.``, ``_`` and ``-`` made ``_`` (``sub_a``): never a path
    out of the output directory, never empty."""
    for prefix in sorted(prefixes, key=len, reverse=True):
        if prefix and rid.startswith(prefix):
            rid = rid[len(prefix) :]
            break
    parts = [p for p in re.split(r"[\\/]+", rid) if p]
    if rid.startswith(("/", "\\", "~")) or re.match(r"[A-Za-z]:", rid) or ".." in parts:
        parts = parts[-1:]
    if parts:
        last = parts[-1]
        suffix = next((x for x in TEXT_SUFFIXES if last.lower().endswith(x) and len(last) > len(x)), "")
        parts[-1] = last[: len(last) - len(suffix)]
    return re.sub(r"[^A-Za-z0-9._-]+", "_", "_".join(parts)).strip("._")[:100] or "doc"  # names stay short


HTML_HEAD = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>opinion-tagger output</title>
<style>
body {{ font-family: sans-serif; max-width: 60em; margin: 2em auto; line-height: 1.8; }}
mark {{ background: transparent; color: inherit; padding: 0 0 2px; }}
mark.dse {{ background: {dse}; }}
mark.ese {{ border-bottom: 3px solid {ese_line}; }}
mark.other {{ outline: 1px dashed #888; }}
.doc {{ border-top: 1px solid #ccc; padding: 0.5em 0; }}
.error {{ color: #a00; }}
</style></head><body>
<h1>opinion-tagger</h1>
<p class="legend"><mark class="dse">DSE</mark>: direct subjective expression (highlighted) &nbsp;
<mark class="ese">ESE</mark>: expressive subjective element (underlined) &nbsp;
<mark class="dse"><mark class="ese">both</mark></mark>: in a DSE and an ESE</p>
""".format(dse=COLORS["DSE"], ese_line=LINE_COLORS["ESE"])


class Writer:
    """Writes documents and error records in one format to a stream or directory (BRAT)."""

    def __init__(
        self, fmt: str, stream: TextIO | None = None, directory: Path | None = None, prefixes: Sequence[str] = ()
    ):
        """``prefixes``: where the inputs were read from, left out of BRAT's file names (``file_stem``)."""
        if fmt not in FORMATS:
            raise ValueError(f"unknown format {fmt!r}")
        self.fmt, self.stream, self.directory = fmt, stream, directory
        self.prefixes = tuple(prefixes)
        self.files: set[str] = set()  # the BRAT files written, lower case
        self.brat_types: dict[str, None] = {}  # the opinion types of the BRAT documents written
        self.brat = BratUsage()  # what the .ann files written use (their annotation.conf)
        self.conf_kept: Path | None = None  # an annotation.conf found in the directory, not this package's: kept
        self.count = 0  # the documents written (HTML: each document's marks get ids of their own)
        if fmt == "html":
            self._out().write(HTML_HEAD)

    def _out(self) -> TextIO:
        """The stream every format but BRAT writes to."""
        if self.stream is None:
            raise ValueError(f"the {self.fmt} format is written to a stream, and none was given")
        return self.stream

    def _dir(self) -> Path:
        """The directory BRAT writes its files to."""
        if self.directory is None:
            raise ValueError(f"the {self.fmt} format is written to a directory, and none was given")
        return self.directory

    def _file_name(self, rid: str, suffixes: tuple[str, ...] = (".txt", ".ann")) -> str:
        """The stem of a record's files (``file_stem``), made unique among the files this writer wrote
        (``a``, ``a_2``, ...; compared without case, as some file systems do)."""
        base = file_stem(rid, self.prefixes)
        name, k = base, 1
        while any(f"{name}{suffix}".lower() in self.files for suffix in suffixes):
            k += 1
            name = f"{base}_{k}"
        self.files.update(f"{name}{suffix}".lower() for suffix in suffixes)
        return name

    def document(self, doc: TaggedDocument) -> None:
        """A tagged document, or its error record when it has ``error`` set."""
        text = record_text(doc, self.fmt)
        if text is not None:
            self._out().write(text)
        elif doc.error is not None:
            self.error(doc.id, doc.error)
        elif self.fmt == "brat":
            name = self._file_name(doc.id)
            (self._dir() / f"{name}.txt").write_text(doc.text, encoding="utf-8")
            self.write_ann(name, brat_ann(doc), doc.types)
        else:
            # (styled in place: the page's head, and so the output for English text, stays as it was)
            warning = (
                ""
                if doc.warning is None
                else f'<p class="warning" style="color: #8a5300">⚠ {html.escape(doc.warning)}</p>'
            )
            self.count += 1
            marked = render_html(doc, prefix=f"d{self.count}-")
            self._out().write(f'<div class="doc"><h2>{html.escape(doc.id)}</h2>{warning}<p>{marked}</p></div>\n')

    def write_ann(self, name: str, ann: str, types: Sequence[str]) -> None:
        """Write ``NAME.ann`` and note what it uses for the directory's ``annotation.conf``."""
        (self._dir() / f"{name}.ann").write_text(ann, encoding="utf-8")
        self.brat_types.update(dict.fromkeys(types))
        self.brat.add(ann)

    def formatted(self, text: str) -> None:
        """A record already formatted by ``record_text`` (e.g. in a worker process)."""
        self._out().write(text)

    def error(self, rid: str, reason: str) -> None:
        text = record_text(TaggedDocument(rid, "", error=reason), self.fmt)
        if text is not None:
            self._out().write(text)
        elif self.fmt == "brat":
            name = self._file_name(rid, (".error.txt",))
            (self._dir() / f"{name}.error.txt").write_text(reason + "\n", encoding="utf-8")
        else:
            self._out().write(
                f'<div class="doc error"><h2>{html.escape(rid)}</h2><p>error: {html.escape(reason)}</p></div>\n'
            )

    def close(self) -> None:
        """End the output: HTML's closing tags; for BRAT, the directory's ``annotation.conf`` (``brat_config``),
        so that brat opens the directory as it is.  An ``annotation.conf`` already there that this package did
        not write is kept as it is (``conf_kept`` names it)."""
        if self.fmt == "html":
            self._out().write("</body></html>\n")
        if self.fmt == "brat" and self.directory is not None:
            conf = self.directory / BRAT_CONF
            if conf.is_file() and not conf.read_text(encoding="utf-8", errors="replace").startswith(CONF_MARK):
                self.conf_kept = conf
            else:
                conf.write_text(brat_config(list(self.brat_types) or ["DSE", "ESE"], self.brat), encoding="utf-8")
        if self.stream is not None:
            self.stream.flush()
