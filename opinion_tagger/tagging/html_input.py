"""HTML input: tag the text a browser shows, with offsets into the HTML source.

    from opinion_tagger.tagging.html_input import tag_html
    doc = tag_html(ot, "<p>The senator <b>strongly condemned</b> the decision.</p>")
    doc.text                                 # the HTML source, as given
    [doc.text[s.start:s.end] for s in doc.spans]   # each span's slice of the source

``visible_text`` parses the source with Python's ``html.parser`` and returns the
visible text with a map from each of its characters back to the source: the
content of ``script``, ``style``, ``template``, ``title`` and ``head`` is left out,
comments and declarations too; character references are decoded (``&amp;`` is one
visible ``&`` whose source range is the five characters ``&amp;``); runs of
whitespace become one space (kept as they are inside ``pre`` and ``textarea``);
block elements (``p``, ``div``, ``br``, ``li``, ``h1``-``h6``, ``tr``, ``td``, ...)
break the text into blocks.

``tag_records`` tags a stream of records like ``OpinionTagger.tag_many`` (one
document per record, in order) and tags the HTML ones (``Record.html``, or all of
them with ``html=True``) block by block, so that sentences never run across
blocks, then maps every token, sentence and span back to the source: the
document's ``text`` is the source, a span's ``text`` is its source slice
(``text[start:end]``), a token's ``text`` is the word as shown (entities decoded,
tags left out).  Plain-text records go to ``tag_many`` untouched.
"""

from __future__ import annotations

import re
from array import array
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from html import unescape
from html.parser import HTMLParser

from opinion_tagger.errors import InvalidText
from opinion_tagger.tagging.documents import SpanFrame, TaggedDocument, TaggedSentence, TaggedSpan, TaggedToken
from opinion_tagger.tagging.inputs import Record, as_record

NO_VISIBLE_TEXT = "empty text: no visible text in the HTML"

SKIPPED = frozenset({"script", "style", "template", "title"})
HEAD = frozenset({"base", "basefont", "bgsound", "link", "meta", "noscript", "script", "style", "template", "title"})
VERBATIM = frozenset({"pre", "textarea", "listing", "plaintext"})
BLOCKS = frozenset(
    {
        "address",
        "article",
        "aside",
        "blockquote",
        "body",
        "br",
        "caption",
        "center",
        "dd",
        "details",
        "dialog",
        "dir",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "frameset",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hgroup",
        "hr",
        "html",
        "legend",
        "li",
        "listing",
        "main",
        "menu",
        "nav",
        "ol",
        "optgroup",
        "option",
        "p",
        "plaintext",
        "pre",
        "section",
        "summary",
        "table",
        "tbody",
        "td",
        "textarea",
        "tfoot",
        "th",
        "thead",
        "tr",
        "ul",
    }
)
_PIECES = re.compile(r"[ \t\n\r\f]+|[^ \t\n\r\f]+")  # HTML's whitespace: ASCII space, tab, LF, CR, FF


@dataclass
class VisibleText:
    """The visible text of an HTML source: ``text`` (blocks joined by line feeds), for
    each of its characters the source range ``starts[i]:ends[i]`` it comes from, and
    ``blocks``, the ``(start, end)`` ranges of the blocks in ``text``."""

    text: str
    starts: array
    ends: array
    blocks: list[tuple[int, int]] = field(default_factory=list)

    def source_range(self, start: int, end: int) -> tuple[int, int]:
        """The source range of the visible characters ``start:end`` (``start < end``)."""
        return self.starts[start], self.ends[end - 1]


class _Builder:
    """Appends visible characters with their source ranges, collapsing whitespace and keeping blocks."""

    def __init__(self):
        self.parts: list[str] = []
        self.starts, self.ends = array("q"), array("q")
        self.blocks: list[tuple[int, int]] = []
        self.block: int | None = None  # where the open block starts in the visible text
        self.space: tuple[int, int] | None = None  # a collapsed run of whitespace not yet written

    def _put(self, text: str, start: int, end: int | None) -> None:
        """``text`` from source ``start``: a literal slice (``end`` None), or all of it from ``start:end``."""
        self.parts.append(text)
        if end is None:
            self.starts.extend(range(start, start + len(text)))
            self.ends.extend(range(start + 1, start + len(text) + 1))
        else:
            self.starts.extend([start] * len(text))
            self.ends.extend([end] * len(text))

    def _open(self, start: int) -> None:
        """Before visible content at source ``start``: a block separator or a pending space."""
        if self.block is None:
            if self.blocks:  # the line feed between blocks comes from the markup between them
                self._put("\n", min(self.ends[-1], start), start)
            self.block = len(self.starts)
        elif self.space is not None:  # one space for a run of whitespace, from the whole run
            self._put(" ", *self.space)
        self.space = None

    def add(self, text: str, start: int, end: int | None = None, verbatim: bool = False) -> None:
        """Text at source ``start`` (literal, or decoded from ``start:end``); whitespace collapsed unless
        ``verbatim``."""
        for m in _PIECES.finditer(text):
            a, b = (start + m.start(), start + m.end()) if end is None else (start, end)
            if verbatim or m.group()[0] not in " \t\n\r\f":
                self._open(a)
                self._put(m.group(), a, None if end is None else b)
            elif self.block is not None and self.space is None:
                self.space = (a, b)

    def brk(self) -> None:
        """A block element: the open block ends."""
        if self.block is not None:
            self.blocks.append((self.block, len(self.starts)))
        self.block, self.space = None, None

    def result(self) -> VisibleText:
        self.brk()
        return VisibleText("".join(self.parts), self.starts, self.ends, self.blocks)


class _Parser(HTMLParser):
    """Records each event with its source offset; the builder's state lives outside, so a
    new parser can take over after a construct this one cannot parse."""

    def __init__(self, base: int, text: str):
        super().__init__(convert_charrefs=False)
        self.base = base
        self.lines = [0] + [m.end() for m in re.finditer("\n", text)]
        self.events: list[tuple[str, str, int]] = []

    def _at(self) -> int:
        line, col = self.getpos()
        return self.base + self.lines[line - 1] + col

    def handle_starttag(self, tag, attrs):
        self.events.append(("start", tag, self._at()))

    def handle_startendtag(self, tag, attrs):
        self.events.append(("empty", tag, self._at()))

    def handle_endtag(self, tag):
        self.events.append(("end", tag, self._at()))

    def handle_data(self, data):
        self.events.append(("data", data, self._at()))

    def handle_entityref(self, name):
        self.events.append(("ref", name, self._at()))

    def handle_charref(self, name):
        self.events.append(("ref", name, self._at()))

    def handle_comment(self, data):
        self.events.append(("markup", "", self._at()))

    handle_decl = handle_pi = unknown_decl = handle_comment

    def parse_html_declaration(self, i):
        if self.rawdata.startswith("<![", i):  # a bogus comment up to ">", as in a browser (not an error)
            return self.parse_bogus_comment(i)
        return super().parse_html_declaration(i)


def _events(source: str) -> list[tuple[str, str, int]]:
    """The parser's events with their source offsets.  Should the parser fail on a
    construct, its ``<`` becomes text and a fresh parser goes on after it."""
    events: list[tuple[str, str, int]] = []
    base = 0
    while True:
        parser = _Parser(base, source[base:])
        try:
            parser.feed(source[base:])
            parser.close()
            return events + parser.events
        except (AssertionError, AttributeError, IndexError, TypeError, ValueError):  # html.parser's, on odd markup
            last = parser.events[-1][2] + 1 if parser.events else base
            at = source.find("<", last)
            at = at if at >= 0 else len(source)
            events += [e for e in parser.events if e[2] < at] + [("data", source[at : at + 1], at)]
            base = at + 1
            if base >= len(source):
                return events


def _add_reference(out: _Builder, ref: str, at: int, verbatim: bool) -> None:
    """A character reference at ``at``: its decoded characters come from its source range,
    and what follows the name when not part of it (``&amp0`` is ``&`` from ``&amp``, then ``0``)."""
    decoded = unescape(ref)
    if decoded == ref:  # not a reference after all (``&foo;``)
        out.add(ref, at, verbatim=verbatim)
        return
    keep = 0
    while keep < min(len(ref), len(decoded)) - 1 and ref[-1 - keep] == decoded[-1 - keep]:
        keep += 1
    cut = len(ref) - keep
    out.add(decoded[: len(decoded) - keep], at, at + cut, verbatim)
    out.add(ref[cut:], at + cut, verbatim=verbatim)


def visible_text(source: str) -> VisibleText:
    """The visible text of ``source`` and its map back to the source (see the module's docstring)."""
    out, skip, verbatim, head = _Builder(), 0, 0, False
    events = _events(source)
    for k, (kind, value, at) in enumerate(events):
        end = events[k + 1][2] if k + 1 < len(events) else len(source)
        if kind in ("start", "end", "empty"):
            step = (kind == "start") - (kind == "end")
            if value == "head":
                head = kind == "start"
            elif kind != "end" and value not in HEAD:  # as in a browser, other content ends the head
                head = False
            if value in SKIPPED:
                skip = max(skip + step, 0)
            if value in VERBATIM:
                verbatim = max(verbatim + step, 0)
            if value in BLOCKS:
                out.brk()
        elif skip or kind == "markup" or (head and not value.strip()):
            continue
        elif kind == "data":
            head = False
            literal = source.startswith(value, at)  # always so, but the map must not depend on it
            out.add(value, at, None if literal else end, bool(verbatim))
        else:  # a character reference
            head = False
            _add_reference(out, source[at:end], at, bool(verbatim))
    return out.result()


# --------------------------------------------------------------------------- tagging
@dataclass
class _Pending:
    """One input record on its way through ``tag_many``: its parts and the documents back so far."""

    record: Record
    visible: VisibleText | None = None
    parts: int = 1
    docs: list = field(default_factory=list)


def _plan(n: int, rec, html_all: bool) -> tuple[_Pending, list]:
    """What to give ``tag_many`` for input ``n``: the record itself, or an HTML record's blocks."""
    markup = html_all or (isinstance(rec, Record) and rec.html)
    if isinstance(rec, Record) and not markup:
        return _Pending(rec), [rec]  # as it is: plain text is tagged as before
    rec = as_record(n, rec)  # the text gate (on the source); the id of input n, blocks before it or not
    if not markup:
        return _Pending(rec), [rec]
    if rec.error is not None:
        return _Pending(rec), [rec]
    vis = visible_text(rec.text)
    if not vis.blocks:
        return _Pending(Record(rec.id, error=NO_VISIBLE_TEXT)), [Record(rec.id, error=NO_VISIBLE_TEXT)]
    return (_Pending(rec, vis, len(vis.blocks)), [Record(rec.id, text=vis.text[a:b]) for a, b in vis.blocks])


def _merge(p: _Pending, types: tuple[str, ...]):
    """An HTML record's document: its blocks' documents, offsets mapped to the source."""
    rec, vis = p.record, p.visible
    assert vis is not None and rec.text is not None  # tag_records merges the records it found visible text in
    doc = TaggedDocument(rec.id, rec.text, types=types, html=True)
    for (a, _), part in zip(vis.blocks, p.docs):
        if part.error is not None and part.error.startswith("empty text"):
            continue  # e.g. a block of zero-width spaces
        if part.error is not None:
            return TaggedDocument(rec.id, "", types=types, error=part.error)
        for s in part.sentences:
            toks = [TaggedToken(t.text, *vis.source_range(a + t.start, a + t.end), t.tags) for t in s.tokens]
            doc.sentences.append(TaggedSentence(toks[0].start, toks[-1].end, toks))
        for sp in part.spans:
            start, end = vis.source_range(a + sp.start, a + sp.end)
            doc.spans.append(TaggedSpan(sp.type, start, end, rec.text[start:end], sp.score, sp.frame))
            if sp.frame is not None:  # the holder's and the targets' offsets into the source too
                doc.spans[-1].frame = _frame_in_source(sp.frame, rec.text, vis, a)
        doc.frames = doc.frames or part.frames
    if not doc.sentences:
        return TaggedDocument(rec.id, "", types=types, error=NO_VISIBLE_TEXT)
    return doc


def _frame_in_source(frame: SpanFrame, source: str, vis: VisibleText, a: int) -> SpanFrame:
    """A block's span frame with its holder's and targets' offsets (into the block, which starts at ``a`` in the
    visible text ``vis``) mapped to the HTML ``source``."""

    def mapped(words: dict) -> dict:
        start, end = vis.source_range(a + words["start"], a + words["end"])
        return {**words, "start": start, "end": end, "text": source[start:end]}

    h = frame.holder
    if isinstance(h, dict):
        frame = replace(frame, holder=mapped(h))
    if frame.targets:
        frame = replace(frame, targets=[mapped(t) for t in frame.targets])
    return frame


def tag_records(ot, records: Iterable, chunk: int = 64, html: bool = False) -> Iterator:
    """``ot.tag_many(records, chunk)``, with HTML records (``Record.html``; every record with
    ``html=True``) tagged on their visible text and mapped back to their source; a page's language is checked
    once, on the whole page, not block by block (``ot.check_language``)."""
    pending: deque[_Pending] = deque()

    def parts() -> Iterator:
        for n, rec in enumerate(records):
            p, given = _plan(n, rec, html)
            pending.append(p)
            yield from given

    for doc in ot._tag_plain(parts(), chunk):  # tag_many's documents, their language not checked yet
        first = pending[0]  # the oldest record still waiting: tag_many keeps the order
        first.docs.append(doc)
        if len(first.docs) == first.parts:
            pending.popleft()
            yield ot.check_language(doc if first.visible is None else _merge(first, ot.types))


def tag_html(ot, source: str, id: str = ""):
    """Tag one HTML source; raises ``InvalidText`` (a ValueError) when it cannot be tagged."""
    doc = next(tag_records(ot, [(id, source)], html=True))
    if doc.error is not None:
        raise InvalidText(f"{doc.id or 'text'}: {doc.error}")
    return doc
