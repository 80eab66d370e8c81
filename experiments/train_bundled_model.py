"""Train the model bundled with the package (tagger/models/default).

The paper's split, fold 0: trained on the 495 train + dev documents for a fixed
number of epochs (chosen on the dev set in a fold-0 run that selected on dev),
then scored on the 40 fold-0 test documents, which it never saw.  The
vocabulary is the training words GloVe knows plus GloVe's most frequent words
(no test-set words), so the bundle stays a few MB.

    python experiments/train_bundled_model.py [--epochs N] [--out tagger/models/default]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

from tagger.config import TaggerConfig
from tagger.corpus.dataset import load_documents, select
from tagger.corpus.split import load_split
from tagger.paths import default_datasplit, default_model, default_mpqa
from tagger.predict import Tagger
from tagger.provenance import git_commit
from tagger.evaluation import evaluate_tagger
from tagger.storage import atomic_write_text
from tagger.training import remove_checkpoint, train

CONFIG = TaggerConfig(task="joint", cell="elman", depth=3, budget="200k", features="glove",
                      glove_vocab=20000, max_epochs=15, patience=100, seed=1)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mpqa", default=str(default_mpqa()))
    ap.add_argument("--datasplit", default=str(default_datasplit()))
    ap.add_argument("--epochs", type=int, default=CONFIG.max_epochs)
    ap.add_argument("--out", default=str(default_model()))
    args = ap.parse_args()

    config = CONFIG.replace(max_epochs=args.epochs)
    docs = load_documents("mpqa", args.mpqa)
    split = load_split(args.datasplit, 0)
    train_s = select(docs, split.train + split.dev)
    test_s = select(docs, split.test)
    record = {"data": {"source": "mpqa", "path": "MPQA 2.0 (original 535-document subset)", "fold": 0,
                       "trained_on": "train+dev documents of fold 0 (495)", "scored_on": "fold 0 test (40)",
                       "sentences": {"train": len(train_s), "test": len(test_s)}},
              "seed": config.seed, "git_commit": git_commit()}
    shutil.rmtree(args.out, ignore_errors=True)
    t0 = time.perf_counter()
    train(config, train_s, [], args.out, progress=sys.stderr.isatty(), record=record)
    remove_checkpoint(args.out)
    report = evaluate_tagger(Tagger.load(args.out, backend="numpy"), test_s)
    path = Path(args.out) / "meta.json"  # the bundle's meta gets the held-out scores
    stored = json.loads(path.read_text())
    stored["scores"] = {"fold0_test": report}
    atomic_write_text(path, json.dumps(stored, indent=2) + "\n")  # the manifest in it stays valid
    print(f"trained in {time.perf_counter() - t0:.0f}s")
    for t, r in report.items():
        print(f"{t} fold-0 test: proportional F1 {100 * r['proportional']['f1']:.2f}, "
              f"binary F1 {100 * r['binary']['f1']:.2f}, exact F1 {100 * r['exact']['f1']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
