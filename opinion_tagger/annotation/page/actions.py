"""Saving an edit: an event from the span editor's keys and clicks, or from the page's buttons,
applied to the store (``apply_event``); a refused edit becomes a message, and the page goes on
to the document the edit chose."""

from __future__ import annotations

import streamlit as st

from opinion_tagger.annotation.editor import Outcome, apply_event
from opinion_tagger.annotation.page.display import flash, plain
from opinion_tagger.annotation.store import FINAL, ConflictError, Project, ProjectError


def handle(project: Project, event: dict, annotator: str, layer: str = FINAL, queue_of: str | None = None) -> None:
    """Save an edit on ``layer`` (the page decides it: the document's shared or final version, or
    the annotator's own copy); remember where to go next; a refused edit becomes a message."""
    if isinstance(event, dict):
        event = {**event, "order": st.session_state.get("order", "file")}  # "next" follows the sidebar's order
    try:
        outcome = apply_event(project, event, annotator, layer=layer, queue_of=queue_of)
    except ConflictError as exc:
        outcome = Outcome(f"Not saved: {exc}. The page now shows the latest version.", "warning")
    except ProjectError as exc:
        outcome = Outcome(f"Not saved: {exc}.", "warning")
    if outcome.message:
        flash(plain(outcome.message), outcome.level)  # it may quote the document's text
    if outcome.next_doc is not None:
        st.session_state["pending_doc"] = outcome.next_doc
