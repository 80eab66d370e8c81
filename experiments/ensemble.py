"""A seed ensemble of bundles trained on the same fold: each word's tag probabilities (a CRF's marginals)
averaged over the bundles, then decoded (``--decode``): each word's most probable tag (``word``; an I after O
begins a span, as for one model) or the valid IOB2 sequence with the largest product of its tags'
probabilities (``sequence``), scored on the fold's dev and test documents.  The result is written as an ordinary one
(experiments/results/NAME/foldK.json, the members named in its configuration), so the report lists it with
the dev study it belongs to; choices are made on its dev scores only.

    python experiments/ensemble.py --name accurate-ensemble-study-x3 --fold 0 BUNDLE BUNDLE BUNDLE
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from tagger.corpus.dataset import select
from tagger.corpus.split import load_split
from tagger.errors import TaggerError
from tagger.evaluation.scoring import evaluate_tagger
from tagger.network.bundle import load_bundle_files
from tagger.network.decoding import likeliest_valid_batch
from tagger.network.features import decode_tags
from tagger.network.predict import Tagger
from tagger.paths import default_datasplit, default_reference
from tagger.provenance import git_commit, machine
from tagger.storage import atomic_write_text
from tagger.training.data import load_data

ROOT = Path(__file__).resolve().parent
DECODES = {"word": "each word's likeliest tag.", "sequence": "the likeliest valid IOB2 sequence."}


class Ensemble:
    """``predict_tags`` (what ``evaluate_tagger`` needs) from the averaged distributions of ``taggers``."""

    def __init__(self, taggers: list[Tagger], decode: str = "word"):
        types = {t.types for t in taggers}
        if len(types) != 1:
            raise TaggerError(f"the bundles tag different types: {sorted(types)}")
        self.taggers, self.types, self.decode = taggers, taggers[0].types, decode

    def predict_tags(self, sentences) -> dict[str, list[list[str]]]:
        each = [t.distributions(sentences) for t in self.taggers]
        out: dict[str, list[list[str]]] = {ty: [] for ty in self.types}
        for k in range(len(sentences)):
            for ty in self.types:
                mean = np.mean([d[k][ty] for d in each], axis=0)
                if self.decode == "sequence":
                    ids = likeliest_valid_batch(mean[None], [len(mean)])[0]
                else:
                    ids = mean.argmax(-1).tolist()
                out[ty].append(decode_tags(ids, ty))
        return out


def member_name(bundle: Path) -> str:
    """A member as the result names it: from ``experiments/runs/`` on where it lies there (in any checkout)."""
    parts = bundle.resolve().parts
    for k in range(len(parts) - 1, 0, -1):
        if parts[k - 1 : k + 1] == ("experiments", "runs"):
            return "/".join(parts[k - 1 :])
    return str(bundle)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bundles", nargs="+", type=Path, help="bundle directories trained on --fold")
    ap.add_argument("--name", required=True, help="the result's name (experiments/results/NAME/)")
    ap.add_argument("--fold", type=int, default=0)
    ap.add_argument("--data", type=Path, default=default_reference(), help="Irsoy & Cardie's files")
    ap.add_argument("--datasplit", type=Path, default=default_datasplit())
    ap.add_argument("--results", type=Path, default=ROOT / "results")
    ap.add_argument(
        "--decode",
        choices=tuple(DECODES),
        default="word",
        help="each word's likeliest tag, or the likeliest valid IOB2 sequence (default: word)",
    )
    args = ap.parse_args()

    t0 = time.perf_counter()
    members = []
    for b in args.bundles:
        config, meta = load_bundle_files(b)[1:]
        if meta.get("training", {}).get("data", {}).get("fold") not in (None, args.fold):
            raise SystemExit(f"{b}: trained on another fold than {args.fold}")
        members.append((b, config, meta))
    configs = [{k: v for k, v in c.to_dict().items() if k != "seed"} for _, c, _ in members]
    if any(c != configs[0] for c in configs):
        raise SystemExit("the bundles' configurations differ in more than the seed")
    ensemble = Ensemble([Tagger.load(b) for b, _, _ in members], decode=args.decode)
    docs = load_data("reference", args.data)
    split = load_split(args.datasplit, args.fold)
    dev_s, test_s = select(docs, split.dev), select(docs, split.test)
    dev, test = evaluate_tagger(ensemble, dev_s), evaluate_tagger(ensemble, test_s)
    first = members[0][2].get("training", {})
    record = {
        "name": args.name,
        "kind": "rnn",
        "fold": args.fold,
        "config": members[0][1].to_dict(),  # the members' shared configuration (the first member's seed)
        "ensemble": {
            "members": [member_name(b) for b, _, _ in members],
            "seeds": [c.seed for _, c, _ in members],
            "decode": args.decode,
        },
        "seed": None,
        "git_commit": git_commit(),
        "choices": f"The average of {len(members)} seeds' per-word tag probabilities (experiments/ensemble.py), "
        + DECODES[args.decode],
        "data": {
            "source": "reference",
            "path": args.data.name,
            "datasplit": args.datasplit.name,
            "documents": {"train": len(split.train), "dev": len(split.dev), "test": len(split.test)},
            "sentences": {"dev": len(dev_s), "test": len(test_s)},
        },
        "scores": {"dev": dev, "test": test},
        "epochs": first.get("epochs"),
        "best_epoch": first.get("best_epoch"),
        "train_seconds": sum(m.get("training", {}).get("train_seconds") or 0 for _, _, m in members),
        "device": "CPU",
        "wall_seconds": time.perf_counter() - t0,
        "machine": machine(),
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    out = args.results / args.name / f"fold{args.fold}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out, json.dumps(record, indent=1) + "\n")
    for part, scores in (("dev", dev), ("test", test)):
        figures = (
            f"{t} prop {100 * r['proportional']['f1']:.2f} bin {100 * r['binary']['f1']:.2f}" for t, r in scores.items()
        )
        print(f"{part}: " + ", ".join(figures))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
