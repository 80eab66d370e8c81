"""Scoring taggers on gold sentences with the paper's metrics and exact match."""

from __future__ import annotations

from collections.abc import Sequence

from opinion_tagger.evaluation.frames import frame_report
from opinion_tagger.evaluation.metrics import span_report
from opinion_tagger.evaluation.roles import ROLES, role_report
from opinion_tagger.sentences import Frame, Sentence


def score_predictions(sentences: Sequence[Sentence], predicted: dict[str, list[list[str]]]) -> dict:
    """Binary, proportional and exact scores per type; ``predicted`` maps a type to tag lists."""
    report = {}
    for t, tags in predicted.items():
        report.update(span_report([s.tags[t] for s in sentences], tags, [t]))
    return report


def evaluate_tagger(tagger, sentences: Sequence[Sentence]) -> dict:
    """Scores of ``tagger`` (anything with ``predict_tags(list of word lists)``) on gold ``sentences``."""
    return score_predictions(sentences, tagger.predict_tags([s.words for s in sentences]))


def score_frames(
    sentences: Sequence[Sentence], predicted: Sequence[Sequence[Frame]], types: Sequence[str], **options
) -> dict:
    """Frame scores per type (``opinion_tagger.evaluation.frames.frame_report``, which takes ``options``) of
    predicted frames, one list per sentence, against the sentences' gold frames (``corpus.frames``)."""
    missing = sum(s.frames is None for s in sentences)
    if missing:
        raise ValueError(f"{missing} of {len(sentences)} gold sentences have no frames (read them: corpus.frames)")
    return frame_report([s.frames or [] for s in sentences], predicted, types, **options)


def evaluate_with_frames(tagger, sentences: Sequence[Sentence]) -> tuple[dict, dict]:
    """(``evaluate_tagger``'s span scores, frame scores) of ``tagger`` (a ``SentenceTagger`` with frame heads) on
    gold ``sentences``, from one pass of its network: the frames of the spans it tags, scored as its
    configuration reads the corpus (``model.frames.both``, ``model.frames.dse_intensity``)."""
    tags, frames = predict_with_frames(tagger, sentences)
    if frames is None:
        raise ValueError("the tagger has no frame heads")
    return score_predictions(sentences, tags), frames


def predict_with_frames(tagger, sentences: Sequence[Sentence]) -> tuple[dict[str, list[list[str]]], dict | None]:
    """The tags ``tagger`` predicts for ``sentences``, per type, and the scores of their frames (None for a tagger
    without frame heads), from one pass of its network."""
    if tagger.heads is None:
        return tagger.predict_tags([s.words for s in sentences]), None
    preds = tagger.predict_frames([s.words for s in sentences])
    tags = {t: [tags[t][0] for tags, _ in preds] for t in tagger.types}
    predicted = [[f.frame for f in found] for _, found in preds]
    return tags, score_frames(sentences, predicted, tagger.types, **_frame_options(tagger))


def _frame_options(tagger) -> dict:
    """How the tagger's configuration reads the corpus's frames (``model.frames.both``,
    ``model.frames.dse_intensity``)."""
    frames = tagger.config.model.frames
    return dict(both=frames.both, dse_intensity=frames.dse_intensity)


def predict_with_roles(
    tagger, sentences: Sequence[Sentence]
) -> tuple[dict[str, list[list[str]]], dict | None, dict | None]:
    """``predict_with_frames``'s tags and frame scores and, third, the scores of the DSE roles the tagger predicts
    (``tagger.roles``: the holder; targets and the attitude type once a head predicts them;
    ``opinion_tagger.evaluation.roles``), with the gold DSEs given (the heads run on the gold DSE spans in the
    same pass of the network) and end to end; None for a tagger without frame heads or roles."""
    roles = tuple(getattr(tagger, "roles", ()))
    if tagger.heads is None or not roles or "DSE" not in tagger.types:
        tags, frames = predict_with_frames(tagger, sentences)
        return tags, frames, None
    missing = sum(s.frames is None for s in sentences)
    if missing:
        raise ValueError(f"{missing} of {len(sentences)} gold sentences have no frames (read them: corpus.frames)")
    gold = [s.frames or [] for s in sentences]
    given = [{"DSE": [(f.start, f.end) for f in frames if f.type == "DSE"]} for frames in gold]
    preds = tagger.predict_frames_given([s.words for s in sentences], given)
    tags = {t: [tags[t][0] for tags, _, _ in preds] for t in tagger.types}
    predicted = [[f.frame for f in found] for _, found, _ in preds]
    on_gold = [[f.frame for f in found] for _, _, found in preds]
    frame_scores = score_frames(sentences, predicted, tagger.types, **_frame_options(tagger))
    scored = [r for r in ROLES if r in roles]
    role_scores = role_report(
        gold, predicted, on_gold, scored, attitude="attitude" in roles, documents=[s.doc for s in sentences]
    )
    return tags, frame_scores, role_scores


def by_document(sentences: Sequence[Sentence], predicted: dict[str, list[list[str]]]) -> dict[str, dict]:
    """``score_predictions`` for each document of ``sentences`` (in their order): its sentence count and scores."""
    rows: dict[str, list[int]] = {}
    for k, s in enumerate(sentences):
        rows.setdefault(s.doc, []).append(k)
    return {
        doc: {
            "sentences": len(ks),
            "scores": score_predictions(
                [sentences[k] for k in ks], {t: [p[k] for k in ks] for t, p in predicted.items()}
            ),
        }
        for doc, ks in rows.items()
    }


def evaluate_frames(tagger, sentences: Sequence[Sentence]) -> dict:
    """The frame scores of ``evaluate_with_frames``."""
    return evaluate_with_frames(tagger, sentences)[1]
