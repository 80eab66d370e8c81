"""Where the shared corpora are found by default."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def shared_dir() -> Path:
    """``$OPINION_TAGGER_SHARED``, else ``../shared`` beside the checkout, else ``./../shared``."""
    env = os.environ.get("OPINION_TAGGER_SHARED")
    if env:
        return Path(env)
    for cand in (REPO_ROOT.parent / "shared", Path.cwd().parent / "shared", Path.cwd() / "shared"):
        if cand.is_dir():
            return cand
    return REPO_ROOT.parent / "shared"


def default_mpqa() -> Path:
    return shared_dir() / "mpqa-2.0-original" / "database.mpqa.2.0"


def default_reference() -> Path:
    return shared_dir() / "irsoy-cardie-2014"


def default_datasplit() -> Path:
    return default_reference() / "datasplit"


def default_model() -> Path:
    """The model bundle shipped inside the package (``$OPINION_TAGGER_MODEL`` overrides it)."""
    env = os.environ.get("OPINION_TAGGER_MODEL")
    return Path(env) if env else Path(__file__).resolve().parent / "models" / "default"
