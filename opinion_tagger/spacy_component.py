"""The spaCy pipeline component ``opinion_tagger``: opinion expressions as a span group of the ``Doc``.

    import spacy
    nlp = spacy.blank("en")
    nlp.add_pipe("opinion_tagger")                      # config={"model": "accurate", "spans_key": "opinions"}
    doc = nlp("Officials said the plan was daylight robbery, as usual.")
    for span in doc.spans["opinions"]:
        print(span.label_, span.text)                   # DSE said / ESE as usual / ESE daylight robbery
    doc.spans["opinions"].attrs["scores"]               # a confidence per span, as spaCy's span categorizer keeps
    doc.spans["opinions"].attrs["frames"]               # a model with frame heads: polarity, intensity, holder
    doc.spans["opinions"].attrs.get("warning")          # set when the text looks like another language than English

A model with attitude and target heads gives a DSE span its attitude and targets as extension attributes,
``span._.attitude``, ``span._.attitude_score`` and ``span._.targets`` (a list of spans; None where the model does
not predict them, and for an ESE), and writes every target into the span group ``doc.spans["opinion_targets"]``
(label ``TARGET``; ``attrs["scores"]`` a score per target, ``attrs["opinions"]`` the index of its DSE in
``doc.spans["opinions"]``; ``target._.opinion`` is the DSE span).  A target two DSEs share is two spans there,
one per DSE (each span's ``id_`` is its DSE's index).  The attributes are read from the span groups, so they
survive ``doc.to_bytes`` and ``DocBin``.

spaCy finds the factory through the package's ``spacy_factories`` entry point: nothing needs importing first.
The component tags the ``Doc``'s own tokens (whitespace tokens left out), so a pipeline's tokenizer decides
what the network reads: the bundled models were trained and scored on spaCy's English tokenizer (what
``spacy.blank("en")`` and the trained English pipelines use); another tokenizer gives other words, and the
spans always fall on its tokens.  Sentences are the ``Doc``'s when a component before this one set them (a
parser, a senter, a sentencizer), else spaCy's rule-based sentencizer's, computed without changing the
``Doc``.  ``nlp.pipe`` tags a batch of documents at once; the model loads when first used, once per process
(``n_process`` forks or spawns workers).  ``nlp.to_disk`` keeps the model's name or path in the pipeline's
config; with ``copy_model`` the bundle is copied into the pipeline's folder and loaded from there.
"""

from __future__ import annotations

import gc
import os
import shutil
import weakref
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from spacy.language import Language
from spacy.tokens import Doc, Span, SpanGroup
from spacy.util import minibatch

from opinion_tagger.paths import DEFAULT_NAME, resolve_model
from opinion_tagger.runtime.bundle import check_exists
from opinion_tagger.runtime.network import DEFAULT_BACKEND, DEFAULT_PRECISION
from opinion_tagger.tagging.documents import TaggedDocument, TaggedSpan
from opinion_tagger.tagging.tagger import OpinionTagger

SPANS_KEY = "opinions"
TARGETS_KEY = "opinion_targets"  # the span group of the DSEs' targets (a model with target heads)
TARGET = "TARGET"  # a target span's label
COPIED = "model"  # the folder of a copied bundle inside the component's folder of a saved pipeline


@Language.factory(
    "opinion_tagger",
    default_config={
        "model": DEFAULT_NAME,
        "spans_key": SPANS_KEY,
        "targets_key": TARGETS_KEY,
        "backend": DEFAULT_BACKEND,
        "precision": DEFAULT_PRECISION,
        "threads": None,
        "batch_size": None,
        "copy_model": False,
    },
    assigns=["doc.spans"],
)
def make_opinion_tagger(
    nlp: Language,
    name: str,
    model: str,
    spans_key: str,
    backend: str,
    precision: str,
    threads: int | None,
    batch_size: int | None,
    copy_model: bool,
    targets_key: str = TARGETS_KEY,
) -> OpinionTaggerComponent:
    """The component (spaCy calls this with the pipeline's config)."""
    return OpinionTaggerComponent(
        nlp, name, model, spans_key, backend, threads, batch_size, copy_model, precision, targets_key
    )


class OpinionTaggerComponent:
    """Writes DSE and ESE spans into ``doc.spans[spans_key]`` (labels ``DSE``, ``ESE``; scores in the group's
    ``attrs["scores"]``; frames in its ``attrs["frames"]``, from a model with frame heads), and the DSEs' targets,
    from a model with target heads, into ``doc.spans[targets_key]`` (label ``TARGET``; ``attrs["scores"]``, and
    ``attrs["opinions"]``: each target's DSE, its index in ``doc.spans[spans_key]``).  ``model``, ``backend``,
    ``threads``, ``batch_size`` and ``precision`` are ``OpinionTagger.load``'s: ``batch_size`` sentences a batch of
    the network whatever their length (for a GPU), None for batches within the model's budget of words or
    wordpieces."""

    def __init__(
        self,
        nlp: Language,
        name: str = "opinion_tagger",
        model: str = DEFAULT_NAME,
        spans_key: str = SPANS_KEY,
        backend: str = DEFAULT_BACKEND,
        threads: int | None = None,
        batch_size: int | None = None,
        copy_model: bool = False,
        precision: str = DEFAULT_PRECISION,
        targets_key: str = TARGETS_KEY,
    ) -> None:
        self.name, self.model, self.spans_key, self.targets_key = name, str(model), spans_key, targets_key
        self.backend, self.threads, self.batch_size, self.copy_model = backend, threads, batch_size, copy_model
        self.precision = precision
        self._tagger: OpinionTagger | None = None
        self._pid = 0
        self._sentencizer: Any = None
        check_exists(resolve_model(self.model))  # a model that does not exist is refused now, in one line
        _LOADED.add(self)

    @property
    def tagger(self) -> OpinionTagger:
        """The loaded model: loaded when first used, again in a forked worker process."""
        if self._tagger is None or self._pid != os.getpid():
            self._tagger = OpinionTagger.load(
                self.model,
                backend=self.backend,
                threads=self.threads,
                batch_size=self.batch_size,
                precision=self.precision,
            )
            self._pid = os.getpid()
        return self._tagger

    def __call__(self, doc: Doc) -> Doc:
        return self._tag([doc])[0]

    def pipe(self, stream: Iterable[Doc], batch_size: int = 128) -> Iterator[Doc]:
        """Tag the documents of ``stream`` ``batch_size`` at a time (their sentences in the network's batches)."""
        for docs in minibatch(stream, size=batch_size):  # type: ignore[no-untyped-call]
            yield from self._tag(docs)

    def _tag(self, docs: list[Doc]) -> list[Doc]:
        import numpy as np

        starts = [None if d.has_annotation("SENT_START") else self._sentence_starts(d) for d in docs]
        for doc, tagged in zip(docs, self.tagger.tag_docs(docs, starts)):
            found = [(doc.char_span(s.start, s.end, label=s.type), s) for s in tagged.spans]
            kept = [(span, s) for span, s in found if span is not None]  # all: spans fall on token boundaries
            attrs: dict[str, Any] = {"scores": np.array([s.score for _, s in kept], dtype="float32")}
            if tagged.frames:  # a model with frame heads: each span's polarity, intensity (a DSE's holder)
                attrs["frames"] = [s.frame.to_dict(holder=s.type == "DSE") if s.frame else None for _, s in kept]
            if self.tagger.check_language(tagged).warning is not None:  # a text that is not English
                attrs["language"], attrs["warning"] = tagged.language, tagged.warning
            targets = tagged.frames and self._predicts_targets(tagged)  # a model with target heads
            if targets:
                attrs["targets_key"] = self.targets_key
            group = SpanGroup(doc, name=self.spans_key, spans=[span for span, _ in kept], attrs=attrs)
            doc.spans[self.spans_key] = group
            if targets:
                doc.spans[self.targets_key] = self._targets(doc, [s for _, s in kept])
        return docs

    def _predicts_targets(self, tagged: TaggedDocument) -> bool:
        """Whether the model predicts DSEs' targets (so every document gets the targets' group, an empty one too)."""
        if "target" in getattr(self.tagger.tagger, "roles", ()):
            return True
        return any(s.frame is not None and s.frame.targets is not None for s in tagged.spans)

    def _targets(self, doc: Doc, spans: list[TaggedSpan]) -> SpanGroup:
        """The targets of the DSEs among ``spans`` (in the order of ``doc.spans[spans_key]``), a span each."""
        import numpy as np

        found, scores, opinions = [], [], []
        for k, s in enumerate(spans):
            for t in (s.frame.targets if s.frame is not None and s.type == "DSE" else None) or ():
                span = doc.char_span(t["start"], t["end"], label=TARGET, span_id=str(k))
                if span is not None:  # always: a target is tokens of the Doc
                    found.append(span)
                    scores.append(t["score"])
                    opinions.append(k)
        attrs = {"scores": np.array(scores, dtype="float32"), "opinions": opinions, "opinions_key": self.spans_key}
        return SpanGroup(doc, name=self.targets_key, spans=found, attrs=attrs)

    def _sentence_starts(self, doc: Doc) -> list[bool]:
        """spaCy's rule-based sentence starts of ``doc`` (the tagger's own splitting), the ``Doc`` unchanged."""
        if self._sentencizer is None:
            from spacy.pipeline import Sentencizer

            self._sentencizer = Sentencizer()
        return [bool(s) for s in self._sentencizer.predict([doc])[0]]

    # ------------------------------------------------------------------ a saved pipeline
    def to_disk(self, path: str | Path, *, exclude: Iterable[str] = ()) -> None:
        """Nothing but the config, unless ``copy_model``: then the bundle is copied into ``path``."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        if self.copy_model:
            shutil.rmtree(path / COPIED, ignore_errors=True)
            shutil.copytree(resolve_model(self.model), path / COPIED)

    def from_disk(self, path: str | Path, *, exclude: Iterable[str] = ()) -> OpinionTaggerComponent:
        """The copied bundle of a saved pipeline, if it holds one."""
        if (Path(path) / COPIED).is_dir():
            self.model, self._tagger = str(Path(path) / COPIED), None
        return self

    def __getstate__(self) -> dict[str, Any]:  # a spawned worker process loads the model itself
        return {**self.__dict__, "_tagger": None, "_pid": 0, "_sentencizer": None}


# ------------------------------------------------------------------ extension attributes
# Read from the span groups the component writes, not stored on the spans: spaCy keeps a span's stored values by
# its offsets alone (a DSE, an ESE and a target over the same words would share them), and a stored Span would not
# survive ``doc.to_bytes``.


def _opinion_index(span: Span) -> tuple[SpanGroup, int] | None:
    """The opinion group (a group with frames) that holds ``span``, and the span's index there."""
    for group in span.doc.spans.values():
        if "frames" in group.attrs:
            for k, s in enumerate(group):
                if s == span:
                    return group, k
    return None


def _frame_field(name: str) -> Any:
    def get(span: Span) -> Any:
        found = _opinion_index(span)
        frame = found[0].attrs["frames"][found[1]] if found is not None else None
        return frame.get(name) if frame is not None else None

    return get


def _span_targets(span: Span) -> list[Span] | None:
    """A DSE's targets, spans of its Doc; None for a span whose model predicts no targets, and for an ESE."""
    found = _opinion_index(span)
    if found is None:
        return None
    group, k = found
    frame, key = group.attrs["frames"][k], group.attrs.get("targets_key")
    if frame is None or frame.get("targets") is None or key not in span.doc.spans:
        return None
    targets = span.doc.spans[key]
    return [t for t, o in zip(targets, targets.attrs["opinions"]) if o == k]


def _target_opinion(span: Span) -> Span | None:
    """A target's DSE span (None for a span that is no target)."""
    for group in span.doc.spans.values():
        key = group.attrs.get("opinions_key")
        if key is not None and "opinions" in group.attrs and key in span.doc.spans:
            for t, o in zip(group, group.attrs["opinions"]):
                if t == span:
                    dse: Span = span.doc.spans[key][o]
                    return dse
    return None


for _name, _getter in (
    ("attitude", _frame_field("attitude")),
    ("attitude_score", _frame_field("attitude_score")),
    ("targets", _span_targets),
    ("opinion", _target_opinion),
):
    Span.set_extension(_name, getter=_getter, force=True)  # force: importing the module again is no error


# ONNX Runtime's thread pool is not safe to fork: a worker forked while a session's threads live (spaCy's
# ``nlp.pipe(n_process=N)`` forks on Linux) can hang for ever on a lock one of them held.  So every component
# drops its model before a fork (the session and its threads end with it); each process loads it again when
# it next tags.
_LOADED: weakref.WeakSet[OpinionTaggerComponent] = weakref.WeakSet()


def _release_before_fork() -> None:
    loaded = [c for c in _LOADED if c._tagger is not None]
    for component in loaded:
        component._tagger = None
    if loaded:
        gc.collect()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_release_before_fork)
