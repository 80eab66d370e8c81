"""Irsoy & Cardie's document split: 10 folds of 360 train / 40 test documents
and one dev set, the same in every fold: the listed documents that are in
neither the train nor the test list (135 documents)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from opinion_tagger.corpus.mpqa import read_doclist
from opinion_tagger.errors import CorpusError

N_FOLDS = 10


@dataclass(frozen=True)
class Split:
    fold: int
    train: tuple[str, ...]
    dev: tuple[str, ...]
    test: tuple[str, ...]

    def part(self, name: str) -> tuple[str, ...]:
        if name not in ("train", "dev", "test"):
            raise ValueError(f"unknown split part {name!r}")
        return getattr(self, name)


def _names(path: Path) -> list[str]:
    if not path.is_file():
        raise CorpusError(f"{path}: split file not found")
    return read_doclist(path)


def load_split(datasplit: str | Path, fold: int) -> Split:
    """The train/dev/test documents of ``fold`` (0..9)."""
    root = Path(datasplit)
    if not 0 <= fold < N_FOLDS:
        raise CorpusError(f"fold must be 0..{N_FOLDS - 1}, got {fold}")
    listed = _names(root / "doclist.mpqaOriginalSubset")
    train = _names(root / f"filelist_train{fold}")
    test = _names(root / f"filelist_test{fold}")
    used = set(train) | set(test)
    dev = [d for d in listed if d not in used]
    overlap = set(train) & set(test)
    if overlap:
        raise CorpusError(f"{root}: fold {fold} has {len(overlap)} documents in both train and test")
    return Split(fold, tuple(train), tuple(dev), tuple(test))
