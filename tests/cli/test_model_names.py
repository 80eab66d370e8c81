"""Naming a model: a bare bundled name (``fast``, ``accurate``, ``default``) is the bundled model whatever the
working directory holds; a path (``./fast``, ``models/fast``, a ``Path``) is that folder."""

from pathlib import Path

import pytest

from opinion_tagger.cli import main
from opinion_tagger.paths import BUNDLED, default_model, resolve_model


@pytest.fixture
def lookalikes(tmp_path, monkeypatch):
    """A working directory with empty folders named as the bundled models."""
    for name in ("fast", "accurate", "default"):
        (tmp_path / name).mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OPINION_TAGGER_MODEL", raising=False)
    return tmp_path


def test_a_bare_bundled_name_is_the_bundled_model(lookalikes):
    assert resolve_model("fast") == BUNDLED / "fast"
    assert resolve_model("accurate") == BUNDLED / "accurate"
    assert resolve_model("default") == resolve_model(None) == default_model() == BUNDLED / "accurate"


def test_a_path_is_the_folder(lookalikes):
    assert resolve_model("./fast") == Path("fast")
    assert resolve_model(str(lookalikes / "fast")) == lookalikes / "fast"
    assert resolve_model(Path("fast")) == Path("fast")
    assert resolve_model("mine") == Path("mine")  # no bundled model of that name: a path, which loading checks
    assert resolve_model("..") == Path("..")


def test_the_tag_command_loads_the_bundled_model_and_refuses_the_empty_folder(lookalikes, capsys):
    assert main(["tag", "--model", "fast", "--quiet", "They fear the worst."]) == 0
    assert capsys.readouterr().out.strip()
    assert main(["tag", "--model", "./fast", "--quiet", "They fear the worst."]) == 2
    assert "fast/config.json: missing from the model bundle" in capsys.readouterr().err  # the folder it named
