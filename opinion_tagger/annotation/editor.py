"""The span editor: what the page sends to its component (``editor_data``), the
edits the component sends back and how they are saved (``apply_event``), and the
Streamlit component itself (``span_editor``; JavaScript and CSS in ``static/``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from opinion_tagger.annotation.frames import provenance, target_provenance
from opinion_tagger.annotation.store import (
    ATTITUDES,
    FINAL,
    HOLDERS,
    INTENSITIES,
    ORDERS,
    POLARITIES,
    UNCHANGED,
    Document,
    Holder,
    Project,
    ProjectError,
    StoredSpan,
)
from opinion_tagger.tagging.formats import COLORS, LINE_COLORS

STATIC = Path(__file__).resolve().parent / "static"
KEYS = {"d": "DSE", "e": "ESE", "1": "DSE", "2": "ESE"}  # label keys (see static/editor.js for the others)
OPS: tuple[str, ...] = ("add", "delete", "change", "undo", "accept", "reject", "next", "attributes")
OPS += ("holder", "attitude", "target", "targets")  # a DSE's roles


def _targets(span: StoredSpan) -> list[dict] | None:
    """A DSE's targets for the editor: their token positions [start, end) and where each came from; None: not set."""
    if span.targets is None:
        return None
    return [{"start": t.start, "end": t.end, "from": target_provenance(t)} for t in span.targets]


def editor_data(doc: Document, types: tuple[str, ...], threshold: float) -> dict:
    """The component's input: text, token offsets, spans (token positions) with provenance;
    a model span under ``threshold`` is flagged ``low`` for review.  A word in a span of the
    first type gets its colour as background, in a span of another type an underline (``lines``)."""
    return {
        "doc": doc.id,
        "version": doc.version,
        "text": doc.text,
        "types": list(types),
        "colors": {t: COLORS.get(t, "#ddd") for t in types},
        "lines": {t: LINE_COLORS.get(t, "#555") for t in types},
        "keys": {k: t for k, t in KEYS.items() if t in types},
        "intensities": list(INTENSITIES),
        "polarities": list(POLARITIES),  # keys i and p cycle through them
        "holders": list(HOLDERS),  # key h on a DSE cycles through them (with words selected: those words)
        "attitudes": list(ATTITUDES),  # key k on a DSE cycles through them (the types, then none)
        "tokens": [{"start": t.start, "end": t.end} for t in doc.tokens],
        "spans": [
            {
                "id": s.id,
                "type": s.type,
                "start": s.tok_start,
                "end": s.tok_end,
                "source": s.source,
                "score": s.confidence,  # the model's; 1.0 for a person's span
                "annotator": s.annotator,
                "at": s.at,
                "intensity": s.intensity,
                "polarity": s.polarity,
                # a holder of words: their token positions [start, end)
                "holder": {"start": h[0], "end": h[1]} if isinstance(h := s.holder_value, tuple) else h,
                "attitude": s.attitude,
                # its targets' words (key t with words selected adds or removes them); None: not set
                "targets": _targets(s),
                # where each value came from: "model 0.81", "human", "" (not set); the list of targets: who made it
                "from": {name: provenance(s, name) for name in ("intensity", "polarity", "holder", "attitude")}
                | {"targets": s.targets_source or ""},
                "low": s.source == "model" and s.score is not None and s.score < threshold,
            }
            for s in doc.spans
        ],
    }


@dataclass
class Outcome:
    message: str
    level: str = "success"  # success | info | warning | error
    next_doc: int | None = None  # for "next"


def _int(event: dict, key: str) -> int:
    value = event.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ProjectError(f"edit without a valid {key!r}")
    return value


def _holder(value: object) -> Holder:
    """A holder sent by the editor: ``writer``, ``implicit``, ``none``, None (not set), or words as their token
    positions ``{"start", "end"}``."""
    if isinstance(value, dict):
        return _int(value, "start"), _int(value, "end")
    if value is None or isinstance(value, str):
        return value
    raise ProjectError("a holder is writer, implicit, none, or the holder's words")


def _tokens(value: object) -> tuple[int, int]:
    """Words sent by the editor: their token positions ``{"start", "end"}``."""
    if not isinstance(value, dict):
        raise ProjectError("a target is the target's words")
    return _int(value, "start"), _int(value, "end")


def _target_list(value: object) -> list[tuple[int, int]] | None:
    """A DSE's targets sent by the editor: a list of words (``_tokens``), or None (not set)."""
    if value is None:
        return None
    if not isinstance(value, list):
        raise ProjectError("targets are a list of words")
    return [_tokens(v) for v in value]


def _in_new_copy(project: Project, event: dict, doc_id: int, layer: str) -> dict:
    """An edit made on the preview of a copy (``Project.document(preview=True)``), its span named by
    the id of the final version's span, as an edit of the copy just made."""
    if not isinstance(event.get("span"), int):
        return event
    keys = {s.id: s.key for s in project.document(doc_id).spans}
    ids = {s.key: s.id for s in project.document(doc_id, layer).spans}
    key = keys.get(event["span"])
    return {**event, "span": -1 if key is None else ids.get(key, -1)}


def apply_event(
    project: Project, event: object, annotator: str | None, layer: str = FINAL, queue_of: str | None = None
) -> Outcome:
    """Save one edit from the editor (or a button): ``{"op", "doc", "version", ...}``, by
    ``annotator`` on ``layer`` (the final version, or the annotator's copy: the page decides,
    never the browser).  "Next" (also after accept and reject) follows ``queue_of``'s work
    (``Project.queue``; None: the final versions).  Anything malformed, out of range or made
    on an old version is refused with a message; nothing is saved then.  Raises ProjectError
    (ConflictError for an old version)."""
    if not isinstance(event, dict) or event.get("op") not in OPS:
        raise ProjectError("unknown edit")
    op, doc_id = event["op"], _int(event, "doc")
    order = event.get("order", "file")  # the page adds the order chosen in its sidebar
    if order not in ORDERS:
        raise ProjectError("unknown order")
    if op == "next":
        nxt = project.next_unfinished(after=doc_id, order=order, annotator=queue_of)
        if nxt is None:
            return Outcome("Every document is done.", "info")
        return Outcome("", "info", next_doc=nxt)
    version = _int(event, "version")
    if layer != FINAL and op == "undo" and not any(o == layer for _, o, _, _ in project.copies(doc_id)):
        raise ProjectError("nothing to undo")  # no copy yet: nothing was changed
    if layer != FINAL and project.claim(doc_id, layer):  # the first change: the copy is made now
        event = _in_new_copy(project, event, doc_id, layer)
    typ = event.get("type")
    if typ is not None and typ not in project.types:
        raise ProjectError(f"unknown span type {str(typ)[:20]!r}")
    return _SAVE[op](_Edit(project, event, doc_id, version, annotator, layer, typ, order, queue_of))


@dataclass(frozen=True)
class _Edit:
    """An edit to save: the event, its document, the version it was made on, by whom, on which layer, its span
    type (if any), and the order and queue that "next" follows."""

    project: Project
    event: dict
    doc: int
    version: int
    annotator: str | None
    layer: str
    typ: str | None
    order: str
    queue_of: str | None

    def next_doc(self) -> int | None:
        return self.project.next_unfinished(after=self.doc, order=self.order, annotator=self.queue_of)


def _add(e: _Edit) -> Outcome:
    if e.typ is None:
        raise ProjectError("an added span needs a type")
    start, end = _int(e.event, "start"), _int(e.event, "end")
    e.project.add_span(e.doc, e.version, e.typ, start, end, e.annotator, layer=e.layer)
    doc = e.project.document(e.doc, e.layer)
    span = next(s for s in doc.spans if s.type == e.typ and s.tok_start == e.event["start"])
    a, b = doc.span_chars(span)
    return Outcome(f"Saved {e.typ} “{doc.text[a:b]}”.")


def _delete(e: _Edit) -> Outcome:
    e.project.delete_span(e.doc, e.version, _int(e.event, "span"), e.annotator, layer=e.layer)
    return Outcome("Span deleted.")


def _change(e: _Edit) -> Outcome:
    start = _int(e.event, "start") if "start" in e.event else None
    end = _int(e.event, "end") if "end" in e.event else None
    span = _int(e.event, "span")
    e.project.change_span(e.doc, e.version, span, e.annotator, typ=e.typ, tok_start=start, tok_end=end, layer=e.layer)
    return Outcome("Span changed.")


def _undo(e: _Edit) -> Outcome:
    e.project.undo(e.doc, e.version, e.annotator, layer=e.layer)
    return Outcome("Undone.", "info")


def _attributes(e: _Edit) -> Outcome:
    """The values the event names; those it leaves out stay as they are."""
    values = {k: e.event[k] for k in ("intensity", "polarity") if k in e.event}
    if any(v is not None and (not isinstance(v, str) or v == UNCHANGED) for v in values.values()):
        raise ProjectError("attributes must be names")
    if "attitude" in e.event and not (e.event["attitude"] is None or isinstance(e.event["attitude"], str)):
        raise ProjectError("an attitude is a name")
    roles = {k: e.event[k] for k in ("attitude",) if k in e.event}
    if "targets" in e.event:
        roles["targets"] = _target_list(e.event["targets"])
    holder = _holder(e.event["holder"]) if "holder" in e.event else UNCHANGED
    span = _int(e.event, "span")
    e.project.set_attributes(e.doc, e.version, span, e.annotator, **values, layer=e.layer, holder=holder, **roles)
    return Outcome("Attributes saved.")


def _set_holder(e: _Edit) -> Outcome:
    holder = _holder(e.event.get("holder"))
    e.project.set_holder(e.doc, e.version, _int(e.event, "span"), e.annotator, holder, layer=e.layer)
    if isinstance(holder, tuple):
        doc = e.project.document(e.doc, e.layer)
        words = doc.text[doc.tokens[holder[0]].start : doc.tokens[holder[1] - 1].end]
        return Outcome(f"Holder saved: “{' '.join(words.split())}”.")
    return Outcome("Holder saved: " + (holder or "not set") + ".")


def _set_attitude(e: _Edit) -> Outcome:
    attitude = e.event.get("attitude")
    if not (attitude is None or isinstance(attitude, str)):
        raise ProjectError("an attitude is a name")
    e.project.set_attitude(e.doc, e.version, _int(e.event, "span"), e.annotator, attitude, layer=e.layer)
    return Outcome("Attitude saved: " + (attitude or "not set") + ".")


def _words(e: _Edit, tokens: tuple[int, int]) -> str:
    doc = e.project.document(e.doc, e.layer)
    return " ".join(doc.text[doc.tokens[tokens[0]].start : doc.tokens[tokens[1] - 1].end].split())


def _toggle_target(e: _Edit) -> Outcome:
    """Words made a target of the DSE, or, when they are one, no longer a target."""
    target = _tokens(e.event.get("target"))
    _, added = e.project.toggle_target(e.doc, e.version, _int(e.event, "span"), e.annotator, target, layer=e.layer)
    return Outcome(f"Target {'added' if added else 'removed'}: “{_words(e, target)}”.")


def _set_targets(e: _Edit) -> Outcome:
    targets = _target_list(e.event.get("targets"))
    e.project.set_targets(e.doc, e.version, _int(e.event, "span"), e.annotator, targets, layer=e.layer)
    shown = "not set" if targets is None else ", ".join(f"“{_words(e, t)}”" for t in targets) or "none"
    return Outcome(f"Targets saved: {shown}.")


def _reject(e: _Edit) -> Outcome:
    e.project.set_status(e.doc, e.version, "rejected", e.annotator, layer=e.layer)
    return Outcome(
        "Rejected (out of training data and exports)."
        if e.layer == FINAL
        else "Rejected (your copy; the reviewer decides).",
        "info",
        next_doc=e.next_doc(),
    )


def _accept(e: _Edit) -> Outcome:
    e.project.set_status(e.doc, e.version, "done", e.annotator, layer=e.layer)
    return Outcome("Accepted.", next_doc=e.next_doc())


# how each kind of edit is saved ("next" saves nothing: apply_event answers it)
_SAVE = {
    "add": _add,
    "delete": _delete,
    "change": _change,
    "undo": _undo,
    "accept": _accept,
    "reject": _reject,
    "attributes": _attributes,
    "holder": _set_holder,
    "attitude": _set_attitude,
    "target": _toggle_target,
    "targets": _set_targets,
}


_mount = None  # the component's mount command, made once (it registers itself on each runtime)


def span_editor(data: dict, key: str, on_event) -> None:
    """Mount the editor.  ``on_event(event)`` runs when the user makes an edit, before the
    page runs again (so the page draws the saved edit in that same run).  An event delivered
    twice (same document, version and edit) is passed on once."""
    global _mount
    import streamlit as st

    if _mount is None:
        _mount = st.components.v2.component(
            "opinion_tagger_span_editor",
            html='<div class="ot-editor"></div>',
            css=(STATIC / "editor.css").read_text(encoding="utf-8"),
            js=(STATIC / "editor.js").read_text(encoding="utf-8"),
        )

    def changed():
        state = st.session_state.get(key) or {}
        event = state.get("event") if hasattr(state, "get") else None
        seen = f"{key}__last_event"
        if event and event != st.session_state.get(seen):
            st.session_state[seen] = event
            on_event(event)

    _mount(data=data, key=key, on_event_change=changed)
