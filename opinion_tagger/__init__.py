"""opinion-tagger: deep bidirectional RNN taggers for opinion expressions (DSE, ESE).

The packages, in the order data flows through them (corpus -> model -> training -> evaluation; bundles ->
runtime -> tagging -> engines / annotator / CLI):

    corpus/      MPQA 2.0 and the reference BIO files, the split, the converted format
    model/       the Keras networks: cells, CRF, the MiniLM and MPNet encoders, the Keras back end
    training/    one way in (run: chooses the trainer), the Keras trainer, the fast JAX trainer, data-parallel,
                 the CRF baseline; checkpoints and early stopping shared
    export/      a trained network to ONNX, bundles written
    evaluation/  the paper's metrics and scoring
    runtime/     what tagging needs and nothing else: bundles read and checked, ONNX Runtime, SentenceTagger
    tagging/     input records, OpinionTagger (text in, spans out), output formats
    engines/     the local engine (a worker process per core), batch tagging in partitions, on Ray
    annotation/  the annotation store and the Streamlit annotator
    cli/         ``opinion-tagger``: a module per command group, a thin layer over all of the above

Shared by every stage: ``config`` (TaggerConfig), ``cells`` and ``encoders`` (the registries), ``sentences``
(tokens, sentences, spans), ``tokenize`` (spaCy), ``extras`` (the optional installs), ``errors``, ``paths``,
``provenance``, ``storage`` (atomic files).  The study itself (its cross-validation runner, fold locks, CPU
pinning, result summaries, names, tables, findings) lives under ``experiments/`` in the repository, not in the
package.

Importing the package sets nothing in the process's environment (Keras's back end and TensorFlow's log level
are given their defaults by ``opinion_tagger.model``, which the training stack imports before Keras).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__version__ = "0.1.0"
__all__ = [
    "BundleError",
    "InvalidText",
    "OpinionTagger",
    "SpanFrame",
    "TaggedDocument",
    "TaggedSentence",
    "TaggedSpan",
    "TaggedToken",
    "TaggerError",
    "__version__",
]

if TYPE_CHECKING:  # what a type checker sees; at run time each name is imported when first used
    from opinion_tagger.errors import BundleError, InvalidText, TaggerError
    from opinion_tagger.tagging.documents import SpanFrame, TaggedDocument, TaggedSentence, TaggedSpan, TaggedToken
    from opinion_tagger.tagging.tagger import OpinionTagger

_WHERE = {
    "OpinionTagger": "opinion_tagger.tagging.tagger",
    "SpanFrame": "opinion_tagger.tagging.documents",
    "TaggedDocument": "opinion_tagger.tagging.documents",
    "TaggedSentence": "opinion_tagger.tagging.documents",
    "TaggedSpan": "opinion_tagger.tagging.documents",
    "TaggedToken": "opinion_tagger.tagging.documents",
    "InvalidText": "opinion_tagger.errors",
    "TaggerError": "opinion_tagger.errors",
    "BundleError": "opinion_tagger.errors",
}


def __getattr__(name: str) -> object:
    # ``from opinion_tagger import OpinionTagger`` and the rest of ``__all__``, imported on first use, so that
    # ``import opinion_tagger`` (every command, every subpackage) loads neither spaCy, ONNX Runtime nor a network
    if name in _WHERE:
        import importlib

        value = getattr(importlib.import_module(_WHERE[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'opinion_tagger' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
