"""The commit of the code a trained bundle or a result came from."""

from __future__ import annotations

import os
import subprocess

from opinion_tagger.paths import REPO_ROOT


def git_commit() -> str:
    """HEAD of the checkout this package runs from, with ``+dirty`` for local changes.  Outside git
    (a copy of the tree on another machine): ``$OPINION_TAGGER_GIT_COMMIT`` with " (copy)", else "unknown"."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        return head + ("+dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        given = os.environ.get("OPINION_TAGGER_GIT_COMMIT")
        return f"{given} (copy)" if given else "unknown"
