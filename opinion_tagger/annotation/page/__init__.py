"""The annotator page's parts (``opinion_tagger.annotation.app`` puts them together): what the views
share in showing things (``display``), the cached project and model (``resources``), who is
annotating (``login``), the sidebar's project chooser and search (``sidebar``), saving an edit
from the editor's keys and the page's buttons (``actions``), the annotator's document view
(``annotate_view``) with its spans' table and attributes form (``spans_view``), the reviewer's view and
the agreement table (``review_view``) with the review's form (``review_form``), and the project's documents
in and out: import, export and the model's scores (``project_data``)."""
