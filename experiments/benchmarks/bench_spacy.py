"""The spaCy component's throughput against ``OpinionTagger.tag_many`` on the same texts, in the same run.

Both tag the raw MPQA documents in ../shared (real news text) with the same model, in one process: the
component through ``nlp.pipe`` over ``spacy.blank("en")`` (spaCy's tokenizer, then the component's own
sentences and the network), ``tag_many`` with its own spaCy tokenizer and sentencizer.  The runs alternate;
tokens per second are medians of ``--repeats``, and their ratio is printed with the CPU.

    python -m experiments.benchmarks.bench_spacy [--model accurate] [--docs 100] [--repeats 3]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

import spacy

from opinion_tagger.corpus.mpqa import MPQACorpus
from opinion_tagger.paths import DEFAULT_NAME, default_mpqa
from opinion_tagger.tagging.tagger import OpinionTagger


def cpu_name() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=DEFAULT_NAME)
    ap.add_argument("--docs", type=int, default=100, help="MPQA documents tagged per run")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    texts = [d.text for _, d in zip(range(args.docs), MPQACorpus(default_mpqa()))]
    ot = OpinionTagger.load(args.model)
    nlp = spacy.blank("en")
    nlp.add_pipe("opinion_tagger", config={"model": args.model})
    tokens = sum(len(s.tokens) for d in ot.tag_many(texts) for s in d.sentences)  # also warms both up
    for _sdoc in nlp.pipe(texts):  # the pipeline's vocabulary learns the words, as tag_many's did
        pass
    rates: dict[str, list[float]] = {"tag_many": [], "nlp.pipe": []}
    for _ in range(args.repeats):
        t = time.perf_counter()
        for _doc in ot.tag_many(texts):
            pass
        rates["tag_many"].append(tokens / (time.perf_counter() - t))
        t = time.perf_counter()
        for _sdoc in nlp.pipe(texts):
            pass
        rates["nlp.pipe"].append(tokens / (time.perf_counter() - t))
    med = {k: statistics.median(v) for k, v in rates.items()}
    print(f"{args.model}, {len(texts)} MPQA documents ({tokens} tokens), {cpu_name()}, {args.repeats} runs each")
    for k, v in rates.items():
        print(f"  {k:9} {med[k]:9.0f} tokens/s (runs: {', '.join(f'{x:.0f}' for x in v)})")
    print(f"  nlp.pipe / tag_many: {med['nlp.pipe'] / med['tag_many']:.3f}")


if __name__ == "__main__":
    main()
