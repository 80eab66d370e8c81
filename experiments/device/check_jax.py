"""Check that the Keras network on the current backend (JAX on a GPU machine) tags like ONNX Runtime.

    KERAS_BACKEND=jax python -m experiments.device.check_jax [N_SENTENCES]

Tags the first N reference sentences (default 150) with the bundled model through Keras on
the current backend and through ONNX Runtime (``model.onnx``); prints whether the tags are equal and
the largest confidence difference.  Exits 1 when the tags differ.
"""

from __future__ import annotations

import sys

from opinion_tagger.corpus.sources import load_documents
from opinion_tagger.paths import default_model, default_reference
from opinion_tagger.runtime.sentence_tagger import SentenceTagger


def main() -> int:
    import keras

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 150
    docs = load_documents("reference", default_reference())
    sents = [s.words for d in docs.values() for s in d][:n]
    a = SentenceTagger.load(default_model(), backend="keras").predict(sents)
    b = SentenceTagger.load(default_model(), backend="onnx").predict(sents)
    same = all(ra[t][0] == rb[t][0] for ra, rb in zip(a, b) for t in ra)
    diff = max(abs(x - y) for ra, rb in zip(a, b) for t in ra for x, y in zip(ra[t][1], rb[t][1]))
    print(
        f"backend {keras.backend.backend()}: {len(sents)} sentences, tags equal {same}, "
        f"largest confidence difference {diff:.2e}"
    )
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
