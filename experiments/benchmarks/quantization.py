"""Does int8 dynamic quantization keep a bundle's accuracy?  Fold-0 test F1 and speed of ONNX Runtime's
``quantize_dynamic`` variants of ``model.onnx`` against fp32, in the same run.

The bundle's model.onnx, with its external weights put inside (a self-contained fp32 graph), is quantized
(weights int8, activations quantized per call): per tensor, per channel, and per channel on the encoder's
feed-forward layers only (two thirds of its multiply-adds).  Each variant tags the 734 sentences of the 40
fold-0 test documents (spaCy tokens over MPQA, as the bundle's meta.json scores) on one thread.

    python -m experiments.benchmarks.quantization [--model accurate]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
import time
from pathlib import Path

from opinion_tagger.corpus.sources import load_documents, select
from opinion_tagger.corpus.split import load_split
from opinion_tagger.evaluation.scoring import evaluate_tagger
from opinion_tagger.paths import default_datasplit, default_mpqa, resolve_model
from opinion_tagger.runtime.onnx_network import OnnxNetwork
from opinion_tagger.runtime.sentence_tagger import SentenceTagger


def self_contained(bundle: Path, meta: dict, file: Path) -> None:
    """The bundle's model.onnx with its external weights written in, as ``file``."""
    from opinion_tagger.plugins.openvino_backend import whole_graph

    file.write_bytes(whole_graph(bundle, meta))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="accurate")
    args = ap.parse_args()
    from onnxruntime.quantization import QuantType, quantize_dynamic

    bundle = resolve_model(args.model)
    tagger = SentenceTagger.load(bundle, backend="onnx", threads=1)
    sents = select(load_documents("mpqa", default_mpqa()), load_split(default_datasplit(), 0).test)
    tokens = sum(len(s.words) for s in sents)
    with tempfile.TemporaryDirectory() as tmp:
        fp32 = Path(tmp) / "fp32.onnx"
        self_contained(bundle, tagger.meta["onnx"], fp32)
        import onnx

        names = [n.name for n in onnx.load(str(fp32)).graph.node if n.op_type in ("MatMul", "Gemm")]
        ffn = [n for n in names if "feedforward" in n]
        variants = {
            "fp32": None,
            "int8 per tensor": dict(per_channel=False),
            "int8 per channel": dict(per_channel=True),
            "int8 per channel, feed-forward only": dict(per_channel=True, nodes_to_quantize=ffn),
        }
        print(f"{bundle}: fold-0 test, {len(sents)} sentences, {tokens:,} tokens; one thread")
        for name, options in variants.items():
            file = fp32
            if options is not None:
                file = Path(tmp) / f"{len(name)}.onnx"
                with contextlib.redirect_stdout(io.StringIO()):  # the quantizer prints the graph's shapes
                    quantize_dynamic(fp32, file, weight_type=QuantType.QInt8, **options)
            # the self-contained file in ONNX Runtime, as a bundle's network (CRF transitions from meta.json)
            tagger.network = OnnxNetwork(bundle, dict(tagger.meta["onnx"], file=str(file), externals={}), threads=1)
            t0 = time.perf_counter()
            report = evaluate_tagger(tagger, sents)
            secs = time.perf_counter() - t0
            scores = ", ".join(
                f"{t} prop {100 * r['proportional']['f1']:.2f} bin {100 * r['binary']['f1']:.2f}"
                for t, r in report.items()
            )
            print(f"{name:36} {file.stat().st_size / 1e6:6.1f} MB  {scores}  {tokens / secs:,.0f} tokens/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
