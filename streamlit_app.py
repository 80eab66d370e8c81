"""Streamlit annotator: tag text with a model bundle, correct the tags, export them.

Run: streamlit run streamlit_app.py   (a thin page over tagger.annotate / tagger.formats)
"""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from tagger.annotate import OpinionTagger, TaggedDocument, apply_tags
from tagger.errors import TaggerError
from tagger.formats import COLORS, conll_lines, render_html
from tagger.inputs import check_text, records_from_bytes
from tagger.paths import default_model

st.set_page_config(page_title="opinion-tagger", layout="wide")


@st.cache_resource(show_spinner="Loading model...")
def load_tagger(path: str) -> OpinionTagger:
    return OpinionTagger.load(path, backend="numpy")


def tag_records(ot: OpinionTagger, records) -> None:
    docs = list(ot.tag_many(records))  # one document per record; those not tagged carry an error
    st.session_state.docs = [d.to_dict() for d in docs if d.error is None]
    st.session_state.errors = [(d.id, d.error) for d in docs if d.error is not None]
    st.session_state.types = list(ot.types)


st.title("opinion-tagger")
st.caption("Finds opinion expressions: DSE (direct subjective expressions) and ESE "
           "(expressive subjective elements). Correct the tags in the table and export them.")

with st.sidebar:
    st.header("Model")
    model_path = st.text_input("Model bundle directory", value=str(default_model()))
    try:
        ot = load_tagger(model_path)
        meta = ot.tagger.meta
        st.success(f"{ot.tagger.config.task} {ot.tagger.config.cell} (depth {ot.tagger.config.depth})")
        test = meta.get("scores", {}).get("fold0_test")
        if test:
            st.caption("Fold-0 test F1 (prop/bin): " + ", ".join(
                f"{t} {100 * r['proportional']['f1']:.1f}/{100 * r['binary']['f1']:.1f}" for t, r in test.items()))
    except TaggerError as exc:
        ot = None
        st.error(f"Cannot load the model: {exc}")

source = st.radio("Input", ["Paste text", "Upload a file"], horizontal=True)
if source == "Paste text":
    text = st.text_area("Text", height=150, key="text",
                        placeholder="Officials said the plan was, as usual, daylight robbery.")
    if st.button("Tag", type="primary", disabled=ot is None):
        tag_records(ot, [check_text("pasted", text or "", 200_000)])
else:
    upload = st.file_uploader("A .txt file (one document) or .jsonl (a \"text\" field per line)",
                              type=["txt", "jsonl"])
    if upload is not None and st.button("Tag file", type="primary", disabled=ot is None):
        tag_records(ot, records_from_bytes(upload.name, upload.getvalue()))

for rid, reason in st.session_state.get("errors", []):
    st.warning(f"Not tagged: {rid}: {reason}")

docs = st.session_state.get("docs", [])
if docs:
    types = tuple(st.session_state.get("types", ["DSE", "ESE"]))
    names = [f"{k + 1}. {d['id']}" for k, d in enumerate(docs)]
    k = st.selectbox("Document", range(len(docs)), format_func=names.__getitem__) if len(docs) > 1 else 0
    doc = TaggedDocument.from_dict(docs[k], types)

    st.markdown(" ".join(f'<span style="background:{COLORS.get(t, "#ddd")};padding:0 6px;border-radius:3px">'
                         f"{t}</span>" for t in types), unsafe_allow_html=True)
    highlighted = st.container(border=True)

    st.subheader("Correct the tags")
    rows = [{"sentence": s_i + 1, "token": t.text, "start": t.start, "end": t.end,
             **{ty: t.tags.get(ty, "O") for ty in types}}
            for s_i, s in enumerate(doc.sentences) for t in s.tokens]
    column_config = {ty: st.column_config.SelectboxColumn(ty, options=["O", f"B-{ty}", f"I-{ty}"], required=True)
                     for ty in types}
    edited = st.data_editor(pd.DataFrame(rows), key=f"editor_{k}", hide_index=True, num_rows="fixed",
                            disabled=["sentence", "token", "start", "end"], column_config=column_config,
                            width="stretch")
    try:
        corrected = apply_tags(doc, edited[list(types)].to_dict("records"))
    except ValueError as exc:
        st.error(f"Invalid correction: {exc}")
        corrected = doc
    docs[k] = corrected.to_dict()

    with highlighted:
        st.markdown(f'<div class="tagged">{render_html(corrected)}</div>', unsafe_allow_html=True)
    st.subheader("Spans")
    if corrected.spans:
        st.dataframe(pd.DataFrame([{"type": s.type, "text": s.text, "start": s.start, "end": s.end,
                                    "confidence": s.score} for s in corrected.spans]),
                     hide_index=True, width="stretch")
    else:
        st.info("No opinion expressions found.")

    st.subheader("Export")
    c1, c2, c3 = st.columns(3)
    c1.download_button("This document (JSONL)", json.dumps(corrected.to_dict(), ensure_ascii=False) + "\n",
                       file_name="annotation.jsonl", mime="application/jsonl")
    c2.download_button("This document (CoNLL)", conll_lines(corrected), file_name="annotation.conll",
                       mime="text/plain")
    c3.download_button(f"All {len(docs)} documents (JSONL)",
                       "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs),
                       file_name="batch.jsonl", mime="application/jsonl")
