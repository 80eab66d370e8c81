"""A tiny joint tagger with frame heads and the hand-made sentences it learns: the frame heads' tests, the fit of
heads to a trained network and the annotator's pre-annotation by a model with frame heads train it."""

from conftest import TINY_NETWORK

from opinion_tagger.sentences import Frame, Sentence, Token

TINY = {
    **TINY_NETWORK,
    "task": "joint",
    "model.recurrent.cell": "elman",
    "training.optimizer.learning_rate": 0.05,
    "model.frames.enabled": True,
    "model.frames.units": 8,
    "model.frames.weight": 1.0,
    "training.stopping.patience": 0,
}

# words, DSE spans and ESE spans as (start, end, polarity, intensity, holder)
DATA = [
    ("Officials said the plan was awful .", [(1, 2, "neutral", "low", (0, 1))], [(5, 6, "negative", "high", "writer")]),
    ("Critics said the plan was great .", [(1, 2, "neutral", "low", (0, 1))], [(5, 6, "positive", "medium", "writer")]),
    ("We hate the plan .", [(1, 2, "negative", "high", (0, 1))], []),
    ("They love the plan .", [(1, 2, "positive", "medium", "implicit")], []),
]


def sentences() -> list[Sentence]:
    out = []
    for k, (text, dses, eses) in enumerate(DATA):
        words = text.split()
        tokens = [Token(w, i, i + 1) for i, w in enumerate(words)]
        tags, frames = {}, []
        for typ, spans in (("DSE", dses), ("ESE", eses)):
            tags[typ] = ["O"] * len(words)
            for i, j, pol, inten, holder in spans:
                tags[typ][i:j] = [f"B-{typ}"] + [f"I-{typ}"] * (j - i - 1)
                frames.append(Frame(typ, i, j, pol, inten, None, holder))
        out.append(Sentence(tokens, tags, "demo/frames", k, text, frames=frames))
    return out
