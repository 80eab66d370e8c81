"""Summaries of cross-validation results and paired comparisons between configurations: the statistics a
report on experiments is built from (``experiments.cross_validation`` writes the results: one JSON record per
configuration and fold), and reading them back."""

from __future__ import annotations

import json
import math
import statistics
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING

from opinion_tagger.errors import TaggerError

if TYPE_CHECKING:
    from opinion_tagger.config import TaggerConfig

DIVERGED_FILE = "diverged-fold{fold}.json"  # beside a configuration's results: a fold no seed could train


def mean_std(values: list[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (0 for a single value)."""
    return statistics.mean(values), statistics.stdev(values) if len(values) > 1 else 0.0


def summarise(results: list[dict]) -> dict:
    """(name, type) -> summary with means/stds of test scores over folds."""
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in results:
        for t, s in r["scores"]["test"].items():
            groups[(r["name"], t)].append({"r": r, "s": s, "dev": r["scores"]["dev"].get(t)})
    out = {}
    for (name, t), rows in groups.items():
        r0 = rows[0]["r"]
        metric = {}
        for m in ("proportional", "binary", "exact"):
            for k in ("precision", "recall", "f1"):
                metric[(m, k)] = mean_std([100 * x["s"][m][k] for x in rows])
        dev = [100 * x["dev"]["proportional"]["f1"] for x in rows if x["dev"]]
        metric[("dev", "f1")] = mean_std(dev) if dev else (float("nan"), 0.0)
        secs = [x["r"].get("train_seconds") or 0 for x in rows]
        out[(name, t)] = {
            "name": name,
            "type": t,
            "kind": r0["kind"],
            "config": result_config(r0),
            "dev_reports": [x["dev"] for x in rows],
            "records": [x["r"] for x in rows],
            "data": r0["data"]["source"],
            "folds": sorted(x["r"]["fold"] for x in rows),
            "metric": metric,
            "train_seconds": sum(secs),
            "devices": sorted({x["r"].get("device", "?") for x in rows}),
            "choices": r0.get("choices", ""),
        }
    return out


def fmt_mean_std(ms: tuple[float, float], n: int = 2) -> str:
    """The mean and std as "mean ± std" in points; the mean alone for a single fold (``n``)."""
    return f"{ms[0]:.2f} ± {ms[1]:.2f}" if n > 1 else f"{ms[0]:.2f}"


def sign_test(wins: int, losses: int) -> float:
    """Two-sided exact sign test: the probability, with wins and losses equally likely, of a split at
    least as uneven as ``wins``:``losses`` (ties left out beforehand)."""
    n = wins + losses
    if n == 0:
        return 1.0
    k = min(wins, losses)
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2**n)


def fold_scores(s: dict, metric: str = "proportional") -> dict[int, float]:
    """Test F1 (%) of a summary's type, per fold."""
    return {r["fold"]: 100 * r["scores"]["test"][s["type"]][metric]["f1"] for r in s["records"]}


def paired(base: dict, other: dict) -> dict | None:
    """``other`` minus ``base`` in test proportional F1 (points), over the folds both have run: the mean and
    std of the differences, wins / losses of ``other`` and the exact sign test; None with fewer than 2 folds."""
    a, z = fold_scores(base), fold_scores(other)
    common = sorted(set(a) & set(z))
    if len(common) < 2:
        return None
    diffs = [z[k] - a[k] for k in common]
    wins, losses = sum(x > 0 for x in diffs), sum(x < 0 for x in diffs)
    return {
        "folds": len(common),
        "mean": statistics.mean(diffs),
        "std": statistics.stdev(diffs),
        "wins": wins,
        "losses": losses,
        "p": sign_test(wins, losses),
    }


def load_results(results: Path) -> list[dict]:
    """Every result under ``results`` (``<name>/fold<k>.json``), by name and fold."""
    out = []
    for p in sorted(results.glob("*/fold*.json")):
        try:
            out.append(json.loads(p.read_text()))
        except json.JSONDecodeError as exc:
            raise TaggerError(f"{p}: corrupt result file: {exc}") from None
    return out


def load_diverged(results: Path) -> list[dict]:
    """The records of the folds whose every seed diverged (``experiments.cross_validation``), by name and fold."""
    out = []
    for p in sorted(results.glob(f"*/{DIVERGED_FILE.format(fold='*')}")):
        try:
            out.append(json.loads(p.read_text()))
        except json.JSONDecodeError as exc:
            raise TaggerError(f"{p}: corrupt record: {exc}") from None
    return out


def result_config(result: dict) -> TaggerConfig | dict:
    """A result's configuration (a TaggerConfig, whichever version wrote it); a CRF baseline's as stored (its
    task and options)."""
    if result.get("kind") == "crf":
        return result["config"]
    from opinion_tagger.config import TaggerConfig

    return TaggerConfig.from_dict(result["config"])
