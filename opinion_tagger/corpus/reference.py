"""Reader for Irsoy & Cardie's (2014) released BIO files.

``dse.txt`` / ``ese.txt``: ``token<TAB>POS<TAB>B|I|O`` a line, a blank line after
each sentence, the same sentences in both; ``sentenceid.txt``: ``docindex
sentindex docname`` a line per sentence.  Tokens are PTB-style and carry no
offsets, so the sentences returned here have token offsets counted in a
synthetic text where tokens are joined by single spaces.
"""

from __future__ import annotations

from pathlib import Path

from opinion_tagger.errors import CorpusError
from opinion_tagger.sentences import Sentence, Token


def _read_bio(path: Path) -> list[list[tuple[str, str, str]]]:
    if not path.is_file():
        raise CorpusError(f"{path}: reference file not found")
    sents: list[list[tuple[str, str, str]]] = []
    cur: list[tuple[str, str, str]] = []
    with open(path, encoding="utf-8", errors="strict") as fh:
        for line_no, line in enumerate(fh, 1):
            line = line.rstrip("\n")
            if not line.strip():
                if cur:
                    sents.append(cur)
                cur = []
                continue
            parts = line.split("\t")
            if len(parts) != 3 or parts[2] not in ("B", "I", "O"):
                raise CorpusError(f"{path}:{line_no}: expected token<TAB>POS<TAB>B|I|O")
            cur.append((parts[0], parts[1], parts[2]))
    if cur:
        sents.append(cur)
    return sents


def read_reference(root: str | Path) -> list[Sentence]:
    """All reference sentences with DSE and ESE tags (``B-DSE`` ...), in file order.

    ``Sentence.doc`` is the document name, ``index`` the sentence's index in its
    document; POS tags (Stanford parser) are kept in ``Sentence.pos``.
    """
    root = Path(root)
    if not root.is_dir():
        raise CorpusError(f"{root}: reference directory not found")
    dse, ese = _read_bio(root / "dse.txt"), _read_bio(root / "ese.txt")
    ids_path = root / "sentenceid.txt"
    if not ids_path.is_file():
        raise CorpusError(f"{ids_path}: sentence id file not found")
    ids = []
    for line_no, line in enumerate(ids_path.read_text(encoding="utf-8").splitlines(), 1):
        parts = line.split()
        if len(parts) != 3:
            raise CorpusError(f"{ids_path}:{line_no}: expected 'docindex sentindex docname'")
        ids.append((int(parts[1]), parts[2]))
    if not (len(dse) == len(ese) == len(ids)):
        raise CorpusError(
            f"{root}: dse.txt ({len(dse)}), ese.txt ({len(ese)}) and "
            f"sentenceid.txt ({len(ids)}) disagree on the number of sentences"
        )
    out = []
    for n, (d, e, (index, doc)) in enumerate(zip(dse, ese, ids)):
        if [w for w, _, _ in d] != [w for w, _, _ in e]:
            raise CorpusError(f"{root}: sentence {n} has different tokens in dse.txt and ese.txt")
        tokens, pos = [], 0
        for w, _, _ in d:
            tokens.append(Token(w, pos, pos + len(w)))
            pos += len(w) + 1
        tags = {
            "DSE": [t if t == "O" else f"{t}-DSE" for _, _, t in d],
            "ESE": [t if t == "O" else f"{t}-ESE" for _, _, t in e],
        }
        text = " ".join(w for w, _, _ in d)
        out.append(Sentence(tokens, tags, doc, index, text, 0, pos - 1, pos=[p for _, p, _ in d]))
    return out
