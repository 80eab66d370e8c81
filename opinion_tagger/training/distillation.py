"""Distillation, for both trainers: a teacher bundle's tag probabilities on the training sentences, and noisy
copies of those sentences for the teacher to tag (``with_teacher`` puts them together)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from opinion_tagger.errors import TaggerError
from opinion_tagger.sentences import Sentence, Token

if TYPE_CHECKING:
    from opinion_tagger.config import TaggerConfig


def without_teacher(config: TaggerConfig) -> TaggerConfig:
    """A bundle's configuration as training continues from it (``train --init-from``, ``adapt``): its distillation
    (the teacher it learnt from, the teacher's share of the loss, the noisy copies) says how the bundle was trained,
    not how training goes on from it, so it is left behind: the new training learns from its own data, and needs no
    teacher bundle, unless it names one itself."""
    return config.replace(
        {"training.distillation.teacher": None, "training.distillation.weight": 0.0, "training.distillation.copies": 0}
    )


def teacher_targets(
    bundle: str | Path, sentences: Sequence[Sentence], types: Sequence[str], record: dict | None = None
):
    """Distillation: each sentence's tag probabilities (O, B, I) under the teacher bundle, per type (a CRF
    teacher's marginals), and the teacher's training-data record (what meta.json says it was trained on, without
    its document lists).  Where both the teacher's meta.json and the run's ``record`` list their documents, a
    teacher trained on any of the run's dev or test documents is refused."""
    from opinion_tagger.runtime.sentence_tagger import SentenceTagger

    if not Path(bundle).is_dir():
        raise TaggerError(f"{bundle}: no such teacher bundle")
    teacher = SentenceTagger.load(bundle)
    missing = [t for t in types if t not in teacher.types]
    if missing:
        raise TaggerError(f"{bundle}: the teacher does not tag {', '.join(missing)}")
    taught = ((teacher.meta or {}).get("training") or {}).get("data") or {}
    run = ((record or {}).get("data") or {}).get("documents") or {}
    # the documents by name where the record lists them (an annotation project's record counts them)
    held_out = {n for part in ("dev", "test") if isinstance(run.get(part), list) for n in run[part]}
    seen = sorted(set((taught.get("documents") or {}).get("train", ())) & held_out)
    if seen:
        raise TaggerError(
            f"{bundle}: the teacher was trained on {len(seen)} of this run's dev and test documents ({seen[0]}, ...)"
        )
    dists = teacher.distributions([s.words for s in sentences])
    soft = {t: [np.asarray(d[t], dtype="float32") for d in dists] for t in types}
    return soft, {k: v for k, v in taught.items() if k != "documents"} or None


def noisy_copies(
    sentences: Sequence[Sentence], copies: int, noise: float, seed: int, style: str = "words"
) -> list[Sentence]:
    """Distillation's extra training text: ``copies`` copies of each sentence, which have no tags (the teacher
    gives them theirs).  ``words`` is the augmentation of Tang et al., 2019 ("Distilling task-specific knowledge
    from BERT into simple neural networks", in its form without a part-of-speech tagger): each word replaced at
    rate ``noise`` by a word drawn from all the sentences' words (so at their frequencies).  ``genres`` rewrites
    each copy as text of other genres reads (``genre_copy``)."""
    rng = np.random.default_rng([seed, 1 << 21])
    pool = [w for s in sentences for w in s.words]
    out = []
    for _ in range(copies):
        for s in sentences:
            if style == "genres":
                words = genre_copy(s.words, noise, rng)
            else:
                swap = rng.random(len(s)) < noise
                draws = rng.integers(len(pool), size=len(s))
                words = [pool[d] if sw else w for w, sw, d in zip(s.words, swap, draws)]
            out.append(Sentence([Token(w, 0, 0) for w in words], doc=s.doc, index=s.index))
    return out


# Fillers of conversation, as spaCy tokenizes them; and third-person pronouns in the first and second person.
FILLERS = (("uh",), ("um",), ("you", "know"), ("i", "mean"), ("well",), ("yeah",), ("like",), ("oh",))
PERSONS = (
    {"he": "I", "she": "I", "him": "me", "his": "my", "her": "my", "himself": "myself", "herself": "myself",
     "they": "we", "them": "us", "their": "our", "theirs": "ours", "themselves": "ourselves"},
    {"he": "you", "she": "you", "him": "you", "his": "your", "her": "your", "himself": "yourself",
     "herself": "yourself", "they": "you", "them": "you", "their": "your", "theirs": "yours",
     "themselves": "yourselves"},
)  # fmt: skip


def genre_copy(words: Sequence[str], fillers: float, rng: np.random.Generator) -> list[str]:
    """A sentence as another genre might have it (never empty): half the time in the first or second person
    (third-person pronouns replaced: *he said* as *I said* or *you said*), half the time as speech is transcribed
    (lower case, no punctuation), and a filler of speech (*uh*, *you know*, ...) before each word at rate
    ``fillers``."""
    out = list(words)
    if rng.random() < 0.5:
        persons = PERSONS[int(rng.integers(len(PERSONS)))]
        out = [_cased(persons[w.lower()], w) if w.lower() in persons else w for w in out]
    transcribed = rng.random() < 0.5
    if transcribed:
        out = [w.lower() for w in out if any(c.isalnum() for c in w)] or [w.lower() for w in out]
    said: list[str] = []
    for w in out:
        if rng.random() < fillers:
            filler = FILLERS[int(rng.integers(len(FILLERS)))]
            said.extend(filler if transcribed or said else (filler[0].capitalize(), *filler[1:]))
        said.append(w)
    return said


def _cased(word: str, like: str) -> str:
    """``word`` capitalized as ``like`` is (*I* always capital)."""
    return word.capitalize() if like[:1].isupper() or word == "I" else word


def with_teacher(
    train: Sequence[Sentence], bundle: str | Path, config, record: dict | None = None, progress: bool = False
) -> tuple[list[Sentence], dict[str, list[np.ndarray]], dict]:
    """The training sentences with the configuration's noisy copies after them, each sentence's tag
    probabilities under the teacher per type (``teacher_targets``), and what the bundle's record keeps of the
    teacher.  The copies' tags are the teacher's likeliest tag per word."""
    from opinion_tagger.runtime.batching import decode_tags
    from opinion_tagger.training.progress import say

    d = config.training.distillation
    copies = noisy_copies(train, d.copies, d.noise, config.training.seed, d.style)
    sentences = list(train) + copies
    say(f"teacher {bundle}: tagging {len(sentences)} sentences ({len(copies)} noisy copies)", progress)
    soft, trained_on = teacher_targets(bundle, sentences, config.types, record)
    for k, s in enumerate(copies, start=len(train)):
        s.tags = {t: decode_tags(soft[t][k].argmax(-1).tolist(), t) for t in config.types}
    return sentences, soft, {"bundle": str(bundle), "data": trained_on, "copies": len(copies)}
