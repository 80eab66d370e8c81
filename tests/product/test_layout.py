"""The shape of the package that its import contracts and lint rules cannot state: encoder names only in the
encoder registry, every optional install declared.  The rules on imports (layers, no cycle, what tagging may
reach, imports inside functions too) are contracts in pyproject.toml, which ``lint-imports`` checks; the size
of functions is ruff's (C901, PLR0913, PLR0915, at the limits pyproject.toml sets)."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "opinion_tagger"
REGISTRY = "opinion_tagger.encoders"


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module(p): p for p in PACKAGE.rglob("*.py")}


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
