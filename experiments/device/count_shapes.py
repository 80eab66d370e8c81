"""How many batch shapes a fold's MPNet run compiles, and how much padding it computes, under a set of length
buckets (OPINION_TAGGER_LENGTH_BUCKETS): training batches over five epochs' orders, and the dev and test sets cut
the same way (batches of 32; prediction groups sentences by a word budget, so its shapes are an estimate).

    python -m experiments.device.count_shapes --fold 4 --buckets 16,32,64,128,256
"""

from __future__ import annotations

import argparse
import os
from collections import Counter

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fold", type=int, default=4)
    ap.add_argument("--buckets", default="", help="comma-separated lengths; empty: the default buckets")
    ap.add_argument("--epochs", type=int, default=5)
    args = ap.parse_args()
    os.environ["OPINION_TAGGER_LENGTH_BUCKETS"] = args.buckets

    from opinion_tagger.corpus.sources import load_documents, select
    from opinion_tagger.corpus.split import load_split
    from opinion_tagger.encoders import MAX_PIECES
    from opinion_tagger.paths import default_datasplit, default_reference
    from opinion_tagger.runtime.batching import batches, bucket_length, length_buckets
    from opinion_tagger.runtime.wordpieces import word_pieces

    split = load_split(default_datasplit(), args.fold)
    docs = load_documents("reference", default_reference())
    pieces = word_pieces("mpnet")
    print(f"fold {args.fold}, buckets {','.join(map(str, length_buckets()))}")
    for part in ("train", "dev", "test"):
        sentences = select(docs, getattr(split, part))
        words = [len(s.words) for s in sentences]
        n_pieces = [len(pieces.sequence(s.words)[0]) for s in sentences]
        shapes: Counter = Counter()
        padded = real = 0
        for epoch in range(args.epochs):
            for batch in batches(words, 32, np.random.default_rng(epoch)):
                shape = (
                    bucket_length(max(words[i] for i in batch)),
                    min(bucket_length(max(n_pieces[i] for i in batch)), MAX_PIECES),
                )
                shapes[shape] += 1
                padded += 32 * shape[1]
                real += sum(n_pieces[i] for i in batch)
        print(f"{part}: {len(sentences)} sentences, {len(shapes)} shapes, {padded / real:.2f} padded pieces a real one")


if __name__ == "__main__":
    main()
