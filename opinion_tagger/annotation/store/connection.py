"""The project file: its SQLite connection, the lock that makes it safe to share between
threads, transactions, and the ``meta`` table."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Self

from opinion_tagger.annotation.store.records import ProjectError
from opinion_tagger.annotation.store.schema import open_schema


class Connection:
    """A project's SQLite file, opened (created, or migrated forward), with a lock shared by its threads."""

    def __init__(self, path: str | Path, create: bool = False, types: Sequence[str] = ("DSE", "ESE")):
        self.path = Path(path)
        if not create and not self.path.is_file():
            raise ProjectError(f"{self.path}: no such project file (import documents to create one)")
        if self.path.exists() and not self.path.is_file():
            raise ProjectError(f"{self.path}: not a file")
        if create:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        try:
            self.db = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=FULL")
            with self._transaction():
                open_schema(self.db, self.path, types)
            self.db.execute("PRAGMA foreign_keys=ON")
            self.types = tuple(json.loads(self._meta("types")))
        except sqlite3.DatabaseError as exc:
            raise ProjectError(f"{self.path}: not an annotation project ({exc})") from None

    def schema_version(self) -> int:
        with self._lock:
            return int(self._meta("schema_version"))

    def close(self) -> None:
        with self._lock:
            self.db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @contextmanager
    def _transaction(self):
        with self._lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield self.db
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")

    def _meta(self, key: str) -> str:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        if row is None:
            raise ProjectError(f"{self.path}: not an annotation project (no {key} in its meta table)")
        return row[0]

    def check(self) -> str:
        """SQLite's integrity check ("ok" when the file is sound)."""
        with self._lock:
            return self.db.execute("PRAGMA integrity_check").fetchone()[0]
