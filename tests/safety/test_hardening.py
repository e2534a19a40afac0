"""Hardening through the CLI as a user runs it: read-only and sandbox promises, resource settings,
failures as messages with exit codes, damaged stores, options checked before any work."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import duckdb
import pytest
from support import SAMPLE

import evalstore
from evalstore.cli import failures

QRELS = SAMPLE / "qrels.txt"
RUNS = sorted((SAMPLE / "runs").glob("*.txt"))


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def test_read_only_sql_refuses_what_changes_the_store_or_the_connection(cli, sample_db, tmp_path):
    before = _sha(sample_db)
    for q in (
        "EXPLAIN ANALYZE SET threads = 1",
        "DELETE FROM run_meta",
        "SELECT 1; DROP TABLE run_meta",
        f"ATTACH '{tmp_path / 'other.duckdb'}'",
        "INSTALL httpfs",
        "COPY run_meta FROM 'x.csv'",
        f"EXPORT DATABASE '{tmp_path / 'exp'}'",
        "CHECKPOINT",
    ):
        code, _, err = cli("sql", q, "--db", sample_db)
        assert code == failures.USER and "this statement is refused" in err, q
    assert _sha(sample_db) == before and not (tmp_path / "exp").exists() and not (tmp_path / "other.duckdb").exists()
    out_file = tmp_path / "result.csv"  # a result file is written by the CLI's writer, not by the query
    code, _, err = cli("sql", f"COPY (SELECT name FROM runs ORDER BY name) TO '{out_file}'", "--db", sample_db)
    assert code == failures.USER and "COPY writes a file" in err and not out_file.exists()
    code, _, _ = cli("sql", "SELECT name FROM runs ORDER BY name", "-o", out_file, "--db", sample_db)
    assert code == 0 and out_file.read_text().splitlines()[1:] == sorted(
        evalstore.open(sample_db, read_only=True).run_names()
    )


def test_sandbox_has_no_file_or_network_access(cli, sample_db, tmp_path):
    code, out, _ = cli("sql", "--sandbox", "SELECT count(*) AS n FROM runs", "--db", sample_db)
    assert code == 0 and out.splitlines()[1].strip() == str(len(RUNS))
    code, _, err = cli("sql", "--sandbox", f"SELECT * FROM read_csv('{QRELS}')", "--db", sample_db)
    assert code == 1 and "read_csv() reads files" in err
    victim = tmp_path / "victim.txt"
    code, _, err = cli("sql", "--sandbox", f"COPY (SELECT 1) TO '{victim}'", "--db", sample_db)
    assert code == 1 and not victim.exists()
    code, _, err = cli("sql", "--sandbox", "--write", "DELETE FROM run_meta", "--db", sample_db)
    assert code == 2
    with evalstore.open(sample_db, sandbox=True) as s:
        with pytest.raises(evalstore.StoreError, match="reads files"):
            s.sql(f"SELECT * FROM read_csv('{QRELS}')", sandbox=True)
        # DuckDB's own sandbox refuses it too, underneath the rule
        with pytest.raises(duckdb.Error, match="disabled"):
            s.con.execute(f"SELECT * FROM read_csv('{QRELS}')")
    with evalstore.open(sample_db) as s, pytest.raises(evalstore.StoreError, match="sandbox=True"):
        s.sql("SELECT 1", sandbox=True)


def test_no_extension_is_installed_or_loaded_behind_the_scenes(sample_db):
    with evalstore.open(sample_db) as s:
        settings = dict(
            s.con.execute(
                "SELECT name, value FROM duckdb_settings() WHERE name LIKE 'auto%_known_extensions'"
            ).fetchall()
        )
    assert settings == {"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"}


def test_memory_limit_gives_a_message_not_a_traceback(cli, sample_db):
    code, out, _ = cli(
        "sql", "SELECT current_setting('memory_limit') AS m", "--memory-limit", "64MB", "--db", sample_db
    )
    assert code == 0 and "MiB" in out
    query = "SELECT len(l) FROM (SELECT list(range) AS l FROM range(30000000))"
    code, _, err = cli("sql", query, "--memory-limit", "48MB", "--threads", "1", "--db", sample_db)
    assert code == failures.MEMORY and "out of memory" in err and "--memory-limit" in err and "--temp-dir" in err
    code, _, err = cli("--memory-limit", "48MB", "sql", query, "--db", sample_db)  # before the subcommand too
    assert code == failures.MEMORY
    assert os.environ.get("EVALSTORE_MEMORY_LIMIT") is None  # for that invocation only


def test_a_damaged_store_is_reported_plainly(cli, sample_db, tmp_path):
    with evalstore.open(sample_db) as s:  # more data blocks, so that the middle of the file is table data
        s.ingest_run(RUNS[0], name="copy1", progress=False)
        s.evaluate("sample", None, ["AP", "nDCG@10", "P@10", "RR"])
    code, out, err = cli("db", "check", "--db", sample_db)
    assert code == 0 and "no damage found" in err
    size = sample_db.stat().st_size
    data = bytearray(sample_db.read_bytes())
    for start in range(size // 3, size, size // 6):  # overwrite a few blocks with junk
        data[start : start + 4096] = os.urandom(4096)
    sample_db.write_bytes(bytes(data))
    code, out, err = cli("db", "check", "--db", sample_db)
    assert code == failures.DAMAGED and "damaged" in err
    code, _, err = cli("eval", "-q", "sample", "-m", "AP", "--db", sample_db)
    assert code in (failures.DAMAGED, failures.USER) and ("damaged" in err or "error:" in err)


def test_cut_store_is_reported(cli, sample_db):
    sample_db.write_bytes(sample_db.read_bytes()[: sample_db.stat().st_size // 2])
    code, _, err = cli("list", "runs", "--db", sample_db)
    assert code in (failures.DAMAGED, failures.USER) and "error:" in err
    code, _, err = cli("db", "check", "--db", sample_db)
    assert code == failures.DAMAGED


@pytest.mark.parametrize(
    "args",
    [
        ["eval", "-q", "sample", "-m", "AP", "--format", "nope"],
        ["eval", "-q", "sample", "-m", "AP", "--plot", "x.pdf"],
        ["eval", "-q", "sample", "-m", "AP", "--convention", "nope"],
        ["eval", "-q", "sample", "-m", "AP", "--memory-limit", "lots"],
        ["compare", "-q", "sample", "-b", "bm25", "-m", "AP", "--test", "z"],
        ["compare", "-q", "sample", "-b", "bm25", "-m", "AP", "-f", "csv", "-o", "x.json"],
        ["meta", "kendall", "-q", "sample", "-m", "AP", "-m", "P@5", "-f", "latex", "-o", "k.md"],
        ["meta", "tests", "-q", "sample", "-m", "AP", "--adjust", "nope"],
        ["meta", "swap", "-q", "sample", "-m", "AP", "-o", "/no/such/folder/x.csv"],
        ["export", "leaderboard", "-q", "sample", "-m", "AP", "-f", "csv", "-o", "l.json"],
        ["subsample", "--qrels", "sample", "--fractions", "0.5", "--method", "nope"],
        ["list", "runs", "-f", "nope"],
        ["sql", "SELECT 1", "-f", "nope"],
        ["ingest", "run", str(RUNS[0]), "--format", "nope", "--name", "n"],
        ["ingest", "qrels", str(QRELS), "--gains", "nan:nan", "--name", "g"],
        ["ingest", "qrels", str(QRELS), "--gains", "inf:1", "--name", "g"],
    ],
)
def test_a_bad_option_leaves_the_store_unchanged(cli, sample_db, args, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    before = _sha(sample_db)
    code, _, err = cli(*args, "--db", sample_db)
    assert code in (failures.USAGE, failures.USER) and err, (args, code)
    assert _sha(sample_db) == before, args
    assert not any(p.suffix in (".json", ".md", ".pdf", ".csv") for p in tmp_path.iterdir())


def test_control_characters_are_shown_escaped(cli, sample_db):
    with evalstore.open(sample_db) as s:
        s.ingest_run({"S01": {"d1": 1.0}}, name="evil\x1b[2Jrun", progress=False)
    code, out, _ = cli("list", "runs", "--db", sample_db)
    assert "\x1b" not in out and "evil\\x1b[2Jrun" in out
    code, out, _ = cli("list", "runs", "-f", "csv", "--db", sample_db)
    assert "\x1b" not in out


def test_failures_map_to_messages_and_exit_codes():
    assert failures.explain(KeyboardInterrupt())[0] == failures.INTERRUPTED
    assert failures.explain(RuntimeError("Query interrupted"))[0] == failures.INTERRUPTED
    assert failures.explain(duckdb.InterruptException("x"))[0] == failures.INTERRUPTED
    code, msg = failures.explain(duckdb.IOException("IO Error: No space left on device"))
    assert code == failures.IO and "disk is full" in msg
    code, msg = failures.explain(OSError(28, "No space left on device"))
    assert code == failures.IO and "disk is full" in msg
    assert failures.explain(duckdb.TransactionException("conflict"))[0] == failures.BUSY
    code, msg = failures.explain(duckdb.Error("Corrupt database file: computed checksum 1 does not match 2"))
    assert code == failures.DAMAGED and "db check" in msg
    code, msg = failures.explain(ValueError("boom"))
    assert code == failures.INTERNAL and "--debug" in msg


def test_new_stores_use_the_oldest_storage_format_that_suffices(tmp_path, cli):
    """DuckDB 2 writes file format 999 unless told otherwise, which duckdb 1.x cannot open: new stores
    are written in DuckDB 1.1's format (64), and sample_db status says so."""
    import struct

    path = tmp_path / "s.duckdb"
    with evalstore.open(path) as s:
        s.ingest_qrels(QRELS, name="q", progress=False)
    header = path.read_bytes()[:20]
    assert header[8:12] == b"DUCK" and struct.unpack("<Q", header[12:20])[0] == 64
    code, out, _ = cli("db", "status", "--db", path)
    assert code == 0 and "written for DuckDB 1.1.0" in out and "1.0 does not" in out
