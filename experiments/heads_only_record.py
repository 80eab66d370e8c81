"""Record a frame-heads-only run (``opinion-tagger train --init-from B --heads-only``) on fold-0 dev beside the
heads trained with the network (a cross-validation result with ``dev_frames``), and print both.

    python -m experiments.heads_only_record BUNDLE NAME --joint experiments/results/RESULT/fold0.json

writes experiments/results/frames-heads-only/NAME.json: the command's settings, the heads' epochs and losses,
the dev span and frame scores, the joint run's frame scores and the machine (no corpus text, no paths)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from experiments.cpu_pinning import machine
from experiments.locations import RESULTS
from opinion_tagger.storage import atomic_write_text


def frame_line(frames: dict) -> str:
    """A type's frame scores on one line: polarity-aware prop / bin F1, polarity, intensity, holder."""
    parts = []
    for t, r in frames.items():
        s = (
            f"{t} pol-aware {100 * r['polarity_proportional']['f1']:.2f} / {100 * r['polarity_binary']['f1']:.2f}, "
            f"polarity {100 * r['polarity']['accuracy']:.2f}, intensity {100 * r['intensity']['accuracy']:.2f}"
        )
        if "holder" in r:
            s += f", holder {100 * r['holder']['accuracy']:.2f} / F1 {100 * r['holder']['f1']:.2f}"
        parts.append(s)
    return "; ".join(parts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bundle", type=Path, help="the bundle --heads-only wrote (trained with fold-0 dev)")
    ap.add_argument("name", help="the record's name")
    ap.add_argument("--joint", type=Path, required=True, help="the result of the run whose heads trained with it")
    ap.add_argument("--out", type=Path, default=RESULTS / "frames-heads-only")
    args = ap.parse_args(argv)
    meta = json.loads((args.bundle / "meta.json").read_text())
    joint = json.loads(args.joint.read_text())
    t = meta["training"]
    record = {
        "name": args.name,
        "network": Path(t["init"]).as_posix().split("/experiments/", 1)[-1],
        "joint": args.joint.as_posix().split("/experiments/", 1)[-1],
        "git_commit": t["git_commit"],
        "seed": t["seed"],
        "heads_only": t["heads_only"],
        "epochs": t["epochs"],
        "best_epoch": t["best_epoch"],
        "train_seconds": t["train_seconds"],
        "history": [{k: h[k] for k in ("epoch", "loss", "dev_loss", "seconds") if k in h} for h in t["history"]],
        "scores": {"dev": meta["scores"]["dev"], "dev_frames": meta["scores"]["dev_frames"]},
        "joint_scores": {"dev": joint["scores"]["dev"], "dev_frames": joint["scores"]["dev_frames"]},
        "machine": machine(),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(args.out / f"{args.name}.json", json.dumps(record, indent=1) + "\n")
    print(f"heads only (best epoch {t['best_epoch']} of {t['epochs']}): {frame_line(meta['scores']['dev_frames'])}")
    print(f"with the network: {frame_line(joint['scores']['dev_frames'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
