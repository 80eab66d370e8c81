"""Counts in messages: ``counted(1, "record")`` is "1 record", ``counted(2, "record")`` "2 records"."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and ``noun``, in the plural (``plural``, default ``noun`` + "s") unless ``n`` is 1."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
