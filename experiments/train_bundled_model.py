"""Train a model bundled with the package (opinion_tagger/models/<name>) and write its model card (README.md).

The paper's split, fold 0, on this project's conversion of raw MPQA 2.0 over spaCy tokens:

1. the number of epochs is chosen on the 135 fold-0 dev documents: a run on the 360 train
   documents scored on dev every ``eval_every`` epochs (skipped with ``--epochs N``, or with ``--epochs-from
   RESULT``: the epochs a finished fold-0 dev run of the same configuration chose, recorded with the bundle);
2. the bundle is trained on the 495 train + dev documents for that many epochs;
3. it is scored on the 40 fold-0 test documents, which it never saw, and its tagging speed is
   measured (tokenisation included, median of 3, one process); scores, size and speed go into
   meta.json and the bundle's README.md;
4. its training state (model.keras, weights.npz) is left out: the package ships what tagging reads, and
   training continues from model.onnx's weights (``opinion_tagger.model.onnx_weights``).  ``--drop-training-state``
   does this step alone for a bundle written complete.

The vocabulary is the training words GloVe knows plus GloVe's most frequent words (no test-set
words), so the bundle stays a few MB.

    python -m experiments.train_bundled_model fast [--epochs N] [--out opinion_tagger/models/fast]

The third bundle, `accurate-mpnet` (issue 37: MPNet-base in place of MiniLM-L6; needs `opinion-tagger download
--encoder mpnet`), trains as experiments/configs/accurate-mpnet-lr1e3.yaml: peak learning rate 1e-3 and bfloat16
products, 5 epochs (a fold's 360 training documents take about 17 minutes an epoch on one core of the 2-core
CPU; the bundle's 495 take longer); ``--resume`` continues an interrupted training from its last epoch's
checkpoint in ``--out``:

    python -m experiments.train_bundled_model accurate-mpnet --epochs 5 --resume --cpus 1 --out DIR

Shipped since 2026-11-28 (opinion_tagger/models/accurate-mpnet, trained at 37b83ab with ``--cpus 1``: 6,068 s, training
loss by epoch 14.86, 8.14, 6.38, 5.18, 4.54; fold-0 test prop F1 DSE 76.88, ESE 69.16).  Its first training
(2026-11-26, seed 1, float32 at accurate-mpnet.yaml's peak rate 2e-3, at 5f5d95e) learnt far less than the fold-0 dev
run of the same configuration (training loss after epochs 1-5: 16.32, 10.78, 9.01, 8.27, 8.01 against the dev run's
14.48, 7.89, 6.08, 4.69, 3.79) and scored 48.41 / 28.74 fold-0 test prop F1 (DSE / ESE): at 2e-3 MPNet's training
sits at the edge of stability (cross-validation fold 1 in bfloat16 collapsed the same way, loss 16.46 over epoch 1,
after which the network tagged almost nothing), so the bundle's recipe moved to 1e-3 with the cross-validation row
(accurate-mpnet-lr1e3.yaml's ``choices``).

Distillation (issue 37; fast trainer): ``--teacher BUNDLE --distill-weight W`` (and ``--distill-copies N
--distill-noise P``: noisy copies the teacher tags) trains the bundle on the 495 documents with that teacher's tag
probabilities (a teacher that never saw the fold-0 test documents, e.g.
opinion_tagger/models/accurate); the dev run that chooses the epochs then needs ``--dev-teacher BUNDLE``, one that never
saw the dev documents either (e.g. experiments/runs/accurate-masked-study-crf/fold0), unless that dev run is
done: ``--epochs-from`` its result.  The bundled ``fast`` (since 2026-11-28: noisy copies, as
fast-augment-study.yaml chose; about 17-19 min on one core, the teacher's tagging of 31,131 sentences included):

    python -m experiments.train_bundled_model fast --teacher opinion_tagger/models/accurate --distill-weight 0.9 \
        --distill-copies 2 --distill-noise 0.3 --lr-decay 0.999667 \
        --epochs-from \
        experiments/results/fast-augment-study-distill_copies2-distill_noise0.3-lr_decay0.999667/fold0.json \
        --cpus 0

and the one before it (2026-11-26 to 2026-11-28, without copies):

    python -m experiments.train_bundled_model fast --teacher opinion_tagger/models/accurate --distill-weight 0.9 \
        --epochs-from experiments/results/fast-distill-study-distill_weight0.9/fold0.json
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

import yaml

from experiments.cpu_pinning import add_cpus_option, pin_cpus
from experiments.cross_validation import load_experiments
from experiments.model_cards import write_card
from opinion_tagger.config import TaggerConfig
from opinion_tagger.config.blocks import COPY_STYLES
from opinion_tagger.corpus.mpqa import MPQACorpus
from opinion_tagger.corpus.sources import load_documents, select
from opinion_tagger.corpus.split import load_split
from opinion_tagger.errors import ConfigError
from opinion_tagger.evaluation.scoring import evaluate_tagger, evaluate_with_frames
from opinion_tagger.export.bundle_writer import add_onnx, drop_training_state
from opinion_tagger.paths import BUNDLED, default_datasplit, default_mpqa
from opinion_tagger.provenance import git_commit
from opinion_tagger.runtime.sentence_tagger import SentenceTagger
from opinion_tagger.storage import atomic_write_text
from opinion_tagger.training.checkpoints import has_checkpoint, remove_checkpoint
from opinion_tagger.training.run import train
from opinion_tagger.training.run_data import load_data

# The grid's recipe (experiments/configs/paper.yaml: the authors' recipe with GloVe fine-tuned, chosen on fold-0
# dev) on the paper's best network, ReLU Elman depth 3 at the 200k budget (the grid's first cell), one network
# for DSE and ESE.
PAPER_GRID = load_experiments(Path(__file__).resolve().parent / "configs" / "paper.yaml")[0]
assert PAPER_GRID.name == "paper-elman-dse-d3-200k", PAPER_GRID.name
CONFIGS = {
    "fast": TaggerConfig.from_dict(
        {**PAPER_GRID.fields, "task": "joint", "model.embeddings.glove_vocab": 20000, "training.seed": 1}
    ),
    # experiments/configs/accurate-crf.yaml (chosen by the fold-0 dev study in experiments/REPORT.md, issue 37); 5
    # epochs with a cosine schedule, so the run ends at the schedule's end (--epochs 5: no separate epoch choice)
    "accurate": TaggerConfig.from_dict(
        {
            "task": "joint",
            "model": {
                "embeddings": {"features": "glove", "glove_vocab": 20000},
                "encoder": {"name": "minilm", "fine_tune": True, "lora_rank": 64},
                "recurrent": {"cell": "lstm", "depth": 1, "hidden": 128, "budget": None},
                "recurrent.input_dropout": 0.1,
                "recurrent.dropout": 0.1,
                "head": {"output": "crf"},
                # the frame heads (docs/frames.md) on the states with the gradient stopped, as experiments/configs/
                # frames-dev.yaml chose on fold-0 dev: the tags are learnt as without them; a DSE's attitude and
                # targets too, the tokens' places in the holder pointer and the target tagger, and a BiLSTM per DSE
                # for its targets, as experiments/role_heads_study.py chose on the ULA documents (docs/frames.md)
                "frames": {"enabled": True, "detach": True, "roles": True, "positions": True, "context": 64},
            },
            "training": {
                "seed": 1,
                "batch_size": 32,
                "jit_compile": False,
                "optimizer": {"name": "adam", "learning_rate": 2e-3},
                "schedule": {"name": "cosine"},
                "stopping": {"max_epochs": 5, "patience": 5},
            },
        }
    ),
}
# experiments/configs/accurate-mpnet-lr1e3.yaml (issue 37): the accurate configuration with MPNet-base in place of
# MiniLM-L6 (chosen on fold-0 dev: DSE prop F1 77.74 against 72.79, ESE 66.79 against 63.12, at 2e-3), at half the
# peak learning rate (2e-3 collapsed a fold) and with bfloat16 products; about 3 times the cost to train and to
# tag, so a third bundle beside `accurate`.
CONFIGS["accurate-mpnet"] = CONFIGS["accurate"].replace(
    {"model.encoder.name": "mpnet", "training.optimizer.learning_rate": 1e-3, "training.precision": "mixed_bfloat16"}
)


# The recipe of frame heads fitted on a bundled network (--heads-only): Adam at 2e-3 for 10 epochs, as chosen on
# fold-0 dev with accurate's network (docs/frames.md, experiments/results/frames-heads-only/accurate-fold0.json: the
# dev loss lowest at epoch 10 of 60)
HEADS = {"training.optimizer.learning_rate": 2e-3, "training.stopping.max_epochs": 10, "training.batch_size": 32}


def fold0_record(train: int, test: int, seed: int) -> dict:
    """What a bundle's meta.json records of its training data (``train`` and ``test`` sentences), seed and code."""
    return {
        "data": {
            "source": "mpqa",
            "path": "MPQA 2.0 (original 535-document subset)",
            "fold": 0,
            "trained_on": "train+dev documents of fold 0 (495)",
            "scored_on": "fold 0 test (40)",
            "sentences": {"train": train, "test": test},
        },
        "seed": seed,
        "git_commit": git_commit(),
    }


def test_scores(tagger: SentenceTagger, test_s) -> dict:
    """``{"fold0_test": ...}``: the span scores on the fold-0 test sentences, and for a bundle with frame heads
    (docs/frames.md) ``"fold0_test_frames"``, from the same pass of the network, and the scores of a DSE's roles
    (``"fold0_test_roles"``: holder, and targets and attitude where the heads predict them; the targets scored on
    the documents that carry attitudes)."""
    from opinion_tagger.evaluation.scoring import predict_with_roles

    if not tagger.config.model.frames.enabled:
        return {"fold0_test": evaluate_tagger(tagger, test_s)}
    spans, frames = evaluate_with_frames(tagger, test_s)
    return {"fold0_test": spans, "fold0_test_frames": frames, "fold0_test_roles": predict_with_roles(tagger, test_s)[2]}


def choose_epochs(config: TaggerConfig, train_s, dev_s) -> tuple[int, list]:
    with tempfile.TemporaryDirectory() as tmp:
        _, meta = train(config, train_s, dev_s, tmp, progress=sys.stderr.isatty())
    history = [
        {k: h[k] for k in ("epoch", "dev_score") if k in h} for h in meta["training"]["history"] if "dev_score" in h
    ]
    return meta["training"]["best_epoch"], history


# What a dev run may differ in from the bundle's configuration and still choose its epochs: how long it ran,
# and its teacher, which trained on no dev document (the bundle's teacher saw them).
EPOCH_RUN_FIELDS = ("training.stopping.max_epochs", "training.stopping.patience", "training.distillation.teacher")


def epochs_from(result_path: str, config: TaggerConfig) -> tuple[int, dict]:
    """The epochs a finished fold-0 dev run chose (an experiment result, e.g. the dev study's run of this very
    configuration) and the record of that choice; the run must be this configuration (``EPOCH_RUN_FIELDS``
    aside, and its hidden size given in units or as a budget) on MPQA's spaCy tokens, fold 0."""
    path = Path(result_path)
    try:
        result = json.loads(path.read_text())
        run = TaggerConfig.from_dict(result["config"])
    except (OSError, ValueError, KeyError) as exc:
        raise SystemExit(f"--epochs-from {path}: not a readable experiment result ({exc})") from None
    if run.hidden_size == config.hidden_size:  # the same network, its size given in units or as a budget
        r = config.model.recurrent
        run = run.replace({"model.recurrent.budget": r.budget, "model.recurrent.hidden": r.hidden})
    want = config.dotted()
    keep = {k: want[k] for k in EPOCH_RUN_FIELDS}
    differ = sorted(k for k, v in run.replace(keep).dotted().items() if v != want[k])
    if differ or result.get("fold") != 0 or result["data"]["source"] != "mpqa":
        raise SystemExit(
            f"--epochs-from {path}: not a fold-0 run of this configuration on MPQA "
            f"(fold {result.get('fold')}, source {result['data']['source']}, differs in: {', '.join(differ) or '-'})"
        )
    history = [{k: h[k] for k in ("epoch", "dev_score")} for h in result["history"] if "dev_score" in h]
    where = path.resolve().relative_to(Path(__file__).resolve().parent.parent) if path.is_absolute() else path
    record = {"config": result["config"], "dev_history": history, "result": str(where), "run": result["name"]}
    return result["best_epoch"], record


def tagging_speed(path: Path, texts: list[str], backend: str, repeats: int = 3) -> dict:
    from experiments.benchmarks.bench_tagging import throughput

    seconds, tokens = throughput(path, backend, texts, repeats)
    return {
        "tokens_per_s": round(tokens / seconds),
        "tokens": tokens,
        "backend": backend,
        "how": f"OpinionTagger.tag_many over the {len(texts)} fold-0 test documents' raw text, tokenisation "
        f"included, median of {repeats}, one process",
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"load {os.getloadavg()[0]:.1f}",
    }


def bundle_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.iterdir() if p.is_file() and p.name != "README.md")


def write_readme(path: Path, name: str, meta: dict) -> None:
    """The bundle's README.md: its model card (``experiments/model_cards.py``)."""
    write_card(path, name, meta)


def same_predictions(a: list, b: list, atol: float = 0.0) -> bool:
    """Equal tags for every sentence and type, and confidences within ``atol``."""
    return all(
        x[t][0] == y[t][0] and all(abs(p - q) <= atol for p, q in zip(x[t][1], y[t][1]))
        for x, y in zip(a, b)
        for t in x
    ) and len(a) == len(b)


def repack(out: Path, name: str, mpqa: str, datasplit: str) -> int:
    """Rewrite the bundle in the current format (with model.onnx): the Keras network's tags and confidences on
    the fold-0 test sentences are unchanged, and ONNX Runtime's tags equal them, confidences within 1e-4."""
    docs = select(load_documents("mpqa", mpqa), load_split(datasplit, 0).test)
    words = [s.words for s in docs]
    before = SentenceTagger.load(out, backend="keras")
    expected = before.predict(words)
    old_size = bundle_size(out)
    add_onnx(out)  # the other files are current: (re)write model.onnx, leaving them byte for byte as they are
    if not same_predictions(SentenceTagger.load(out, backend="keras").predict(words), expected):
        print(f"{out}: the repacked bundle tags the fold-0 test sentences differently", file=sys.stderr)
        return 1
    if not same_predictions(SentenceTagger.load(out, backend="onnx").predict(words), expected, atol=1e-4):
        print(f"{out}: model.onnx tags the fold-0 test sentences differently from the Keras network", file=sys.stderr)
        return 1
    return record_size(
        out, name, old_size, f"ONNX Runtime's tags equal the Keras network's on the {len(words)} fold-0 test sentences"
    )


def record_size(out: Path, name: str, old_size: int, checked: str) -> int:
    """The bundle's new size into its meta.json and card, and a line saying it and what was ``checked``."""
    stored = json.loads((out / "meta.json").read_text())
    stored["size_bytes"] = bundle_size(out)
    atomic_write_text(out / "meta.json", json.dumps(stored, indent=2) + "\n")
    write_readme(out, name, stored)
    print(f"{out}: {old_size / 1e6:.1f} MB -> {stored['size_bytes'] / 1e6:.1f} MB; {checked}")
    return 0


def slim(out: Path, name: str, mpqa: str, datasplit: str) -> int:
    """Leave out the bundle's training state (``drop_training_state``): ONNX Runtime's tags and confidences on
    the fold-0 test sentences are checked unchanged, and the size goes into meta.json and the card."""
    docs = select(load_documents("mpqa", mpqa), load_split(datasplit, 0).test)
    words = [s.words for s in docs]
    expected = SentenceTagger.load(out).predict(words)
    old_size = bundle_size(out)
    drop_training_state(out)
    if not same_predictions(SentenceTagger.load(out).predict(words), expected):
        print(f"{out}: without its training state the bundle tags the fold-0 test sentences otherwise", file=sys.stderr)
        return 1
    return record_size(out, name, old_size, f"the same tags of the {len(words)} fold-0 test sentences")


def rescore(out: Path, name: str, mpqa: str, datasplit: str) -> int:
    """``--rescore``: the bundle's fold-0 test scores again (ONNX Runtime), into meta.json and its card."""
    stored = json.loads((out / "meta.json").read_text())
    tagger = SentenceTagger.load(out, backend="onnx")
    test_s = select(load_data("mpqa", mpqa, frames=tagger.config.model.frames.enabled), load_split(datasplit, 0).test)
    stored["scores"] = {**test_scores(tagger, test_s), "how": f"ONNX Runtime, git commit {git_commit()}"}
    atomic_write_text(out / "meta.json", json.dumps(stored, indent=2) + "\n")
    write_readme(out, name, stored)
    for t, r in stored["scores"]["fold0_test"].items():
        print(
            f"{t} fold-0 test: proportional F1 {100 * r['proportional']['f1']:.2f}, "
            f"binary F1 {100 * r['binary']['f1']:.2f}, exact F1 {100 * r['exact']['f1']:.2f}"
        )
    return 0


def field_value(text: str) -> tuple[str, object]:
    """``PATH=VALUE`` as the field's path and its value read as YAML (``0.3``: a number, ``crf``: a string)."""
    path, sep, value = text.partition("=")
    if not sep or not path:
        raise argparse.ArgumentTypeError(f"{text!r}: give PATH=VALUE, e.g. model.recurrent.dropout=0.3")
    return path, yaml.safe_load(value)


def training_config(ap: argparse.ArgumentParser, args) -> TaggerConfig:
    """The configuration the command line asks for: the bundle's, with its seed, teacher, learning-rate decay and
    frame heads as given (``ap.error`` where the options do not go together)."""
    config = CONFIGS[args.name] if args.seed is None else CONFIGS[args.name].replace({"training.seed": args.seed})
    chosen_by = args.epochs is not None or args.epochs_from is not None
    if args.epochs is not None and args.epochs_from is not None:
        ap.error("give --epochs or --epochs-from, not both")
    if args.teacher is not None and not chosen_by and args.dev_teacher is None:
        ap.error("--teacher needs --dev-teacher (a teacher that never saw dev documents), --epochs or --epochs-from")
    if args.teacher is not None:
        config = config.replace(
            {
                "training.distillation.teacher": args.dev_teacher or args.teacher,
                "training.distillation.weight": args.distill_weight,
                "training.distillation.copies": args.distill_copies,
                "training.distillation.noise": args.distill_noise,
                "training.distillation.style": args.distill_style,
            }
        )
    if args.set:
        try:
            config = config.replace(dict(args.set))
        except ConfigError as e:
            ap.error(f"--set: {e}")
    if args.lr_decay is not None:
        config = config.replace({"training.fast.lr_decay": args.lr_decay})
    if args.tags_only:
        if not config.model.frames.detach:
            ap.error(f"--tags-only: {args.name}'s frame heads shape its tags (model.frames.detach is false)")
        config = config.replace({"model.frames.enabled": False})
    return config


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("name", choices=sorted(CONFIGS))
    ap.add_argument("--mpqa", default=str(default_mpqa()))
    ap.add_argument("--datasplit", default=str(default_datasplit()))
    ap.add_argument("--epochs", type=int, help="train for N epochs (default: chosen on fold-0 dev first)")
    ap.add_argument(
        "--epochs-from",
        metavar="RESULT",
        help="train for the epochs a fold-0 dev run of this configuration chose (its result file, e.g. "
        "experiments/results/fast-augment-study-distill_copies2-distill_noise0.3-lr_decay0.999667/fold0.json)",
    )
    ap.add_argument("--out", help="bundle directory (default: opinion_tagger/models/NAME)")
    ap.add_argument(
        "--seed", type=int, help="the seed of initial weights and batch order (default: the configuration's)"
    )
    ap.add_argument("--teacher", help="distillation: the teacher bundle of the training on train + dev")
    ap.add_argument("--dev-teacher", help="distillation: the teacher of the dev run that chooses the epochs")
    ap.add_argument("--distill-weight", type=float, default=0.5, help="the teacher's share of the loss")
    ap.add_argument(
        "--distill-copies", type=int, default=0, help="distillation: noisy copies of each sentence the teacher tags"
    )
    ap.add_argument(
        "--distill-noise",
        type=float,
        default=TaggerConfig().training.distillation.noise,
        help="the share of a noisy copy's words replaced",
    )
    ap.add_argument(
        "--distill-style",
        choices=COPY_STYLES,
        default=TaggerConfig().training.distillation.style,
        help="how a noisy copy differs from its sentence (training.distillation.style)",
    )
    ap.add_argument(
        "--set",
        type=field_value,
        action="append",
        default=[],
        metavar="PATH=VALUE",
        help="a field of the configuration set to a value (YAML), e.g. model.recurrent.dropout=0.3; repeatable",
    )
    ap.add_argument(
        "--lr-decay", type=float, help="the learning rate's factor per update (default: the configuration's)"
    )
    ap.add_argument(
        "--resume",
        action="store_true",
        help="continue an interrupted training of the bundle from its last epoch's checkpoint (in --out)",
    )
    ap.add_argument("--readme-only", action="store_true", help="rewrite the bundle's README.md from its meta.json")
    ap.add_argument(
        "--speed-only",
        action="store_true",
        help="measure the bundle's tagging speed again (on a quiet machine) into meta.json and README.md",
    )
    ap.add_argument(
        "--repack",
        action="store_true",
        help="write the bundle's model.onnx anew from its weights (ONNX Runtime's tags on the fold-0 test "
        "sentences are checked equal to the Keras network's, confidences within 1e-4)",
    )
    ap.add_argument(
        "--drop-training-state",
        action="store_true",
        help="leave out the bundle's training state (model.keras, weights.npz), checking that ONNX Runtime's tags "
        "on the fold-0 test sentences do not change",
    )
    ap.add_argument(
        "--rescore",
        action="store_true",
        help="score the bundle on the fold-0 test documents again (ONNX Runtime) into meta.json and README.md",
    )
    ap.add_argument(
        "--heads-only",
        action="store_true",
        help="fit frame heads (docs/frames.md) on the network of the bundle in --out as it is, on the 495 train + "
        "dev documents of fold 0 (10 epochs, or --epochs), in its place (opinion_tagger.training.frame_fit)",
    )
    ap.add_argument(
        "--tags-only",
        action="store_true",
        help="train the network without its frame heads, which learn on its states with the gradient stopped (the "
        "tags are learnt as with them), as noisy copies need; fit the heads after with --heads-only",
    )
    add_cpus_option(ap, "pin the training to these cores, e.g. 1 (beside a --cpus 0 job); default: no pinning")
    args = ap.parse_args()
    pin_cpus(ap, args)  # before TensorFlow or JAX loads
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")  # each epoch's loss

    out = Path(args.out or BUNDLED / args.name)
    if args.heads_only:
        return fit_heads(out, args.name, args.epochs, args.mpqa, args.datasplit)
    if args.repack:
        return repack(out, args.name, args.mpqa, args.datasplit)
    if args.drop_training_state:
        return slim(out, args.name, args.mpqa, args.datasplit)
    if args.rescore:
        return rescore(out, args.name, args.mpqa, args.datasplit)
    if args.speed_only:
        stored = json.loads((out / "meta.json").read_text())
        test_ids = set(load_split(args.datasplit, 0).test)
        texts = [d.text for d in MPQACorpus(args.mpqa) if d.name in test_ids]
        stored["speed"] = tagging_speed(out, texts, "onnx")
        atomic_write_text(out / "meta.json", json.dumps(stored, indent=2) + "\n")
        print(f"{stored['speed']['tokens_per_s']:,} tokens/s ({stored['speed']['machine']})")
    if args.readme_only or args.speed_only:
        write_readme(out, args.name, json.loads((out / "meta.json").read_text()))
        return 0
    config = training_config(ap, args)
    selection = {"config": config.to_dict(), "dev_history": []}
    if args.epochs_from is not None:
        args.epochs, selection = epochs_from(args.epochs_from, config)
    docs = load_data("mpqa", args.mpqa, frames=config.model.frames.enabled)
    split = load_split(args.datasplit, 0)
    train_s, dev_s, test_s = (select(docs, split.train), select(docs, split.dev), select(docs, split.test))
    dev_history: list = []
    epochs = args.epochs
    if epochs is None:
        epochs, dev_history = choose_epochs(config, train_s, dev_s)
        print(f"epochs chosen on fold-0 dev: {epochs} ({dev_history})", flush=True)
    final = config.replace(
        {
            "training.stopping.max_epochs": epochs,
            "training.stopping.patience": 0,
            "training.distillation.teacher": args.teacher,
        }
    )
    if final.training.trainer == "fast":  # no dev set: score once, at the end
        final = final.replace({"training.stopping.eval_every": epochs})
    full = train_s + dev_s
    record = {
        **fold0_record(len(full), len(test_s), config.training.seed),
        "selected_epochs": epochs,
        "epoch_selection": {**selection, "dev_history": selection["dev_history"] or dev_history},
    }
    resume = args.resume and has_checkpoint(out)
    if not resume:
        shutil.rmtree(out, ignore_errors=True)
    t0 = time.perf_counter()
    train(final, full, [], out, progress=sys.stderr.isatty(), record=record, resume=resume)
    remove_checkpoint(out)
    print(f"trained in {time.perf_counter() - t0:.0f}s", flush=True)
    return finish(out, args.name, final, test_s, split, args.mpqa)


def finish(out: Path, name: str, config: TaggerConfig, test_s, split, mpqa: str) -> int:
    """Leave out the new bundle's training state, score it on the fold-0 test documents, measure its size and
    speed, write them into its meta.json and its model card, and print the scores."""
    drop_training_state(out)
    backend = "onnx"
    tagger = SentenceTagger.load(out, backend=backend)
    scores = test_scores(tagger, test_s)
    test_ids = set(split.test)
    texts = [d.text for d in MPQACorpus(mpqa) if d.name in test_ids]
    path = out / "meta.json"  # meta.json gets the held-out scores, size and speed; its manifest stays valid
    stored = json.loads(path.read_text())
    stored["config"] = config.to_dict()
    stored["scores"] = scores
    stored["size_bytes"] = bundle_size(out)
    stored["speed"] = tagging_speed(out, texts, backend)
    atomic_write_text(path, json.dumps(stored, indent=2) + "\n")
    write_readme(out, name, stored)
    for t, r in scores["fold0_test"].items():
        print(
            f"{t} fold-0 test: proportional F1 {100 * r['proportional']['f1']:.2f}, "
            f"binary F1 {100 * r['binary']['f1']:.2f}, exact F1 {100 * r['exact']['f1']:.2f}"
        )
    print(f"size {stored['size_bytes'] / 1e6:.1f} MB, {stored['speed']['tokens_per_s']:,} tokens/s")
    return 0


def fit_heads(out: Path, name: str, epochs: int | None, mpqa: str, datasplit: str) -> int:
    """``--heads-only``: frame heads (docs/frames.md) for the bundle in ``out`` as it is, fitted on its network's
    states on the 495 train + dev documents of fold 0 (``opinion_tagger.training.frame_fit``, ``HEADS``' recipe;
    the network, its tags and its training record stay), then scored and carded as a trained bundle."""
    from opinion_tagger.runtime.bundle import load_bundle_files
    from opinion_tagger.training.frame_fit import fit_frame_heads

    _, saved, _ = load_bundle_files(out)
    frames = {k: v for k, v in CONFIGS[name].dotted().items() if k.startswith("model.frames.")}
    recipe = {**HEADS, **({"training.stopping.max_epochs": epochs} if epochs is not None else {})}
    frames |= {"model.frames.enabled": True, "model.frames.detach": True}
    config = saved.replace({**frames, **recipe, "training.stopping.patience": 0})
    docs = load_data("mpqa", mpqa, frames=True)
    split = load_split(datasplit, 0)
    full, test_s = select(docs, split.train) + select(docs, split.dev), select(docs, split.test)
    record = fold0_record(len(full), len(test_s), config.training.seed)
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=f".{out.name}-heads-") as work:
        fitted = Path(work) / out.name
        t0 = time.perf_counter()
        fit_frame_heads(config, full, [], fitted, out, record, progress=sys.stderr.isatty())
        print(f"heads fitted in {time.perf_counter() - t0:.0f}s", flush=True)
        meta = json.loads((fitted / "meta.json").read_text())
        meta["training"]["init"] = f"the bundled {name} before its frame heads"  # not this machine's path
        atomic_write_text(fitted / "meta.json", json.dumps(meta, indent=2) + "\n")
        out.rename(Path(work) / "before")  # the bundle with heads takes the old one's place
        fitted.rename(out)
    _, kept, _ = load_bundle_files(out)
    return finish(out, name, kept, test_s, split, mpqa)


if __name__ == "__main__":
    sys.exit(main())
