"""Checkpoint directories, the same for both trainers: ``OUT/checkpoint/epoch-NNNN/``, each verified by
its ``manifest.json`` (written last), the two newest complete ones kept; whether a checkpoint may
continue under a configuration; the resume decisions, always said."""

from __future__ import annotations

import json
import logging
import re
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from opinion_tagger.config import TaggerConfig
from opinion_tagger.errors import TaggerError
from opinion_tagger.storage import atomic_write_text, fsync_dir, make_manifest, manifest_problem, remove_tree

log = logging.getLogger("opinion_tagger")

MANIFEST = "manifest.json"
KEEP_CHECKPOINTS = 2
_EPOCH_DIR = re.compile(r"epoch-(\d+)")


def checkpoint_dirs(out_dir: str | Path) -> list[tuple[int, Path]]:
    """(epoch, directory) of the checkpoints under ``out_dir``, newest first, complete or not."""
    root = Path(out_dir) / "checkpoint"
    found = [(int(m.group(1)), p) for p in root.glob("epoch-*") if (m := _EPOCH_DIR.fullmatch(p.name))]
    return sorted(found, reverse=True)


def checkpoint_problem(d: Path, files: Sequence[str]) -> str | None:
    """None when the checkpoint directory ``d`` is complete: its manifest lists ``files`` and every file
    it lists verifies; else one line saying what is wrong (both trainers' checkpoints)."""
    try:
        manifest = json.loads((d / MANIFEST).read_text())
    except FileNotFoundError:
        return f"{d / MANIFEST}: missing (the save was interrupted)"
    except (OSError, ValueError) as exc:
        return f"{d / MANIFEST}: unreadable ({exc})"
    problem = manifest_problem(d, manifest)
    if problem is None and not set(manifest) >= set(files):
        problem = "files missing from the manifest"
    return problem


def has_checkpoint(out_dir: str | Path) -> bool:
    """Whether an interrupted run left a checkpoint (of this or the older, single-directory format)."""
    return bool(checkpoint_dirs(out_dir)) or (Path(out_dir) / "checkpoint" / "state.json").is_file()


def remove_checkpoint(out_dir: str | Path) -> None:
    shutil.rmtree(Path(out_dir) / "checkpoint", ignore_errors=True)


def new_checkpoint_dir(out_dir: str | Path, epoch: int) -> Path:
    """``out_dir/checkpoint/epoch-NNNN/``, empty (what an interrupted save of this epoch left is removed)."""
    root = Path(out_dir) / "checkpoint"
    d = root / f"epoch-{epoch:04d}"
    remove_tree(d)
    d.mkdir(parents=True)
    fsync_dir(root)
    return d


def seal_checkpoint(d: Path, files: Sequence[str]) -> None:
    """Write the manifest of ``files`` in ``d``, last: from now on the checkpoint is complete."""
    atomic_write_text(d / MANIFEST, json.dumps(make_manifest(d, files), indent=1))


def check_same_run(saved: TaggerConfig, config: TaggerConfig, where: Path) -> None:
    """A checkpoint continues under the configuration it was made with; only the length of training
    (``training.stopping.max_epochs``, ``training.stopping.patience``) may change.  Else one line naming ``where``."""
    length = {"training.stopping.max_epochs": 1, "training.stopping.patience": 1}
    if saved.replace(length) != config.replace(length):
        raise TaggerError(
            f"{where}: the checkpoint was made with another configuration; "
            "resume with the same options or train into a new directory"
        )


def refuse_existing(ckpt: Path) -> None:
    """A run that does not resume never overwrites a checkpoint it did not make."""
    raise TaggerError(f"{ckpt}: a checkpoint exists; pass --resume to continue it or choose another output directory")


def announce(message: str) -> None:
    """Resume decisions are always shown (also with --quiet): they change what the run does."""
    print(message, file=sys.stderr, flush=True)
    log.info(message)
