"""The annotator page (Streamlit): a project's documents with their status and
progress, the span editor, import, export and the model's scores on the accepted
documents.  A thin layer over ``opinion_tagger.annotation``: this module puts the parts in
``opinion_tagger.annotation.page`` together.

Run: ``opinion-tagger annotate serve PROJECT`` (this project), or
``streamlit run streamlit_app.py`` (choose a project in the page; projects live in
``$OPINION_TAGGER_PROJECTS``, default ``./projects``).

With ``$OPINION_TAGGER_PASSWORD`` set, a session sees nothing of the projects until it
has logged in with that password and a name, the annotator recorded with its changes;
``$OPINION_TAGGER_ANNOTATOR`` fixes the annotator of a server without a login;
``$OPINION_TAGGER_REVIEWERS`` (``annotate serve --reviewers``) names those who see the Review view
(unset: everyone); ``$OPINION_TAGGER_MODELS`` (``--models``) a directory of bundles the model box lists.
"""

from __future__ import annotations

import logging
import os

import streamlit as st

from opinion_tagger.annotation.page.annotate_view import annotate_view
from opinion_tagger.annotation.page.display import message_slot, page_style, plain
from opinion_tagger.annotation.page.login import annotator_name, choose_name, logged_in
from opinion_tagger.annotation.page.project_data import export_section, import_section, scores_section
from opinion_tagger.annotation.page.resources import open_project
from opinion_tagger.annotation.page.review_view import agreement_section, review_view
from opinion_tagger.annotation.page.sidebar import choose_model, choose_project, search_section
from opinion_tagger.annotation.serving import PASSWORD_ENV, reviewers
from opinion_tagger.annotation.store import ORDER_RULES, ORDERS
from opinion_tagger.errors import TaggerError

log = logging.getLogger("opinion_tagger")
ORDER_LABELS = {"file": "File order", "uncertainty": "Least confident first"}
MODE_LABELS = {"annotate": "Annotate", "review": "Review"}


def page() -> None:
    password = os.environ.get(PASSWORD_ENV)
    if password and not logged_in(password):
        return
    path = choose_project()
    annotator = annotator_name()
    threshold = st.sidebar.slider("Flag model spans below this confidence", 0.0, 1.0, 0.6, 0.05, key="threshold")
    st.sidebar.caption(
        "Keys: select words (drag, or shift+click), then **d** DSE, **e** ESE; click a span (or a word in it; "
        "again: the next span over it, then the word), then **d**/**e** relabel, **x** delete, "
        "**shift/alt+←/→** resize, **i**/**p** intensity/polarity, **h** a DSE's holder "
        "(or select its words after clicking the DSE, then **h**), **k** its attitude, **t** a target "
        "(select its words after clicking the DSE, then **t**; again to remove it); "
        "**u** undo, **a** accept, **r** reject, **n** next unfinished."
    )
    if path is None:
        st.title("opinion-tagger annotator")
        st.info("Choose or create a project in the sidebar (or run `opinion-tagger annotate serve PROJECT`).")
        return
    project = open_project(str(path))
    if annotator is None:
        choose_name(project)
        return
    model = choose_model()
    team = project.has_overlap()
    allowed = reviewers()  # None: everyone may review
    mode = (
        st.sidebar.radio("Work", ("annotate", "review"), format_func=MODE_LABELS.get, key="mode", horizontal=True)
        if team and (allowed is None or annotator in allowed)
        else "annotate"
    )
    order = st.sidebar.radio("Next unfinished document", ORDERS, format_func=ORDER_LABELS.get, key="order")
    st.sidebar.caption(f"**n**, **a** and **r** go to the next unfinished document by {ORDER_RULES[order]}.")
    search_section(project)
    st.title(f"{'Reviewing' if mode == 'review' else 'Annotating'} {plain(path.stem)}")
    if mode == "review":
        message_slot()
        review_view(project, annotator, threshold)
    else:
        annotate_view(project, annotator, threshold, order)  # (its messages are in its work area)
    if team and mode == "annotate":  # (the review view has it under the copies)
        agreement_section(project)
    import_section(project, model)
    export_section(project)
    scores_section(project, model)


def main() -> None:
    st.set_page_config(page_title="opinion-tagger annotator", layout="wide")
    page_style()
    try:
        page()
    except TaggerError as exc:
        st.error(str(exc))
    except Exception as exc:  # never a traceback in the page: one line, the details in the server log
        log.exception("annotator page")
        st.error(f"Something went wrong: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")


if __name__ == "__main__":
    main()
