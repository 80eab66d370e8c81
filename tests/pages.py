"""What the annotator page's AppTest modules share: the page's script and invented sentences (no corpus
text) to import into a project."""

from pathlib import Path

APP = str(Path(__file__).resolve().parent.parent / "streamlit_app.py")
TEXTS = [
    "Maria said the new bridge was a complete disaster.",
    "Rain fell on the village all night.",
    "Critics fear the plan will fail, as usual.",
    "Costs rose 50% in the <b>village</b>.",
]
