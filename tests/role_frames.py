"""A stand-in for a model with attitude and target heads (no bundled model has them yet): ``role_tagger()`` is an
``OpinionTagger`` whose network tags the words of ``DSES`` and ``ESES`` on invented sentences and gives their frames
the roles set here, as the runtime's ``FramePrediction``s; the rest of the tagging API (sentences, tokens, offsets,
the output formats) is the real one."""

from opinion_tagger.runtime.frame_heads import FramePrediction
from opinion_tagger.tagging.tagger import OpinionTagger

# invented sentences; spaCy's tokens of the first: Our(0) neighbours(1) dislike(2) the(3) new(4) parking(5)
# rules(6) ,(7) sadly(8) .(9); of the second: Everyone(0) shrugged(1) .(2)
TEXT = "Our neighbours dislike the new parking rules, sadly. Everyone shrugged."
# a DSE's word: its polarity and intensity with their scores, its holder (a token range or a class) with its score,
# its attitude with its score, its targets (token ranges) and their scores
DSES = {
    "dislike": ("negative", 0.85, "high", 0.65, (0, 2), 0.7, "sentiment-neg", 0.8, ((5, 7),), (0.9,)),
    "shrugged": ("neutral", 0.6, "low", 0.55, "writer", 0.5, None, 0.45, (), ()),  # no attitude, no target
    # a target over its own DSE's words and the next one, and a second target after it
    "wants": ("positive", 0.7, "medium", 0.6, (0, 1), 0.65, "intention-pos", 0.75, ((1, 3), (3, 4)), (0.6, 0.55)),
    # two DSEs of one sentence with the same target: "We(0) resent(1) and(2) fear(3) the(4) tolls(5) .(6)"
    "resent": ("negative", 0.8, "high", 0.6, (0, 1), 0.7, "sentiment-neg", 0.85, ((4, 6),), (0.8,)),
    "fear": ("negative", 0.75, "medium", 0.5, (0, 1), 0.6, "sentiment-neg", 0.65, ((4, 6),), (0.7,)),
}
ESES = {"sadly": ("negative", 0.75, "high", 0.7)}
SCORE = 0.9  # every tagged word's tag probability


class RoleNetwork:
    """What ``OpinionTagger`` asks of a ``SentenceTagger`` with frame heads that predict a DSE's holder, attitude
    and targets."""

    types = ("DSE", "ESE")
    heads = object()  # frame heads: OpinionTagger.frames
    roles = ("holder", "target")

    def lift_budgets(self) -> None:
        pass

    def predict_frames(self, sentences, batch_size=64):
        out = []
        for words in sentences:
            tags = {t: ["O"] * len(words) for t in self.types}
            frames = []
            for i, w in enumerate(words):
                if w in DSES:
                    pol, p, inten, q, holder, h, attitude, a, targets, scores = DSES[w]
                    tags["DSE"][i] = "B-DSE"
                    frames.append(
                        FramePrediction("DSE", i, i + 1, pol, p, inten, q, holder, h, attitude, a, targets, scores)
                    )
                if w in ESES:
                    tags["ESE"][i] = "B-ESE"
                    frames.append(FramePrediction("ESE", i, i + 1, *ESES[w]))
            out.append(({t: (tags[t], [SCORE] * len(words)) for t in self.types}, frames))
        return out


def role_tagger() -> OpinionTagger:
    return OpinionTagger(RoleNetwork(), lang_check=False)  # type: ignore[arg-type]
