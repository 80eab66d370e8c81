"""MPQA documents -> tokenised sentences with DSE/ESE BIO tags, and the
project's interchange file format (``opinion-tagger corpus convert``).

File format, one block per sentence::

    # doc = <document name as in the doclist>
    # sent = <0-based sentence index in the document>
    # text = <sentence text, newlines replaced by spaces>
    token<TAB>start<TAB>end<TAB>DSE-tag<TAB>ESE-tag
    ...
    <blank line>
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TextIO

from opinion_tagger.corpus.labels import LabelRules, bio_tags, opinion_spans
from opinion_tagger.corpus.mpqa import Document, MPQACorpus
from opinion_tagger.errors import CorpusError, Problems
from opinion_tagger.sentences import TYPES, Sentence, Token
from opinion_tagger.tokenize import tokenize


def document_sentences(
    doc: Document, rules: LabelRules = LabelRules(), problems: Problems | None = None
) -> list[Sentence]:
    spans = opinion_spans(doc.annotations, doc.text, rules)
    out = []
    for index, (start, end) in enumerate(doc.sentences):
        tokens = tokenize(doc.text[start:end], offset=start)
        if not tokens:
            if problems is not None:
                problems.add("empty sentence", f"{doc.name}: sentence {index} ({start},{end}) has no tokens")
            continue
        local = [s for s in spans if s.start < end and start < s.end]
        tags = {t: bio_tags(tokens, local, t, rules.overlap) for t in TYPES}
        text = doc.text[start:end].replace("\r", " ").replace("\n", " ")
        out.append(Sentence(tokens, tags, doc.name, index, text, start, end))
    return out


def mpqa_sentences(corpus: MPQACorpus, rules: LabelRules = LabelRules()) -> Iterator[Sentence]:
    for doc in corpus:
        yield from document_sentences(doc, rules, corpus.problems)


def write_conll(sentences: Iterable[Sentence], fh: TextIO) -> int:
    n = 0
    for s in sentences:
        fh.write(f"# doc = {s.doc}\n# sent = {s.index}\n# text = {s.text}\n")
        dse = s.tags.get("DSE", ["O"] * len(s))
        ese = s.tags.get("ESE", ["O"] * len(s))
        for tok, d, e in zip(s.tokens, dse, ese):
            fh.write(f"{tok.text}\t{tok.start}\t{tok.end}\t{d}\t{e}\n")
        fh.write("\n")
        n += 1
    return n


def read_conll(path: str | Path) -> list[Sentence]:
    """Read a file written by ``write_conll``; a malformed line raises CorpusError
    naming the file and line."""
    path = Path(path)
    if not path.is_file():
        raise CorpusError(f"{path}: file not found")
    sentences: list[Sentence] = []
    meta: dict[str, str] = {}
    rows: list[tuple[Token, str, str]] = []

    def flush():
        if rows:
            tokens = [r[0] for r in rows]
            tags = {"DSE": [r[1] for r in rows], "ESE": [r[2] for r in rows]}
            sentences.append(
                Sentence(
                    tokens,
                    tags,
                    meta.get("doc", ""),
                    int(meta.get("sent", len(sentences))),
                    meta.get("text", ""),
                    tokens[0].start,
                    tokens[-1].end,
                )
            )
        rows.clear()
        meta.clear()

    with open(path, encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, 1):
            line = line.rstrip("\n")
            if not line.strip():
                flush()
            elif line.startswith("# ") and " = " in line:
                key, _, value = line[2:].partition(" = ")
                meta[key.strip()] = value
            else:
                parts = line.split("\t")
                try:
                    if len(parts) != 5:
                        raise ValueError(f"expected 5 tab-separated fields, got {len(parts)}")
                    tok = Token(parts[0], int(parts[1]), int(parts[2]))
                    for tag, typ in ((parts[3], "DSE"), (parts[4], "ESE")):
                        if tag not in ("O", f"B-{typ}", f"I-{typ}"):
                            raise ValueError(f"bad {typ} tag {tag!r}")
                except ValueError as exc:
                    raise CorpusError(f"{path}:{line_no}: {exc}") from None
                rows.append((tok, parts[3], parts[4]))
        flush()
    return sentences
