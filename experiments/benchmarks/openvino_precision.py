"""Would another runtime or precision tag faster at the same accuracy?  A bundle's graph in OpenVINO's CPU
plug-in (``opinion_tagger.plugins.openvino_backend``, what ``--precision bf16`` runs), at f32 and at bf16
(bf16 needs a CPU with native bf16 dot products, AVX512_BF16 or AMX; on any other its refusal is printed),
against ONNX Runtime (fp32, the default), in the same run:
fold-0 test F1 of each, then the network and decoding's speed (``SentenceTagger.predict`` over the 734 sentences,
medians of ``--repeats``, the runtimes interleaved).

Needs the bf16 extra:

    pip install 'opinion-tagger[bf16]'
    python -m experiments.benchmarks.openvino_precision [--model accurate] [--threads 2]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from opinion_tagger.corpus.sources import load_documents, select
from opinion_tagger.corpus.split import load_split
from opinion_tagger.evaluation.scoring import evaluate_tagger
from opinion_tagger.paths import default_datasplit, default_mpqa, resolve_model
from opinion_tagger.runtime.sentence_tagger import SentenceTagger


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="accurate")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    from opinion_tagger.errors import TaggerError
    from opinion_tagger.plugins.openvino_backend import OpenVinoNetwork

    bundle = resolve_model(args.model)
    tagger = SentenceTagger.load(bundle, backend="onnx", threads=args.threads)
    sents = select(load_documents("mpqa", default_mpqa()), load_split(default_datasplit(), 0).test)
    words = [s.words for s in sents]
    tokens = sum(map(len, words))
    print(f"{bundle}: fold-0 test, {len(sents)} sentences, {tokens:,} tokens; {args.threads} threads")
    networks = {"ONNX Runtime fp32": tagger.network}
    for precision in ("f32", "bf16"):
        try:
            networks[f"OpenVINO {precision}"] = OpenVinoNetwork(bundle, tagger.meta, args.threads, precision)
        except TaggerError as exc:
            print(f"OpenVINO {precision}: {exc}")
    reference_f1: dict[str, float] = {}
    for name, network in networks.items():
        tagger.network = network
        report = evaluate_tagger(tagger, sents)
        prop = {t: 100 * r["proportional"]["f1"] for t, r in report.items()}
        reference_f1 = reference_f1 or prop  # ONNX Runtime's, the first
        scores = ", ".join(
            f"{t} prop {prop[t]:.3f} ({prop[t] - reference_f1[t]:+.3f}) bin {100 * r['binary']['f1']:.2f}"
            for t, r in report.items()
        )
        print(f"{name:18} {scores}", flush=True)
    seconds: dict[str, list[float]] = {name: [] for name in networks}
    for _ in range(args.repeats):
        for name, network in networks.items():
            tagger.network = network
            t0 = time.perf_counter()
            tagger.predict(words)
            seconds[name].append(time.perf_counter() - t0)
    base = statistics.median(seconds["ONNX Runtime fp32"])
    for name, ts in seconds.items():
        median = statistics.median(ts)
        print(
            f"{name:18} {tokens / median:>7,.0f} tokens/s (median of {len(ts)}), "
            f"{base / median:.2f} times ONNX Runtime's"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
