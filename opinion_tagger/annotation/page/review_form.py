"""The review's form: every span of the two copies compared (and, once the document is reviewed, of its final
version) as a checkbox, then merge the ticked spans or accept one annotator's version.  A review that would
remove spans from a reviewed final version asks first; after a review the page stays on the document."""

from __future__ import annotations

import streamlit as st

from opinion_tagger.annotation.page.display import flash, plain
from opinion_tagger.annotation.store import FINAL, Document, Project, ProjectError
from opinion_tagger.wording import counted

CONFIRM = "_review_confirm"  # a review waiting for the reviewer's word: it would remove spans of the final version


def review_form(project: Project, final: Document, pair: list[str], reviewer: str) -> None:
    """The checkboxes and the buttons for ``final``'s document, comparing the copies of ``pair``; then the
    question, when a review would remove spans of the final version."""
    from opinion_tagger.annotation.review import candidates, copy_keys, dropped, ticked

    doc_id, (first, second) = final.id, pair
    reviewed = final.review is not None
    cands = candidates(project, doc_id, pair)
    start = ticked(cands, pair, reviewed)
    with st.form(f"merge_{doc_id}_{first}_{second}", border=True):
        st.markdown(
            "**Spans of the two copies and of the final version**: ticked, those the final version has; it keeps "
            "their values as it has them, and a span ticked now takes its polarity, intensity, holder, attitude and "
            "targets from the left copy where it has the span"
            if reviewed
            else "**Spans of the two copies**: tick those the final version keeps (ticked: both made it); a span's "
            "polarity, intensity, holder, attitude and targets are the left copy's where it has the span"
        )
        keep = []
        for cand in cands:  # a checkbox per span (type and tokens), as the final version and the copies hold it now
            frame = cand.frame_text()  # the copies' polarity, intensity, holder, attitude, targets
            tick = st.checkbox(
                f"{cand.key[0]} “{plain(cand.text)}” — {plain(', '.join(cand.by) or 'the final version alone')}"
                + (f" · {plain(frame)}" if frame else ""),
                value=cand.key in start,
                # a new box whenever the final version changes: it starts at what that version holds
                key="keep_{}_{}_{}_{}_{}".format(doc_id, final.version, *cand.key),
            )
            if tick:
                keep.append(cand.key)
        b = st.container(horizontal=True, gap="small")  # buttons as wide as their text, wrapping
        merged = b.form_submit_button("Merge the ticked spans", type="primary", width="content")
        took_a = b.form_submit_button(f"Accept {first}'s version", width="content")
        took_b = b.form_submit_button(f"Accept {second}'s version", width="content")
    if merged or took_a or took_b:
        chosen = None if merged else first if took_a else second
        # the final version as this tab showed it: a review on a version changed since is refused
        version = st.session_state.get("shown", {}).get((doc_id, FINAL), final.version)
        action = {"doc": doc_id, "version": version, "keep": keep, "pair": pair, "chosen": chosen}
        try:
            lost = dropped(project, doc_id, keep if chosen is None else copy_keys(project, doc_id, chosen))
        except ProjectError as exc:
            flash(plain(f"Not saved: {exc}."), "warning")
            st.rerun()
        if lost:
            st.session_state[CONFIRM] = {**action, "lost": lost}
        else:
            st.session_state.pop(CONFIRM, None)
            _review(project, action, reviewer)
        st.rerun()
    pending = st.session_state.get(CONFIRM)
    if pending and pending["doc"] == doc_id and pending["version"] != final.version:
        st.session_state.pop(CONFIRM)  # the final version changed since (undone, say): the question is void
    elif pending and pending["doc"] == doc_id and pending["pair"] == pair:
        _confirm(project, pending, reviewer)


def _confirm(project: Project, action: dict, reviewer: str) -> None:
    """Ask before a review that removes spans of the final version: go on, or leave the final version as it is."""
    lost, chosen = action["lost"], action["chosen"]
    what = "Merging the ticked spans" if chosen is None else f"Accepting {chosen}'s version"
    with st.container(border=True, key="review_confirm"):
        st.warning(
            plain(f"{what} removes {counted(len(lost), 'span')} of the final version: {', '.join(lost)}.") + " Go on?"
        )
        b = st.container(horizontal=True, gap="small")
        go = b.button(
            "Merge, removing them" if chosen is None else "Accept, removing them", type="primary", key="review_go"
        )
        if b.button("Keep the final version as it is", key="review_cancel"):
            st.session_state.pop(CONFIRM, None)
            flash("Nothing changed.", "info")
            st.rerun()
    if go:
        st.session_state.pop(CONFIRM, None)
        _review(project, action, reviewer)
        st.rerun()


def _review(project: Project, action: dict, reviewer: str) -> None:
    """Merge or accept a version into the final version; the page stays on the document (Next to review goes
    on); a refused review becomes a message."""
    from opinion_tagger.annotation.review import accept_copy, merge

    doc_id, version, pair, chosen = action["doc"], action["version"], action["pair"], action["chosen"]
    try:
        if chosen is None:
            keep = [tuple(k) for k in action["keep"]]
            merge(project, doc_id, version, keep, pair, reviewer)
            flash(f"Merged {counted(len(keep), 'span')} into the final version: correct it below, or go on.")
        else:
            accept_copy(project, doc_id, version, chosen, pair, reviewer)
            flash(plain(f"The final version is {chosen}'s: correct it below, or go on."))
    except ProjectError as exc:  # (ConflictError too: a final version changed since)
        flash(plain(f"Not saved: {exc}."), "warning")
