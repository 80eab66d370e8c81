"""The report's section on a DSE's opinion roles (holder, targets, attitude type): the ten folds of the role heads on
the attitude documents (``experiments.role_folds``), the bundled models' fold-0 test scores beside the published
anchors, and the dev study that chose the heads (``experiments.role_heads_study``)."""

from __future__ import annotations

import json
from pathlib import Path

from opinion_tagger.paths import BUNDLED

# Published figures with the gold DSEs given, binary F1 (binary / proportional where given), and what differs
ANCHORS = [
    (
        "Marasović & Frank (2018), BiLSTM-CRF with SRL in multi-task learning",
        "83.80",
        "72.06",
        "their 482 documents (the 349 here and 133 of ULA, ULA-LU and XBank), their 10 folds; the DSE marked in the "
        "input of a network trained for the roles; CoreNLP tokens; their scorer",
    ),
    (
        "Zhang, Liang & Fu (2019), BiLSTM-CRF with SRL-aware word representations",
        "84.91",
        "73.29",
        "the same 482 documents; one test set (the 132-document dev set of Yang & Cardie 2013)",
    ),
    (
        "SKEP (Tian et al., 2020), sentiment-aware pre-training fine-tuned for the roles",
        "86.32 / 81.11",
        "83.67 / 77.53",
        "a pre-trained transformer fine-tuned for the roles; its split and scorer not checked here",
    ),
]


def _commit(commit: str) -> str:
    """A commit, short, with ``+dirty`` where the run's tree had changes not yet committed."""
    return commit[:10] + ("+dirty" if commit.endswith("+dirty") else "")


def _f1(x: dict) -> str:
    return f"{100 * x['binary']['f1']:.2f} / {100 * x['proportional']['f1']:.2f}"


def _features(data: dict) -> str:
    """``pretrained GloVe and MPNet-base``: the features a result's heads read, in short."""
    words = data["features"].split(" (", 1)[0]
    return "pretrained " + words.removeprefix("pretrained: ")


def _mean(x: dict) -> str:
    return (
        f"{100 * x['binary']['mean']:.2f} ± {100 * x['binary']['sd']:.2f} / "
        f"{100 * x['proportional']['mean']:.2f} ± {100 * x['proportional']['sd']:.2f}"
    )


def _averaged(run: dict) -> str:
    """``, the weights' moving average (momentum 0.999)`` where the heads were scored so (``--ema``), else empty."""
    ema = run.get("recipe", {}).get("ema")
    return f", the weights' moving average (momentum {ema:g})" if ema else ""


def fold_lines(data: dict) -> list[str]:
    """The ten folds of the role heads on pretrained features, a row per fold and the mean."""
    if data.get("train_on") == "all":
        trained = "all the fold's train and dev documents (the holder from every DSE, the attitude and targets from "
        trained += "those of the attitude subset)"
    else:
        trained = "the fold's train and dev documents of the attitude subset (349 documents)"
    processes = data.get("processes", 1)
    cores = "one core" if processes == 1 else f"one core ({processes} processes side by side, a core each)"
    lines = [
        f"Heads trained per fold on {trained}, scored on the fold's test documents of the attitude subset with the "
        "gold DSEs given; binary / proportional F1, the attitude type's accuracy beside the majority type's share.  "
        f"Features: {data['features']}; heads `{data['variant']}`, {data['epochs']} epochs{_averaged(data)}; "
        f"`python -m experiments.role_folds` at commit {_commit(data['commit'])}, "
        f"{data['seconds'] / 60:.0f} minutes of {cores}.",
        "",
        "| fold | test documents | holder | targets | attitude (majority) |",
        "|---|---|---|---|---|",
    ]
    for f in data["folds"]:
        a = f["attitude"]
        lines.append(
            f"| {f['fold']} | {f['test_documents']} | {_f1(f['holder'])} | {_f1(f['target'])} | "
            f"{100 * a['accuracy']:.2f} ({100 * a['majority']:.2f}) |"
        )
    m = data["mean"]
    lines.append(
        f"| mean ± sd | | {_mean(m['holder'])} | {_mean(m['target'])} | {100 * m['attitude']['accuracy']:.2f} "
        f"({100 * m['attitude']['majority']:.2f}; +{100 * m['attitude']['gain']:.2f}) |"
    )
    return lines


def bundle_lines(bundled: Path = BUNDLED) -> list[str]:
    """The bundled models' roles on the fold-0 test documents (their meta.json), beside the published anchors."""
    lines = [
        "| work or model | holder | targets | protocol |",
        "|---|---|---|---|",
        *(f"| {w} | {h} | {t} | {p} |" for w, h, t, p in ANCHORS),
    ]
    for meta_path in sorted(bundled.glob("*/meta.json")):
        roles = json.loads(meta_path.read_text()).get("scores", {}).get("fold0_test_roles")
        if not roles or "target" not in roles:
            continue
        given = {r: roles[r]["gold_dse_given"] for r in ("holder", "target")}
        lines.append(
            f"| `{meta_path.parent.name}` (bundled) | {_f1(given['holder'])} | {_f1(given['target'])} | the 40 fold-0 "
            "test documents (targets: the 23 in the attitude subset); heads on the states of a network trained to "
            "tag, fitted after it on fold 0's train and dev documents |"
        )
    return lines


def dev_lines(runs: list[dict]) -> list[str]:
    """The dev study's rows: each variant at each epoch count, scored on ULA."""
    lines = [
        "| variant | epochs | holder, gold DSEs given | holder, end to end | targets, gold DSEs given "
        "| targets, end to end | attitude (majority) | commit |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for run in runs:
        for name, v in run["variants"].items():
            for epoch, s in sorted(v["by_epoch"].items(), key=lambda e: int(e[0])):
                r, a = s["roles"], s["roles"]["attitude"]["gold_dse_given"]
                lines.append(
                    f"| {name} | {epoch} | {_f1(r['holder']['gold_dse_given'])} | {_f1(r['holder']['end_to_end'])} | "
                    f"{_f1(r['target']['gold_dse_given'])} | {_f1(r['target']['end_to_end'])} | "
                    f"{100 * a['accuracy']:.2f} ({100 * a['majority']:.2f}) | {_commit(run['commit'])} |"
                )
    return lines


def _dev_set(run: dict) -> tuple[str, str]:
    """(what the heads trained on, what scored them) in words, for a ``role_folds --dev`` result."""
    which = run["train"].get("documents", "doclist.attitudeSubset")
    documents = "all of them" if which == "all" else "those of the attitude subset"
    if run["dev"]["data"] == "news":
        return (
            f"fold 0's train documents ({documents})",
            f"the {run['dev']['documents']} dev documents of fold 0 in the attitude subset",
        )
    return f"fold 0's train and dev documents ({documents})", f"the {run['dev']['documents']} ULA documents"


def pretrained_dev_lines(run: dict) -> list[str]:
    """The dev study of the heads on pretrained features (``role_folds --dev``): a row per variant and epoch."""
    trained, scored = _dev_set(run)
    lines = [
        f"Heads on pretrained features ({run['features']}), trained on {trained} and scored on {scored} with "
        f"the gold DSEs given (`python -m experiments.role_folds --dev ...` at commit {_commit(run['commit'])}); "
        "binary / proportional F1.  *context-64-holder*: the holder pointer reads the targets' BiLSTM per DSE too; "
        "*context-64-own-holder*: it reads a BiLSTM per DSE of its own (`holder_context: 64`).",
        "",
        "| variant | epochs | holder | targets | attitude (majority) |",
        "|---|---|---|---|---|",
    ]
    for name, v in run["variants"].items():
        by_epoch = v.get("by_epoch", {str(run["epochs"]): v})
        for epoch, r in sorted(by_epoch.items(), key=lambda item: int(item[0])):
            a = r["attitude"]
            lines.append(
                f"| {name} | {epoch} | {_f1(r['holder'])} | {_f1(r['target'])} | {100 * a['accuracy']:.2f} "
                f"({100 * a['majority']:.2f}) |"
            )
    return lines


def _dev_heading(run: dict) -> str:
    """The heading of a dev study's table: on which features and dev set."""
    where = "fold 0's dev documents" if run["dev"]["data"] == "news" else "the ULA documents"
    every = ", trained on all documents" if run["train"].get("documents") == "all" else ""
    return f"### Role heads on {_features(run)}{every}{_averaged(run)}: dev study on {where}"


def roles_section(results: Path, bundled: Path = BUNDLED) -> list[str]:
    """The section's lines (empty when none of its results exist)."""
    folds = sorted((results / "role-folds").glob("*.json"))
    dev = sorted((results / "role-heads-dev").glob("*.json"))
    pretrained_dev = sorted((results / "role-folds-dev").glob("*.json"))
    if not folds and not dev and not pretrained_dev:
        return []
    lines = ["## Opinion roles: holders, targets and attitudes", ""]
    for path in folds:
        data = json.loads(path.read_text())
        heading = f"### Ten folds on the attitude documents: {_features(data)}, heads `{data['variant']}`"
        lines += [f"{heading}, {data['epochs']} epochs{_averaged(data)}", "", *fold_lines(data), ""]
    lines += [
        "### Beside the published figures (gold DSEs given, binary / proportional F1)",
        "",
        "None of the published figures is on this project's documents, split or tokens (docs/frames.md, *Holders, "
        "targets and attitudes: scores*, says what differs); they stand beside the rows above, not against them.",
        "",
        *bundle_lines(bundled),
        "",
    ]
    for path in pretrained_dev:
        run = json.loads(path.read_text())
        lines += [
            _dev_heading(run),
            "",
            *pretrained_dev_lines(run),
            "",
        ]
    if dev:
        lines += [
            "### Role heads: dev study on the ULA documents",
            "",
            "Variants of the heads fitted on `accurate`'s states (fold 0's train and dev documents, the bundled "
            "recipe) and scored on the 48 ULA documents, which no network here trained on "
            "(`python -m experiments.role_heads_study`); binary / proportional F1.  *positions*: the tokens' places "
            "relative to the DSE; *context-64*: a BiLSTM of 64 units a direction per DSE, here for holder and "
            "targets (the bundled heads use it for the targets alone).  *+dirty*: the heads' code ran before its "
            "commit; the next commit holds it, and the second run gives the *positions* row at 10 epochs again, "
            "to the last digit.",
            "",
            *dev_lines([json.loads(p.read_text()) for p in dev]),
            "",
        ]
    return lines
