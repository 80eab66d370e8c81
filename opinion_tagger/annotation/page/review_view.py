"""The reviewer's view: two annotators' copies side by side, one accepted or the ticked spans merged
into the final version, the final version in the editor; the agreement between annotators."""

from __future__ import annotations

import hashlib

import streamlit as st

from opinion_tagger.annotation.editor import editor_data, span_editor
from opinion_tagger.annotation.page.actions import handle
from opinion_tagger.annotation.page.display import NONE_SHOWN, STATUS_MARK, flash, plain, progress_bar
from opinion_tagger.annotation.store import FINAL, ConflictError, Project, ProjectError
from opinion_tagger.wording import counted

COPY_MARK = {"todo": "to do", "in_progress": "in progress", "done": "accepted", "rejected": "rejected"}
REVIEW_MARK = {"done": "● reviewed", "rejected": "✕ rejected"}  # the final version's status; else to review


def _copy_html(doc) -> str:
    """An annotator's copy, its spans marked (every character escaped: ``render_html``)."""
    from opinion_tagger.annotation.exporting import tagged
    from opinion_tagger.tagging.formats import COLORS, LINE_COLORS, render_html

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
    from opinion_tagger.annotation.review import FINISHED, reviewable

    ready = reviewable(project)
    progress_bar([status if status in FINISHED else "todo" for _, _, status, _ in ready], "reviewed")
    if not ready:
        st.info(
            "No document to review yet: a document is ready once two of its annotators have accepted or "
            "rejected their copies."
        )
        return
    by_id = {r[0]: r for r in ready}
    doc_id = _pick_document(project, by_id, ready[0][0])
    finished = [a for a, s in by_id[doc_id][3] if s in FINISHED]
    c = st.columns(2)
    first = c[0].selectbox("Left", finished, index=0, key=f"review_a_{doc_id}")
    second = c[1].selectbox("Right", [a for a in finished if a != first], index=0, key=f"review_b_{doc_id}")
    pair = [first, second]
    final = project.document(doc_id)
    _show_copies(project, doc_id, pair, final)
    _merge_form(project, doc_id, pair, final, reviewer)
    agreement_section(project)
    _final_version(project, final, reviewer, threshold)


def _pick_document(project: Project, by_id: dict, first: int) -> int:
    """The document to review, chosen in a list that shows each one's status and its copies'; the next to
    review after a review, or a search result, is chosen for the reviewer."""
    from opinion_tagger.annotation.review import next_to_review

    def label(i: int) -> str:
        _, name, status, copies = by_id[i]
        made = ", ".join(f"{a}: {COPY_MARK[s]}" for a, s in copies)
        return f"{name} — {REVIEW_MARK.get(status, '○ to review')} ({made})"

    labels = {i: label(i) for i in by_id}
    # the list's labels show each document's status: a new widget whenever one changes (a widget keeps the
    # label it last showed as its value, which would name no document once the label changed)
    key = "review_pick_" + hashlib.sha1("\n".join(labels.values()).encode()).hexdigest()[:16]
    for wanted in (st.session_state.pop("pending_review", None), st.session_state.pop("pending_doc", None)):
        if wanted in by_id:  # the next to review after a review, or a search result
            st.session_state["review_doc"] = st.session_state[key] = wanted
    if st.session_state.get("review_doc") not in by_id:
        st.session_state["review_doc"] = next_to_review(project) or first
    if st.session_state.get(key) not in by_id:
        st.session_state[key] = st.session_state["review_doc"]
    doc_id = st.selectbox("Document to review", list(by_id), key=key, format_func=labels.get)
    st.session_state["review_doc"] = doc_id
    return doc_id


def _show_copies(project: Project, doc_id: int, pair: list[str], final) -> None:
    """The two copies side by side, and how the final version was made (when it was reviewed)."""
    for col, name in zip(st.columns(2), pair):
        copy = project.document(doc_id, name)
        col.markdown(f"**{plain(name)}** · {STATUS_MARK[copy.status]} · {counted(len(copy.spans), 'span')}")
        col.html(_copy_html(copy))
    if final.review:
        r = final.review
        st.caption(
            plain(
                f"Final version: {r.get('method')} by {r.get('reviewer')} "
                f"(copies of {', '.join(r.get('annotators') or [])}), {STATUS_MARK[final.status]}"
            )
        )


def _merge_form(project: Project, doc_id: int, pair: list[str], final, reviewer: str) -> None:
    """A checkbox per span of the two copies and the buttons that merge the ticked ones, or accept one copy,
    into the final version."""
    from opinion_tagger.annotation.review import accept_copy, candidates, merge

    first, second = pair
    with st.form(f"merge_{doc_id}_{first}_{second}", border=True):
        st.markdown(
            "**Spans of the two copies**: tick those the final version keeps (ticked: both made it); a span's "
            "polarity, intensity and holder are the left copy's where it has the span"
        )
        keep = []
        # a checkbox per span (type and tokens), whatever the copies hold by now
        for cand in candidates(project, doc_id, pair):
            frame = cand.frame_text()  # the copies' polarity, intensity and holder of it
            tick = st.checkbox(
                f"{cand.key[0]} “{plain(cand.text)}” — {plain(', '.join(cand.by))}"
                + (f" · {plain(frame)}" if frame else ""),
                value=len(cand.by) == len(pair),
                key="keep_{}_{}_{}_{}".format(doc_id, *cand.key),
            )
            if tick:
                keep.append(cand.key)
        b = st.container(horizontal=True, gap="small")  # buttons as wide as their text, wrapping
        merged = b.form_submit_button("Merge the ticked spans", type="primary", width="content")
        took_a = b.form_submit_button(f"Accept {first}'s version", width="content")
        took_b = b.form_submit_button(f"Accept {second}'s version", width="content")
    if not (merged or took_a or took_b):
        return
    # the final version as this tab showed it: a review on a version changed since is refused
    version = st.session_state.get("shown", {}).get((doc_id, FINAL), final.version)
    try:
        if merged:
            merge(project, doc_id, version, keep, pair, reviewer)
            flash(f"Merged {counted(len(keep), 'span')} into the final version.")
        else:
            chosen = first if took_a else second
            accept_copy(project, doc_id, version, chosen, pair, reviewer)
            flash(plain(f"The final version is {chosen}'s."))
        go_on(project, doc_id)
    except ConflictError as exc:
        flash(plain(f"Not saved: {exc}."), "warning")
    except ProjectError as exc:
        flash(plain(f"Not saved: {exc}."), "warning")
    st.rerun()


def _final_version(project: Project, final, reviewer: str, threshold: float) -> None:
    """The final version in the editor, with its undo and reject buttons."""
    doc_id = final.id
    st.markdown("**Final version** (exported and trained on)")
    # the version this tab last showed; a run cut short by a click (Streamlit stops it for the next) never
    # recorded it, and then the version read in this run is taken, as for a merge above
    shown = st.session_state.get("shown", {}).get((doc_id, FINAL), final.version)
    b = st.container(horizontal=True, gap="small")
    if b.button("Undo (u)", key="review_undo", width="content"):
        review_event(project, {"op": "undo", "doc": doc_id, "version": shown}, reviewer)
        st.rerun()
    if b.button("Reject (r)", key="review_reject", width="content"):
        review_event(project, {"op": "reject", "doc": doc_id, "version": shown}, reviewer)
        st.rerun()
    span_editor(
        editor_data(final, project.types, threshold),
        key="editor",
        on_event=lambda event: review_event(project, event, reviewer),
    )
    st.session_state.setdefault("shown", {})[(doc_id, FINAL)] = final.version


def go_on(project: Project, doc_id: int) -> None:
    """After a review of ``doc_id`` (merged, a version accepted, rejected): on to the next document awaiting
    review, or a message when none is left."""
    from opinion_tagger.annotation.review import next_to_review

    nxt = next_to_review(project, after=doc_id)
    if nxt is None:
        flash("Every document ready for review is reviewed.", "info")
    else:
        st.session_state["pending_review"] = nxt


def review_event(project: Project, event: dict, reviewer: str) -> None:
    """An edit of the final version (the editor's keys, the buttons): saved as the annotator view saves one;
    accepting or rejecting the document, or "next", goes on to the next document awaiting review."""
    from opinion_tagger.annotation.review import FINISHED, next_to_review

    handle(project, event, reviewer)
    st.session_state.pop("pending_doc", None)  # the next unfinished document overall: not the review's next
    op, doc_id = (event.get("op"), event.get("doc")) if isinstance(event, dict) else (None, None)
    if not isinstance(doc_id, int) or isinstance(doc_id, bool):
        return
    if op == "next":
        st.session_state["pending_review"] = next_to_review(project, after=doc_id)
    elif op in ("accept", "reject") and project.document(doc_id).status in FINISHED:
        go_on(project, doc_id)


@st.cache_data(show_spinner=False, max_entries=8)
def _agreement_rows(path: str, state: tuple) -> list[dict]:
    """Agreement of the project at ``path`` (recomputed when its copies change: ``state``)."""
    from opinion_tagger.annotation.agreement import agreement

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
