"""Progress through an epoch's batches, the same for both trainers: a bar on a terminal, plain lines elsewhere."""

from __future__ import annotations

import logging
import sys
import time

log = logging.getLogger("opinion_tagger")


def epoch_line(epoch: int, loss: float, seconds: float, dev_score: float | None = None, model: str = "") -> str:
    """The line an epoch ends with: its loss and, for a run with dev documents, their proportional F1 (without
    them the score that picks the epoch is the negated loss, not a dev F1, so none is shown)."""
    dev = "" if dev_score is None else f", dev prop F1 {dev_score:.4f}"
    return f"epoch {epoch}{model}: loss {loss:.4f}{dev}, {seconds:.1f}s"


def say(message: str, progress: bool) -> None:
    """A trainer's line: above the bar (``tqdm.write``) when progress is shown, and to the log."""
    if progress:
        from tqdm.auto import tqdm

        tqdm.write(message)
    log.info(message)


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced or closed
        return False


class EpochProgress:
    """Progress through one epoch's batches.  On a terminal, a tqdm bar that starts after the
    first batch (which includes compiling the step, so it does not inflate the estimate) and
    averages the speed over the epoch (``smoothing=0.1``).  Elsewhere (stderr redirected to a
    file or a pipe) no bar frames: a plain line every ``every`` seconds; the trainer prints a
    line per epoch."""

    def __init__(self, batches, epoch: int, enabled: bool = True, every: float = 60.0):
        self.batches, self.epoch, self.every = list(batches), epoch, every
        self.enabled = enabled
        self.bar = None
        self.postfix: dict[str, object] = {}

    def set_postfix(self, **values) -> None:
        self.postfix = values
        if self.bar is not None:
            self.bar.set_postfix(**values)

    def __iter__(self):
        if not self.enabled or not self.batches:
            yield from self.batches
        elif _stderr_is_terminal():
            yield from self._bar()
        else:
            yield from self._lines()

    def _bar(self):
        from tqdm.auto import tqdm

        yield self.batches[0]
        self.bar = tqdm(
            self.batches[1:],
            desc=f"epoch {self.epoch}",
            unit="batch",
            leave=False,
            smoothing=0.1,
            initial=1,
            total=len(self.batches),
            postfix=self.postfix or None,
        )
        yield from self.bar

    def _lines(self):
        n = len(self.batches)
        start = last = time.perf_counter()
        for k, batch in enumerate(self.batches, 1):
            yield batch
            now = time.perf_counter()
            if now - last >= self.every and k < n:
                extra = "".join(f", {key} {value}" for key, value in self.postfix.items())
                print(f"epoch {self.epoch}: {k}/{n} batches, {now - start:.0f}s{extra}", file=sys.stderr, flush=True)
                last = now
