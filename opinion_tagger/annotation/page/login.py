"""Who is annotating: the password login, the name fixed by the server, or the name chosen once
for a browser session; the sidebar shows it (and a way to log out or change it)."""

from __future__ import annotations

import hmac
import os
import time

import streamlit as st

from opinion_tagger.annotation.page.display import plain
from opinion_tagger.annotation.serving import ANNOTATOR_ENV, annotator_problem
from opinion_tagger.annotation.store import Project

LOGGED_IN = "_logged_in_as"  # no widget has this key: only a right password sets it
CHOSEN = "_annotator_chosen"  # the name chosen for this browser session (no login, no --annotator)


def logged_in(password: str) -> bool:
    """Whether this browser tab has logged in; until it has, the login form (and nothing of the projects)."""
    if st.session_state.get(LOGGED_IN):
        return True
    st.title("opinion-tagger annotator")
    with st.form("login"):
        name = st.text_input("Your name (recorded with each of your changes)", key="login_user", max_chars=64)
        given = st.text_input("Password", type="password", key="login_password")
        submitted = st.form_submit_button("Log in")
    if not submitted:
        return False
    if not hmac.compare_digest((given or "").encode("utf-8"), password.encode("utf-8")):
        time.sleep(1)  # slows down guessing
        st.error("Wrong password.")
    elif annotator_problem(name or ""):
        st.error(f"Give your name: {annotator_problem(name or '')}.")
    else:
        st.session_state[LOGGED_IN] = name.strip()
        st.rerun()
    return False


def annotator_name() -> str | None:
    """Who is recorded with the changes: the name logged in with, ``$OPINION_TAGGER_ANNOTATOR``,
    or the name chosen once for this browser session (None until it is: ``choose_name``)."""
    name = st.session_state.get(LOGGED_IN) or os.environ.get(ANNOTATOR_ENV) or st.session_state.get(CHOSEN)
    if not name:
        return None
    st.sidebar.markdown(f"**Annotator** {plain(name)}")
    if st.session_state.get(LOGGED_IN) and st.sidebar.button("Log out", key="logout"):
        del st.session_state[LOGGED_IN]
        st.rerun()
    elif (
        st.session_state.get(CHOSEN)
        and not os.environ.get(ANNOTATOR_ENV)
        and not st.session_state.get(LOGGED_IN)
        and st.sidebar.button("Change annotator", key="change_annotator")
    ):
        del st.session_state[CHOSEN]
        st.rerun()
    return name


def choose_name(project: Project) -> None:
    """On a server without a login or a fixed annotator: the name of this browser session's annotator."""
    st.title("opinion-tagger annotator")
    with st.form("who"):
        name = st.text_input(
            "Your name (recorded with each of your changes; chosen once for this browser session)",
            key="who_name",
            max_chars=64,
        )
        known = project.annotators()
        if known:
            st.caption("Names in this project: " + plain(", ".join(known)))
        submitted = st.form_submit_button("Start annotating")
    if submitted:
        problem = annotator_problem(name or "")
        if problem:
            st.error(f"Give your name: {problem}.")
        else:
            st.session_state[CHOSEN] = name.strip()
            st.rerun()
