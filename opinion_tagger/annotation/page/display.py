"""What the page's views share in showing things: user text escaped for markdown, messages
kept for the next run of the page, status marks and the progress bar."""

from __future__ import annotations

import re

import streamlit as st

STATUS_MARK = {"todo": "○ to do", "in_progress": "◐ in progress", "done": "● done", "rejected": "✕ rejected"}
NONE_SHOWN = "—"  # in tables, for no annotator or time


# the page's own rules: the document list beside the buttons keeps room for its label (else the buttons wrap)
PAGE_CSS = (
    "<style>.st-key-doc_bar > div:has(> .st-key-doc_list) { flex: 1 1 20rem; min-width: min(100%, 20rem); }</style>"
)


def page_style() -> None:
    st.html(PAGE_CSS)


def plain(text: object) -> str:
    """User text shown through Streamlit's markdown, with markdown and HTML characters escaped."""
    return re.sub(r"([\\`*_{}\[\]()#+\-.!|<>~$&])", r"\\\1", str(text))


def flash(message: str, level: str = "success") -> None:
    st.session_state.setdefault("flash", []).append((level, message))


def show_flash() -> None:
    for level, message in st.session_state.pop("flash", []):
        getattr(st, level)(message)


MESSAGE_SLOT_PX = 76  # the messages' place above the text: one message high, more scroll in it


def message_slot() -> None:
    """The messages kept for this run, in a place always there and always as high, so the text below never
    moves (nor loses its state)."""
    with st.container(height=MESSAGE_SLOT_PX, border=False, key="messages"):
        show_flash()


def progress_bar(statuses: list[str], label: str = "done") -> None:
    counts = {s: statuses.count(s) for s in ("todo", "in_progress", "done", "rejected")}
    total = len(statuses)
    st.progress(
        (counts["done"] + counts["rejected"]) / total if total else 0.0,
        text=f"**{counts['done']} of {total} {label}** · {counts['in_progress']} in progress · "
        f"{counts['todo']} to do" + (f" · {counts['rejected']} rejected" if counts["rejected"] else ""),
    )
