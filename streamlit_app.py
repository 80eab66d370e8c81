"""The annotator page: ``streamlit run streamlit_app.py`` (choose a project in the page),
or ``opinion-tagger annotate serve PROJECT``.  The page lives in ``tagger.annotation.app``."""

from tagger.annotation.app import main

main()
