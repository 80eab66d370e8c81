"""``Project``, the annotation store: one class from its layers (see ``opinion_tagger.annotation.store``)."""

from __future__ import annotations

from opinion_tagger.annotation.store.queries import Queries
from opinion_tagger.annotation.store.team import Team


class Project(Team, Queries):
    """An annotation project: a SQLite file.  Safe to share between threads (one lock);
    several processes may open the same file (SQLite's locking plus versions)."""
