"""Do two versions of the bundled models tag alike?  Each model's predictions on sentences of MPQA's fold-0 test
documents (read from ../shared with the project's corpus reader), recorded by one checkout and compared with
another's: every sentence's spans identical, every word's tag probabilities (O, B, I; a CRF's marginals) within
``--atol``, and with frame heads every span's frame (polarity, intensity, holder) identical and its probabilities
within ``--atol``.

``record`` uses only what every version of the runtime has (``SentenceTagger.load``, ``distributions``,
``predict_frames``), so that it can run on an older checkout's code and bundles, e.g. from a copy of the models
made before a change and a ``git archive`` of the commit before it:

    PYTHONPATH=OLD_CHECKOUT python experiments/same_tags.py record OLD_MODELS /tmp/before.json
    python -m experiments.same_tags record opinion_tagger/models /tmp/after.json
    python -m experiments.same_tags compare /tmp/before.json /tmp/after.json

The record holds predictions and a hash of the sentences, never their text; keep it out of the repository anyway.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path


def fold0_sentences(n: int) -> list[list[str]]:
    """``n`` sentences spread evenly over the fold-0 test documents, in document order."""
    from opinion_tagger.corpus.sources import load_documents, select
    from opinion_tagger.corpus.split import load_split
    from opinion_tagger.paths import default_datasplit, default_mpqa

    sents = [s.words for s in select(load_documents("mpqa", default_mpqa()), load_split(default_datasplit(), 0).test)]
    step = max(1, len(sents) // n)
    return [w for w in sents[::step] if w][:n]


def record(models: Path, out: Path, n: int) -> int:
    from opinion_tagger.runtime.bio import spans_from_bio
    from opinion_tagger.runtime.sentence_tagger import SentenceTagger

    words = fold0_sentences(n)
    digest = hashlib.sha256(json.dumps(words).encode()).hexdigest()
    result: dict = {"sentences": len(words), "sha256": digest, "models": {}}
    for bundle in sorted(p for p in models.iterdir() if (p / "meta.json").is_file()):
        tagger = SentenceTagger.load(bundle)
        preds = tagger.predict(words)
        entry = {
            "spans": [{t: spans_from_bio(tags) for t, (tags, _) in p.items()} for p in preds],
            "probabilities": [{t: d[t].tolist() for t in d} for d in tagger.distributions(words)],
        }
        if tagger.config.model.frames.enabled:
            entry["frames"] = [
                [
                    [f.type, f.start, f.end, f.polarity, f.intensity, f.holder, f.polarity_score]
                    + [f.intensity_score, f.holder_score]
                    for f in frames
                ]
                for _, frames in tagger.predict_frames(words)
            ]
        result["models"][bundle.name] = entry
        print(f"{bundle.name}: {sum(len(s) for p in entry['spans'] for s in p.values())} spans", file=sys.stderr)
    out.write_text(json.dumps(result))
    return 0


def _max_difference(a, b) -> float:
    """The largest difference between two lists of equally shaped arrays."""
    import numpy as np

    return max((float(np.max(np.abs(np.asarray(x) - np.asarray(y)), initial=0.0)) for x, y in zip(a, b)), default=0)


def _frames(a: list, b: list) -> tuple[int, float]:
    """The sentences whose frames differ (type, span, polarity, intensity, holder), and the largest difference of
    their probabilities."""
    differ = sum([f[:6] for f in x] != [f[:6] for f in y] for x, y in zip(a, b)) + abs(len(a) - len(b))
    pairs = [(p, q) for x, y in zip(a, b) for f, g in zip(x, y) for p, q in zip(f[6:], g[6:]) if None not in (p, q)]
    return differ, max((abs(p - q) for p, q in pairs), default=0.0)


def compare(before: dict, after: dict, atol: float) -> list[str]:
    """One line per model: spans, probabilities and frames compared; 'DIFFERS' where they are not alike."""
    if (before["sha256"], before["sentences"]) != (after["sha256"], after["sentences"]):
        return ["the records are of different sentences"]
    lines = []
    for name in sorted(set(before["models"]) | set(after["models"])):
        a, b = before["models"].get(name), after["models"].get(name)
        if a is None or b is None:
            lines.append(f"{name}: DIFFERS (in one record only)")
            continue
        spans = sum(x != y for x, y in zip(a["spans"], b["spans"]))
        pairs = zip(a["probabilities"], b["probabilities"])
        probs = max((_max_difference(x[t], y[t]) for x, y in pairs for t in x), default=0)
        line = f"spans differ in {spans} of {len(a['spans'])} sentences, largest probability difference {probs:.2e}"
        frames, scores = 0, 0.0
        if "frames" in a or "frames" in b:
            frames, scores = _frames(a.get("frames", []), b.get("frames", []))
            line += f", frames differ in {frames} sentences, largest frame score difference {scores:.2e}"
        same = spans == 0 and frames == 0 and probs <= atol and scores <= atol
        lines.append(f"{name}: {'same' if same else 'DIFFERS'}: {line}")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("record", help="record every bundle's predictions in MODELS (a folder of bundles)")
    r.add_argument("models", type=Path)
    r.add_argument("out", type=Path)
    r.add_argument("--sentences", type=int, default=300)
    c = sub.add_parser("compare", help="compare two records")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    c.add_argument("--atol", type=float, default=1e-4)
    args = ap.parse_args()
    if args.command == "record":
        return record(args.models, args.out, args.sentences)
    lines = compare(json.loads(args.before.read_text()), json.loads(args.after.read_text()), args.atol)
    print("\n".join(lines))
    return 1 if any("DIFFERS" in line or "different" in line for line in lines) else 0


if __name__ == "__main__":
    sys.exit(main())
