"""What the tests share besides fixtures: the project's paths, the shared/ folder's skip rule and
small helpers. Imported as ``from support import ...`` (tests/ is on the test path: pyproject's
``pythonpath``); fixtures live in conftest.py files."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("EVALSTORE_SHARED", ROOT.parent / "shared"))
TREC_EVAL_DIR = SHARED / "conformance" / "trec_eval"
NTCIREVAL_DIR = SHARED / "conformance" / "ntcireval"
DATA_DIR = SHARED / "data"
SAMPLE = ROOT / "evalstore" / "data" / "sample"


#: the markers of the test being set up (conftest records them): need_shared checks the test
#: declares what it reads, so ``pytest -m "not shared"`` runs exactly the tests that do not
CURRENT_MARKERS: set[str] = set()


def need_shared(path: Path = SHARED):
    """Skip the test (with the reason) when ``path`` under ../shared is absent. Only a test marked
    ``@pytest.mark.shared`` may ask (an unmarked one fails: it would be run by ``-m "not shared"``)."""
    assert "shared" in CURRENT_MARKERS, "a test that reads ../shared carries @pytest.mark.shared"
    if not path.exists():
        pytest.skip(f"needs {path} (the project's shared/ folder beside the checkout); not present here")
    return path


def sha256_of(path: Path) -> str:
    """The hash of a file's bytes (a store must be byte-identical after a refused command)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
