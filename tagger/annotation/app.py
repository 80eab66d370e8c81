"""The annotator page (Streamlit): a project's documents with their status and
progress, the span editor, import, export and the model's scores on the accepted
documents.  A thin layer over ``tagger.annotation``.

Run: ``opinion-tagger annotate serve PROJECT`` (this project), or
``streamlit run streamlit_app.py`` (choose a project in the page; projects live in
``$OPINION_TAGGER_PROJECTS``, default ``./projects``).

With ``$OPINION_TAGGER_PASSWORD`` set, a session sees nothing of the projects until it
has logged in with that password and a name, the annotator recorded with its changes;
``$OPINION_TAGGER_ANNOTATOR`` fixes the annotator of a server without a login.
"""

from __future__ import annotations

import hmac
import logging
import os
import re
import time
from pathlib import Path

import streamlit as st

from tagger.annotation.editor import Outcome, apply_event, editor_data, span_editor
from tagger.annotation.serving import ANNOTATOR_ENV, PASSWORD_ENV, annotator_problem
from tagger.annotation.store import (
    INTENSITIES,
    ORDER_RULES,
    ORDERS,
    POLARITIES,
    ConflictError,
    Project,
    ProjectError,
)
from tagger.errors import TaggerError

log = logging.getLogger("tagger")
STATUS_MARK = {"todo": "○ to do", "in_progress": "◐ in progress", "done": "● done", "rejected": "✕ rejected"}
ORDER_LABELS = {"file": "File order", "uncertainty": "Least confident first"}
MAX_HITS = 20  # search results listed
MAX_UPLOAD_BYTES = 50 * 1024 * 1024
MESSAGE_SLOT_PX = 76  # the messages' place above the text: one message high, more scroll in it
NONE_SHOWN = "—"  # in tables, for no annotator or time
LOGGED_IN = "_logged_in_as"  # no widget has this key: only a right password sets it


def plain(text: object) -> str:
    """User text shown through Streamlit's markdown, with markdown and HTML characters escaped."""
    return re.sub(r"([\\`*_{}\[\]()#+\-.!|<>~$&])", r"\\\1", str(text))


@st.cache_resource(show_spinner=False)
def open_project(path: str) -> Project:
    return Project(path, create=True)


@st.cache_resource(show_spinner="Loading the model...")
def load_tagger(model: str):
    from tagger.tagging.annotate import OpinionTagger

    return OpinionTagger.load(model, backend="auto")


def flash(message: str, level: str = "success") -> None:
    st.session_state.setdefault("flash", []).append((level, message))


def show_flash() -> None:
    for level, message in st.session_state.pop("flash", []):
        getattr(st, level)(message)


# --------------------------------------------------------------------------- login
def logged_in(password: str) -> bool:
    """Whether this session has logged in; until it has, the login form (and nothing of the projects)."""
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


def annotator_name() -> str:
    """Who is recorded with the changes: the name logged in with, ``$OPINION_TAGGER_ANNOTATOR``,
    or the sidebar's field."""
    name = st.session_state.get(LOGGED_IN) or os.environ.get(ANNOTATOR_ENV)
    if not name:
        return st.sidebar.text_input("Annotator", value=os.environ.get("USER") or "annotator", key="annotator")
    st.sidebar.markdown(f"**Annotator** {plain(name)}")
    if st.session_state.get(LOGGED_IN) and st.sidebar.button("Log out", key="logout"):
        del st.session_state[LOGGED_IN]
        st.rerun()
    return name


# --------------------------------------------------------------------------- sidebar
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


# --------------------------------------------------------------------------- sections
def import_section(project: Project, model: str) -> None:
    from tagger.annotation.importing import import_records
    from tagger.tagging.inputs import check_text, records_from_bytes

    with st.expander("Import documents", expanded=sum(project.counts().values()) == 0, key="exp_import"):
        with st.form("import", clear_on_submit=True):
            pasted = st.text_area("Paste a document", height=100, key="paste")
            uploads = st.file_uploader(
                'or upload .txt files (one document each) and .jsonl files (a "text" field per line, "id" kept)',
                type=["txt", "jsonl"],
                accept_multiple_files=True,
                key="uploads",
            )
            folder = st.file_uploader(
                "or a directory (its .txt and .jsonl files)",
                type=["txt", "jsonl"],
                accept_multiple_files="directory",
                key="folder",
            )
            pre = st.checkbox(f"Pre-annotate with the model ({model})", value=True)
            submitted = st.form_submit_button("Import")
        if not submitted:
            return
        records = []
        if pasted and pasted.strip():
            n = sum(1 for i in project.documents() if i.name.startswith("pasted-")) + 1
            records.append(check_text(f"pasted-{n}", pasted, 200_000))
        for up in [*(uploads or []), *(folder or [])]:
            if up.size > MAX_UPLOAD_BYTES:
                flash(f"Not imported: {plain(up.name)}: {up.size} bytes (limit {MAX_UPLOAD_BYTES})", "warning")
                continue
            records.extend(records_from_bytes(up.name, up.getvalue()))
        if not records:
            flash("Nothing to import: paste a text or choose files.", "info")
            st.rerun()
        try:
            tagger = load_tagger(model) if pre else None
        except TaggerError as exc:
            flash(f"Not imported: cannot load the model: {plain(exc)}", "error")
            st.rerun()
        with st.spinner("Importing..."):
            report = import_records(project, records, tagger, model_name=model if pre else None)
        flash(plain(report.summary()), "success" if report.imported else "info")
        for rid, reason in report.errors:
            flash(f"Not imported: {plain(rid)}: {plain(reason)}", "warning")
        st.rerun()


def export_section(project: Project) -> None:
    from tagger.annotation.exporting import export_brat_zip, export_text

    with st.expander("Export", key="exp_export"):
        only_done = st.checkbox("Accepted documents only", value=False, key="export_done")
        rejected = st.checkbox("Include rejected documents", value=False, key="export_rejected")
        statuses = ("done",) if only_done else ("todo", "in_progress", "done")
        if rejected:
            statuses = (*statuses, "rejected")
        stem = project.path.stem
        c1, c2, c3 = st.columns(3)  # each file is made when its button is clicked
        c1.download_button(
            "JSONL",
            lambda: export_text(project, "jsonl", statuses),
            f"{stem}.jsonl",
            "application/jsonl",
            key="dl_jsonl",
            on_click="ignore",
        )
        c2.download_button(
            "CoNLL (IOB2)",
            lambda: export_text(project, "conll", statuses),
            f"{stem}.conll",
            "text/plain",
            key="dl_conll",
            on_click="ignore",
        )
        c3.download_button(
            "BRAT standoff (zip)",
            lambda: export_brat_zip(project, statuses),
            f"{stem}-brat.zip",
            "application/zip",
            key="dl_brat",
            on_click="ignore",
        )


def scores_section(project: Project, model: str) -> None:
    with st.expander("Model scores on the accepted documents", key="exp_scores"):
        if st.button(f"Score {model} on the accepted documents", key="score"):
            from tagger.annotation.dataset import accepted_documents
            from tagger.evaluation.scoring import evaluate_tagger

            try:
                docs = accepted_documents(project.path)
                tagger = load_tagger(model)
            except TaggerError as exc:
                st.info(plain(exc))
                return
            sentences = [s for sents in docs.values() for s in sents]
            report = evaluate_tagger(tagger.tagger, sentences)
            st.caption(f"{len(docs)} documents, {len(sentences)} sentences; percentages")
            st.dataframe(
                [
                    {
                        "type": t,
                        "metric": m,
                        "P": round(100 * r[m]["precision"], 1),
                        "R": round(100 * r[m]["recall"], 1),
                        "F1": round(100 * r[m]["f1"], 1),
                    }
                    for t, r in report.items()
                    for m in ("binary", "proportional", "exact")
                ],
                hide_index=True,
            )


def search_section(project: Project) -> None:
    """Find documents by their text (case-insensitive substring); a result's button opens it."""
    query = st.sidebar.text_input("Find documents by their text", key="search", max_chars=200)
    if not query or not query.strip():
        return
    hits = project.search(query, limit=MAX_HITS + 1)
    if not hits:
        st.sidebar.caption("No document contains it.")
        return
    st.sidebar.caption(f"{len(hits[:MAX_HITS])}{'+' if len(hits) > MAX_HITS else ''} documents contain it:")
    for doc_id, name, snippet in hits[:MAX_HITS]:
        if st.sidebar.button(plain(name), key=f"hit_{doc_id}"):
            st.session_state["pending_doc"] = doc_id
            st.rerun()
        if snippet:
            st.sidebar.caption(plain(snippet))


def attributes_form(project: Project, doc, annotator: str) -> None:
    """MPQA's optional intensity and polarity of a span of this document."""
    if not doc.spans:
        return
    by_id = {s.id: s for s in doc.spans}

    def label(span_id: int) -> str:
        s = by_id[span_id]
        a, b = doc.span_chars(s)
        return f"{s.type} “{doc.text[a:b][:60]}”"

    with st.form(f"attributes_{doc.id}_{doc.version}", border=False):
        c = st.columns([3, 1, 1, 1])
        span_id = c[0].selectbox("Span", list(by_id), format_func=label, key="attr_span")
        none = [NONE_SHOWN]
        intensity = c[1].selectbox("Intensity", none + list(INTENSITIES), key="attr_intensity")
        polarity = c[2].selectbox("Polarity", none + list(POLARITIES), key="attr_polarity")
        c[3].write("")
        if c[3].form_submit_button("Set attributes"):
            handle(
                project,
                {
                    "op": "attributes",
                    "doc": doc.id,
                    "version": doc.version,
                    "span": span_id,
                    "intensity": None if intensity == NONE_SHOWN else intensity,
                    "polarity": None if polarity == NONE_SHOWN else polarity,
                },
                annotator,
            )
            st.rerun()


def handle(project: Project, event: dict, annotator: str) -> None:
    """Save an edit; remember where to go next; a refused edit becomes a message."""
    if isinstance(event, dict):
        event = {**event, "order": st.session_state.get("order", "file")}  # "next" follows the sidebar's order
    try:
        outcome = apply_event(project, event, annotator)
    except ConflictError as exc:
        outcome = Outcome(f"Not saved: {exc}. The page now shows the latest version.", "warning")
    except ProjectError as exc:
        outcome = Outcome(f"Not saved: {exc}.", "warning")
    if outcome.message:
        flash(plain(outcome.message), outcome.level)  # it may quote the document's text
    if outcome.next_doc is not None:
        st.session_state["pending_doc"] = outcome.next_doc


# --------------------------------------------------------------------------- the page
def page() -> None:
    password = os.environ.get(PASSWORD_ENV)
    if password and not logged_in(password):
        return
    path = choose_project()
    annotator = annotator_name()
    threshold = st.sidebar.slider("Flag model spans below this confidence", 0.0, 1.0, 0.6, 0.05, key="threshold")
    model = st.sidebar.text_input(
        "Model (a bundled model: fast, accurate; or a bundle directory)", value="fast", key="model"
    )
    st.sidebar.caption(
        "Keys: select words, then **d** DSE, **e** ESE; click a span, then **d**/**e** relabel, "
        "**x** delete, **shift/alt+←/→** resize, **i**/**p** intensity/polarity; "
        "**u** undo, **a** accept, **r** reject, **n** next unfinished."
    )
    if path is None:
        st.title("opinion-tagger annotator")
        st.info("Choose or create a project in the sidebar (or run `opinion-tagger annotate serve PROJECT`).")
        return
    project = open_project(str(path))
    order = st.sidebar.radio("Next unfinished document", ORDERS, format_func=ORDER_LABELS.get, key="order")
    st.sidebar.caption(f"**n**, **a** and **r** go to the next unfinished document by {ORDER_RULES[order]}.")
    search_section(project)
    st.title(f"Annotating {plain(path.stem)}")
    # always there and always as high, so the text below never moves (nor loses its state)
    with st.container(height=MESSAGE_SLOT_PX, border=False, key="messages"):
        show_flash()
    docs = project.documents()
    counts = project.counts()
    total = len(docs)
    st.progress(
        (counts["done"] + counts["rejected"]) / total if total else 0.0,
        text=f"**{counts['done']} of {total} done** · {counts['in_progress']} in progress · "
        f"{counts['todo']} to do" + (f" · {counts['rejected']} rejected" if counts["rejected"] else ""),
    )
    if not docs:
        st.info("No documents yet: import some below.")
        import_section(project, model)
        return
    ids = [d.id for d in docs]
    by_id = {d.id: d for d in docs}
    # the list's labels show status and span counts: a new widget whenever they change
    key = f"doc_pick_{sum(d.version for d in docs) + len(docs)}"
    if "pending_doc" in st.session_state:  # go to another document (next, accept)
        st.session_state["doc_id"] = st.session_state[key] = st.session_state.pop("pending_doc")
    if st.session_state.get("doc_id") not in by_id:
        st.session_state["doc_id"] = project.next_unfinished(order=order) or ids[0]
    if st.session_state.get(key) not in by_id:
        st.session_state[key] = st.session_state["doc_id"]
    cols = st.columns([5, 1, 1.2, 1.1, 1])
    doc_id = cols[0].selectbox(
        "Document",
        ids,
        key=key,
        format_func=lambda i: (
            f"{ids.index(i) + 1}. {by_id[i].name} — {STATUS_MARK[by_id[i].status]} ({by_id[i].spans} spans)"
        ),
    )
    st.session_state["doc_id"] = doc_id
    shown = st.session_state.get("shown", {}).get(doc_id)  # the version this tab last showed
    cols[1].write("")
    if cols[1].button("Next (n)", key="next"):
        handle(project, {"op": "next", "doc": doc_id}, annotator)
        st.rerun()
    cols[2].write("")
    if cols[2].button("Accept (a)", key="accept", type="primary"):
        handle(project, {"op": "accept", "doc": doc_id, "version": shown}, annotator)
        st.rerun()
    cols[3].write("")
    if cols[3].button("Reject (r)", key="reject"):
        handle(project, {"op": "reject", "doc": doc_id, "version": shown}, annotator)
        st.rerun()
    cols[4].write("")
    if cols[4].button("Undo (u)", key="undo"):
        handle(project, {"op": "undo", "doc": doc_id, "version": shown}, annotator)
        st.rerun()

    doc = project.document(doc_id)
    st.caption(
        f"{STATUS_MARK[doc.status]} · version {doc.version}"
        + (f" · last change by {plain(doc.annotator)}" if doc.annotator else "")
        + (f" · pre-annotated by {plain(doc.model)}" if doc.model else "")
    )
    span_editor(
        editor_data(doc, project.types, threshold),
        key="editor",
        on_event=lambda event: handle(project, event, annotator),
    )
    st.session_state.setdefault("shown", {})[doc_id] = doc.version

    with st.expander("All documents", key="exp_docs"):
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
    with st.expander("Spans of this document", key="exp_spans"):
        rows = []
        for s in doc.spans:
            a, b = doc.span_chars(s)
            rows.append(
                {
                    "type": s.type,
                    "text": doc.text[a:b],
                    "source": s.source,
                    "confidence": s.score,
                    "review": s.source == "model" and (s.score or 0) < threshold,
                    "intensity": s.intensity or NONE_SHOWN,
                    "polarity": s.polarity or NONE_SHOWN,
                    "annotator": s.annotator or NONE_SHOWN,
                    "at": s.at or NONE_SHOWN,
                }
            )
        st.dataframe(rows, hide_index=True, width="stretch")
        attributes_form(project, doc, annotator)
    import_section(project, model)
    export_section(project)
    scores_section(project, model)


def main() -> None:
    st.set_page_config(page_title="opinion-tagger annotator", layout="wide")
    try:
        page()
    except TaggerError as exc:
        st.error(str(exc))
    except Exception as exc:  # never a traceback in the page: one line, the details in the server log
        log.exception("annotator page")
        st.error(f"Something went wrong: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")


if __name__ == "__main__":
    main()
