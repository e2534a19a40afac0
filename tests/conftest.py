"""Shared fixtures. Tests that need ../shared (real TREC/CLEF data, conformance files) skip with a
clear reason when it is absent; CI always has it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import evalstore

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("EVALSTORE_SHARED", ROOT.parent / "shared"))
TREC_EVAL_DIR = SHARED / "conformance" / "trec_eval"
NTCIREVAL_DIR = SHARED / "conformance" / "ntcireval"
DATA_DIR = SHARED / "data"
SAMPLE = ROOT / "evalstore" / "data" / "sample"


def need_shared(path: Path = SHARED):
    if not path.exists():
        pytest.skip(f"needs {path} (the project's shared/ folder beside the checkout); not present here")
    return path


@pytest.fixture
def store():
    s = evalstore.open(":memory:")
    yield s
    s.close()


@pytest.fixture
def sample_store(store):
    store.ingest_qrels(SAMPLE / "qrels.txt", name="sample", progress=False)
    store.ingest_run(sorted((SAMPLE / "runs").glob("*.txt")), progress=False)
    return store


@pytest.fixture
def shared_dir():
    return need_shared()
