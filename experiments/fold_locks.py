"""A lock file per unit of work (a cross-validation fold), so that two jobs started on the same work share it
out instead of both doing it: created atomically, holding its owner's pid, taken over when that process has
died."""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path

from opinion_tagger.errors import TaggerError


@contextmanager
def claim_fold(lock: Path):
    """Hold ``lock`` while one fold runs, so that two jobs started on the same
    configurations share out its folds instead of both training one.  Yields
    None when this process holds it, else the pid of the live process that does;
    a lock left by a process that has died is taken over."""
    lock.parent.mkdir(parents=True, exist_ok=True)
    if not _create(lock):
        owner = _owner(lock)
        if owner is not None:
            yield owner
            return
        lock.unlink(missing_ok=True)  # stale: its process is gone
        if not _create(lock):
            raise TaggerError(f"{lock}: another job took this fold's lock at the same moment")
    try:
        yield None
    finally:
        lock.unlink(missing_ok=True)


def _create(lock: Path) -> bool:
    """Atomically create ``lock`` holding this pid; False if it exists."""
    tmp = lock.with_name(f"{lock.name}.{os.getpid()}.tmp")
    tmp.write_text(str(os.getpid()))
    try:
        os.link(tmp, lock)
        return True
    except FileExistsError:
        return False
    finally:
        tmp.unlink(missing_ok=True)


def _owner(lock: Path) -> int | None:
    """The pid in ``lock`` if that process is alive (and not this one)."""
    try:
        pid = int(lock.read_text().strip() or 0)
    except (OSError, ValueError):
        return None
    if pid <= 0 or pid == os.getpid():
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass
    return pid
