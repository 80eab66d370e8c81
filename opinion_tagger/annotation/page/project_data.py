"""The project's documents in and out: import (pasted, uploaded, a directory; pre-annotated by
the model), export (JSONL, CoNLL, BRAT) and the model's scores on the accepted documents."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from opinion_tagger.annotation.page.display import flash, plain
from opinion_tagger.annotation.page.resources import load_tagger
from opinion_tagger.annotation.store import Project
from opinion_tagger.errors import TaggerError
from opinion_tagger.wording import counted

MAX_UPLOAD_BYTES = 50 * 1024 * 1024
EXPORT_HELP = (
    "Ticked (as `annotate export`): the accepted documents, for a document several annotators annotated its "
    "reviewed final version. Unticked: every document but the rejected ones, each with its status."
)


def import_section(project: Project, model: str) -> None:
    from opinion_tagger.annotation.importing import import_records
    from opinion_tagger.tagging.inputs import check_text, records_from_bytes

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
            pre = st.checkbox(f"Pre-annotate with the model ({plain(Path(model).name)})", value=True)
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
            report = import_records(
                project, records, tagger, model_name=Path(model).name if pre else None, overlap=int(overlap)
            )
        flash(plain(report.summary()), "success" if report.imported else "info")
        for rid, reason in report.errors:
            flash(f"Not imported: {plain(rid)}: {plain(reason)}", "warning")
        st.rerun()


def export_section(project: Project) -> None:
    from opinion_tagger.annotation.exporting import DEFAULT_STATUSES, UNREJECTED, export_brat_zip, export_text

    with st.expander("Export", key="exp_export"):
        only_done = st.checkbox(
            "Accepted documents only (a team's: reviewed)", value=True, key="export_done", help=EXPORT_HELP
        )
        rejected = st.checkbox("Include rejected documents", value=False, key="export_rejected")
        statuses = DEFAULT_STATUSES if only_done else UNREJECTED
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
        if st.button(f"Score {plain(Path(model).name)} on the accepted documents", key="score"):
            from opinion_tagger.annotation.accepted import accepted_documents
            from opinion_tagger.evaluation.scoring import evaluate_tagger

            try:
                docs = accepted_documents(project.path)
                tagger = load_tagger(model)
            except TaggerError as exc:
                st.info(plain(exc))
                return
            sentences = [s for sents in docs.values() for s in sents]
            report = evaluate_tagger(tagger.tagger, sentences)
            st.caption(f"{counted(len(docs), 'document')}, {counted(len(sentences), 'sentence')}; percentages")
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
