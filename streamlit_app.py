"""The annotator page: ``streamlit run streamlit_app.py`` (choose a project in the page),
or ``opinion-tagger annotate serve PROJECT``.  The page lives in ``opinion_tagger.annotation.app``."""

from opinion_tagger.annotation.app import main

main()
