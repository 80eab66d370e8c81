"""Files that must survive a crash: atomic writes and sha256 manifests.

Every file is written to a temporary name in its own directory, flushed and
fsynced, then renamed over the target (``os.replace``, atomic on POSIX), and the
directory is fsynced so the rename itself is durable.  A reader therefore sees
either the old file or the new one, never a truncated one.

A *manifest* maps plain file names (no directories: nothing outside the
directory is ever read through it) to their size and sha256.  Writers record it
last; ``verify_manifest`` tells a complete set of files from one that a crash or
an edit left behind.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path


def fsync_dir(path: str | Path) -> None:
    """Make renames and deletions inside ``path`` durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def fsync_file(path: str | Path) -> None:
    with open(path, "rb+") as fh:
        os.fsync(fh.fileno())


def temp_name(path: str | Path) -> Path:
    """A hidden temporary name beside ``path`` that keeps its suffixes (``model.keras`` ->
    ``.model.tmp-<id>.keras``): Keras picks the file format from the name."""
    path = Path(path)
    stem, dot, rest = path.name.partition(".")
    return path.with_name(f".{stem}.tmp-{uuid.uuid4().hex[:12]}{dot}{rest}")


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yields a temporary path to write ``path``'s new content to (by any writer that takes a
    path, such as ``model.save``); on success it is fsynced and renamed over ``path``, on an
    exception removed."""
    path = Path(path)
    tmp = temp_name(path)
    try:
        yield tmp
        fsync_file(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()


def atomic_write_text(path: str | Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_copy(src: str | Path, dst: str | Path) -> None:
    with atomic_path(dst) as tmp:
        shutil.copyfile(src, tmp)


def remove_tree(path: str | Path) -> None:
    """Delete a directory and make the deletion durable."""
    path = Path(path)
    shutil.rmtree(path, ignore_errors=True)
    fsync_dir(path.parent)


def sha256_file(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def sha256_file_once(path: str | Path) -> str:
    """``sha256_file``, computed once a process for the same path, size and modification time: for the large
    pinned files checked at every load (a process that loads an encoder again does not re-read them)."""
    stat = Path(path).stat()
    return _sha256_once(str(path), stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=8)
def _sha256_once(path: str, size: int, mtime_ns: int) -> str:  # size and mtime: the cache key
    return sha256_file(path)


def make_manifest(directory: str | Path, names: Iterable[str]) -> dict[str, dict]:
    """``{name: {"bytes": size, "sha256": hex}}`` for files of ``directory``."""
    directory = Path(directory)
    return {
        name: {"bytes": (directory / name).stat().st_size, "sha256": sha256_file(directory / name)} for name in names
    }


def manifest_problem(directory: str | Path, manifest) -> str | None:
    """None when every file of ``manifest`` is in ``directory`` with its recorded size and
    hash; else one line naming the first file that is not."""
    directory = Path(directory)
    if not isinstance(manifest, dict) or not manifest:
        return f"{directory}: the manifest is empty or not a mapping"
    for name, entry in manifest.items():
        if not isinstance(name, str) or Path(name).name != name or name in (".", ".."):
            return f"{directory}: the manifest names {name!r}, which is not a plain file name"
        file = directory / name
        if not isinstance(entry, dict) or not {"bytes", "sha256"} <= set(entry):
            return f"{file}: the manifest entry is malformed"
        if not file.is_file():
            return f"{file}: missing (listed in the manifest)"
        size = file.stat().st_size
        if size != entry["bytes"]:
            return f"{file}: {size} bytes, the manifest says {entry['bytes']} (truncated or changed)"
        if sha256_file(file) != entry["sha256"]:
            return f"{file}: sha256 differs from the manifest (the file was changed)"
    return None
