"""Model selection and early stopping, the same for both trainers: the dev score of an evaluation, whether
it is the best so far, and when patience runs out."""

from __future__ import annotations

import numpy as np


def dev_score(report: dict) -> float:
    """Model selection: mean proportional F1 over the tagged types."""
    return float(np.mean([r["proportional"]["f1"] for r in report.values()]))


def patience_counts(best_score: float | None, has_dev: bool) -> bool:
    """Whether an evaluation without a better score counts against the patience.  Not while the best dev
    F1 is still 0: a network that has not left its all-O start (deep ReLU stacks with small initial
    weights can sit there for tens of epochs) is not converged, and the authors' trainer, which never
    stops early, would go on training it; it then trains on to ``max_epochs``."""
    return not has_dev or (best_score is not None and best_score > 0)


def judge(best_score: float | None, bad: int, score: float, has_dev: bool) -> tuple[bool, int]:
    """(whether ``score`` is the best so far, the evaluations since the best that count against the patience)."""
    if best_score is None or score > best_score:
        return True, 0
    return False, bad + patience_counts(best_score, has_dev)


def out_of_patience(patience: int, bad: int) -> bool:
    """Whether training stops early (``patience`` 0: never)."""
    return bool(patience) and bad >= patience
