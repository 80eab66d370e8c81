"""Fill the contextual-vector cache for a configuration's corpus before training.

    python -m experiments.encode_contextual experiments/configs/beyond-minilm.yaml [--chunk 500]

Every fold and experiment that uses the same encoder, pooling and data source
reads the same cache (experiments/cache/, git-ignored), so encoding the whole
corpus once up front saves each run from waiting on it.  The cache is written
after every chunk of sentences, so the script can be stopped and restarted.
"""

from __future__ import annotations

import argparse
import sys

from experiments.cross_validation import context_cache_path, data_path, load_experiments
from experiments.locations import RUNS
from opinion_tagger.errors import TaggerError


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("config", help="YAML configuration file with contextual features")
    ap.add_argument("--chunk", type=int, default=500, help="sentences per cache write")
    ap.add_argument("--runs", default=str(RUNS))
    args = ap.parse_args(argv)
    from pathlib import Path

    from tqdm.auto import tqdm

    from opinion_tagger.corpus.sources import load_documents
    from opinion_tagger.model.minilm import MiniLMEncoder

    try:
        done = set()
        for exp in load_experiments(args.config):
            cfg = exp.config()
            key = (cfg.model.encoder.name, cfg.model.encoder.pooling, exp.data["source"])
            if not cfg.model.encoder.name or key in done:
                continue
            done.add(key)
            cache = context_cache_path(Path(args.runs), cfg, exp.data["source"])
            docs = load_documents(exp.data["source"], data_path(exp.data))
            sentences = [s.words for sents in docs.values() for s in sents]
            encoder = MiniLMEncoder(cfg.model.encoder.pooling, cache)
            before = len(encoder.cache)
            for start in tqdm(range(0, len(sentences), args.chunk), desc=cache.name, unit="chunk"):
                encoder.encode(sentences[start : start + args.chunk])
            print(
                f"{cache}: {len(sentences)} sentences, {len(encoder.cache) - before} newly encoded, "
                f"{len(encoder.cache)} cached"
            )
    except TaggerError as exc:
        print(f"encode_contextual: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
