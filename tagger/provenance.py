"""What a result records about where it came from."""

from __future__ import annotations

import platform
import subprocess

from tagger.paths import REPO_ROOT


def git_commit() -> str:
    """HEAD of the checkout this package runs from, with ``+dirty`` for local changes; "unknown" outside git."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True,
                              timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO_ROOT,
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return head + ("+dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def machine() -> str:
    return f"{platform.machine()} {platform.system()}, Python {platform.python_version()}"
