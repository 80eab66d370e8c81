"""The annotator's view: their documents, the buttons (next, accept, reject, undo), the span
editor over the document (or their copy of it), its spans as a table and their attributes."""

from __future__ import annotations

import streamlit as st

from opinion_tagger.annotation.editor import editor_data, span_editor
from opinion_tagger.annotation.page.actions import handle
from opinion_tagger.annotation.page.display import NONE_SHOWN, STATUS_MARK, message_slot, plain, progress_bar
from opinion_tagger.annotation.page.spans_view import spans_table
from opinion_tagger.annotation.store import Project
from opinion_tagger.wording import counted

FULL_RUN = "_full_run"  # set by a run of the whole page, taken by the work area: unset in a run of the area alone
LISTED = "_listed_statuses"  # the statuses the whole page last showed


def annotate_view(project: Project, annotator: str, threshold: float, order: str) -> None:
    """The documents this annotator works on (``Project.work_list``): shared documents, and their own
    copies of documents with an overlap (made when first opened).  An edit runs the work area alone
    (``work_area``), not the whole page."""
    st.session_state[FULL_RUN] = True
    work_area(project, annotator, threshold, order)


def documents_table(docs) -> None:
    """Every document of the annotator's list with its status, span count, last annotator and time; drawn only
    while its expander is open (a table of every document is most of a run's work on a large project)."""
    box = st.expander("All documents", key="exp_docs", on_change="rerun")
    if not box.open:
        return
    with box:
        st.dataframe(
            [
                {
                    "#": k + 1,
                    "document": d.name,
                    "status": STATUS_MARK[d.status],
                    "spans": d.spans,
                    "annotator": d.annotator or NONE_SHOWN,
                    "updated": d.updated or NONE_SHOWN,
                }
                for k, d in enumerate(docs)
            ],
            hide_index=True,
            width="stretch",
        )


@st.fragment
def work_area(project: Project, annotator: str, threshold: float, order: str) -> None:
    """The messages, the progress bar, the document list with its buttons, the span editor, the document's
    spans and the list of all documents: a fragment, so that an edit (a key in the editor, a button) runs
    this part of the page alone, a fraction of the whole page's work on a 1,000-document project
    (experiments/benchmarks/bench_annotation.py --annotators).  In a project with an overlap, when a
    document's status has changed since the whole page last ran (accepted, rejected, undone; or by someone
    else), the whole page runs again, for the agreement between annotators below it."""
    full = st.session_state.pop(FULL_RUN, False)
    docs = project.work_list(annotator)
    statuses = tuple((d.id, d.status) for d in docs)
    if full:
        st.session_state[LISTED] = statuses
    elif st.session_state.get(LISTED) != statuses and project.has_overlap():
        st.rerun(scope="app")
    message_slot()
    progress_bar([d.status for d in docs])
    if not docs:
        st.info(
            "No documents yet: import some below."
            if not project.documents()
            else "Nothing for you here: every document with an overlap has its annotators."
        )
        return
    ids = [d.id for d in docs]
    by_id = {d.id: d for d in docs}
    place = {i: k + 1 for k, i in enumerate(ids)}
    # the list's labels show status and span counts: a new widget whenever they change
    key = f"doc_pick_{sum(d.version for d in docs) + len(docs)}"
    if "pending_doc" in st.session_state:  # go to another document (next, accept, a search result)
        wanted = st.session_state.pop("pending_doc")
        if wanted in by_id:
            st.session_state["doc_id"] = st.session_state[key] = wanted
        else:
            st.info("That document is not yours to annotate: it already has its annotators.")
    if st.session_state.get("doc_id") not in by_id:
        st.session_state["doc_id"] = project.next_unfinished(order=order, annotator=annotator) or ids[0]
    if st.session_state.get(key) not in by_id:
        st.session_state[key] = st.session_state["doc_id"]

    def label(i: int) -> str:
        d = by_id[i]
        mine = " · your copy" if d.layer else ""
        return f"{place[i]}. {d.name} — {STATUS_MARK[d.status]} ({counted(d.spans, 'span')}{mine})"

    # the list and the buttons in one row that wraps: each button as wide as its text (never cut short), the
    # list taking the rest of the row, at least 20rem (display.PAGE_CSS; else the buttons go on a row of their own)
    bar = st.container(horizontal=True, vertical_alignment="bottom", gap="small", key="doc_bar")
    with bar.container(width="stretch", key="doc_list"):
        doc_id = st.selectbox("Document", ids, key=key, format_func=label)
    st.session_state["doc_id"] = doc_id
    layer = by_id[doc_id].layer  # their copy is made at their first change (apply_event)
    doc = project.document(doc_id, layer, preview=True)
    # the version this tab last showed; a run cut short by a click (Streamlit stops it for the next) never
    # recorded it, and then the version read in this run is taken
    shown = st.session_state.get("shown", {}).get((doc_id, layer), doc.version)
    act = lambda op: handle(project, {"op": op, "doc": doc_id, "version": shown}, annotator, layer, annotator)
    buttons = bar.container(horizontal=True, width="content", gap="small", key="doc_buttons")  # they wrap as one
    for label_, op, kind in (
        ("Next (n)", "next", "secondary"),
        ("Accept (a)", "accept", "primary"),
        ("Reject (r)", "reject", "secondary"),
        ("Undo (u)", "undo", "secondary"),
    ):
        if buttons.button(label_, key=op, type=kind, width="content"):
            act(op)
            st.rerun(scope="app" if full else "fragment")

    st.caption(
        f"{STATUS_MARK[doc.status]} · version {doc.version}"
        + (f" · your copy (one of {doc.overlap} annotators'; a reviewer makes the final version)" if layer else "")
        + (f" · last change by {plain(doc.annotator)}" if doc.annotator and not layer else "")
        + (f" · pre-annotated by {plain(doc.model)}" if doc.model else "")
    )
    span_editor(
        editor_data(doc, project.types, threshold),
        key="editor",
        on_event=lambda event: handle(project, event, annotator, layer, annotator),
    )
    st.session_state.setdefault("shown", {})[(doc_id, layer)] = doc.version
    with st.expander("Spans of this document", key="exp_spans"):
        spans_table(project, doc, annotator, threshold, layer)
    documents_table(docs)
