"""Shared fixtures. Tests that need ../shared (real TREC/CLEF data, conformance files) carry the
``shared`` marker and skip with a clear reason when it is absent; CI always has it."""

from __future__ import annotations

import io
import sys

import pytest
import support
from support import SAMPLE, SHARED, need_shared

import evalstore
from evalstore.cli import main


def pytest_runtest_setup(item):
    """The ``shared`` marker is the one declaration: a marked test skips when ../shared is absent,
    and :func:`support.need_shared` refuses to serve an unmarked one."""
    support.CURRENT_MARKERS = {m.name for m in item.iter_markers()}
    if "shared" in support.CURRENT_MARKERS and not SHARED.exists():
        pytest.skip(f"needs {SHARED} (the project's shared/ folder beside the checkout); not present here")


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


@pytest.fixture
def sample_db(tmp_path):
    """A store file holding the bundled sample collection: qrels set 'sample' and its six runs."""
    path = tmp_path / "sample.duckdb"
    with evalstore.open(path) as s:
        s.ingest_qrels(SAMPLE / "qrels.txt", name="sample", progress=False)
        s.ingest_run(sorted((SAMPLE / "runs").glob("*.txt")), progress=False)
    return path


@pytest.fixture
def cli(capsys, monkeypatch):
    """Run the command line as a user does (the console script's entry point, its error layer
    included): ``code, out, err = cli("eval", ..., stdin=TEXT)``. No traceback may reach stderr."""
    monkeypatch.delenv("EVALSTORE_DB", raising=False)
    monkeypatch.delenv("EVALSTORE_DEBUG", raising=False)

    monkeypatch.setenv("COLUMNS", "250")  # tables unwrapped

    def run(*args, stdin: str | None = None):
        monkeypatch.setattr(sys, "argv", ["evalstore", *map(str, args)])
        if stdin is not None:
            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
        try:
            main()
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        out, err = capsys.readouterr()
        assert "Traceback" not in err
        return code, out, err

    return run
