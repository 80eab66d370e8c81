"""Training-step time of a fine-tuned encoder's network in float32 against mixed_bfloat16 (``--precision``).

Both networks (the `accurate` configuration: LoRA rank 64 on the encoder, a BiLSTM of 128 units, a CRF per type,
DSE and ESE jointly) are built in one process, one under each policy, and take turns on the same batch (random
word and wordpiece ids in a corpus-like shape: 32 sentences of 32 words, 40 wordpieces), so a busy machine slows
both alike.  Prints each one's median seconds per step and their ratio.

    python experiments/bench_precision.py [--encoder mpnet|minilm] [--steps 9] [--cpus 0]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from tagger.threads import add_cpus_option, pin_cpus


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--encoder", choices=("mpnet", "minilm"), default="mpnet")
    ap.add_argument("--steps", type=int, default=9, help="timed steps of each network (after 2 untimed)")
    add_cpus_option(ap, "pin to these cores, e.g. 0 (one thread a core)")
    ap.add_argument("--rows", type=int, default=32)
    ap.add_argument("--words", type=int, default=32)
    ap.add_argument("--pieces", type=int, default=40)
    args = ap.parse_args()
    pin_cpus(ap, args)  # before TensorFlow loads

    from tagger.config import TaggerConfig
    from tagger.network.model import build_model, compile_model, training_precision
    from tagger.provenance import machine

    base = TaggerConfig(
        task="joint",
        cell="lstm",
        depth=1,
        hidden=128,
        features="glove",
        contextual=args.encoder,
        context_fine_tune=True,
        context_lora_rank=64,
        output="crf",
        optimizer="adam",
        learning_rate=2e-3,
        lr_schedule="cosine",
        batch_size=args.rows,
        max_epochs=5,
        jit_compile=False,
    )
    nets = {}
    for precision in ("float32", "mixed_bfloat16"):
        config = base.replace(precision=precision)
        with training_precision(config):
            net = build_model(config, 5000, 50, pretrained=False, auxiliary=True)
        compile_model(net, config, 100)
        nets[precision] = net
    rng = np.random.default_rng(0)
    n, w, p = args.rows, args.words, args.pieces
    x = {
        "words": rng.integers(1, 5000, (n, w)).astype("int32"),
        "token_ids": rng.integers(5, 30000, (n, p)).astype("int32"),
        "padding_mask": np.ones((n, p), "int32"),
        "word_starts": np.tile(np.arange(1, w + 1), (n, 1)).astype("int32"),
    }
    if args.encoder == "minilm":
        x["segment_ids"] = np.zeros((n, p), "int32")
    y = {t: rng.integers(0, 3, (n, w)).astype("int32") for t in base.trained_types}
    times: dict[str, list[float]] = {k: [] for k in nets}
    for step in range(args.steps + 2):
        for precision, net in nets.items():
            t0 = time.perf_counter()
            net.train_on_batch(x, y)
            if step >= 2:
                times[precision].append(time.perf_counter() - t0)
    med = {k: float(np.median(v)) for k, v in times.items()}
    print(f"{args.encoder}, {n} sentences x {w} words, {p} wordpieces; {machine()}")
    for k, v in med.items():
        print(f"  {k:15s} median {v:.3f} s a step (of {len(times[k])})")
    print(f"  mixed_bfloat16 / float32: {med['mixed_bfloat16'] / med['float32']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
