"""What the tests share besides fixtures: the project's paths, the shared/ folder's skip rule and
small helpers. Imported as ``from support import ...`` (tests/ is on the test path: pyproject's
``pythonpath``); fixtures live in conftest.py files."""

from __future__ import annotations

import contextlib
import hashlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner, Result

from evalstore.db import available_migrations

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("EVALSTORE_SHARED", ROOT.parent / "shared"))
TREC_EVAL_DIR = SHARED / "conformance" / "trec_eval"
NTCIREVAL_DIR = SHARED / "conformance" / "ntcireval"
DATA_DIR = SHARED / "data"
SAMPLE = ROOT / "evalstore" / "data" / "sample"
FIXTURES = ROOT / "tests" / "fixtures"
#: ``evalstore repro`` on the bundled sample: bm25 -> dense, reproduced as bm25_rm3 -> hybrid
SAMPLE_REPRO = ("repro", "-b", "bm25", "-a", "dense", "--rep-baseline", "bm25_rm3", "--rep-advanced", "hybrid")


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


def invoke(*args, stdin: str | None = None) -> Result:
    """Run ``evalstore ARGS...`` through Typer's test runner on a wide terminal (tables unwrapped);
    the result has exit_code, stdout, stderr and output. The ``cli`` fixture runs the console
    script's entry point instead (its error layer included)."""
    from evalstore.cli import app  # the whole command line: imported by the tests that run it, when they run it

    return CliRunner(env={"COLUMNS": "250"}).invoke(app, [str(a) for a in args], input=stdin)


def store_at_migration_1(path: Path) -> None:
    """A store as evalstore wrote it when only migration 0001 existed, with some data."""
    first = available_migrations()[0]
    con = duckdb.connect(str(path))
    con.execute(
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, "
        "applied_at TIMESTAMP NOT NULL DEFAULT current_timestamp)"
    )
    con.execute(first.sql())
    con.execute("INSERT INTO schema_migrations (version, name) VALUES (1, ?)", [first.name])
    con.execute(
        "INSERT INTO run_meta (name, tag, source, format, sha256, n_topics, n_rows) "
        "VALUES ('old', 'old', 'old.run', 'trec', 'abc', 1, 2)"
    )
    con.execute("INSERT INTO run_row_data VALUES (1, 'q1', 'dA', 1, 1, 1, 2.0), (1, 'q1', 'dB', 2, 2, 2, 1.0)")
    con.execute(
        "INSERT INTO qrels_meta (name, source, format, sha256, n_topics, n_judged, max_grade) "
        "VALUES ('oldq', 'q.txt', 'trec', 'def', 1, 1, 1)"
    )
    con.execute("INSERT INTO qrels_data VALUES (1, 'q1', 'dA', 1)")
    con.close()


#: a Python program that opens a store for writing and holds it until its stdin closes
HOLD_LOCK = """
import sys, time, duckdb
con = duckdb.connect(sys.argv[1])
print("ready", flush=True)
sys.stdin.read()
"""


@contextlib.contextmanager
def holding_lock(path: Path) -> Iterator[int]:
    """The store at ``path`` held open for writing by another process; yields that process's PID."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        yield proc.pid
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=30)
