"""Writes invented sentences of opinions, one JSONL record a line (``{"id", "text"}``: what ``opinion-tagger tag
--input FILE.jsonl`` reads), for trying ``opinion-tagger summarize`` on a corpus of known make-up.

Every name, place and sentence is invented for this project; nothing comes from MPQA.  A sentence is composed
from a holder (people and bodies of an invented town, or the writer), a target (its plans and buildings), an
opinion verb or phrase of a known polarity and, sometimes, an adverb of degree; the same seed gives the same
sentences:

    python corpora/sample/make_opinions.py 300 > invented.jsonl
    python corpora/sample/make_opinions.py 300 --seed 7 > other.jsonl
"""

from __future__ import annotations

import argparse
import json
import random
import sys

HOLDERS = (
    "Mayor Talvik",
    "the harbour council",
    "Dr. Oona Pell",
    "the fishermen of Brenmoor",
    "the Brenmoor Gazette",
    "local shopkeepers",
    "Councillor Abelard Quist",
    "the ferry workers' union",
)
TARGETS = (
    "the new ferry terminal",
    "the tunnel plan",
    "the Quillon dam",
    "the night market",
    "the tram fare increase",
    "the lighthouse museum",
)
# opinion verbs, by polarity (a DSE, with its holder as the subject)
VERBS = {
    "positive": ("praised", "welcomed", "applauded", "defended", "celebrated"),
    "negative": ("condemned", "criticised", "attacked", "rejected", "denounced"),
    "neutral": ("commented on", "spoke about", "mentioned", "reported on"),
}
# what a holder fears or hopes, said of a target (a DSE before a clause)
CLAUSE_VERBS = {
    "positive": ("hopes that", "is delighted that", "is convinced that"),
    "negative": ("fears that", "is furious that", "worries that"),
    "neutral": ("said that", "noted that", "announced that"),
}
PREDICATES = ("will open next spring", "is going ahead", "will cost more than planned", "was approved on Monday")
# what the writer calls a target (an ESE)
JUDGEMENTS = {
    "positive": ("a triumph", "a stroke of genius", "a wonderful idea"),
    "negative": ("a disgrace", "a complete fiasco", "daylight robbery"),
}
# adverbs of degree, by polarity
DEGREES = {"positive": ("warmly", "enthusiastically", "mildly"), "negative": ("bitterly", "fiercely", "mildly")}


def sentence(rng: random.Random) -> str:
    """One invented sentence of an opinion."""
    holder, target = rng.choice(HOLDERS), rng.choice(TARGETS)
    polarity = rng.choice(("positive", "negative", "neutral"))
    form = rng.random()
    if form < 0.5:
        degree = rng.choice(DEGREES[polarity]) + " " if rng.random() < 0.4 and polarity != "neutral" else ""
        text = f"{holder} {degree}{rng.choice(VERBS[polarity])} {target}."
    elif form < 0.8:
        text = f"{holder} {rng.choice(CLAUSE_VERBS[polarity])} {target} {rng.choice(PREDICATES)}."
    else:
        judgement = rng.choice(JUDGEMENTS["negative" if polarity == "neutral" else polarity])
        text = f"Frankly, {target} is {judgement}."
    return text[0].upper() + text[1:]


def records(n: int, seed: int = 0) -> list[dict[str, str]]:
    """``n`` records ``{"id": "invented-001", "text": ...}`` of one sentence each."""
    rng = random.Random(seed)
    width = len(str(n))
    return [{"id": f"invented-{k:0{width}d}", "text": sentence(rng)} for k in range(1, n + 1)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("n", type=int, help="how many sentences")
    parser.add_argument("--seed", type=int, default=0, help="the same seed gives the same sentences (default: 0)")
    args = parser.parse_args(argv)
    for rec in records(args.n, args.seed):
        sys.stdout.write(json.dumps(rec) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
