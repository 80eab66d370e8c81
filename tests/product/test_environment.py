"""What importing the package does to the process's environment: nothing for ``opinion_tagger`` and the public
API; Keras's back end and TensorFlow's log level, as defaults, for the training stack (``opinion_tagger.model``)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
KERAS_SETTINGS = ("KERAS_BACKEND", "TF_CPP_MIN_LOG_LEVEL")


def environment_after(code: str, **given: str) -> dict[str, str]:
    """The environment of a fresh interpreter after it runs ``code``, started with ``given`` and without the
    variables of ``KERAS_SETTINGS`` that ``given`` does not name."""
    env = {k: v for k, v in os.environ.items() if k not in KERAS_SETTINGS} | given
    env["PYTHONPATH"] = str(ROOT)
    script = f"import json, os\nbefore = dict(os.environ)\n{code}\nprint(json.dumps([before, dict(os.environ)]))"
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    before, after = json.loads(done.stdout.splitlines()[-1])
    return {k: v for k, v in after.items() if before.get(k) != v}


def test_importing_the_package_and_its_public_api_changes_no_environment_variable():
    code = "import opinion_tagger\nfrom opinion_tagger import OpinionTagger, TaggedDocument, TaggerError"
    assert environment_after(code) == {}


def test_the_training_stack_sets_keras_defaults_and_keeps_the_users_own():
    assert environment_after("import opinion_tagger.model") == {
        "KERAS_BACKEND": "tensorflow",
        "TF_CPP_MIN_LOG_LEVEL": "3",
    }
    given = {"KERAS_BACKEND": "jax", "TF_CPP_MIN_LOG_LEVEL": "1"}
    assert environment_after("import opinion_tagger.model", **given) == {}
