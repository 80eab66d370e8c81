"""The annotation store: one SQLite file per project (standard library ``sqlite3``,
WAL journal, ``synchronous=FULL``), so every change is durable once a call returns.

A document is a set of *layers*: its final version (layer ``""``; the one exported and
trained on) and, when it was imported with an overlap of N, up to N annotators' copies
(layer: the annotator's name), each edited like a document of its own, starting from the
model's spans.  A copy is made at the annotator's first change of the document (``claim``;
``document(preview=True)`` shows it before), while fewer than N annotators have one.  A review
(``review``) writes the final version from the copies: one annotator's spans accepted, or a merge of them.

Status is ``todo`` (untouched), ``in_progress`` (changed), ``done`` (accepted) or
``rejected`` (skipped for good: out of training data and, unless asked, of exports).
Spans of one type never overlap (a new span replaces the ones it overlaps);
spans of different types may.

Every change names the document version it was made on; a change on an older
version (another tab or annotator saved in between) raises ``ConflictError`` and
changes nothing.  Each change is one transaction (``BEGIN IMMEDIATE``).

``Project`` is built in layers, a module each: ``connection`` (the file, its lock and
transactions), ``schema`` (the tables, and the migrations from older versions),
``records`` (documents, tokens, spans, statuses and errors as Python sees them),
``documents`` (import, and reading a document), ``edits`` (span edits, attributes, a DSE's holder, attitude and
targets, status, undo),
``team`` (annotators' copies and the review) and ``queries`` (work lists, the queue, search, history).
"""

from opinion_tagger.annotation.store.project import Project
from opinion_tagger.annotation.store.queries import ORDER_RULES, ORDERS
from opinion_tagger.annotation.store.records import (
    ATTITUDES,
    FINAL,
    HOLDERS,
    INTENSITIES,
    NO_ATTITUDE,
    POLARITIES,
    SPAN_HOLDER,
    STATUSES,
    UNCHANGED,
    ConflictError,
    Document,
    DocumentInfo,
    Holder,
    ProjectError,
    StoredSpan,
    StoredTarget,
    StoredToken,
)
from opinion_tagger.annotation.store.schema import SCHEMA_VERSION

__all__ = [
    "ATTITUDES",
    "FINAL",
    "HOLDERS",
    "INTENSITIES",
    "NO_ATTITUDE",
    "ORDERS",
    "ORDER_RULES",
    "POLARITIES",
    "SCHEMA_VERSION",
    "SPAN_HOLDER",
    "STATUSES",
    "UNCHANGED",
    "ConflictError",
    "Document",
    "DocumentInfo",
    "Holder",
    "Project",
    "ProjectError",
    "StoredSpan",
    "StoredTarget",
    "StoredToken",
]
