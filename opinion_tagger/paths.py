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


BUNDLED = Path(__file__).resolve().parent / "models"  # the bundled models, one directory each
DEFAULT_NAME = "accurate"  # the model taken when none is named; "default" names it too


def bundled_models() -> list[str]:
    """The names of the models shipped inside the package (``fast``, ``accurate``, ...)."""
    return sorted(p.name for p in BUNDLED.iterdir() if (p / "meta.json").is_file()) if BUNDLED.is_dir() else []


def bundles_in(directory: str | Path) -> list[Path]:
    """The model bundles in ``directory`` (its subdirectories with a ``meta.json``), in name order; none when
    it is not a directory."""
    root = Path(directory)
    if not root.is_dir():
        return []
    return sorted((p for p in root.iterdir() if (p / "meta.json").is_file()), key=lambda p: p.name)


def model_choices(models_dir: str | Path | None = None) -> dict[str, str]:
    """The models to choose from (the annotator page's model box): ``{value: label}``, every bundled model by
    its name (the default first), then the bundles in ``models_dir`` (if given) by their path, labelled
    with their name and directory."""
    names = bundled_models()
    choices = {
        n: n + (" (default)" if n == DEFAULT_NAME else "") for n in sorted(names, key=lambda n: n != DEFAULT_NAME)
    }
    for bundle in bundles_in(models_dir) if models_dir else []:
        choices[str(bundle)] = f"{bundle.name} ({bundle.parent.name}/)"
    return choices


def default_model() -> Path:
    """The model taken when none is named: the bundled ``accurate`` model (``$OPINION_TAGGER_MODEL``
    overrides it)."""
    env = os.environ.get("OPINION_TAGGER_MODEL")
    return Path(env) if env else BUNDLED / DEFAULT_NAME


def resolve_model(spec: str | Path | None) -> Path:
    """A model bundle from the name of a bundled model (``fast``, ``accurate``, ...; ``default`` is the default
    model) or a bundle's path; None means the default model.  A bare name (a string without a path separator)
    that names a bundled model is that model, whatever the working directory holds; anything else is a path:
    ``./fast`` or ``models/fast`` for a folder of that name, a ``Path`` always."""
    if spec is None:
        return default_model()
    if isinstance(spec, str) and not any(sep in spec for sep in ("/", os.sep, os.altsep or "/")):
        if spec == "default":
            return default_model()
        if spec.replace("-", "").replace("_", "").isalnum() and (BUNDLED / spec).is_dir():
            return BUNDLED / spec
    return Path(spec)  # loading reports "model bundle not found" with the path
