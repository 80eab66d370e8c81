"""opinion-tagger: deep bidirectional RNN taggers for opinion expressions (DSE, ESE)."""

__version__ = "0.1.0"

import os as _os

_os.environ.setdefault("KERAS_BACKEND", "tensorflow")
_os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
