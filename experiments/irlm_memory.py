"""What the IRLM learns (issue 36): the memory length 1 / (1 - |d|) of each impulse-response unit (d its learned
decay, tanh of the weight ``decay_raw``), per layer and direction, from trained ``irlm`` bundles, e.g. the folds
that ``run_cv.py experiments/configs/cells.yaml`` leaves in ``experiments/runs/``:

    python -m experiments.irlm_memory experiments/runs/cells-ese-irlm/fold* --out experiments/report/irlm_memory-ese.png

(the report shows each ``irlm_memory*.png`` with its table; bundles of both tasks in one call give one figure with
a row of panels per task).

Prints a line per task, layer and direction (units of all bundles given: median, 90th percentile and largest
memory in words, the share remembering more than 5 words) and draws one panel per task and layer: the
distribution of the units' memory lengths, forward and backward (a unit with d = 0.9 remembers 10 words;
negative d alternates in sign but decays alike).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np


def memory_lengths(model, depth: int) -> dict[tuple[int, str], np.ndarray]:
    """(layer 1..depth, "forward" | "backward") -> each unit's 1 / (1 - |d|) in a Keras irlm network."""
    out = {}
    for k in range(1, depth + 1):
        bi = model.get_layer(f"birnn_{k}")
        for direction, layer in (("forward", bi.forward_layer), ("backward", bi.backward_layer)):
            d = np.tanh(np.asarray(layer.cell.decay_raw, dtype=np.float64))
            out[(k, direction)] = 1.0 / (1.0 - np.abs(d))
    return out


def summary_lines(by_task: dict[str, dict[tuple[int, str], np.ndarray]]) -> list[str]:
    lines = ["| task | layer | direction | units | median | 90th pct | largest | share > 5 words |", "|---" * 8 + "|"]
    for task, lengths in by_task.items():
        for (k, direction), m in sorted(lengths.items()):
            lines.append(
                f"| {task} | {k} | {direction} | {m.size} | {np.median(m):.2f} | {np.percentile(m, 90):.2f} | "
                f"{m.max():.2f} | {np.mean(m > 5):.1%} |"
            )
    return lines


def plot(by_task: dict[str, dict[tuple[int, str], np.ndarray]], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    depth = max(k for lengths in by_task.values() for k, _ in lengths)
    fig, axes = plt.subplots(len(by_task), depth, figsize=(4 * depth, 3 * len(by_task)), squeeze=False)
    top = max(float(m.max()) for lengths in by_task.values() for m in lengths.values())
    bins = np.geomspace(1.0, max(top, 2.0), 30)
    for row, (task, lengths) in enumerate(by_task.items()):
        for k in range(1, depth + 1):
            ax = axes[row][k - 1]
            for direction in ("forward", "backward"):
                if (k, direction) in lengths:
                    ax.hist(lengths[(k, direction)], bins=bins, alpha=0.6, label=direction)
            ax.set_xscale("log")
            ax.set_title(f"{task}, layer {k}")
            ax.set_xlabel("memory 1 / (1 - |d|), words")
            ax.set_ylabel("units")
            ax.legend()
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bundles", nargs="+", type=Path, help="irlm bundle directories (model.keras)")
    ap.add_argument(
        "--out", type=Path, help="write the figure here (PNG), and the table beside it (.md; the report includes both)"
    )
    args = ap.parse_args(argv)
    from opinion_tagger.errors import TaggerError
    from opinion_tagger.model.keras_backend import load_keras_model
    from opinion_tagger.runtime.bundle import load_bundle_files

    by_task: dict[str, dict[tuple[int, str], list[np.ndarray]]] = {}
    for path in args.bundles:
        try:
            _, config, _ = load_bundle_files(path)
        except TaggerError as exc:
            ap.error(str(exc))
        if config.model.recurrent.cell != "irlm":
            ap.error(f"{path}: cell {config.model.recurrent.cell}, not irlm")
        task = "+".join(config.types)
        for key, m in memory_lengths(load_keras_model(path), config.model.recurrent.depth).items():
            by_task.setdefault(task, {}).setdefault(key, []).append(m)
    pooled = {t: {key: np.concatenate(ms) for key, ms in lengths.items()} for t, lengths in by_task.items()}
    table = "\n".join(summary_lines(pooled))
    print(table)
    if args.out:
        plot(pooled, args.out)
        sources = sorted({str(Path(p).parent) for p in args.bundles})
        args.out.with_suffix(".md").write_text(
            f"From {len(args.bundles)} trained bundles ({', '.join(sources)}), "
            f"`python -m experiments.irlm_memory` (units of all bundles pooled per task, layer and direction; "
            "memory in words):\n\n" + table + "\n"
        )
        print(f"wrote {args.out} and {args.out.with_suffix('.md')}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
