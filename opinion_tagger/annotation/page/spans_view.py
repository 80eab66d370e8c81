"""*Spans of this document*: the document's spans as a table, and the form that sets one span's intensity,
polarity and (a DSE's) holder, attitude and targets.  The form's boxes start at the span's own values, and it saves
only the values the user changed."""

from __future__ import annotations

import streamlit as st

from opinion_tagger.annotation.frames import holder_text, provenance, target_list, target_provenance, targets_text
from opinion_tagger.annotation.page.actions import handle
from opinion_tagger.annotation.page.display import NONE_SHOWN, flash, plain
from opinion_tagger.annotation.store import (
    ATTITUDES,
    FINAL,
    HOLDERS,
    INTENSITIES,
    POLARITIES,
    Project,
    StoredSpan,
    StoredTarget,
)

WORDS = "words"  # the holder box's choice for a holder of words: the DSE's holder as it is
HOLDER_HELP = (
    "A DSE's holder: writer, implicit, none (no holder in the text), or — (not set).  To make words the holder, "
    "click the DSE in the text, select the words and press h."
)
ATTITUDE_HELP = "A DSE's attitude: its type, none (it has none), or — (not set).  In the text: click the DSE, press k."
TARGETS_HELP = (
    "What the DSE's opinion is about.  Untick a target to remove it.  To add one, click the DSE in the text, select "
    "the target's words and press t (on a target's words, t removes it; without words, t sets none)."
)


def _valued(span: StoredSpan, name: str, shown: str | None) -> str:
    """A value with where it came from, as the editor's line shows it: ``high (model 0.57)``, ``high ✎`` (a
    person's); ``NONE_SHOWN`` when not set."""
    if shown is None:
        return NONE_SHOWN
    source = provenance(span, name)
    return f"{shown} ✎" if source == "human" else f"{shown} ({source})" if source else shown


def _when(at: str | None) -> str:
    """A span's time (ISO, UTC) as ``YYYY-MM-DD HH:MM``."""
    return at[:16].replace("T", " ") if at else NONE_SHOWN


def _targets_shown(doc, span: StoredSpan) -> str:
    """A DSE's targets with where each came from (``“the tax” (model 0.50), “Omar” ✎``); ``none`` with who said
    so; ``NONE_SHOWN`` when not set."""
    shown = targets_text(doc, span, sources=True)
    if shown is None:
        return NONE_SHOWN
    if not span.targets:
        return "none ✎" if span.targets_source == "human" else f"none ({span.targets_source})"
    return shown


def span_rows(doc, threshold: float) -> list[dict]:
    """The table's rows: each span's words, its confidence (the model's, ⚠ under ``threshold``; 1.00 for a
    person's span, as exports write it), who made it and when, and its values with their sources (a DSE's
    attitude and targets on its own row)."""
    rows = []
    for s in doc.spans:
        a, b = doc.span_chars(s)
        low = s.source == "model" and s.confidence < threshold
        rows.append(
            {
                "span": f"{s.type} “{' '.join(doc.text[a:b].split())}”",
                "confidence": f"{'⚠ ' if low else ''}{s.confidence:.2f}",
                "by": "model" if s.source == "model" else s.annotator or NONE_SHOWN,
                "at": _when(s.at),
                "intensity": _valued(s, "intensity", s.intensity),
                "polarity": _valued(s, "polarity", s.polarity),
                "holder": _valued(s, "holder", holder_text(doc, s)) if s.type == "DSE" else "",
                "attitude": _valued(s, "attitude", s.attitude) if s.type == "DSE" else "",
                "targets": _targets_shown(doc, s) if s.type == "DSE" else "",
            }
        )
    return rows


def spans_table(project: Project, doc, annotator: str, threshold: float, layer: str) -> None:
    """The document's spans as a table that wraps its text (every column stays in view), then the attributes
    form."""
    if doc.spans:  # (a table's cells are Markdown: the text escaped)
        st.table([{k: plain(v) for k, v in row.items()} for row in span_rows(doc, threshold)], hide_index=True)
    else:
        st.caption("No spans in this document yet.")
    attributes_form(project, doc, annotator, layer)


def _holder_choice(span: StoredSpan) -> str:
    """The holder box's choice for the span's holder: "" (not set), one of HOLDERS, or WORDS."""
    h = span.holder_value
    return WORDS if isinstance(h, tuple) else (h or "")


def changes(span: StoredSpan, boxes: dict) -> dict:
    """The values the form's ``boxes`` (``intensity``, ``polarity``, ``attitude``: ``NONE_SHOWN`` for not set;
    ``holder`` as ``_holder_choice`` gives it; ``targets``: those kept ticked) change on ``span``: the fields of an
    ``attributes`` edit, none for a value left as it is."""
    out: dict = {}
    names = ("intensity", "polarity", "attitude") if span.type == "DSE" else ("intensity", "polarity")
    for name in names:
        value = None if boxes[name] == NONE_SHOWN else boxes[name]
        if value != getattr(span, name):
            out[name] = value
    if span.type == "DSE" and boxes["holder"] != _holder_choice(span) and boxes["holder"] != WORDS:
        out["holder"] = boxes["holder"] or None
    if span.type == "DSE" and span.targets and list(boxes["targets"]) != span.target_spans:
        out["targets"] = [{"start": a, "end": b} for a, b in boxes["targets"]]
    return out


def _valued_target(doc, target: StoredTarget, chars: tuple[int, int]) -> str:
    """A target's words with where it came from: ``“the tax” (model 0.50)``, ``“Omar” ✎``."""
    source = target_provenance(target)
    return f"“{' '.join(doc.text[chars[0] : chars[1]].split())}”" + (" ✎" if source == "human" else f" ({source})")


def _role_boxes(row, doc, span: StoredSpan) -> dict:
    """A DSE's attitude (a box) and targets (ticked, those it has; untick one to remove it) in the form's row."""
    attitudes = [NONE_SHOWN, *ATTITUDES]
    dse = span.type == "DSE"
    attitude = row.selectbox(
        "Attitude",
        attitudes,
        index=attitudes.index(span.attitude or NONE_SHOWN) if dse else 0,
        disabled=not dse,
        help=ATTITUDE_HELP,
        width=180,
    )
    shown = {t.tokens: _valued_target(doc, t, chars) for t, chars in target_list(doc, span)}
    targets = row.multiselect(
        "Targets",
        list(shown),
        default=list(shown),
        format_func=shown.get,
        disabled=not dse,
        placeholder="none" if span.targets is not None else NONE_SHOWN,
        help=TARGETS_HELP,
        width=320,
    )
    return {"attitude": attitude, "targets": targets}


def attributes_form(project: Project, doc, annotator: str, layer: str = FINAL) -> None:
    """MPQA's optional intensity and polarity of a span of this document, and a DSE's holder (writer, implicit,
    none, not set; a holder of words is chosen in the editor: its words, then h), attitude (a type, none, not set)
    and targets (removed here; added in the editor: the words, then t).  Choosing a span draws the boxes again,
    each at that span's value."""
    if not doc.spans:
        return
    # spans by type and tokens: the span chosen stays chosen when an edit makes the annotator's copy (new ids)
    by_key = {s.key: s for s in doc.spans}

    def label(key: tuple[str, int, int]) -> str:
        a, b = doc.span_chars(by_key[key])
        return f"{key[0]} “{doc.text[a:b][:60]}”"

    pick = f"attr_span_{doc.id}"
    if st.session_state.get(pick) not in by_key:
        st.session_state[pick] = doc.spans[0].key
    span = by_key[st.selectbox("Span", list(by_key), format_func=label, key=pick)]
    span_id = span.id
    words = holder_text(doc, span) if span.type == "DSE" else None
    # a form per span and version: its boxes start at the span's values as saved
    with st.form(f"attributes_{doc.id}_{doc.version}_{span_id}", border=False):
        row = st.container(horizontal=True, vertical_alignment="bottom", gap="small", key="attr_row")
        intensities = [NONE_SHOWN, *INTENSITIES]
        intensity = row.selectbox(
            "Intensity", intensities, index=intensities.index(span.intensity or NONE_SHOWN), width=150
        )
        polarities = [NONE_SHOWN, *POLARITIES]
        polarity = row.selectbox("Polarity", polarities, index=polarities.index(span.polarity or NONE_SHOWN), width=150)
        holders = ["", *HOLDERS, *([WORDS] if _holder_choice(span) == WORDS else [])]
        holder = row.selectbox(
            "Holder",
            holders,
            index=holders.index(_holder_choice(span)) if span.type == "DSE" else 0,
            format_func=lambda h: words if h == WORDS and words else (h or NONE_SHOWN),
            disabled=span.type != "DSE",
            help=HOLDER_HELP,
            width=200,
        )
        roles = _role_boxes(row, doc, span)
        if row.form_submit_button("Set attributes", width="content"):
            changed = changes(span, {"intensity": intensity, "polarity": polarity, "holder": holder, **roles})
            if not changed:
                flash("Nothing to save: every value is the span's own.", "info")
            else:
                event = {"op": "attributes", "doc": doc.id, "version": doc.version, "span": span_id, **changed}
                handle(project, event, annotator, layer, annotator)
            st.rerun()
