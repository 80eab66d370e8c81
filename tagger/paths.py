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


def resolve_model(spec: str | Path | None) -> Path:
    """A model bundle from a directory path or the name of a bundled model (``default``);
    None means the default model.  An existing path wins over a name."""
    if spec is None:
        return default_model()
    path = Path(spec)
    if path.exists():
        return path
    name = str(spec)
    if name == "default":
        return default_model()
    bundled = Path(__file__).resolve().parent / "models"
    if name.replace("-", "").replace("_", "").isalnum() and (bundled / name).is_dir():
        return bundled / name
    return path  # loading reports "model bundle not found" with the path
