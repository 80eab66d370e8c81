"""Streamlit annotator for opinion expressions (DSE/ESE).

Placeholder until the application issue lands: the page says what it will do.
"""

import streamlit as st

st.set_page_config(page_title="opinion-tagger", layout="wide")
st.title("opinion-tagger")
st.write(
    "This page will let you paste or upload text, see DSE and ESE opinion expressions "
    "highlighted by a trained model, correct the tags and export them (JSONL, CoNLL). "
    "It is not built yet; use `opinion-tagger corpus ...` on the command line."
)
