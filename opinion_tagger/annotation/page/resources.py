"""What the page keeps between its runs (Streamlit's resource cache): the open project, the loaded model."""

from __future__ import annotations

import streamlit as st

from opinion_tagger.annotation.store import Project


@st.cache_resource(show_spinner=False)
def open_project(path: str) -> Project:
    return Project(path, create=True)


@st.cache_resource(show_spinner="Loading the model...")
def load_tagger(model: str):
    from opinion_tagger.tagging.tagger import OpinionTagger

    return OpinionTagger.load(model)
