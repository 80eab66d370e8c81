"""Seconds per training batch of the accurate network with MiniLM-L6 and with MPNet-base, and in float32 and
mixed_bfloat16 (``--precision``), side by side.

The network of experiments/configs/accurate-crf.yaml (LoRA rank 64 on query and value, BiLSTM 128, CRF heads,
DSE and ESE jointly, batches of 32 sentences) is built once for each encoder and precision and trained with
``train_on_batch``, as the trainer does, on invented sentences of a few lengths (no corpus text); the variants
take turns, so a shared machine's load falls on all alike.  Each variant's ratio to the first, times a
measured epoch of the first, estimates its epoch:

    python -m experiments.benchmarks.time_encoder_training --cpus 0 --batches 4
    python -m experiments.benchmarks.time_encoder_training --cpus 0 --encoders mpnet \
        --precisions float32 mixed_bfloat16
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from opinion_tagger.config import PRECISIONS  # no TensorFlow: before --cpus pins the process

WORDS = (
    "the minister said on monday that the new plan would cut costs sharply , and critics called it a "
    "reckless gamble with public money while supporters praised its ambition"
).split()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cpus", default=None, help="pin to these cores first (as run_cv.py --cpus)")
    ap.add_argument("--lengths", type=int, nargs="*", default=[12, 24, 48], help="words per sentence")
    ap.add_argument("--batches", type=int, default=4, help="timed batches per variant and length")
    ap.add_argument("--encoders", nargs="+", choices=("minilm", "mpnet"), default=["minilm", "mpnet"])
    ap.add_argument("--precisions", nargs="+", choices=PRECISIONS, default=["float32"])
    args = ap.parse_args(argv)
    from experiments.cpu_pinning import limit_cpu_threads, parse_cpus

    limit_cpu_threads(parse_cpus(args.cpus) if args.cpus else None)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import numpy as np

    from opinion_tagger.config import TaggerConfig
    from opinion_tagger.model.network import build_training_model, compile_model
    from opinion_tagger.runtime.batching import encode_words, network_inputs
    from opinion_tagger.runtime.vocabulary import Vocabulary
    from opinion_tagger.runtime.wordpieces import word_pieces

    base = {
        "task": "joint",
        "model": {
            "recurrent": {"cell": "lstm", "depth": 1, "hidden": 128, "input_dropout": 0.1, "dropout": 0.1},
            "embeddings": {"features": "random", "dim": 50},
            "encoder": {"fine_tune": True, "lora_rank": 64},
            "head": {"output": "crf"},
        },
        "training": {"batch_size": 32, "jit_compile": False, "optimizer": {"learning_rate": 2e-3}},
    }
    vocab = Vocabulary(["<pad>", "<unk>", *sorted(set(WORDS))])
    nets = {}
    for enc in args.encoders:
        for precision in args.precisions:
            cfg = TaggerConfig.from_dict({**base, "model.encoder.name": enc, "training.precision": precision})
            model = build_training_model(cfg, len(vocab), 50)  # no auxiliary heads in this configuration
            compile_model(model, cfg, steps_per_epoch=100)
            nets[f"{enc} {precision}"] = (model, word_pieces(enc))
    first = next(iter(nets))
    rng = np.random.default_rng(0)
    print(
        f"{'words':>5} {'pieces':>6} " + " ".join(f"{name + ' s/batch':>24}" for name in nets) + "  ratios to " + first
    )
    for n in args.lengths:
        words = [[WORDS[i] for i in rng.integers(0, len(WORDS), n)] for _ in range(32)]
        ids = encode_words(vocab, words)
        y = {t: rng.integers(0, 3, ids.shape).astype("int32") for t in ("DSE", "ESE")}
        times: dict[str, list[float]] = {name: [] for name in nets}
        pieces_len = 0
        for k in range(args.batches + 1):  # the first call of each builds its graph: not timed
            for name, (model, pieces) in nets.items():
                x = network_inputs(ids, words, pieces=pieces)
                pieces_len = max(pieces_len, x["token_ids"].shape[1])
                t0 = time.perf_counter()
                model.train_on_batch(x, y)
                if k:
                    times[name].append(time.perf_counter() - t0)
        med = {name: float(np.median(t)) for name, t in times.items()}
        ratios = " ".join(f"{med[name] / med[first]:.2f}" for name in nets)
        print(f"{n:5d} {pieces_len:6d} " + " ".join(f"{med[name]:24.2f}" for name in nets) + f"  {ratios}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
