"""BRAT output is a directory brat opens as it is: beside the .txt and .ann files, an ``annotation.conf`` that
declares every entity type, relation and attribute the .ann files use (with every value an attribute takes)
and allows overlapping spans; an ``annotation.conf`` already there that opinion-tagger did not write is kept."""

import re

from opinion_tagger.cli import main
from opinion_tagger.tagging.documents import SpanFrame, TaggedDocument, TaggedSentence, TaggedSpan, TaggedToken
from opinion_tagger.tagging.formats import Writer


def read_conf(path) -> dict[str, list[str]]:
    """An annotation.conf's lines by section, comments and blank lines left out."""
    sections: dict[str, list[str]] = {}
    current = None
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        if re.fullmatch(r"\[\w+\]", line):
            current = sections.setdefault(line.strip("[]"), [])
        else:
            assert current is not None, line
            current.append(line)
    return sections


def declared(conf: dict[str, list[str]]):
    """(entity types, {relation: (arg1 types, arg2 types)}, {attribute: (types, values)}) of a parsed conf."""
    entities = set(conf["entities"])
    relations, attributes = {}, {}
    for line in conf["relations"]:
        name, args = line.split("\t")
        parts = dict(a.strip().split(":", 1) for a in args.split(","))
        relations[name] = (set(parts["Arg1"].split("|")), set(parts["Arg2"].split("|")))
    for line in conf["attributes"]:
        name, args = line.split("\t")
        parts = dict(a.strip().split(":", 1) for a in args.split(","))
        attributes[name] = (set(parts["Arg"].split("|")), set(parts.get("Value", "").split("|")) - {""})
    return entities, relations, attributes


def assert_declares_what_is_used(directory):
    """Every T, R and A line of the directory's .ann files uses a type, relation or attribute (and value, on
    argument types) its annotation.conf declares."""
    entities, relations, attributes = declared(read_conf(directory / "annotation.conf"))
    for ann in directory.glob("*.ann"):
        kinds = {}
        for line in ann.read_text(encoding="utf-8").splitlines():
            key, body = line.split("\t")[:2]
            parts = body.split()
            if key.startswith("T"):
                kinds[key] = parts[0]
                assert parts[0] in entities, line
            elif key.startswith("R"):
                arg1, arg2 = (p.split(":")[1] for p in parts[1:])
                assert kinds[arg1] in relations[parts[0]][0] and kinds[arg2] in relations[parts[0]][1], line
            elif key.startswith("A"):
                types, values = attributes[parts[0]]
                assert kinds[parts[1]] in types and parts[2] in values, line


def framed_document(rid: str) -> TaggedDocument:
    """``Officials fear the plan, a disaster.``: a DSE with a holder of words, an ESE, and a DSE whose holder
    is the writer, each with a frame, as a model with frame heads tags it."""
    text = "Officials fear the plan, a disaster. I doubt it."
    words = [(0, 9), (10, 14), (15, 18), (19, 23), (23, 24), (25, 26), (27, 35), (35, 36)]
    tokens = [TaggedToken(text[a:b], a, b, {"DSE": "O", "ESE": "O"}) for a, b in words]
    second = [
        TaggedToken(text[a:b], a, b, {"DSE": "O", "ESE": "O"}) for a, b in [(37, 38), (39, 44), (45, 47), (47, 48)]
    ]
    holder = {"start": 0, "end": 9, "text": "Officials"}
    spans = [
        TaggedSpan("DSE", 10, 14, "fear", 0.9, SpanFrame("negative", 0.8, "medium", 0.6, holder, 0.9)),
        TaggedSpan("ESE", 25, 35, "a disaster", 0.8, SpanFrame("negative", 0.9, "high", 0.7)),
        TaggedSpan("DSE", 39, 44, "doubt", 0.9, SpanFrame("negative", 0.7, "low", 0.5, "writer", 0.8)),
    ]
    sentences = [TaggedSentence(0, 36, tokens), TaggedSentence(37, 48, second)]
    return TaggedDocument(rid, text, sentences, spans, frames=True)


def test_a_brat_directory_declares_what_its_files_use(tmp_path):
    writer = Writer("brat", directory=tmp_path)
    writer.document(framed_document("a"))
    writer.document(TaggedDocument("b", "Rain fell.", [TaggedSentence(0, 10, [])]))
    writer.error("c", "empty text")
    writer.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "a.ann",
        "a.txt",
        "annotation.conf",
        "b.ann",
        "b.txt",
        "c.error.txt",
    ]
    assert_declares_what_is_used(tmp_path)
    conf = read_conf(tmp_path / "annotation.conf")
    entities, relations, attributes = declared(conf)
    assert entities == {"DSE", "ESE", "HOLDER"} and relations["Holder"] == ({"DSE"}, {"HOLDER"})
    assert attributes["Polarity"] == ({"DSE", "ESE"}, {"neutral", "negative", "positive", "both"})  # every value
    assert attributes["Intensity"][1] == {"neutral", "low", "medium", "high", "extreme"}
    assert attributes["Holder"] == ({"DSE"}, {"writer", "implicit", "none"})
    assert "<OVERLAP>\tArg1:DSE|ESE|HOLDER, Arg2:DSE|ESE|HOLDER, <OVL-TYPE>:<ANY>" in conf["relations"]
    assert set(conf) == {"entities", "relations", "events", "attributes"}


def test_a_model_without_frames_declares_its_types_alone(tmp_path, capsys):
    argv = ["tag", "--model", "fast", "--quiet", "--format", "brat", "--out", str(tmp_path / "out")]
    assert main([*argv, "Officials said the plan was daylight robbery, as usual."]) == 0
    out = tmp_path / "out"
    assert_declares_what_is_used(out)
    conf = read_conf(out / "annotation.conf")
    assert conf["entities"] == ["DSE", "ESE"] and conf["attributes"] == [] and len(conf["relations"]) == 1


def test_an_annotation_conf_of_someone_elses_is_kept(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "annotation.conf").write_text("[entities]\nOpinion\n", encoding="utf-8")
    argv = ["tag", "--model", "fast", "--quiet", "--format", "brat", "--out", str(out), "Rain fell."]
    assert main(argv) == 0
    assert (out / "annotation.conf").read_text(encoding="utf-8") == "[entities]\nOpinion\n"
    assert f"{out / 'annotation.conf'}: kept as it was" in capsys.readouterr().err
    (out / "annotation.conf").unlink()  # one this package wrote is written again
    assert main(argv) == 0 and main(argv) == 0
    assert read_conf(out / "annotation.conf")["entities"] == ["DSE", "ESE"]


def test_annotate_export_writes_the_configuration_too(tmp_path):
    doc = tmp_path / "a.txt"
    doc.write_text("Officials said the plan was daylight robbery, as usual.", encoding="utf-8")
    project = tmp_path / "p.sqlite"
    assert main(["annotate", "import", str(project), str(doc), "--model", "fast"]) == 0
    out = tmp_path / "brat"
    assert main(["annotate", "export", str(project), "--format", "brat", "--out", str(out), "--status", "todo"]) == 0
    assert (out / "a.ann").read_text(encoding="utf-8")  # the model's spans
    assert_declares_what_is_used(out)
