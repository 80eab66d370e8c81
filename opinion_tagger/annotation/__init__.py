"""Annotation projects: a SQLite store of documents and spans with provenance (``store``,
a module per layer of ``Project``), importing and pre-annotating documents (``importing``),
exporting them and their statistics (``exporting``), accepted documents as training data
(``dataset``), inter-annotator agreement (``agreement``), the review of annotators' copies
(``review``), the span editor component (``editor``), serving the page (``serving``) and
the Streamlit page (``app``, put together from its parts in ``page``)."""
