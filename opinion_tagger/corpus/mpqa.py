"""Reader for the MPQA Opinion Corpus 2.0 in its distributed directory layout.

Format (``mpqa_2_0_readme.txt`` section 8): every line of an annotation file is
a comment (``#...``) or ``id <TAB> start,end <TAB> string <TAB> type <TAB> attrs``
where ``attrs`` is a space-separated list of ``name="value"`` pairs whose values
may contain commas and spaces.  Offsets are *byte* offsets into the raw
document; this module converts them to character offsets of the decoded text so
that everything downstream works on ``str`` indices.

Layout: ``docs/<parent>/<leaf>`` (text), ``man_anns/<parent>/<leaf>/gateman.mpqa.lre.2.0``
(opinion annotations) and ``.../gatesentences.mpqa.2.0`` (sentence spans).
Which documents exist is decided by the ``doclist.*`` files.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from opinion_tagger.errors import CorpusError, Problems

ANNOTATION_FILE = "gateman.mpqa.lre.2.0"
SENTENCE_FILE = "gatesentences.mpqa.2.0"

# name -> doclist file.  "all" is the union of every doclist found.
SUBSETS = {
    "original": "doclist.mpqaOriginalSubset",
    "opqa": "doclist.opqaSubset",
    "attitude": "doclist.attitudeSubset",
    "xbank": "doclist.xbankSubset",
    "ula": "doclist.ulaSubset",
    "ula-lu": "doclist.ula-luSubset",
}

_CONTROL_BYTES = re.compile(rb"[\x01-\x08\x0e-\x1f\x7f]")  # never in text, whatever its 8-bit encoding
_ATTR = re.compile(r'\s*([A-Za-z_][\w-]*)\s*=\s*"([^"]*)"')


@dataclass(frozen=True)
class Annotation:
    """One line of an MPQA annotation file, offsets in characters of the text."""

    id: str
    start: int
    end: int
    type: str
    attrs: dict[str, str] = field(default_factory=dict, compare=False, hash=False)
    line: int = 0

    @property
    def is_empty(self) -> bool:
        return self.start >= self.end

    @property
    def is_implicit(self) -> bool:
        return self.attrs.get("implicit", "").strip().lower() == "true"


@dataclass
class Document:
    name: str  # as in the doclist: "<parent>/<leaf>"
    text: str
    annotations: list[Annotation]
    sentences: list[tuple[int, int]]  # character spans, sorted by start


def parse_attributes(field_text: str) -> dict[str, str]:
    """Parse ``a="x" b="y, z"`` into a dict.  Raises ValueError on leftovers."""
    attrs: dict[str, str] = {}
    pos = 0
    text = field_text.rstrip()
    while pos < len(text):
        m = _ATTR.match(text, pos)
        if not m:
            raise ValueError(f"cannot parse attributes at {text[pos : pos + 30]!r}")
        attrs[m.group(1)] = m.group(2)
        pos = m.end()
    return attrs


def parse_annotation_line(line: str, line_no: int = 0) -> Annotation | None:
    """Parse one annotation line (byte offsets kept as they are).

    Returns None for comments and blank lines; raises ValueError for a
    malformed line.
    """
    stripped = line.rstrip("\r\n")
    if not stripped.strip() or stripped.lstrip().startswith("#"):
        return None
    parts = stripped.split("\t")
    if len(parts) < 4:
        raise ValueError(f"expected at least 4 tab-separated fields, got {len(parts)}")
    ann_id, span, _data_type, ann_type = (p.strip() for p in parts[:4])
    m = re.fullmatch(r"(\d+),(\d+)", span)
    if not m:
        raise ValueError(f"bad span {span!r}")
    start, end = int(m.group(1)), int(m.group(2))
    if end < start:
        raise ValueError(f"span end before start: {span}")
    attrs = parse_attributes("\t".join(parts[4:])) if len(parts) > 4 else {}
    return Annotation(ann_id, start, end, ann_type, attrs, line_no)


class _ByteToChar:
    """Maps byte offsets of the encoded document to character offsets."""

    def __init__(self, text: str, encoding: str):
        self.identity = encoding in ("ascii", "latin-1") or text.isascii()
        if not self.identity:
            self.table = [0] * (len(text.encode(encoding)) + 1)
            b = 0
            for i, ch in enumerate(text):
                n = len(ch.encode(encoding))
                for k in range(n):
                    self.table[b + k] = i
                b += n
            self.table[b] = len(text)
        self.n_bytes = len(text) if self.identity else len(self.table) - 1

    def __call__(self, offset: int) -> int:
        return offset if self.identity else self.table[offset]


def read_doclist(path: Path) -> list[str]:
    """Document names from a doclist; accepts ``name`` or ``... file=name`` lines.
    A file that cannot be read or is not UTF-8 text raises CorpusError."""
    try:
        data = Path(path).read_bytes()
        text = data.decode("utf-8")
    except OSError as exc:
        raise CorpusError(f"{path}: cannot read the document list: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise CorpusError(f"{path}: not a document list: not UTF-8 text (byte {exc.start})") from None
    if "\x00" in text:
        raise CorpusError(f"{path}: not a document list: binary data (NUL bytes)")
    names = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        m = re.search(r"(?:^|\s)file=(\S+)", line)
        names.append(m.group(1) if m else line.split()[0])
    return names


class MPQACorpus:
    """The documents of an MPQA 2.0 ``database.mpqa.2.0`` directory.

    ``subset`` picks a doclist (see SUBSETS) or "all" (union of every doclist
    present, in file order, de-duplicated); ``doclist``, a document list of one's own
    (a path, or a file name inside the database directory), names the documents
    instead, relative to the directory as MPQA's own lists do, and each of them must
    be there: an entry that leads out of the directory, or whose text or annotation
    files are missing, raises CorpusError naming it.  Otherwise problems with single
    documents or lines are recorded in ``self.problems`` and the item is skipped; a
    missing root or doclist raises CorpusError.
    """

    def __init__(
        self,
        root: str | Path,
        subset: str = "all",
        problems: Problems | None = None,
        doclist: str | Path | None = None,
    ):
        self.root = Path(root)
        if not self.root.is_dir():
            raise CorpusError(f"{self.root}: MPQA directory not found")
        # Accept the parent of database.mpqa.2.0 too.
        if not (self.root / "docs").is_dir() and (self.root / "database.mpqa.2.0" / "docs").is_dir():
            self.root = self.root / "database.mpqa.2.0"
        if not (self.root / "docs").is_dir() or not (self.root / "man_anns").is_dir():
            raise CorpusError(f"{self.root}: not an MPQA 2.0 database (needs docs/ and man_anns/)")
        self.subset = subset
        self.problems = problems if problems is not None else Problems()
        if doclist is None:
            self.names = self._document_names(subset)
        else:
            self.doclist = self.doclist_path(doclist)
            self.names = list(dict.fromkeys(read_doclist(self.doclist)))
            self._check_listed()

    def doclist_path(self, doclist: str | Path) -> Path:
        """``doclist`` as given if that file exists, else the file of that name in the database directory."""
        given = Path(doclist)
        if given.is_file():
            return given
        inside = self.root / given
        if not given.is_absolute() and inside.is_file():
            return inside
        raise CorpusError(f"{doclist}: document list not found (neither there nor in {self.root})")

    def _check_listed(self) -> None:
        """Every document of a doclist of one's own is inside the directory, with its text and annotations."""
        if not self.names:
            raise CorpusError(f"{self.doclist}: the document list names no document")
        for line, name in enumerate(self.names, 1):
            doc_path, ann_dir = self._inside("docs", name), self._inside("man_anns", name)
            entry = f"{self.doclist}: entry {line} ({name!r})"
            if doc_path is None or ann_dir is None:
                raise CorpusError(f"{entry} leads out of {self.root}")
            if not doc_path.is_file():
                raise CorpusError(f"{entry}: no document {doc_path}")
            for needed in (ANNOTATION_FILE, SENTENCE_FILE):
                if not (ann_dir / needed).is_file():
                    raise CorpusError(f"{entry}: no annotations file {ann_dir / needed}")

    def _document_names(self, subset: str) -> list[str]:
        if subset == "all":
            lists = sorted(self.root.glob("doclist.*Subset"))
            if not lists:
                raise CorpusError(f"{self.root}: no doclist.*Subset files found")
        else:
            if subset not in SUBSETS:
                raise CorpusError(f"unknown subset {subset!r}; choose from all, {', '.join(SUBSETS)}")
            path = self.root / SUBSETS[subset]
            if not path.is_file():
                raise CorpusError(f"{path}: doclist not found")
            lists = [path]
        seen: dict[str, None] = {}
        for path in lists:
            for name in read_doclist(path):
                seen.setdefault(name, None)
        return list(seen)

    def __len__(self) -> int:
        return len(self.names)

    def __iter__(self) -> Iterator[Document]:
        for name in self.names:
            doc = self.read(name)
            if doc is not None:
                yield doc

    # -- one document -------------------------------------------------------
    def read(self, name: str) -> Document | None:
        """Read one document; None (and a recorded problem) if it is unusable."""
        doc_path = self._inside("docs", name)
        ann_dir = self._inside("man_anns", name)
        if doc_path is None or ann_dir is None:
            self.problems.add(
                "outside the corpus",
                f"{self.root}: listed document {name!r} is not inside docs/ and man_anns/; document skipped",
            )
            return None
        if not doc_path.is_file():
            self.problems.add("missing document", f"{doc_path}: document file not found")
            return None
        text, encoding = self._read_text(doc_path)
        if text is None:
            return None
        to_char = _ByteToChar(text, encoding)

        ann_path = ann_dir / ANNOTATION_FILE
        sent_path = ann_dir / SENTENCE_FILE
        if not ann_path.is_file():
            self.problems.add("missing annotations", f"{ann_path}: annotation file not found; document skipped")
            return None
        if not sent_path.is_file():
            self.problems.add("missing sentences", f"{sent_path}: sentence file not found; document skipped")
            return None
        annotations = self._read_annotations(ann_path, to_char)
        sentences = sorted(
            (a.start, a.end)
            for a in self._read_annotations(sent_path, to_char)
            if a.type == "GATE_sentence" and not a.is_empty
        )
        return Document(name, text, annotations, sentences)

    def _inside(self, part: str, name: str) -> Path | None:
        """``root/part/name`` if it stays inside ``root/part`` (symbolic links resolved), else None."""
        base = self.root / part
        try:
            if (base / name).resolve().is_relative_to(base.resolve()) and name.strip():
                return base / name
        except (OSError, ValueError):  # e.g. a NUL character in the name
            pass
        return None

    def _read_text(self, doc_path: Path) -> tuple[str | None, str]:
        """The document's text and encoding: UTF-8, else Latin-1 when the bytes look
        like 8-bit text; binary data is recorded as a problem and gives ``(None, "")``."""
        try:
            raw = doc_path.read_bytes()
        except OSError as exc:
            self.problems.add(
                "unreadable document", f"{doc_path}: cannot read: {exc.strerror or exc}; document skipped"
            )
            return None, ""
        if b"\x00" in raw:
            self.problems.add("binary document", f"{doc_path}: binary data (NUL bytes), not text; document skipped")
            return None, ""
        try:
            return raw.decode("utf-8"), "utf-8"
        except UnicodeDecodeError as exc:
            if _CONTROL_BYTES.search(raw):
                self.problems.add(
                    "binary document",
                    f"{doc_path}: not UTF-8 (byte {exc.start}) and holds control "
                    "bytes: binary data, not text; document skipped",
                )
                return None, ""
        self.problems.add("not utf-8", f"{doc_path}: not UTF-8, read as Latin-1", skipped=False)
        return raw.decode("latin-1"), "latin-1"

    def _read_annotations(self, path: Path, to_char: _ByteToChar) -> list[Annotation]:
        out = []
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line_no, line in enumerate(fh, 1):
                try:
                    ann = parse_annotation_line(line, line_no)
                except ValueError as exc:
                    self.problems.add("malformed line", f"{path}:{line_no}: {exc}; line skipped")
                    continue
                if ann is None:
                    continue
                end = ann.end
                if ann.end > to_char.n_bytes:
                    where = (
                        f"{path}:{line_no}: span {ann.start},{ann.end} beyond the document's {to_char.n_bytes} bytes"
                    )
                    if ann.start >= to_char.n_bytes:
                        self.problems.add("offset outside text", f"{where}; annotation skipped")
                        continue
                    self.problems.add("offset outside text", f"{where}; clipped to the text", skipped=False)
                    end = to_char.n_bytes
                out.append(Annotation(ann.id, to_char(ann.start), to_char(end), ann.type, ann.attrs, line_no))
        return out
