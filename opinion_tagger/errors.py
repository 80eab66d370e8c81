"""Errors and the record of skipped or repaired input items."""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field

from opinion_tagger.wording import counted

log = logging.getLogger("opinion_tagger")


class TaggerError(Exception):
    """A user-facing error: its message is one line that names the culprit."""


class CorpusError(TaggerError):
    pass


class BundleError(TaggerError):
    pass


class ConfigError(TaggerError, ValueError):
    """A configuration that is not one: one line naming the field by its path, the value and what is wrong
    (``training.batch_size: "32" is not an integer``)."""


class TrainingDiverged(TaggerError):
    """The training loss became infinite or NaN (``epoch``: where)."""

    def __init__(self, message: str, epoch: int):
        super().__init__(message)
        self.epoch = epoch


@dataclass
class Problems:
    """Every input item that was skipped (or read with a repair), with a reason.

    Nothing is dropped silently: readers call ``add`` and the CLI prints the
    counts (``summary``) and, with ``--verbose``, every message.
    """

    messages: list[tuple[str, str, bool]] = field(default_factory=list)

    def add(self, kind: str, message: str, skipped: bool = True) -> None:
        self.messages.append((kind, message, skipped))
        log.warning(message)

    @property
    def counts(self) -> dict[str, int]:
        return dict(Counter(kind for kind, _, _ in self.messages))

    def counts_by(self, skipped: bool) -> dict[str, int]:
        return dict(Counter(kind for kind, _, s in self.messages if s == skipped))

    @property
    def n_skipped(self) -> int:
        return sum(1 for _, _, skipped in self.messages if skipped)

    def summary(self) -> str:
        """``1 binary document, 2 malformed lines``: each kind counted, in the plural but for one."""
        if not self.messages:
            return "no problems"
        return ", ".join(counted(n, kind, PLURAL_KINDS.get(kind, kind)) for kind, n in sorted(self.counts.items()))


# the plural of each kind of problem the corpus readers record that has one (the others read alike for any count)
PLURAL_KINDS = {
    "binary document": "binary documents",
    "empty sentence": "empty sentences",
    "malformed line": "malformed lines",
    "missing document": "missing documents",
    "offset outside text": "offsets outside text",
}


class InvalidText(TaggerError, ValueError):
    """A text that ``check_text`` refuses, given to ``OpinionTagger.tag``."""
