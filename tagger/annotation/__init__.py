"""Annotation projects: a SQLite store of documents and spans with provenance
(``store``), importing and pre-annotating documents (``importing``), exporting
them and their statistics (``exporting``), accepted documents as training data
(``dataset``), inter-annotator agreement (``agreement``), the review of annotators' copies
(``review``), the span editor component (``editor``) and the Streamlit page (``app``)."""
