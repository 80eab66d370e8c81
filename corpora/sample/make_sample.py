"""Writes a small invented corpus in the MPQA 2.0 layout (docs/, man_anns/, doclists).

Every sentence here was written for this project; nothing comes from MPQA.
Spans are marked inline as [[TYPE|text]] (TYPE: DSE, ESE, DSE-implicit,
DSE-insub, OSE; DSE-att, a DSE with attitudes; ATT-aN and TGT-tN, attitude
and target N) and turned into byte-offset annotations, so the expected tags
in tests/corpus/test_corpus_unit.py can be checked by eye.  demo/doc-a carries
attitudes and targets (doclist.attitudeSubset): the committee's DSE links
to an inferred attitude (a1, whose target t2 lies in another sentence), an
arguing one (a2, about "the absurd plan") and an id that names none (a7).  The files are generated,
not committed (file names like gateman.* are reserved for real corpus data):
    python corpora/sample/make_sample.py OUT_DIR
"""

import re
import sys
from pathlib import Path

DOCS = {
    "demo/doc-a": [
        "The committee [[ATT-a1|[[ATT-a2|[[DSE-att|has refused to make any statements]]]]]] about "
        "[[TGT-t1|the [[ESE|absurd]] plan]].",
        "Officials [[DSE|said]] the vote was [[ESE|as usual]] a [[ESE|daylight robbery]].",
        "Rain fell on [[TGT-t2|Tuesday]].",
    ],
    "demo/doc-b": [
        "Caf\u00e9 owners [[DSE|fear]] the new tax.",
        '[[DSE-implicit|"]]Nobody [[DSE|can accept [[DSE|this]]]] outcome," she wrote.',
    ],
    "other/doc-c": [
        "The minister [[DSE-insub|hinted]] at [[ESE|deep|ESE2| concerns]] yesterday.",
        "[[DSE-implicit|We]] will [[OSE|report]] tomorrow.",
    ],
}

ATTRS = {
    "DSE": 'nested-source="w, the committee" intensity="medium"',
    "DSE-implicit": 'nested-source="w" implicit="true" intensity="low"',
    "DSE-insub": 'nested-source="w, minister" insubstantial="c1, c2"',
    "ESE": 'nested-source="w" intensity="high" polarity="negative"',
    "ESE2": 'nested-source="w" intensity="low"',
    "OSE": 'nested-source="w"',
    "DSE-att": 'nested-source="w, the committee" intensity="medium" attitude-link="a1, a2, a7"',
    "ATT-a1": 'id="a1" attitude-type="sentiment-neg" intensity="low" inferred="yes" target-link="t2"',
    "ATT-a2": 'id="a2" attitude-type="arguing-neg" intensity="medium" target-link="t1"',
    "TGT-t1": 'id="t1"',
    "TGT-t2": 'id="t2"',
}
TYPE = {
    "DSE": "GATE_direct-subjective",
    "DSE-implicit": "GATE_direct-subjective",
    "DSE-insub": "GATE_direct-subjective",
    "ESE": "GATE_expressive-subjectivity",
    "ESE2": "GATE_expressive-subjectivity",
    "OSE": "GATE_objective-speech-event",
    "DSE-att": "GATE_direct-subjective",
    "ATT-a1": "GATE_attitude",
    "ATT-a2": "GATE_attitude",
    "TGT-t1": "GATE_target",
    "TGT-t2": "GATE_target",
}


def parse(marked: str, base: int):
    """Strip [[KIND|...]] marks (nested allowed; 'A|x|B|y' gives two adjacent spans)."""
    out, anns, stack = [], [], []
    i = 0
    while i < len(marked):
        if marked.startswith("[[", i):
            m = re.match(r"\[\[([A-Za-z0-9-]+)\|", marked[i:])
            stack.append([m.group(1), len("".join(out))])
            i += m.end()
        elif marked.startswith("]]", i):
            kind, start = stack.pop()
            anns.append((kind, start, len("".join(out))))
            i += 2
        elif marked[i] == "|" and stack:  # switch to a new adjacent span
            m = re.match(r"\|([A-Za-z0-9-]+)\|", marked[i:])
            kind, start = stack.pop()
            anns.append((kind, start, len("".join(out))))
            stack.append([m.group(1), len("".join(out))])
            i += m.end()
        else:
            out.append(marked[i])
            i += 1
    text = "".join(out)
    return text, [(k, base + len(text[:s].encode()), base + len(text[:e].encode())) for k, s, e in anns]


def write_sample(root: str | Path) -> Path:
    ROOT = Path(root)
    for name, sentences in DOCS.items():
        body, anns, sents, pos = "", [], [], 0
        header = "Invented sample document.\n\n"  # a line that is not a sentence, like MPQA's meta lines
        body, pos = header, len(header.encode())
        for k, marked in enumerate(sentences):
            text, a = parse(marked, pos)
            sents.append((pos, pos + len(text.encode())))
            anns += a
            sep = "\n" if k % 2 == 0 else "  "
            body += text + sep
            pos += len((text + sep).encode())
        (ROOT / "docs" / name).parent.mkdir(parents=True, exist_ok=True)
        (ROOT / "docs" / name).write_bytes(body.encode("utf-8"))
        ann_dir = ROOT / "man_anns" / name
        ann_dir.mkdir(parents=True, exist_ok=True)
        lines = ["# invented sample annotations", '1\t0,0\tstring\tGATE_agent\t nested-source="w" id="w"']
        for n, (kind, s, e) in enumerate(reversed(anns), 2):  # unsorted, as in MPQA
            lines.append(f"{n}\t{s},{e}\tstring\t{TYPE[kind]}\t {ATTRS[kind]}")
        (ann_dir / "gateman.mpqa.lre.2.0").write_text("\n".join(lines) + "\n")
        slines = [f"{n}\t{s},{e}\tstring\tGATE_sentence" for n, (s, e) in enumerate(reversed(sents))]
        (ann_dir / "gatesentences.mpqa.2.0").write_text("\n".join(slines) + "\n")
    (ROOT / "doclist.mpqaOriginalSubset").write_text("demo/doc-a\ndemo/doc-b\n")
    (ROOT / "doclist.ulaSubset").write_text("other/doc-c\n")
    (ROOT / "doclist.attitudeSubset").write_text("demo/doc-a\n")
    return ROOT


if __name__ == "__main__":
    print(write_sample(sys.argv[1] if len(sys.argv) > 1 else "corpora/sample/mpqa"))
