import importlib.util
import os
import sys
from pathlib import Path

import pytest

from opinion_tagger.paths import BUNDLED, default_datasplit, default_mpqa, default_reference

ROOT = Path(__file__).resolve().parent.parent
# a network that trains in seconds: one recurrent layer of 8 units over random 8-d word vectors, no dropout
TINY_NETWORK = {
    "model.recurrent.depth": 1,
    "model.recurrent.hidden": 8,
    "model.recurrent.input_dropout": 0.0,
    "model.recurrent.dropout": 0.0,
    "model.embeddings.features": "random",
    "model.embeddings.dim": 8,
    "training.batch_size": 4,
}
_spec = importlib.util.spec_from_file_location("make_sample", ROOT / "corpora" / "sample" / "make_sample.py")
make_sample = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_sample)
# the study's report (experiments/study.py: its names, tables and findings)


def experiment_script(module: str) -> tuple[list[str], dict[str, str]]:
    """The command and environment that run ``python -m experiments.<module>`` from any directory, as the
    experiments' README says to run them (the repository root on the path)."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return [sys.executable, "-m", f"experiments.{module}"], {**os.environ, "PYTHONPATH": path}


def write_split(root: Path, folds: dict[int, tuple[str, str]]) -> Path:
    """A datasplit directory for the sample corpus: ``folds`` maps a fold to its train and test documents
    (newline-separated names); the dev documents are the rest of the three."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "doclist.mpqaOriginalSubset").write_text("demo/doc-a\ndemo/doc-b\nother/doc-c\n")
    for k, (train, test) in folds.items():
        (root / f"filelist_train{k}").write_text(train)
        (root / f"filelist_test{k}").write_text(test)
    return root


def _need(path: Path) -> Path:
    if not path.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{path} is missing: CI must run with ../shared beside the checkout")
        pytest.skip(f"{path} not present")
    return path


def need_encoder(name: str) -> None:
    """Skip (fail under CI, which installs both) unless the encoder weights the bundled model ``name`` reads
    (its config.json's ``contextual``) are here: MiniLM-L6's package, or MPNet-base assembled by
    ``opinion-tagger download --encoder mpnet``; a model without an encoder (``fast``) needs none."""
    from opinion_tagger.config import TaggerConfig
    from opinion_tagger.encoders import ENCODERS
    from opinion_tagger.errors import TaggerError
    from opinion_tagger.runtime.base_weights import locate

    encoder = TaggerConfig.load(BUNDLED / name / "config.json").model.encoder.name
    if encoder:
        try:
            locate(ENCODERS[encoder])
        except TaggerError as exc:
            _missing(f"the {encoder} base weights are not installed ({exc})")


def mpnet_weights() -> Path:
    """The assembled MPNet-base directory, or skip (fail under CI) saying how to get it."""
    from opinion_tagger.encoders import MPNET
    from opinion_tagger.errors import TaggerError
    from opinion_tagger.runtime.base_weights import locate

    try:
        return locate(MPNET)
    except TaggerError as exc:
        _missing(f"MPNet-base weights not assembled ({exc})")
        raise


def _missing(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason}: CI must install it")
    pytest.skip(reason)


_INTEGRATION_MARKS = ("corpus", "slow", "browser")
_CORPUS_FIXTURES = ("shared_mpqa", "shared_reference", "shared_datasplit")


def pytest_collection_modifyitems(config, items):
    """Every test that is ``corpus``, ``slow`` or ``browser``, or reads the real corpus through a shared
    fixture, is also ``integration``: ``pytest -m "not integration"`` runs the unit tests alone."""
    for item in items:
        marked = any(item.get_closest_marker(name) for name in _INTEGRATION_MARKS)
        if marked or any(name in getattr(item, "fixturenames", ()) for name in _CORPUS_FIXTURES):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def shared_mpqa() -> Path:
    return _need(default_mpqa())


@pytest.fixture(scope="session")
def shared_reference() -> Path:
    return _need(default_reference())


@pytest.fixture(scope="session")
def shared_datasplit() -> Path:
    return _need(default_datasplit())


@pytest.fixture
def sample_mpqa(tmp_path) -> Path:
    """The invented sample corpus, written afresh (tests may damage it)."""
    return make_sample.write_sample(tmp_path / "mpqa")


@pytest.fixture
def no_login(monkeypatch):
    """No annotator password or fixed annotator name from the environment the tests run in."""
    monkeypatch.delenv("OPINION_TAGGER_PASSWORD", raising=False)
    monkeypatch.delenv("OPINION_TAGGER_ANNOTATOR", raising=False)
