"""Would another runtime or precision tag faster at the same accuracy?  A bundle's self-contained fp32 graph
in OpenVINO's CPU plugin, at f32 and at bf16 (its INFERENCE_PRECISION_HINT; bf16 needs a CPU with native
bf16 dot products, e.g. AVX512_BF16 or AMX), against ONNX Runtime (the shipped path), in the same run:
fold-0 test F1 of each, then the network and decoding's speed (``SentenceTagger.predict`` over the 734 sentences,
medians of ``--repeats``, the runtimes interleaved).

OpenVINO is not a dependency of the project; install it beside it first:

    pip install openvino
    python -m experiments.benchmarks.openvino_precision [--model accurate] [--threads 2]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from experiments.benchmarks.quantization import self_contained
from opinion_tagger.corpus.sources import load_documents, select
from opinion_tagger.corpus.split import load_split
from opinion_tagger.evaluation.scoring import evaluate_tagger
from opinion_tagger.paths import default_datasplit, default_mpqa, resolve_model
from opinion_tagger.runtime.sentence_tagger import SentenceTagger


class OpenVinoNetwork:
    """The graph compiled by OpenVINO's CPU plugin, with the ONNX Runtime network's interface."""

    def __init__(self, reference, file: Path, precision: str, threads: int):
        import openvino as ov

        core = ov.Core()
        config = {"INFERENCE_NUM_THREADS": threads, "INFERENCE_PRECISION_HINT": precision}
        self.compiled = core.compile_model(core.read_model(str(file)), "CPU", config)
        self.request = self.compiled.create_infer_request()
        self.reference = reference  # its input and output names, its CRF transitions

    def forward(self, inputs) -> dict[str, np.ndarray]:
        feed = {k: np.ascontiguousarray(inputs[k], dtype=np.int32) for k in self.reference.inputs}
        by_name = {port.get_any_name(): value for port, value in self.request.infer(feed).items()}
        return {t: by_name[t][..., :3] for t in self.reference.outputs}

    def crf_params(self, typ: str):
        return self.reference.crf_params(typ)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="accurate")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    try:
        import openvino  # noqa: F401
    except ImportError:
        print("this benchmark needs OpenVINO: pip install openvino", file=sys.stderr)
        return 1
    bundle = resolve_model(args.model)
    tagger = SentenceTagger.load(bundle, backend="onnx", threads=args.threads)
    sents = select(load_documents("mpqa", default_mpqa()), load_split(default_datasplit(), 0).test)
    words = [s.words for s in sents]
    tokens = sum(map(len, words))
    print(f"{bundle}: fold-0 test, {len(sents)} sentences, {tokens:,} tokens; {args.threads} threads")
    with tempfile.TemporaryDirectory() as tmp:
        fp32 = Path(tmp) / "fp32.onnx"
        self_contained(bundle, tagger.meta["onnx"], fp32)
        reference = tagger.network
        networks = {
            "ONNX Runtime fp32": reference,
            "OpenVINO f32": OpenVinoNetwork(reference, fp32, "f32", args.threads),
            "OpenVINO bf16": OpenVinoNetwork(reference, fp32, "bf16", args.threads),
        }
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
