"""A seed ensemble of bundles trained on the same fold: each word's tag probabilities (a CRF's marginals)
averaged over the bundles, then decoded (``--decode``): each word's most probable tag (``word``; an I after O
begins a span, as for one model) or the valid IOB2 sequence with the largest product of its tags'
probabilities (``sequence``); or, for CRF heads, the bundles' CRF scores averaged (emission, transition, start
and end) and decoded as one CRF (``crf``: the sequence with the largest product of the bundles' sequence
probabilities).  Scored on the fold's dev and test documents.  The result is written as an ordinary one
(experiments/results/NAME/foldK.json, the members named in its configuration), so the report lists it with
the dev study it belongs to; choices are made on its dev scores only.

A member is a bundle directory or the distributions a bundle gave on the fold's dev and test sentences, as
``--keep`` stores them beside its run's result (experiments/results/RUN/foldK.distributions.npz, float16, with
a CRF's emission scores (float32) and its transition, start and end scores, the bundle's config.json and
meta.json and a hash of the sentences it was given), so that an ensemble whose
members were trained at different times can be scored after their bundles are gone.

    python -m experiments.ensemble --name accurate-ensemble-study-x3 --fold 0 BUNDLE BUNDLE BUNDLE
    python -m experiments.ensemble --keep --fold 0 BUNDLE             # only store BUNDLE's distributions
    python -m experiments.ensemble --keep --name NAME --fold 0 BUNDLE BUNDLE   # store, then score what was stored
    python -m experiments.ensemble --name NAME --fold 0 BUNDLE STORED.npz STORED.npz
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import sys
import time
import zipfile
from pathlib import Path

import numpy as np

from experiments.cpu_pinning import machine
from opinion_tagger.config import TaggerConfig
from opinion_tagger.corpus.sources import select
from opinion_tagger.corpus.split import load_split
from opinion_tagger.errors import TaggerError
from opinion_tagger.evaluation.scoring import evaluate_tagger
from opinion_tagger.paths import default_datasplit, default_reference
from opinion_tagger.provenance import git_commit
from opinion_tagger.runtime.batching import decode_tags
from opinion_tagger.runtime.bundle import load_bundle_files
from opinion_tagger.runtime.decoding import likeliest_valid_batch, marginals, viterbi_batch
from opinion_tagger.runtime.sentence_tagger import SentenceTagger
from opinion_tagger.storage import atomic_write_bytes, atomic_write_text
from opinion_tagger.training.run_data import load_data

ROOT = Path(__file__).resolve().parent
DECODES = {
    "word": "per-word tag probabilities averaged, each word's likeliest tag.",
    "sequence": "per-word tag probabilities averaged, the likeliest valid IOB2 sequence.",
    "crf": "CRF scores (emission, transition, start, end) averaged, the likeliest sequence (Viterbi).",
}
CRF_PARAMS = ("transitions", "start", "end")


def sentences_hash(sentences) -> str:
    """What identifies the word lists a member was given (no text is kept)."""
    return hashlib.sha256(json.dumps([list(s) for s in sentences]).encode("utf-8")).hexdigest()


def keep_distributions(path: Path, tagger: SentenceTagger, bundle: Path, parts: dict[str, list]) -> None:
    """Store ``tagger``'s distributions on each part's sentences (``{part: word lists}``) at ``path``."""
    arrays: dict[str, np.ndarray] = {
        "types": np.array(tagger.types),
        "member": np.array(member_name(bundle)),
        "config": np.array((bundle / "config.json").read_text()),
        "meta": np.array((bundle / "meta.json").read_text()),
    }
    crf = tagger.config.model.head.output == "crf"
    params = {t: tagger.crf_params(t) for t in tagger.types} if crf else {}
    for part, sentences in parts.items():
        if crf:  # one pass through the network: the marginals from the emission scores, as SentenceTagger makes them
            emissions = tagger.distributions(sentences, scores=True)
            dists = [{t: marginals(d[t], *params[t]) for t in tagger.types} for d in emissions]
        else:
            dists = tagger.distributions(sentences)
        arrays[f"{part}/hash"] = np.array(sentences_hash(sentences))
        arrays[f"{part}/lengths"] = np.array([len(s) for s in sentences], dtype=np.int32)
        for t in tagger.types:
            arrays[f"{part}/{t}"] = np.concatenate([d[t] for d in dists] or [np.zeros((0, 3))]).astype(np.float16)
            if crf:
                joined = np.concatenate([d[t] for d in emissions] or [np.zeros((0, 3))])
                arrays[f"{part}/{t}.scores"] = joined.astype(np.float32)
    for t, values in params.items():
        for name, value in zip(CRF_PARAMS, values):
            arrays[f"{t}.{name}"] = np.asarray(value, dtype=np.float32)
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, buf.getvalue())


class StoredMember:
    """A member from ``keep_distributions``' file: its ``distributions`` of the sentences it was given, checked
    to be those sentences."""

    def __init__(self, path: Path):
        self.path = path
        try:
            with np.load(path, allow_pickle=False) as f:
                self.arrays = {k: f[k] for k in f.files}
            self.types = tuple(str(t) for t in self.arrays["types"])
            self.name = str(self.arrays["member"])
            self.config = TaggerConfig.from_dict(json.loads(str(self.arrays["config"])))
            self.meta = json.loads(str(self.arrays["meta"]))
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, TaggerError) as e:
            raise TaggerError(f"{path}: not a member's stored distributions ({e})") from None
        self.parts = sorted({k.split("/")[0] for k in self.arrays if "/" in k})
        for part in self.parts:
            n = int(self.arrays[f"{part}/lengths"].sum())
            if any(self.arrays[f"{part}/{t}"].shape != (n, 3) for t in self.types):
                raise TaggerError(f"{path}: {part}'s distributions do not cover its {n} words")

    def distributions(self, sentences, scores: bool = False) -> list[dict[str, np.ndarray]]:
        """As ``SentenceTagger.distributions`` gave them for these ``sentences``."""
        digest = sentences_hash(sentences)
        part = next((p for p in self.parts if str(self.arrays[f"{p}/hash"]) == digest), None)
        if part is None:
            raise TaggerError(f"{self.path}: holds no distributions of these {len(sentences)} sentences")
        suffix = ".scores" if scores else ""
        if scores and f"{part}/{self.types[0]}.scores" not in self.arrays:
            raise TaggerError(f"{self.path}: holds no CRF scores (keep the bundle's distributions again)")
        ends = np.cumsum(self.arrays[f"{part}/lengths"])
        return [
            {t: self.arrays[f"{part}/{t}{suffix}"][end - len(s) : end].astype(np.float32) for t in self.types}
            for s, end in zip(sentences, ends)
        ]

    def crf_params(self, typ: str) -> tuple[np.ndarray, ...]:
        if f"{typ}.transitions" not in self.arrays:
            raise TaggerError(f"{self.path}: holds no CRF scores (keep the bundle's distributions again)")
        return tuple(self.arrays[f"{typ}.{name}"] for name in CRF_PARAMS)


class Ensemble:
    """``predict_tags`` (what ``evaluate_tagger`` needs) from the averaged distributions of ``taggers`` (anything
    with ``types`` and ``distributions``: a ``SentenceTagger`` or a ``StoredMember``)."""

    def __init__(self, taggers: list, decode: str = "word"):
        types = {t.types for t in taggers}
        if len(types) != 1:
            raise TaggerError(f"the bundles tag different types: {sorted(types)}")
        self.taggers, self.types, self.decode = taggers, taggers[0].types, decode

    def predict_tags(self, sentences) -> dict[str, list[list[str]]]:
        crf = self.decode == "crf"
        each = [t.distributions(sentences, scores=crf) for t in self.taggers]
        if crf:  # the members' transition, start and end scores averaged, per type
            params = {
                ty: [np.mean(p, axis=0) for p in zip(*(t.crf_params(ty) for t in self.taggers))] for ty in self.types
            }
        out: dict[str, list[list[str]]] = {ty: [] for ty in self.types}
        for k in range(len(sentences)):
            for ty in self.types:
                mean = np.mean([d[k][ty] for d in each], axis=0)
                if crf:
                    ids = viterbi_batch(mean[None], [len(mean)], *params[ty])[0]
                elif self.decode == "sequence":
                    ids = likeliest_valid_batch(mean[None], [len(mean)])[0]
                else:
                    ids = mean.argmax(-1).tolist()
                out[ty].append(decode_tags(ids, ty))
        return out


def member_name(bundle: Path) -> str:
    """A member as the result names it: from ``experiments/runs/`` on where it lies there (in any checkout)."""
    parts = bundle.absolute().parts  # not resolved: experiments/runs may be a link to where the runs are
    for k in range(len(parts) - 1, 0, -1):
        if parts[k - 1 : k + 1] == ("experiments", "runs"):
            return "/".join(parts[k - 1 :])
    return str(bundle)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "members", nargs="+", type=Path, help="bundle directories trained on --fold, or their stored distributions"
    )
    ap.add_argument("--name", help="the result's name (experiments/results/NAME/); not with --keep alone")
    ap.add_argument("--fold", type=int, default=0)
    ap.add_argument(
        "--keep",
        action="store_true",
        help="store each bundle's distributions on the fold's dev and test sentences beside its run's result "
        "(experiments/results/RUN/foldK.distributions.npz); without --name, only that",
    )
    ap.add_argument("--data", type=Path, default=default_reference(), help="Irsoy & Cardie's files")
    ap.add_argument("--datasplit", type=Path, default=default_datasplit())
    ap.add_argument("--results", type=Path, default=ROOT / "results")
    ap.add_argument(
        "--decode",
        choices=tuple(DECODES),
        default="word",
        help="each word's likeliest tag or the likeliest valid IOB2 sequence under the averaged probabilities, or "
        "the likeliest sequence under the averaged CRF scores (CRF heads only; default: word)",
    )
    args = ap.parse_args()
    if not (args.name or args.keep):
        ap.error("give --name (score the ensemble) or --keep (store the bundles' distributions)")
    try:
        return run(args)
    except TaggerError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


def run(args) -> int:
    t0 = time.perf_counter()
    members = []  # (name, tagger or stored member, config, meta)
    for m in args.members:
        if m.is_file():
            stored = StoredMember(m)
            members.append((stored.name, stored, stored.config, stored.meta))
        else:
            config, meta = load_bundle_files(m)[1:]
            members.append((member_name(m), SentenceTagger.load(m), config, meta))
        if members[-1][3].get("training", {}).get("data", {}).get("fold") not in (None, args.fold):
            raise TaggerError(f"{m}: trained on another fold than {args.fold}")
    configs = [c.replace({"training.seed": 0}) for _, _, c, _ in members]
    if any(c != configs[0] for c in configs):
        raise TaggerError("the members' configurations differ in more than the seed")
    if args.name and args.decode == "crf" and members[0][2].model.head.output != "crf":
        raise TaggerError(f"--decode crf needs CRF heads; the members' are {members[0][2].model.head.output}")
    docs = load_data("reference", args.data)
    split = load_split(args.datasplit, args.fold)
    dev_s, test_s = select(docs, split.dev), select(docs, split.test)
    if args.keep:
        for k, (m, (name, tagger, config, meta)) in enumerate(zip(args.members, members)):
            if isinstance(tagger, SentenceTagger):
                out = args.results / m.absolute().parent.name / f"fold{args.fold}.distributions.npz"
                keep_distributions(out, tagger, m, {"dev": [s.words for s in dev_s], "test": [s.words for s in test_s]})
                print(f"wrote {out}")
                members[k] = (name, StoredMember(out), config, meta)  # scored from what was kept: no second pass
        if not args.name:
            return 0
    ensemble = Ensemble([tagger for _, tagger, _, _ in members], decode=args.decode)
    dev, test = evaluate_tagger(ensemble, dev_s), evaluate_tagger(ensemble, test_s)
    first = members[0][3].get("training", {})
    record = {
        "name": args.name,
        "kind": "rnn",
        "fold": args.fold,
        "config": members[0][2].to_dict(),  # the members' shared configuration (the first member's seed)
        "ensemble": {
            "members": [name for name, _, _, _ in members],
            "seeds": [c.training.seed for _, _, c, _ in members],
            "decode": args.decode,
        },
        "seed": None,
        "git_commit": git_commit(),
        "choices": f"{len(members)} seeds combined (experiments/ensemble.py): " + DECODES[args.decode],
        "data": {
            "source": "reference",
            "path": args.data.name,
            "datasplit": args.datasplit.name,
            "documents": {"train": len(split.train), "dev": len(split.dev), "test": len(split.test)},
            "sentences": {"dev": len(dev_s), "test": len(test_s)},
        },
        "scores": {"dev": dev, "test": test},
        "epochs": first.get("epochs"),
        "best_epoch": first.get("best_epoch"),
        "train_seconds": sum(m.get("training", {}).get("train_seconds") or 0 for _, _, _, m in members),
        "device": "CPU",
        "wall_seconds": time.perf_counter() - t0,
        "machine": machine(),
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    out = args.results / args.name / f"fold{args.fold}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out, json.dumps(record, indent=1) + "\n")
    for part, scores in (("dev", dev), ("test", test)):
        figures = (
            f"{t} prop {100 * r['proportional']['f1']:.2f} bin {100 * r['binary']['f1']:.2f}" for t, r in scores.items()
        )
        print(f"{part}: " + ", ".join(figures))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
