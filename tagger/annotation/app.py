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
    FINAL,
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
CHOSEN = "_annotator_chosen"  # the name chosen for this browser session (no login, no --annotator)
COPY_MARK = {"todo": "to do", "in_progress": "in progress", "done": "accepted", "rejected": "rejected"}
MODE_LABELS = {"annotate": "Annotate", "review": "Review"}


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
            overlap = st.number_input(
                "Annotators per document (2 or more: each annotates a copy of their own, "
                "then a reviewer makes the final version; 1: one shared version)",
                min_value=1,
                max_value=20,
                value=1,
                step=1,
                key="overlap",
            )
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
            report = import_records(project, records, tagger, model_name=model if pre else None, overlap=int(overlap))
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


def attributes_form(project: Project, doc, annotator: str, layer: str = FINAL) -> None:
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
                layer,
                annotator,
            )
            st.rerun()


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


def spans_table(project: Project, doc, annotator: str, threshold: float, layer: str) -> None:
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
    attributes_form(project, doc, annotator, layer)


def progress_bar(statuses: list[str], label: str = "done") -> None:
    counts = {s: statuses.count(s) for s in ("todo", "in_progress", "done", "rejected")}
    total = len(statuses)
    st.progress(
        (counts["done"] + counts["rejected"]) / total if total else 0.0,
        text=f"**{counts['done']} of {total} {label}** · {counts['in_progress']} in progress · "
        f"{counts['todo']} to do" + (f" · {counts['rejected']} rejected" if counts["rejected"] else ""),
    )


def annotate_view(project: Project, annotator: str, threshold: float, model: str, order: str) -> None:
    """The documents this annotator works on (``Project.work_list``): shared documents, and their own
    copies of documents with an overlap (made when first opened)."""
    docs = project.work_list(annotator)
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
        return f"{ids.index(i) + 1}. {d.name} — {STATUS_MARK[d.status]} ({d.spans} spans{mine})"

    cols = st.columns([5, 1, 1.2, 1.1, 1])
    doc_id = cols[0].selectbox("Document", ids, key=key, format_func=label)
    st.session_state["doc_id"] = doc_id
    layer = by_id[doc_id].layer  # their copy is made at their first change (apply_event)
    shown = st.session_state.get("shown", {}).get((doc_id, layer))  # the version this tab last showed
    act = lambda op: handle(project, {"op": op, "doc": doc_id, "version": shown}, annotator, layer, annotator)
    for col, (label_, op, kind) in zip(
        cols[1:],
        (
            ("Next (n)", "next", "secondary"),
            ("Accept (a)", "accept", "primary"),
            ("Reject (r)", "reject", "secondary"),
            ("Undo (u)", "undo", "secondary"),
        ),
    ):
        col.write("")
        if col.button(label_, key=op, type=kind):
            act(op)
            st.rerun()

    doc = project.document(doc_id, layer, preview=True)
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
        spans_table(project, doc, annotator, threshold, layer)


def _copy_html(doc) -> str:
    """An annotator's copy, its spans marked (every character escaped: ``render_html``)."""
    from tagger.annotation.exporting import tagged
    from tagger.tagging.formats import COLORS, LINE_COLORS, render_html

    style = (
        f"<style>.ot-copy mark {{ background: transparent; color: inherit; padding: 0 0 2px; }}"
        f".ot-copy mark.dse {{ background: {COLORS['DSE']}; }}"
        f".ot-copy mark.ese {{ border-bottom: 3px solid {LINE_COLORS['ESE']}; }}"
        f".ot-copy mark.other {{ outline: 1px dashed #888; }}"
        f".ot-copy {{ line-height: 1.9; border: 1px solid #ddd; border-radius: 6px; padding: 0.6em; }}</style>"
    )
    return f'{style}<div class="ot-copy">{render_html(tagged(doc, tuple(sorted({s.type for s in doc.spans}))))}</div>'


def review_view(project: Project, reviewer: str, threshold: float) -> None:
    """Two annotators' copies side by side; accept one, or merge the ticked spans, into the final
    version; then the final version in the editor (further corrections, undo)."""
    from tagger.annotation.review import (
        FINISHED,
        accept_copy,
        candidates,
        merge,
        reviewable,
    )

    ready = reviewable(project)
    progress_bar([status if status in FINISHED else "todo" for _, _, status, _ in ready], "reviewed")
    if not ready:
        st.info(
            "No document to review yet: a document is ready once two of its annotators have accepted or "
            "rejected their copies."
        )
        return
    by_id = {r[0]: r for r in ready}
    if st.session_state.get("pending_doc") in by_id:  # a search result
        st.session_state["review_doc"] = st.session_state.pop("pending_doc")
    if st.session_state.get("review_doc") not in by_id:
        st.session_state["review_doc"] = next((r[0] for r in ready if r[2] not in FINISHED), ready[0][0])

    def label(i: int) -> str:
        _, name, status, copies = by_id[i]
        made = ", ".join(f"{a}: {COPY_MARK[s]}" for a, s in copies)
        return f"{name} — {'● reviewed' if status in FINISHED else '○ to review'} ({made})"

    doc_id = st.selectbox("Document to review", list(by_id), key="review_doc", format_func=label)
    finished = [a for a, s in by_id[doc_id][3] if s in FINISHED]
    c = st.columns(2)
    first = c[0].selectbox("Left", finished, index=0, key=f"review_a_{doc_id}")
    second = c[1].selectbox("Right", [a for a in finished if a != first], index=0, key=f"review_b_{doc_id}")
    pair = [first, second]
    final = project.document(doc_id)
    for col, name in zip(st.columns(2), pair):
        copy = project.document(doc_id, name)
        col.markdown(f"**{plain(name)}** · {STATUS_MARK[copy.status]} · {len(copy.spans)} spans")
        col.html(_copy_html(copy))
    if final.review:
        r = final.review
        st.caption(
            plain(
                f"Final version: {r.get('method')} by {r.get('reviewer')} "
                f"(copies of {', '.join(r.get('annotators') or [])}), {STATUS_MARK[final.status]}"
            )
        )
    cands = candidates(project, doc_id, pair)
    with st.form(f"merge_{doc_id}_{first}_{second}", border=True):
        st.markdown("**Spans of the two copies**: tick those the final version keeps (ticked: both made it)")
        keep = []
        for cand in cands:  # a checkbox per span (type and tokens), whatever the copies hold by now
            tick = st.checkbox(
                f"{cand.key[0]} “{plain(cand.text)}” — {plain(', '.join(cand.by))}",
                value=len(cand.by) == len(pair),
                key="keep_{}_{}_{}_{}".format(doc_id, *cand.key),
            )
            if tick:
                keep.append(cand.key)
        b = st.columns(3)
        merged = b[0].form_submit_button("Merge the ticked spans", type="primary")
        took_a = b[1].form_submit_button(f"Accept {first}'s version")
        took_b = b[2].form_submit_button(f"Accept {second}'s version")
    if merged or took_a or took_b:
        # the final version as this tab showed it: a review on a version changed since is refused
        version = st.session_state.get("shown", {}).get((doc_id, FINAL), final.version)
        try:
            if merged:
                merge(project, doc_id, version, keep, pair, reviewer)
                flash(f"Merged {len(keep)} spans into the final version.")
            else:
                chosen = first if took_a else second
                accept_copy(project, doc_id, version, chosen, pair, reviewer)
                flash(plain(f"The final version is {chosen}'s."))
        except ConflictError as exc:
            flash(plain(f"Not saved: {exc}."), "warning")
        except ProjectError as exc:
            flash(plain(f"Not saved: {exc}."), "warning")
        st.rerun()
    agreement_section(project)
    st.markdown("**Final version** (exported and trained on)")
    shown = st.session_state.get("shown", {}).get((doc_id, FINAL))
    b = st.columns([1, 1, 4])
    if b[0].button("Undo (u)", key="review_undo"):
        handle(project, {"op": "undo", "doc": doc_id, "version": shown}, reviewer)
        st.rerun()
    if b[1].button("Reject (r)", key="review_reject"):
        handle(project, {"op": "reject", "doc": doc_id, "version": shown}, reviewer)
        st.rerun()
    span_editor(
        editor_data(final, project.types, threshold),
        key="editor",
        on_event=lambda event: handle(project, event, reviewer),
    )
    st.session_state.setdefault("shown", {})[(doc_id, FINAL)] = final.version


@st.cache_data(show_spinner=False, max_entries=8)
def _agreement_rows(path: str, state: tuple) -> list[dict]:
    """Agreement of the project at ``path`` (recomputed when its copies change: ``state``)."""
    from tagger.annotation.agreement import agreement

    with Project(path) as project:
        return agreement(project)


def agreement_section(project: Project) -> None:
    with st.expander("Agreement between annotators", key="exp_agreement"):
        rows = _agreement_rows(str(project.path), project.copies_state())
        if not rows:
            st.caption("No document accepted by two annotators yet.")
            return
        st.caption(
            "Per pair and type, over the documents both accepted in their copies: binary and proportional "
            "span F1 (the project's metrics, one annotator as gold) and Cohen's kappa over tokens "
            "(in a span of the type or not); percentages but kappa."
        )
        pct = lambda x: round(100 * x, 1)
        import pandas as pd

        st.table(
            pd.DataFrame(
                [
                    {
                        "annotators": " / ".join(r["annotators"]),
                        "type": r["type"],
                        "documents": r["documents"],
                        "tokens": r["tokens"],
                        "spans": " / ".join(map(str, r["spans"])),
                        "binary F1": f"{pct(r['binary_f1']):.1f}",
                        "proportional F1": f"{pct(r['proportional_f1']):.1f}",
                        "kappa": NONE_SHOWN if r["kappa"] is None else f"{r['kappa']:.3f}",
                    }
                    for r in rows
                ]
            ),
            hide_index=True,
        )


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
    if annotator is None:
        choose_name(project)
        return
    team = project.has_overlap()
    mode = (
        st.sidebar.radio("Work", ("annotate", "review"), format_func=MODE_LABELS.get, key="mode", horizontal=True)
        if team
        else "annotate"
    )
    order = st.sidebar.radio("Next unfinished document", ORDERS, format_func=ORDER_LABELS.get, key="order")
    st.sidebar.caption(f"**n**, **a** and **r** go to the next unfinished document by {ORDER_RULES[order]}.")
    search_section(project)
    st.title(f"{'Reviewing' if mode == 'review' else 'Annotating'} {plain(path.stem)}")
    # always there and always as high, so the text below never moves (nor loses its state)
    with st.container(height=MESSAGE_SLOT_PX, border=False, key="messages"):
        show_flash()
    if mode == "review":
        review_view(project, annotator, threshold)
    else:
        annotate_view(project, annotator, threshold, model, order)
    if team and mode == "annotate":  # (the review view has it under the copies)
        agreement_section(project)
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
