import os
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "corpus" / "examples"
PUBLISHED_CORPUS = Path(os.environ.get("GPUDIAG_CORPUS", ROOT.parent / "shared" / "corpora" / "gpualert-eval"))
WILD_CORPUS = Path(os.environ.get("GPUDIAG_WILD_CORPUS", ROOT.parent / "shared" / "corpora" / "wild"))


@pytest.fixture(scope="session")
def cli() -> str:
    """The gpudiag command: $GPUDIAG_CLI (set by `make test`), the one pip installed, or PATH's."""
    beside_python = Path(sys.executable).parent / "gpudiag"  # installed by pip install .
    path = os.environ.get("GPUDIAG_CLI") or (str(beside_python) if beside_python.exists() else None) \
        or shutil.which("gpudiag")
    if not path or not os.access(path, os.X_OK):
        pytest.fail("the gpudiag command was not found: build it (make build) or set GPUDIAG_CLI")
    return path


@pytest.fixture()
def cache_env(tmp_path, monkeypatch):
    """Keep the rule cache of each test in its own directory."""
    monkeypatch.setenv("GPUDIAG_CACHE_DIR", str(tmp_path / "cache"))
    env = dict(os.environ)
    return env
