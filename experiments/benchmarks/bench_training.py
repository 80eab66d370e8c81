"""Training speed: seconds per epoch and to convergence, depth-3 200k Elman vs LSTM, fold 0.

Trains each configuration on the paper's fold 0 (MPQA over spaCy tokens, DSE),
with early stopping on dev proportional F1, and prints per-epoch medians, the
time to the best epoch, and the LSTM/Elman ratio measured in the same run.
Runs on the GPU when TensorFlow sees one, else on the CPU.

    python experiments/benchmarks/bench_training.py [--max-epochs N] [--cells elman lstm]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time

from tagger.config import TaggerConfig
from tagger.corpus.dataset import load_documents, select
from tagger.corpus.split import load_split
from tagger.paths import default_datasplit, default_mpqa
from tagger.training import device_name, train


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mpqa", default=str(default_mpqa()))
    ap.add_argument("--datasplit", default=str(default_datasplit()))
    ap.add_argument("--cells", nargs="+", default=["elman", "lstm"])
    ap.add_argument("--task", default="dse")
    ap.add_argument("--max-epochs", type=int, default=30)
    ap.add_argument("--patience", type=int, default=5)
    ap.add_argument("--no-jit", action="store_true")
    ap.add_argument("--json", action="store_true", help="also print one JSON line per configuration")
    args = ap.parse_args()

    docs = load_documents("mpqa", args.mpqa)
    split = load_split(args.datasplit, 0)
    train_s, dev_s = select(docs, split.train), select(docs, split.dev)
    extra = {w for sents in docs.values() for s in sents for w in s.words}
    print(f"device: {device_name()}; fold 0: {len(train_s)} train / {len(dev_s)} dev sentences", flush=True)
    rows = {}
    for cell in args.cells:
        cfg = TaggerConfig(task=args.task, cell=cell, depth=3, budget="200k", max_epochs=args.max_epochs,
                           patience=args.patience, jit_compile=not args.no_jit)
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            _, meta = train(cfg, train_s, dev_s, tmp, extra_words=extra, progress=sys.stderr.isatty())
            wall = time.perf_counter() - t0
        hist = meta["training"]["history"]
        secs = [h["seconds"] for h in hist]
        best = meta["training"]["best_epoch"]
        rows[cell] = {
            "cell": cell, "epochs": len(hist), "best_epoch": best,
            "median_epoch_s": statistics.median(secs), "first_epoch_s": secs[0],
            "seconds_to_best": sum(secs[:best]), "wall_s": wall,
            "dev_prop_f1": hist[best - 1]["dev_score"], "parameters": meta["training"]["parameters"],
        }
        r = rows[cell]
        print(f"{cell:6} epochs {r['epochs']:2d} (best {best:2d})  median epoch {r['median_epoch_s']:6.1f}s  "
              f"first epoch (with compilation) {r['first_epoch_s']:6.1f}s  to best {r['seconds_to_best']:7.0f}s  "
              f"wall {wall:7.0f}s  dev prop F1 {r['dev_prop_f1']:.4f}", flush=True)
        if args.json:
            print(json.dumps(r), flush=True)
    if "elman" in rows:
        base = rows["elman"]["median_epoch_s"]
        for cell, r in rows.items():
            print(f"median epoch time relative to elman: {cell} {r['median_epoch_s'] / base:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
