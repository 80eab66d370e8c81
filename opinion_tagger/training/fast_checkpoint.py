"""Checkpoints of the fast trainer: a run killed part-way continues from its last dev evaluation.

Each model of a run (one fold, or one of several folds trained together) keeps its own checkpoints
in the layout of the Keras trainer's (``opinion_tagger.training.checkpoints``)::

    out_dir/checkpoint/epoch-NNNN/
        arrays.npz     the model's weights, optimizer state and best weights so far (no pickle)
        state.json     epoch, best score and epoch, patience count, history, training seconds, config
        manifest.json  written last: size and sha256 of the two files above

A checkpoint is written after each dev evaluation (every ``eval_every`` epochs), every file
atomically; one whose manifest is missing or does not verify (a kill during the save, a damaged
disk) is skipped, and the two newest complete ones are kept.  The trainer's random state is a
function of (seed, epoch) and each model's weights are restored exactly, so a resumed run repeats
the uninterrupted one.  Models trained together resume together, from the newest epoch that all of
them have complete: their weights are stacked into one program.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from opinion_tagger.config import TaggerConfig
from opinion_tagger.errors import TaggerError
from opinion_tagger.storage import atomic_path, atomic_write_text, remove_tree
from opinion_tagger.training.checkpoints import (
    KEEP_CHECKPOINTS,
    announce,
    check_same_run,
    checkpoint_dirs,
    checkpoint_problem,
    new_checkpoint_dir,
    seal_checkpoint,
)

FILES = ("arrays.npz", "state.json")
PARTS = ("params", "opt", "best")  # the array trees a checkpoint holds, as flat leaf lists


def save(
    out_dir: str | Path, epoch: int, leaves: dict[str, list[np.ndarray] | None], state: dict, config: TaggerConfig
) -> None:
    """Write ``out_dir/checkpoint/epoch-NNNN/`` (``leaves``: per part of ``PARTS`` the flat list of arrays,
    None for a part the model does not have yet) and remove all but the ``KEEP_CHECKPOINTS`` newest."""
    d = new_checkpoint_dir(out_dir, epoch)
    arrays: dict[str, Any] = {
        f"{part}/{i}": np.asarray(a) for part in PARTS for i, a in enumerate(leaves.get(part) or ())
    }
    with atomic_path(d / "arrays.npz") as tmp:
        with open(tmp, "wb") as fh:
            np.savez(fh, **arrays)
    counts = {part: (len(x) if (x := leaves.get(part)) is not None else None) for part in PARTS}
    atomic_write_text(
        d / "state.json", json.dumps({**state, "epoch": epoch, "leaves": counts, "config": config.to_dict()}, indent=1)
    )
    seal_checkpoint(d, FILES)
    for _, old in checkpoint_dirs(out_dir)[KEEP_CHECKPOINTS:]:
        remove_tree(old)


def complete(out_dir: str | Path) -> dict[int, Path]:
    """{epoch: directory} of the checkpoints in ``out_dir`` whose manifest verifies; each incomplete one
    is named in one line and skipped."""
    found = {}
    for epoch, d in checkpoint_dirs(out_dir):
        problem = checkpoint_problem(d, FILES)
        if problem is None:
            found[epoch] = d
        else:
            announce(f"skipping incomplete checkpoint of epoch {epoch}: {problem}")
    return found


def load(where: Path, config: TaggerConfig) -> tuple[dict, dict[str, list[np.ndarray] | None]]:
    """(state, leaves) of one complete checkpoint directory, refused with one line if it was made with
    another configuration or does not read."""
    try:
        state = json.loads((where / "state.json").read_text())
        saved = TaggerConfig.from_dict(state["config"])
        counts = state["leaves"]
        with np.load(where / "arrays.npz", allow_pickle=False) as npz:
            leaves = {
                part: (None if counts[part] is None else [npz[f"{part}/{i}"] for i in range(counts[part])])
                for part in PARTS
            }
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise TaggerError(f"{where}: unreadable checkpoint: {exc}") from None
    check_same_run(saved, config, where.parent)
    return state, leaves


def latest_common(out_dirs: Sequence[str | Path], config: TaggerConfig) -> list[tuple[dict, dict]] | None:
    """The newest epoch that every model of a run has a complete checkpoint of, as [(state, leaves)] in
    the order of ``out_dirs``; None (said in one line) when there is none."""
    per_model = [complete(d) for d in out_dirs]
    shared = set.intersection(*(set(c) for c in per_model)) if per_model else set()
    if not shared:
        if any(per_model):
            announce(
                f"{Path(out_dirs[0]).parent}: no epoch has a complete checkpoint of every model trained "
                "together: starting afresh"
            )
        return None
    epoch = max(shared)
    return [load(c[epoch], config) for c in per_model]
