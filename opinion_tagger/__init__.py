"""opinion-tagger: deep bidirectional RNN taggers for opinion expressions (DSE, ESE).

The packages, in the order data flows through them (corpus -> model -> training -> evaluation; bundles ->
runtime -> tagging -> engines / annotator / CLI):

    corpus/      MPQA 2.0 and the reference BIO files, the split, the converted format
    model/       the Keras networks: cells, CRF, the MiniLM and MPNet encoders, the Keras back end
    training/    one way in (run: chooses the trainer), the Keras trainer, the fast JAX trainer, data-parallel,
                 the CRF baseline; checkpoints and early stopping shared
    export/      a trained network to ONNX, bundles written
    evaluation/  the paper's metrics, scoring, summaries and paired comparisons of results
    experiment   the cross-validation runner (configurations, folds, results where the caller says)
    runtime/     what tagging needs and nothing else: bundles read and checked, ONNX Runtime, SentenceTagger
    tagging/     input records, OpinionTagger (text in, spans out), output formats
    engines/     the local engine (a worker process per core), batch tagging in partitions, on Ray
    annotation/  the annotation store and the Streamlit annotator
    cli/         ``opinion-tagger``: a module per command group, a thin layer over all of the above

Shared by every stage: ``config`` (TaggerConfig), ``cells`` and ``encoders`` (the registries), ``sentences``
(tokens, sentences, spans), ``tokenize`` (spaCy), ``extras`` (the optional installs), ``errors``, ``paths``,
``provenance``, ``storage`` (atomic files).  The study itself (its names, tables, findings, result
directories) lives under ``experiments/`` in the repository, not in the package.
"""

__version__ = "0.1.0"

import os as _os

_os.environ.setdefault("KERAS_BACKEND", "tensorflow")
_os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def __getattr__(name):
    # ``from opinion_tagger import OpinionTagger``, imported on first use so that ``import opinion_tagger``
    # (every command, every subpackage) loads neither spaCy nor a network.
    if name == "OpinionTagger":
        from opinion_tagger.tagging.tagger import OpinionTagger

        return OpinionTagger
    raise AttributeError(f"module 'opinion_tagger' has no attribute {name!r}")
