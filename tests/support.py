"""What the tests share besides fixtures: the project's paths, the shared/ folder's skip rule and
small helpers. Imported as ``from support import ...`` (tests/ is on the test path: pyproject's
``pythonpath``); fixtures live in conftest.py files."""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import duckdb
import pytest

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


class CliResult(NamedTuple):
    """What a command line did: its exit code and what it printed (``code, out, err = run_cli(...)``)."""

    exit_code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


#: the environment a test's command line runs in: a wide terminal (tables unwrapped), and no store
#: or debug setting inherited from the shell that runs the tests
_CLI_ENV = {"COLUMNS": "250", "EVALSTORE_DB": None, "EVALSTORE_DEBUG": None}


def run_cli(*args, stdin: str | None = None, env: dict[str, str] | None = None) -> CliResult:
    """Run ``evalstore ARGS...`` as a user does, in this process: the command line with its error
    layer (:func:`evalstore.cli.main`, what the console script ``evalstore.entry:main`` hands every
    command line to once started: every failure a message and an exit code), ``stdin`` as standard
    input, ``env`` variables set for the command (the others of ``_CLI_ENV`` are cleared, whatever
    the shell running the tests has). The one way the tests run a command."""
    from evalstore.cli import main  # the whole command line: imported by the tests that run it, when they run it

    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    saved_env = {k: os.environ.get(k) for k in {**_CLI_ENV, **(env or {})}}
    saved = sys.argv, sys.stdin
    try:
        for k, v in {**_CLI_ENV, **(env or {})}.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
        sys.argv = ["evalstore", *map(str, args)]
        sys.stdin = io.TextIOWrapper(io.BytesIO((stdin or "").encode()), encoding="utf-8")
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main()
                code = 0
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        sys.argv, sys.stdin = saved
        for k, v in saved_env.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
    return CliResult(code, _text(out), _text(err))


def _text(stream: io.TextIOWrapper) -> str:
    stream.flush()
    return stream.buffer.getvalue().decode("utf-8", errors="replace")  # type: ignore[attr-defined]


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
def holding_lock(path: Path, *args: str, script: str = HOLD_LOCK) -> Iterator[int]:
    """The store at ``path`` held open for writing by another process (``script``, a Python
    program given ``path`` and ``args`` that prints "ready" and holds the store until its stdin
    closes); yields that process's PID."""
    proc = subprocess.Popen(
        [sys.executable, "-c", script, str(path), *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        yield proc.pid
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=30)
