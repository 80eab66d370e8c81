"""Seconds per training batch of the accurate network with MiniLM-L6 and with MPNet-base, side by side.

The network of experiments/configs/accurate-crf.yaml (LoRA rank 64 on query and value, BiLSTM 128, CRF heads,
DSE and ESE jointly, batches of 32 sentences) is built once with each encoder and trained with
``train_on_batch``, as the trainer does, on invented sentences of a few lengths (no corpus text); the two
encoders take turns, so a shared machine's load falls on both alike.  The ratio, times a measured MiniLM
epoch, estimates an MPNet epoch:

    python experiments/benchmarks/time_encoder_training.py --cpus 0 --batches 4
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

WORDS = (
    "the minister said on monday that the new plan would cut costs sharply , and critics called it a "
    "reckless gamble with public money while supporters praised its ambition"
).split()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cpus", default=None, help="pin to these cores first (as run_cv.py --cpus)")
    ap.add_argument("--lengths", type=int, nargs="*", default=[12, 24, 48], help="words per sentence")
    ap.add_argument("--batches", type=int, default=4, help="timed batches per encoder and length")
    args = ap.parse_args(argv)
    from tagger.threads import limit_cpu_threads, parse_cpus

    limit_cpu_threads(parse_cpus(args.cpus) if args.cpus else None)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import numpy as np

    from tagger.config import TaggerConfig
    from tagger.network.contextual import word_pieces
    from tagger.network.features import Vocabulary, encode_words, network_inputs
    from tagger.network.model import build_model, compile_model

    base = dict(
        task="joint",
        cell="lstm",
        depth=1,
        hidden=128,
        features="random",
        embedding_dim=50,
        context_fine_tune=True,
        context_lora_rank=64,
        output="crf",
        input_dropout=0.1,
        dropout=0.1,
        learning_rate=2e-3,
        batch_size=32,
        jit_compile=False,
    )
    vocab = Vocabulary(["<pad>", "<unk>", *sorted(set(WORDS))])
    nets = {}
    for enc in ("minilm", "mpnet"):
        cfg = TaggerConfig(**base, contextual=enc)
        model = build_model(cfg, len(vocab), 50)
        compile_model(model, cfg, steps_per_epoch=100)
        nets[enc] = (cfg, model, word_pieces(enc))
    rng = np.random.default_rng(0)
    print(f"{'words':>5} {'pieces':>6} {'minilm s/batch':>14} {'mpnet s/batch':>13} {'ratio':>5}")
    for n in args.lengths:
        words = [[WORDS[i] for i in rng.integers(0, len(WORDS), n)] for _ in range(32)]
        ids = encode_words(vocab, words)
        y = {t: rng.integers(0, 3, ids.shape).astype("int32") for t in ("DSE", "ESE")}
        times = {enc: [] for enc in nets}
        for k in range(args.batches + 1):  # the first call of each builds its graph: not timed
            for enc, (_cfg, model, pieces) in nets.items():
                x = network_inputs(ids, words, pieces=pieces)
                t0 = time.perf_counter()
                model.train_on_batch(x, y)
                if k:
                    times[enc].append(time.perf_counter() - t0)
        m, p = (float(np.median(times[e])) for e in ("minilm", "mpnet"))
        print(f"{n:5d} {x['token_ids'].shape[1]:6d} {m:14.2f} {p:13.2f} {p / m:5.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
