"""The shape of the package: no import cycle among tagger's modules, no module over 450 lines."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "opinion_tagger"
MAX_LINES = 450
# Over the limit, each with its reason (none now: the annotation store and page were split into packages).
LONGER: set[str] = set()


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports() -> dict[str, set[str]]:
    """Module -> the tagger modules it imports (at any depth of its code, lazy imports too), but its own packages."""
    modules = {_module(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            else:
                continue
            # a package above the module is imported before it anyway (``import opinion_tagger`` for __version__)
            found |= {t for t in targets if t in modules and t != name and not name.startswith(t + ".")}
        graph[name] = found
    return graph


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


def test_no_import_cycle_in_tagger():
    graph = _imports()
    assert "opinion_tagger.training.run" in graph["opinion_tagger.cli.train"]  # the graph sees function-local imports
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def test_the_cycle_check_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_no_module_over_450_lines():
    lines = {str(p.relative_to(PACKAGE)): len(p.read_text().splitlines()) for p in PACKAGE.rglob("*.py")}
    assert {m: n for m, n in lines.items() if n > MAX_LINES and m not in LONGER} == {}
    assert LONGER <= set(lines)  # a split or renamed module leaves this list
