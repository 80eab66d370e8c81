"""The shape of the package: no import cycle among opinion_tagger's modules, no module over 450 lines, a runtime
that cannot reach the training stack (imports inside functions included), encoder names only in the
encoder registry."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "opinion_tagger"
MAX_LINES = 450
# Over the limit, each with its reason (none now: the annotation store and page were split into packages).
LONGER: set[str] = set()

# What tagging reaches: the runtime, the text API, the engines, the ``tag`` command and the annotator's
# pre-annotation.  None of it may import the training stack or its libraries, at any depth of its code.
TAGGING_ROOTS = (
    "opinion_tagger",
    "opinion_tagger.runtime",
    "opinion_tagger.tagging",
    "opinion_tagger.engines",
    "opinion_tagger.cli.tag",
    "opinion_tagger.annotation.importing",
    "opinion_tagger.annotation.page.resources",
    "opinion_tagger.spacy_component",
)
TRAINING_STACK = ("opinion_tagger.model", "opinion_tagger.export", "opinion_tagger.training")
TRAINING_LIBRARIES = {"keras", "tensorflow", "jax", "jaxlib", "optax", "keras_hub", "tf2onnx", "onnx", "pycrfsuite"}
# ``evaluate`` reads corpora and scores a bundle: core libraries only (it may use the training data's loader)
CORE_ONLY_ROOTS = ("opinion_tagger.cli.evaluate",)
# ``summarize`` reads tagging's output back: no model, runtime, tagger or engine, none of their libraries
SUMMARY_ROOTS = ("opinion_tagger.summary", "opinion_tagger.cli.summarize")
MODEL_MODULES = (*TRAINING_STACK, "opinion_tagger.runtime", "opinion_tagger.tagging", "opinion_tagger.engines")
MODEL_LIBRARIES = TRAINING_LIBRARIES | {"onnxruntime", "spacy", "tokenizers", "streamlit", "ray"}
REGISTRY = "opinion_tagger.encoders"


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module(p): p for p in PACKAGE.rglob("*.py")}


def _imports() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Module -> the opinion_tagger modules it imports (at any depth of its code, lazy imports too), but the
    packages above it; and module -> the top-level names of the other libraries it imports."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    libraries: dict[str, set[str]] = {}
    for name, path in modules.items():
        found, libs = set(), set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            else:
                continue
            libs |= {t.split(".")[0] for t in targets if not t.startswith("opinion_tagger")}
            # a package above the module is imported before it anyway (``import opinion_tagger`` for __version__)
            found |= {t for t in targets if t in modules and t != name and not name.startswith(t + ".")}
        graph[name], libraries[name] = found, libs
    return graph, libraries


def _closure(graph: dict[str, set[str]], roots: list[str]) -> set[str]:
    """Every module reached from ``roots``, a package reaching its modules."""
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        todo.extend(graph[m])
        # importing a package runs its __init__; a package's modules are not imported with it
    return seen


def _roots(graph: dict[str, set[str]], prefixes: tuple[str, ...]) -> list[str]:
    """The modules named, and those of the packages named (the top package alone: its own module)."""
    return [m for m in graph if any(m == p or (p != "opinion_tagger" and m.startswith(p + ".")) for p in prefixes)]


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        path.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                return path[path.index(n) :] + [n]
            if n not in state and (found := visit(n)):
                return found
        path.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state and (found := visit(m)):
            return found
    return None


def test_no_import_cycle_in_the_package():
    graph, _ = _imports()
    assert "opinion_tagger.training.run" in graph["opinion_tagger.cli.train"]  # the graph sees function-local imports
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def test_the_cycle_check_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_no_module_over_450_lines():
    lines = {str(p.relative_to(PACKAGE)): len(p.read_text().splitlines()) for p in PACKAGE.rglob("*.py")}
    assert {m: n for m, n in lines.items() if n > MAX_LINES and m not in LONGER} == {}
    assert LONGER <= set(lines)  # a split or renamed module leaves this list


def _paths_to(graph: dict[str, set[str]], start: str, bad) -> list[str] | None:
    """An import chain from ``start`` to a module for which ``bad`` holds (breadth first), or None."""
    parent: dict[str, str | None] = {start: None}
    queue = [start]
    while queue:
        m = queue.pop(0)
        if bad(m):
            chain = [m]
            while parent[chain[-1]] is not None:
                chain.append(parent[chain[-1]])  # type: ignore[arg-type]
            return chain[::-1]
        for n in sorted(graph[m]):
            if n not in parent:
                parent[n] = m
                queue.append(n)
    return None


def test_tagging_never_reaches_the_training_stack():
    graph, libraries = _imports()
    roots = _roots(graph, TAGGING_ROOTS)
    assert "opinion_tagger.runtime.sentence_tagger" in roots and "opinion_tagger.cli.tag" in roots
    for root in roots:
        chain = _paths_to(
            graph,
            root,
            lambda m: m.startswith(TRAINING_STACK) or bool(libraries[m] & TRAINING_LIBRARIES),
        )
        assert chain is None, f"{' -> '.join(chain)} (imports {sorted(libraries[chain[-1]] & TRAINING_LIBRARIES)})"
    reached = set().union(*(libraries[m] for m in _closure(graph, roots)))
    assert "onnxruntime" in reached and "spacy" in reached  # the check sees the runtime's own libraries


def test_evaluation_needs_only_the_core_libraries():
    graph, libraries = _imports()
    for root in CORE_ONLY_ROOTS:
        chain = _paths_to(graph, root, lambda m: bool(libraries[m] & (TRAINING_LIBRARIES | {"streamlit", "ray"})))
        assert chain is None, " -> ".join(chain)


def test_the_summary_reaches_no_model():
    graph, libraries = _imports()
    roots = _roots(graph, SUMMARY_ROOTS)
    assert {"opinion_tagger.summary.records", "opinion_tagger.cli.summarize"} <= set(roots)
    for root in roots:
        chain = _paths_to(graph, root, lambda m: m.startswith(MODEL_MODULES) or bool(libraries[m] & MODEL_LIBRARIES))
        assert chain is None, f"{' -> '.join(chain)} (imports {sorted(libraries[chain[-1]] & MODEL_LIBRARIES)})"


def test_the_closure_check_sees_a_lazy_import(tmp_path):
    graph = {"a": {"b"}, "b": {"c"}, "c": set()}
    assert _paths_to(graph, "a", lambda m: m == "c") == ["a", "b", "c"]
    assert _paths_to(graph, "c", lambda m: m == "a") is None


def _string_constants(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    docstrings = {
        id(n.body[0].value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and n.body
        and isinstance(n.body[0], ast.Expr)
        and isinstance(n.body[0].value, ast.Constant)
    }
    return {
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings
    }


def test_encoder_names_appear_only_in_the_registry():
    from opinion_tagger.encoders import ENCODERS

    for name, path in _modules().items():
        if name == REGISTRY:
            continue
        found = _string_constants(path) & set(ENCODERS)
        assert not found, f"{path.relative_to(ROOT)}: the encoder name {sorted(found)} outside {REGISTRY}"


@pytest.mark.parametrize("extra", ["train", "fast", "bf16", "annotate", "ray", "report"])
def test_every_extra_is_declared_in_pyproject(extra):
    import tomllib

    from opinion_tagger.extras import EXTRAS

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert extra in declared and extra in EXTRAS
    assert "opinion-tagger[train,fast,bf16,annotate,ray,report]" in declared["all"]
