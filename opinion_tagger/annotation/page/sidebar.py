"""The sidebar's project chooser (or the project the server fixed, or a new one) and search by text."""

from __future__ import annotations

import os
import re
from pathlib import Path

import streamlit as st

from opinion_tagger.annotation.page.display import plain
from opinion_tagger.annotation.page.resources import open_project
from opinion_tagger.annotation.serving import MODELS_ENV
from opinion_tagger.annotation.store import Project
from opinion_tagger.paths import DEFAULT_NAME, model_choices

MAX_HITS = 20  # search results listed


def choose_project() -> Path | None:
    fixed = os.environ.get("OPINION_TAGGER_PROJECT")
    if fixed:
        st.sidebar.markdown(f"**Project** `{Path(fixed).name}`")
        return Path(fixed)
    root = Path(os.environ.get("OPINION_TAGGER_PROJECTS", "projects")).resolve()
    if "pending_project" in st.session_state:
        st.session_state["project_choice"] = st.session_state.pop("pending_project")
    existing = sorted(p.name for p in root.glob("*.sqlite")) if root.is_dir() else []
    choice = st.sidebar.selectbox("Project", existing, index=None, key="project_choice", placeholder="Choose a project")
    with st.sidebar.form("new_project", clear_on_submit=True, border=False):
        name = st.text_input("New project", placeholder="a name: letters, digits, - and _")
        if st.form_submit_button("Create project"):
            if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}", name or ""):
                st.error("A project name is 1 to 64 letters, digits, - or _.")
            else:
                path = root / f"{name}.sqlite"  # the name cannot leave the projects directory
                open_project(str(path))
                st.session_state["pending_project"] = path.name
                st.rerun()
    return root / choice if choice else None


def choose_model() -> str:
    """The model that pre-annotates imports and is scored: a bundled model (the default one first) or a
    bundle of the server's models directory (``annotate serve --models``)."""
    choices = model_choices(os.environ.get(MODELS_ENV))
    if not choices:
        st.sidebar.caption("No model installed: imports are tokenised only (`opinion-tagger download`).")
        return DEFAULT_NAME
    return st.sidebar.selectbox("Model (pre-annotation, scores)", list(choices), format_func=choices.get, key="model")


def search_section(project: Project) -> None:
    """Find documents by their text (case-insensitive substring); a result's button opens it."""
    query = st.sidebar.text_input("Find documents by their text", key="search", max_chars=200)
    if not query or not query.strip():
        return
    hits = project.search(query, limit=MAX_HITS + 1)
    if not hits:
        st.sidebar.caption("No document contains it.")
        return
    n, more = len(hits[:MAX_HITS]), len(hits) > MAX_HITS
    verb = "document contains" if n == 1 and not more else "documents contain"
    st.sidebar.caption(f"{n}{'+' if more else ''} {verb} it:")
    for doc_id, name, snippet in hits[:MAX_HITS]:
        if st.sidebar.button(plain(name), key=f"hit_{doc_id}"):
            st.session_state["pending_doc"] = doc_id
            st.rerun()
        if snippet:
            st.sidebar.caption(plain(snippet))
