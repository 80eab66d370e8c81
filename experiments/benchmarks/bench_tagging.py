"""Tagging speed of a bundled model (``--model accurate|fast|PATH``) on the machine it runs on.

1. Whole process: `opinion-tagger tag --input DOCS.jsonl --out FILE` over the raw MPQA documents in
   ../shared (real news text), start-up, reading, sentence splitting, tokenisation, the network and
   writing the JSONL output included; the local engine's defaults (a worker process per core, ONNX
   Runtime).  Tokens per second, median of --repeats runs.
2. In one process (OpinionTagger.tag_many, no output written): ONNX Runtime and, as the baseline measured
   in the same run, the Keras network (TensorFlow); their ratio.
3. Start-up: wall time from starting `opinion-tagger tag TEXT` to its first output line, median of
   --starts runs.
4. For a model with a fine-tuned encoder (MiniLM-L6 or MPNet-base), the fp32 compute limit: the network's
   multiply-adds per token on this text, against 2 AVX2 FMA units x 8 lanes x 2 FLOP per cycle and core.
5. With --precision bf16 (a CPU with native bf16, the bf16 extra): the whole process and the start-up at bf16
   (OpenVINO), beside fp32's in the same run; on any other CPU, the one-line refusal.
6. Stages (--stages), each alone on one thread, microseconds per token (median of --repeats): spaCy's
   sentences and tokens, the network in ONNX Runtime with its decoding (``SentenceTagger.predict``, or
   ``predict_frames`` for a model with frame heads, as tagging runs it), spans and
   the JSONL line.  Their sum bounds what a worker per core can reach: the cores times 1e6 / the sum.

    python -m experiments.benchmarks.bench_tagging [--model accurate] [--docs 200] [--repeats 3] [--starts 3] [--stages]
        [--precision bf16]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from opinion_tagger.corpus.mpqa import MPQACorpus
from opinion_tagger.errors import TaggerError
from opinion_tagger.paths import default_mpqa, resolve_model
from opinion_tagger.runtime.bundle import load_bundle_files
from opinion_tagger.tagging.tagger import OpinionTagger

# the commands run as on a user's machine: Python keeps the compiled bytecode of the package it imports (an
# environment may set PYTHONDONTWRITEBYTECODE, and then every start compiles the package again: 0.04 s)
QUIET = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"TF_CPP_MIN_LOG_LEVEL": "3"}


def throughput(model, backend: str, texts: list[str], repeats: int) -> tuple[float, int]:
    ot = OpinionTagger.load(model, backend=backend)
    list(ot.tag_many(texts[:5]))  # warm-up (graph tracing for keras)
    times, n_tokens = [], 0
    for _ in range(repeats):
        t0 = time.perf_counter()
        docs = list(ot.tag_many(texts, chunk=128))
        times.append(time.perf_counter() - t0)
        n_tokens = sum(len(s.tokens) for d in docs for s in d.sentences)
    return statistics.median(times), n_tokens


def whole_process(model, texts: list[str], repeats: int, extra: list[str]) -> tuple[float, int]:
    """Median wall time of the tag command over ``texts`` (one JSONL record each), and the tokens it wrote."""
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / "docs.jsonl", Path(tmp) / "tagged.jsonl"
        src.write_text("".join(json.dumps({"id": str(k), "text": t}) + "\n" for k, t in enumerate(texts)))
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "opinion_tagger",
                    "tag",
                    "--model",
                    str(model),
                    "--quiet",
                    "--input",
                    str(src),
                    "--out",
                    str(out),
                    *extra,
                ],
                check=True,
                env=QUIET,
                stderr=subprocess.DEVNULL,
            )
            times.append(time.perf_counter() - t0)
        with open(out, encoding="utf-8") as fh:
            tokens = sum(len(s["tokens"]) for line in fh for s in json.loads(line).get("sentences", []))
    return statistics.median(times), tokens


def first_output(model, backend: str, extra: tuple[str, ...] = ()) -> float:
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "opinion_tagger",
            "tag",
            "--model",
            str(model),
            "--backend",
            backend,
            *extra,
            "--quiet",
            "Officials said the plan was daylight robbery.",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=QUIET,
    )
    proc.stdout.readline()
    elapsed = time.perf_counter() - t0
    proc.wait()
    return elapsed


def clock_ghz() -> float | None:
    try:
        mhz = [float(line.split(":")[1]) for line in open("/proc/cpuinfo") if line.startswith("cpu MHz")]
    except OSError:
        return None
    return max(mhz) / 1000 if mhz else None


def encoder_shape(contextual: str) -> tuple[int, int, int]:
    """Hidden size, feed-forward size and layers of the installed encoder, from its own config.json."""
    from opinion_tagger.encoders import ENCODERS
    from opinion_tagger.runtime.base_weights import locate

    c = json.loads((locate(ENCODERS[contextual]) / "config.json").read_text())
    return c["hidden_size"], c["intermediate_size"], c["num_hidden_layers"]


def compute_limit(model, texts: list[str], cores: int) -> None:
    """Multiply-adds per token of the encoder + BiLSTM network on ``texts``, and the tokens/s they allow."""
    from opinion_tagger.runtime.wordpieces import word_pieces
    from opinion_tagger.tagging.tagger import tokenised

    vocab, config, _ = load_bundle_files(model)
    docs = tokenised([(str(k), t) for k, t in enumerate(texts)])
    sents = [[t.text for t in s.tokens] for d in docs for s in d.sentences]
    pieces = word_pieces(config.model.encoder.name, cache=False)
    lengths = [len(pieces.sequence(w)[0]) for w in sents]
    words = sum(map(len, sents))
    d, ff, layers = encoder_shape(config.model.encoder.name)
    per_piece = layers * (4 * d * d + 2 * d * ff)  # q, k, v, output projections and the feed-forward block
    attention = sum(layers * 2 * n * n * d for n in lengths)  # scores and weighted sums, per sentence
    feat = d + (50 if config.model.embeddings.features == "glove" else config.model.embeddings.dim)
    rnn = (
        2 * 4 * config.hidden_size * (feat + config.hidden_size) * config.model.recurrent.depth
    )  # LSTM, both directions
    macs = (per_piece * sum(lengths) + attention) / words + rnn
    ghz = clock_ghz()
    print(
        f"compute: {sum(lengths) / words:.3f} wordpieces per token (the encoder's start and end pieces included), "
        f"{2 * macs / 1e6:.1f} MFLOP per token (fp32, no padding)"
    )
    if ghz:
        peak = cores * 32 * ghz * 1e9  # 2 FMA units x 8 fp32 lanes x 2 FLOP, per cycle and core (AVX2)
        print(
            f"fp32 limit on {cores} AVX2 cores at {ghz:.2f} GHz: {peak / 1e9:.0f} GFLOP/s = "
            f"{peak / (2 * macs):,.0f} tokens/s for the network alone"
        )


def stages(model, texts: list[str], repeats: int, cores: int) -> None:
    """Each stage of tagging alone, on one thread: microseconds per token, and the bound their sum sets."""
    from opinion_tagger.tagging.formats import record_text
    from opinion_tagger.tagging.tagger import tokenised, with_predictions

    ot = OpinionTagger.load(model, threads=1)
    records = [(str(k), t) for k, t in enumerate(texts)]
    docs = tokenised(records[:5])  # warm-up: spaCy's vocabulary, ONNX Runtime's first run
    ot.tagger.predict([[t.text for t in s.tokens] for d in docs for s in d.sentences])
    times: dict[str, list[float]] = {
        "spaCy sentences and tokens": [],
        "network and decoding": [],  # and the frame heads, for a model with them
        "spans": [],
        "JSONL line": [],
    }
    n_tokens = 0
    for _ in range(repeats):
        t0 = time.perf_counter()
        docs = tokenised(records)
        t1 = time.perf_counter()
        sents = [[t.text for t in s.tokens] for d in docs for s in d.sentences]
        frames = None
        if ot.tagger.heads is not None:  # frame heads: polarity, intensity and holder too, as tagging runs them
            both = ot.tagger.predict_frames(sents, batch_size=ot.batch_size)
            preds, frames = [p for p, _ in both], [f for _, f in both]
        else:
            preds = ot.tagger.predict(sents, batch_size=ot.batch_size)
        t2 = time.perf_counter()
        with_predictions(docs, preds, frames)
        t3 = time.perf_counter()
        lines = [record_text(d, "jsonl") for d in docs]
        t4 = time.perf_counter()
        n_tokens = sum(map(len, sents))
        for name, dt in zip(times, (t1 - t0, t2 - t1, t3 - t2, t4 - t3)):
            times[name].append(dt)
    assert len(lines) == len(docs)
    total = 0.0
    for name, ts in times.items():
        us = 1e6 * statistics.median(ts) / n_tokens
        total += us
        print(f"stage {name:28}: {us:6.2f} us/token = {1e6 / us:>9,.0f} tokens/s on one thread")
    print(
        f"stages together: {total:.2f} us/token; a worker per core on {cores} cores: at most "
        f"{cores * 1e6 / total:,.0f} tokens/s before reading input, processes and writing"
    )


def bf16(model, texts: list[str], args, fp32_rate: float) -> None:
    """The whole process and the start-up at --precision bf16, against fp32's rate of this run."""
    try:
        OpinionTagger.load(model, precision="bf16")
    except TaggerError as exc:
        print(f"bf16: {exc}")
        return
    secs, n = whole_process(model, texts, args.repeats, ["--precision", "bf16"])
    print(
        f"whole process at bf16: {n:,} tokens in {secs:.2f}s (median of {args.repeats}) = {n / secs:,.0f} tokens/s, "
        f"{n / secs / fp32_rate:.2f} times fp32's"
    )
    for precision in ("fp32", "bf16"):
        starts = [first_output(model, "onnx", ("--precision", precision)) for _ in range(args.starts)]
        print(f"{precision} start to first tagged output: median {statistics.median(starts):.2f}s ({args.starts} runs)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="accurate", help="bundled model name or bundle directory (default: accurate)")
    ap.add_argument("--mpqa", default=str(default_mpqa()))
    ap.add_argument("--docs", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--starts", type=int, default=3)
    ap.add_argument("--no-keras", action="store_true", help="skip the Keras baseline")
    ap.add_argument("--stages", action="store_true", help="only the stages, each alone on one thread")
    ap.add_argument(
        "--precision",
        choices=("fp32", "bf16"),
        default="fp32",
        help="bf16: also the whole process and the start-up at --precision bf16, beside fp32 in the same run",
    )
    args = ap.parse_args()

    texts = [d.text for d in MPQACorpus(args.mpqa)][: args.docs]
    model = resolve_model(args.model)
    config = load_bundle_files(model)[1]
    cores = len(os.sched_getaffinity(0))
    print(f"model: {model}; {len(texts)} documents, {sum(map(len, texts)):,} characters; {cores} cores")
    if args.stages:
        stages(model, texts, args.repeats, cores)
        return 0
    secs, n = whole_process(model, texts, args.repeats, [])
    print(
        f"whole process (tag --input, default workers): {n:,} tokens in {secs:.2f}s (median of {args.repeats}) "
        f"= {n / secs:,.0f} tokens/s"
    )
    if args.precision == "bf16":
        bf16(model, texts, args, n / secs)
    results = {}
    for backend in ("onnx",) + (() if args.no_keras else ("keras",)):
        secs, n = throughput(model, backend, texts, args.repeats)
        results[backend] = n / secs
        print(
            f"in one process, {backend:5}: {n:,} tokens in {secs:.2f}s (median of {args.repeats}) = "
            f"{n / secs:,.0f} tokens/s"
        )
    if len(results) == 2:
        print(f"onnx/keras throughput ratio (one process): {results['onnx'] / results['keras']:.2f}x")
    for backend in results:
        starts = [first_output(model, backend) for _ in range(args.starts)]
        print(
            f"{backend:5} start to first tagged output: median {statistics.median(starts):.2f}s "
            f"(min {min(starts):.2f}, max {max(starts):.2f}, {args.starts} runs)"
        )
    if config.model.encoder.fine_tune:
        compute_limit(model, texts, cores)
    return 0


if __name__ == "__main__":
    sys.exit(main())
