"""A full disk and a read-only file system are diagnosed as such (issue 39.7), and `-o` writers
replace a file whole or not at all (39.8).

How the failures are made: where the tests run as root and may mount, a small tmpfs holds the
store (``mount -t tmpfs -o size=...``; ``mount -o remount,ro`` for a read-only file system), so
DuckDB meets the real ENOSPC and EROFS; everywhere else (and as well), DuckDB's errors are made
to happen by monkeypatching the one place that meets them."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import uuid
from pathlib import Path

import duckdb
import pytest
from support import SAMPLE, sha256_of

import evalstore
from evalstore.cli import failures
from evalstore.db import connection
from evalstore.ingest import write

RUNS = sorted((SAMPLE / "runs").glob("*.txt"))


@contextlib.contextmanager
def tmpfs(folder: Path, size: str):
    """A tmpfs of ``size`` mounted at ``folder`` (skips the test where mounting is not allowed)."""
    folder.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def _big_run(path: Path, n_topics: int = 1100, depth: int = 1000) -> Path:
    """A run of n_topics x depth rows (over a million: the fast reader's rows are written as whole
    row groups, straight to the file, not through the write-ahead log)."""
    with open(path, "w") as f:
        for t in range(n_topics):
            f.writelines(f"t{t} Q0 doc{t}-{d}-{uuid.uuid4().hex[:12]} {d + 1} {1000 - d} big\n" for d in range(depth))
    return path


# --------------------------------------------------------------------------- 39.7 a full disk
class _FullDisk:
    """A connection whose bulk insert meets a full disk the way DuckDB's does: the statement
    fails with an IOException and leaves the transaction aborted."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con

    def execute(self, *args):
        return self.con.execute(*args)

    def from_arrow(self, table):
        return self

    def select(self, *columns):
        return self

    def insert_into(self, name):
        with contextlib.suppress(duckdb.Error):
            self.con.execute("SELECT error('the write failed')")  # aborts the transaction
        raise duckdb.IOException('Could not write file "s.duckdb": No space left on device')


def test_a_full_disk_in_a_bulk_insert_is_reported_as_a_full_disk():
    # issue 39.7: `finally: SET threads` ran in the aborted transaction and its TransactionException
    # replaced the IOException: "another connection changed the store" (exit 3, not 5)
    import pyarrow as pa

    con = duckdb.connect()
    con.execute("BEGIN TRANSACTION")
    table = pa.table({"topic": ["q"], "doc": ["d"], "submitted_rank": [1], "score": [1.0], "ln": [1], "rank": [1]})
    with pytest.raises(duckdb.IOException, match="No space left") as e:
        write.insert_read_rows(_FullDisk(con), [(1, table)])
    assert failures.explain(e.value)[0] == failures.IO


def test_ingest_on_a_full_disk_exits_5_and_keeps_the_store(tmp_path, cli):
    run = _big_run(tmp_path / "big.txt")
    with tmpfs(tmp_path / "small", "12m") as disk:
        db = disk / "s.duckdb"
        code, _, err = cli("ingest", "qrels", SAMPLE / "qrels.txt", "--name", "sample", "--db", db)
        assert code == 0, err
        code, _, err = cli("ingest", "run", run, "--db", db, "--temp-dir", tmp_path)
        assert code == failures.IO and "the disk is full" in err, err
        for wal in disk.glob("*.wal"):
            wal.unlink()  # what a retry after freeing space finds: the store as it was
        with evalstore.open(db, read_only=True) as s:
            assert s.qrels_names() == ["sample"] and s.run_names() == []


# --------------------------------------------------------------------------- 39.7 a read-only file system
@pytest.fixture
def read_only_fs(monkeypatch):
    """DuckDB refuses to open any store for writing, as on a read-only file system; os.access says so."""
    real_open, real_access = connection._open, os.access

    def _open(location, read_only, config, lockdown):
        if not read_only:
            raise duckdb.IOException(f'IO Error: Cannot open file "{location}": Read-only file system')
        return real_open(location, read_only, config, lockdown)

    monkeypatch.setattr(connection, "_open", _open)
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if mode & os.W_OK else real_access(p, mode))


def test_on_a_read_only_file_system_db_check_finds_no_damage_and_eval_exits_5(sample_db, cli, read_only_fs):
    # issue 39.7: db check called an intact store damaged (exit 6); eval exited 1
    code, out, err = cli("db", "check", "--db", sample_db)
    assert code == 0 and "no damage found" in err and "indexes not checked" in err, (out, err)
    code, _, err = cli("eval", "-q", "sample", "-m", "nDCG@10", "--db", sample_db)
    assert code == failures.IO and "read-only file system" in err and "only read it work" in err, err
    code, out, err = cli("sql", "SELECT count(*) AS n FROM runs", "--db", sample_db)
    assert code == 0 and out.split()[-1] == "6", err


def test_on_a_real_read_only_file_system(sample_db, tmp_path, cli):
    with tmpfs(tmp_path / "ro", "20m") as disk:
        db = disk / "s.duckdb"
        db.write_bytes(Path(sample_db).read_bytes())
        before = sha256_of(db)
        done = subprocess.run(["mount", "-o", "remount,ro", str(disk)], capture_output=True)
        assert done.returncode == 0, done.stderr
        code, _, err = cli("db", "check", "--db", db)
        assert code == 0 and "no damage found" in err, err
        code, _, err = cli("eval", "-q", "sample", "-m", "nDCG@10", "--db", db)
        assert code == failures.IO and "read-only file system" in err, err
        code, out, err = cli("sql", "SELECT count(*) AS n FROM runs", "--db", db)
        assert code == 0 and out.split()[-1] == "6", err
        assert sha256_of(db) == before


def test_the_subprocess_sees_exit_5_too(sample_db, read_only_fs, tmp_path):
    """The exit code a shell sees (the console script, not the test runner)."""
    code = (
        "import os, duckdb, sys\n"
        "from evalstore.db import connection\n"
        "real = connection._open\n"
        "def _open(location, read_only, config, lockdown):\n"
        "    if not read_only:\n"
        "        raise duckdb.IOException('Cannot open file: Read-only file system')\n"
        "    return real(location, read_only, config, lockdown)\n"
        "connection._open = _open\n"
        "sys.argv = ['evalstore', 'eval', '-q', 'sample', '-m', 'AP', '--db', sys.argv[1]]\n"
        "from evalstore.cli import main\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(sample_db)], capture_output=True, text=True, timeout=120)
    assert done.returncode == failures.IO, done.stderr


# --------------------------------------------------------------------------- 39.8 atomic -o writers
def test_an_output_that_fails_midway_leaves_the_file_it_would_replace(sample_db, tmp_path, cli, monkeypatch):
    from dataclasses import replace

    from evalstore.output import formats

    out = tmp_path / "q.json"
    out.write_text('[{"old": 1}]\n')

    def half_then_full(report, fh):
        fh.write('[{"run": ')
        raise OSError(28, "No space left on device")

    monkeypatch.setitem(formats.OUTPUT_FORMATS, "json", replace(formats.OUTPUT_FORMATS["json"], write=half_then_full))
    code, _, err = cli("sql", "SELECT name AS run FROM runs", "-o", out, "--db", sample_db)
    assert code == failures.IO and "the disk is full" in err
    assert out.read_text() == '[{"old": 1}]\n' and sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [out.name, Path(sample_db).name]
    )


def test_outputs_on_a_full_disk(sample_db, tmp_path, cli):
    """The audit's cases on a real full disk: `sql -o q.json` replaced an existing file with truncated
    JSON; `export leaderboard -o lb.csv|.parquet` left 0-byte files."""
    with tmpfs(tmp_path / "small", "64k") as disk:
        out = disk / "q.json"
        out.write_text('[{"old": 1}]\n')
        big = "SELECT repeat('x', 1000) AS s FROM range(200)"
        code, _, err = cli("sql", big, "-o", out, "--db", sample_db)
        assert code == failures.IO and "the disk is full" in err, err
        assert out.read_text() == '[{"old": 1}]\n'
        (disk / "filler").write_bytes(b"\0" * (60 << 10))  # what is left cannot hold a leaderboard
        for name in ("lb.csv", "lb.parquet"):
            code, _, err = cli(
                "export", "leaderboard", "-q", "sample", "-m", "AP", "-o", disk / name, "--db", sample_db
            )
            assert code == failures.IO, err
        assert sorted(p.name for p in disk.iterdir()) == ["filler", "q.json"]


def test_export_run_writes_a_file_like_the_others_and_refuses_a_folder(sample_db, tmp_path, cli):
    old = os.umask(0o022)
    try:
        code, _, err = cli("export", "run", "bm25", "-o", tmp_path / "r.txt", "--db", sample_db)
        assert code == 0, err
        assert oct((tmp_path / "r.txt").stat().st_mode & 0o777) == "0o644"  # was 0600
    finally:
        os.umask(old)
    code, _, err = cli("export", "run", "bm25", "-o", tmp_path, "--db", sample_db)
    assert code == failures.USAGE and "is a folder" in err  # was exit 5
    with evalstore.open(sample_db, read_only=True) as s, pytest.raises(evalstore.StoreError, match="is a folder"):
        s.export_run("bm25", tmp_path)  # was IsADirectoryError
