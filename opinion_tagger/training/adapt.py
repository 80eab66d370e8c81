"""Adapting a trained bundle to annotated documents of a new genre: training continues from the bundle on the
new documents mixed with a replay of the ones it first learnt from (so that it keeps what it knew), the epoch is
chosen on new documents held out of training, and the bundle's record and card say what it was adapted to."""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING

from opinion_tagger.errors import Problems, TaggerError
from opinion_tagger.wording import counted

if TYPE_CHECKING:  # the settings are read when the command line is built: nothing heavy at import
    from opinion_tagger.config import TaggerConfig
    from opinion_tagger.sentences import Sentence


@dataclass(frozen=True)
class AdaptSettings:
    """How an adaptation trains: ``replay`` news sentences for each new training sentence (0: none), the
    learning rate (constant) and at most ``epochs`` epochs, the best on the held-out documents kept, and one new
    document in ``held_out_every`` held out for that choice.  ``freeze_encoder``: only the recurrent layers and the
    heads learn (the sub-word encoder and the word vectors stay as they are): for ``accurate`` 0.65M of its 5.5M
    trained weights, no gradient through the encoder."""

    replay: float = 3.0
    learning_rate: float = 5e-5
    epochs: int = 3
    held_out_every: int = 5
    seed: int = 1
    optimizer: str = "adam"
    schedule: str = "constant"
    freeze_encoder: bool = False

    @classmethod
    def from_namespace(cls, args) -> AdaptSettings:
        """The settings a parsed command line gives (by field name; those it lacks keep their defaults)."""
        return cls(**{f.name: getattr(args, f.name) for f in fields(cls) if hasattr(args, f.name)})

    def __post_init__(self) -> None:
        if self.replay < 0:
            raise TaggerError(f"--replay {self.replay}: a share of sentences, 0 or more")
        if not 0 < self.learning_rate < 1:
            raise TaggerError(f"--learning-rate {self.learning_rate}: between 0 and 1")
        if self.epochs < 1:
            raise TaggerError(f"--epochs {self.epochs}: at least 1")


def replay_documents(meta: dict) -> tuple[str, str, list[str]]:
    """(source, path, document names) of the data a bundle was trained on, for replay: its record's
    ``train_documents``, or a fold's train and dev documents for a bundle that names only its fold (the bundled
    models are trained on both); TaggerError when the record says neither."""
    from opinion_tagger.corpus.split import load_split
    from opinion_tagger.paths import default_datasplit
    from opinion_tagger.training.run_data import recorded_data_path, trained_documents

    training = meta.get("training", {})
    data = training.get("network", {}).get("data") or training.get("data")
    if not data or "source" not in data:
        raise TaggerError("the bundle does not say what data it was trained on: adapt it with --replay 0")
    names = sorted(trained_documents(meta))
    if not names and "fold" in data:
        split = load_split(data.get("datasplit") or default_datasplit(), data["fold"])
        names = [*split.train, *split.dev]
    if not names:
        raise TaggerError("the bundle does not name the documents it was trained on: adapt it with --replay 0")
    return data["source"], recorded_data_path("the bundle", data["source"], data["path"]), names


def replay_sample(sentences: list[Sentence], n: int, seed: int) -> list[Sentence]:
    """``n`` sentences drawn from ``sentences`` without replacement (all of them if there are fewer)."""
    if n >= len(sentences):
        return list(sentences)
    return random.Random(seed).sample(sentences, n)


def adapt_config(base: TaggerConfig, settings: AdaptSettings) -> TaggerConfig:
    """The bundle's configuration with the adaptation's training fields, its teacher left behind
    (``distillation.without_teacher``), in float32 (a bundle's weights are; one trained in bfloat16 products, such
    as ``accurate-mpnet``, goes on in float32)."""
    from opinion_tagger.training.distillation import without_teacher

    return without_teacher(base).replace(
        {
            "training.optimizer.learning_rate": settings.learning_rate,
            "training.optimizer.name": settings.optimizer,
            "training.schedule.name": settings.schedule,
            "training.stopping.max_epochs": settings.epochs,
            "training.stopping.patience": settings.epochs,
            "training.seed": settings.seed,
            "training.precision": "float32",
        }
    )


def adapt_bundle(
    model: str | Path,
    source: str,
    path: str | Path,
    out_dir: str | Path,
    doclist: str | Path | None = None,
    settings: AdaptSettings = AdaptSettings(),
    documents: list[str] | None = None,
    progress: bool = True,
    problems: Problems | None = None,
    keep_checkpoints: bool = False,
    say=print,
):
    """Adapt the bundle ``model`` to the documents of ``source`` at ``path`` (``doclist``: those it names;
    ``documents``: only these of them) and write the adapted bundle to ``out_dir``; returns (SentenceTagger,
    meta)."""
    from opinion_tagger.runtime.bundle import load_bundle_files

    model = Path(model)
    _, base, meta = load_bundle_files(model)
    docs = new_documents(source, path, base.model.frames.enabled, doclist, problems, say)
    if documents is not None:
        missing = next((d for d in documents if d not in docs), None)
        if missing is not None:
            raise TaggerError(f"{path}: no document {missing!r} to adapt to")
        docs = {d: docs[d] for d in documents}
    pool = replay_pool(meta, base.model.frames.enabled, problems) if settings.replay > 0 else None
    data = {"source": source, "path": str(Path(path).resolve()), **({"doclist": str(doclist)} if doclist else {})}
    return adapt_documents(model, docs, pool, out_dir, data, settings, progress, keep_checkpoints, say)


def new_documents(
    source: str, path: str | Path, frames: bool, doclist=None, problems: Problems | None = None, say=print
) -> dict[str, list[Sentence]]:
    """The new genre's documents, with their frames where the model has frame heads (a CoNLL file has none:
    its sentences get an empty list, so that the heads learn from the replayed documents only)."""
    from opinion_tagger.training.run_data import add_training_labels, load_data

    docs = load_data(source, path, problems, doclist=doclist)
    if frames and source in ("mpqa", "reference"):
        add_training_labels(docs, source, path, frames=True)
    elif frames and source != "annotations":
        say(f"adapt: {source} data carries no opinion frames; the frame heads learn from the replayed documents only")
        for sents in docs.values():
            for s in sents:
                s.frames = []
    return docs


def replay_pool(meta: dict, frames: bool, problems: Problems | None = None) -> tuple[dict, list[Sentence]]:
    """(where it comes from, the sentences) of the data the bundle of ``meta`` was trained on."""
    from opinion_tagger.training.run_data import load_data

    source, path, names = replay_documents(meta)
    docs = load_data(source, path, problems, frames=frames)
    pool = [s for n in names if n in docs for s in docs[n]]
    return {"source": source, "path": str(path), "documents": len(names)}, pool


def adapt_documents(
    model: Path,
    docs: dict[str, list[Sentence]],
    pool: tuple[dict, list[Sentence]] | None,
    out_dir: str | Path,
    data: dict,
    settings: AdaptSettings = AdaptSettings(),
    progress: bool = True,
    keep_checkpoints: bool = False,
    say=print,
):
    """``adapt_bundle`` on documents already read (``docs``, by name; ``data``: where they come from, for the
    record) with the replay ``pool`` (``replay_pool``; None: no replay)."""
    from opinion_tagger.provenance import git_commit
    from opinion_tagger.runtime.bundle import load_bundle_files
    from opinion_tagger.training.checkpoints import remove_checkpoint
    from opinion_tagger.training.run import train
    from opinion_tagger.training.run_data import hold_out

    _, base, meta = load_bundle_files(model)
    config = adapt_config(base, settings)
    train_names, dev_names = hold_out(list(docs), settings.held_out_every)
    new_train = [s for n in train_names for s in docs[n]]
    dev = [s for n in dev_names for s in docs[n]]
    replayed: list[Sentence] = []
    replay_record: dict = {"sentences": 0}
    if pool is not None and settings.replay > 0:
        replayed = replay_sample(pool[1], round(settings.replay * len(new_train)), settings.seed)
        replay_record = {**pool[0], "sentences": len(replayed), "of": len(pool[1])}
    say(
        f"adapting {model} to {counted(len(train_names), 'document')} ({counted(len(new_train), 'sentence')}) with "
        f"{counted(len(replayed), 'replayed sentence')}; {counted(len(dev_names), 'document')} "
        f"({counted(len(dev), 'sentence')}) held out to choose the epoch"
    )
    record = {
        "data": {
            **data,
            "sentences": {"train": len(new_train), "dev": len(dev)},
            "train_documents": train_names,
            "dev_documents": dev_names,
        },
        "seed": settings.seed,
        "git_commit": git_commit(),
        "init": str(model),
        "adapted": {
            "from": str(model),
            "from_training": {k: v for k, v in meta.get("training", {}).items() if k != "history"},
            "settings": asdict(settings),
            "replay": replay_record,
            "held_out_before": held_out_scores(model, dev),
        },
    }
    words = {w for sents in docs.values() for s in sents for w in s.words}
    if settings.freeze_encoder:  # the Keras trainer's option
        from opinion_tagger.training.trainer import Trainer

        if config.training.trainer == "fast":
            raise TaggerError(f"{model}: --freeze-encoder is for models of the Keras trainer; this one has no encoder")
        trainer = Trainer(config, out_dir, progress, init=model, freeze_encoder=True)
        result = trainer.run(new_train + replayed, dev, words, record=record)
    else:
        result = train(
            config, new_train + replayed, dev, out_dir, extra_words=words, progress=progress, record=record, init=model
        )
    if not keep_checkpoints:
        remove_checkpoint(out_dir)
    write_card(Path(out_dir), result[1])
    return result


def held_out_scores(model: Path, dev: list[Sentence]) -> dict:
    """The scores of the bundle ``model`` as it was, before adapting, on the held-out sentences ``dev``."""
    from opinion_tagger.evaluation.scoring import evaluate_tagger
    from opinion_tagger.runtime.sentence_tagger import SentenceTagger

    return evaluate_tagger(SentenceTagger.load(model), dev)


def held_out_gain(meta: dict) -> tuple[float, float] | None:
    """(before, after): the mean proportional F1 over the types on the held-out documents of the model an adapted
    bundle started from and of the bundle (``meta``: its meta.json); None for a bundle that does not record the
    first."""
    from opinion_tagger.training.stopping import dev_score

    before = meta["training"]["adapted"].get("held_out_before")
    return (dev_score(before), dev_score(meta["scores"]["dev"])) if before else None


def gain_line(meta: dict, model: str) -> str | None:
    """What the held-out documents say of the adaptation, in a sentence; None where the bundle cannot say."""
    gain = held_out_gain(meta)
    if gain is None:
        return None
    before, after = (100 * g for g in gain)
    if after > before:
        return f"On the held-out documents it gains {after - before:.1f} points of proportional F1 over {model}."
    return (
        f"On the held-out documents it does not beat {model} ({after:.1f} against {before:.1f} proportional F1, the "
        "mean over the types): keep that model, or adapt on more documents."
    )


def write_card(out_dir: Path, meta: dict) -> None:
    """The adapted bundle's model card (``README.md``, outside its manifest): what it was adapted from and to,
    how, and its scores on the held-out documents."""
    from opinion_tagger.storage import atomic_write_text

    t = meta["training"]
    a, d = t["adapted"], t["data"]
    dev, before = meta["scores"]["dev"], a.get("held_out_before") or {}

    def cells(r: dict | None) -> str:
        return f"{100 * r['binary']['f1']:.2f} | {100 * r['proportional']['f1']:.2f}" if r else "- | -"

    scores = "\n".join(f"| {typ} | {cells(before.get(typ))} | {cells(r)} |" for typ, r in dev.items())
    s = a["settings"]
    where = d["path"] + (f" (document list {d['doclist']})" if "doclist" in d else "")
    replay = a["replay"]
    replay_line = (
        f"{replay['sentences']} sentences drawn from the {replay['of']} of its own training data ({replay['source']} "
        f"at {replay['path']})"
        if replay["sentences"]
        else "none"
    )
    frozen = " (the encoder and word vectors frozen)" if s.get("freeze_encoder") else ""
    atomic_write_text(
        out_dir / "README.md",
        f"""# Adapted model

Model card of a bundle written by `opinion-tagger adapt`.

## What it is

`{a["from"]}`, adapted to {len(d["train_documents"])} annotated documents of {d["source"]} data at {where}
({d["sentences"]["train"]} sentences).  Replayed beside them so that it keeps what it knew: {replay_line}.
Adam at a constant {s["learning_rate"]}, at most {s["epochs"]} epochs{frozen}; epoch {t["best_epoch"]} kept, chosen on
{len(d["dev_documents"])} held-out documents ({d["sentences"]["dev"]} sentences), seed {s["seed"]};
{t["train_seconds"]:.0f} s of training on {t["device"]}.

Documents trained on: {", ".join(d["train_documents"])}.
Held out to choose the epoch: {", ".join(d["dev_documents"])}.

## Scores on the held-out documents

Binary and proportional overlap F1 (percent) on the documents that chose the epoch, of `{a["from"]}` as it was and
of this bundle: a figure of model selection, optimistic for new text.  {gain_line(meta, f"`{a['from']}`") or ""}

| type | before: binary F1 | before: proportional F1 | adapted: binary F1 | adapted: proportional F1 |
|---|---|---|---|---|
{scores}
""",
    )
