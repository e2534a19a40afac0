"""Safety, second round (issue 21): each defect of the audit as a test that failed before the fix.

Read-only SQL that wrote files, drops by a string, two files of one ingest call under one name,
the sandbox's reach (the store's temp folder and raw bytes, unbounded UDFs, --temp-dir), options
that change a set's meaning, analyses left stale by --replace, index damage that db check missed,
a full disk reported as a conflict, late validation, stores created by a mistyped --db, names
printed raw, loose limits, Python errors that are not evalstore's, and sums that changed in the
last bit between two identical evaluations.
"""

from __future__ import annotations

import errno
import gzip
import os
import shutil
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pytest
from support import SAMPLE, sha256_of

import evalstore
from evalstore.cli import failures
from evalstore.db.check import check_store
from evalstore.errors import EvalstoreError
from evalstore.metrics import registry

QRELS = SAMPLE / "qrels.txt"
RUNS = sorted((SAMPLE / "runs").glob("*.txt"))

# --------------------------------------------------------------------------- 1, 5: read-only SQL
#: Statements a read-only query must refuse: each would write a file, change the store or the
#: connection (the audit's cases first).
READ_ONLY_REFUSED = [
    "COPY (SELECT 1 AS a, 2 AS b) TO '{dir}' (FORMAT parquet, PARTITION_BY (a), OVERWRITE)",
    "COPY (SELECT 1 AS a) TO '{dir}/x.csv'",
    "COPY (SELECT 1 AS a) TO '.' (FORMAT parquet, PARTITION_BY (a), OVERWRITE_OR_IGNORE)",
    "COPY runs TO '{dir}/runs.csv'",
    "EXPLAIN ANALYZE COPY (SELECT 1) TO '{dir}/e.csv'",
    "SELECT * FROM enable_profiling()",
    "SELECT * FROM enable_logging(storage='file', storage_path='{dir}/log')",
    'SELECT * FROM "checkpoint"()',
    "SELECT * FROM force_checkpoint()",
    "SELECT * FROM main.disable_logging()",
    "SELECT * FROM truncate_duckdb_logs()",
    "SELECT nextval('run_id_seq')",
    "SELECT setseed(0.5)",
    "SELECT write_log('x')",
    "SELECT list_transform([1, 2], x -> nextval('qrels_id_seq'))",
    "SELECT * FROM runs WHERE n_rows > (SELECT nextval('run_id_seq'))",
    "SELECT * FROM query('SELECT 1')",
    "SELECT * FROM query_table('runs')",
    "SELECT * FROM read_csv('{qrels}', store_rejects = true)",
    "SELECT * FROM read_csv('{qrels}', rejects_table := 'r')",
    "SET threads = 1",
    "SET VARIABLE x = 1",
    "RESET threads",
    "PRAGMA enable_profiling",
    "PRAGMA threads = 1",
    "CALL pragma_version()",
    "ATTACH '{dir}/other.duckdb'",
    "DETACH DATABASE x",
    "INSTALL httpfs",
    "LOAD httpfs",
    "CHECKPOINT",
    "VACUUM",
    "EXPORT DATABASE '{dir}/exp'",
    "IMPORT DATABASE '{dir}/exp'",
    "INSERT INTO run_meta SELECT * FROM run_meta",
    "UPDATE run_meta SET tag = 'x'",
    "DELETE FROM score_data",
    "CREATE TABLE t AS SELECT 1",
    "CREATE TEMP TABLE t AS SELECT 1",
    "CREATE MACRO m() AS 1",
    "DROP VIEW runs",
    "ALTER TABLE run_meta ADD COLUMN z INT",
    "BEGIN TRANSACTION",
    "SELECT 1; DELETE FROM run_meta",
    "PIVOT runs ON format USING count(*)",
    "PREPARE p AS SELECT 1",
]
#: Read-only queries that must still work.
READ_ONLY_ALLOWED = [
    "SELECT count(*) FROM runs",
    "FROM leaderboard LIMIT 3",
    "WITH a AS (SELECT * FROM scores) SELECT count(*) FROM a",
    "DESCRIBE scores",
    "SUMMARIZE runs",
    "SHOW TABLES",
    "EXPLAIN SELECT * FROM runs",
    "PRAGMA table_info('runs')",
    "SELECT * FROM duckdb_settings() LIMIT 1",
    "SELECT * FROM range(3)",
    "SELECT currval('run_id_seq')",
    "SELECT random() >= 0",
]


def _fill(q: str, folder: Path) -> str:
    return q.format(dir=folder, qrels=QRELS)


def test_read_only_sql_writes_nothing_anywhere(cli, sample_db, tmp_path, monkeypatch):
    # the audit's case: the store in a folder that a partitioned COPY ... OVERWRITE would wipe
    od = tmp_path / "od"
    od.mkdir()
    store = od / "s.duckdb"
    shutil.copy(sample_db, store)
    (od / "keep.txt").write_text("keep")
    monkeypatch.chdir(tmp_path)
    before = sha256_of(store)
    listing = sorted(p.name for p in tmp_path.rglob("*"))
    for q in READ_ONLY_REFUSED:
        code, out, err = cli("sql", "--db", store, _fill(q, od))
        assert code == failures.USER and "this statement is refused" in err, (q, err)
    assert sha256_of(store) == before
    assert sorted(p.name for p in tmp_path.rglob("*")) == listing  # no file created, none deleted
    with evalstore.open(store, read_only=True) as s:
        assert s.sql("SELECT currval('run_id_seq')").rows  # the sequence did not move
    for q in READ_ONLY_ALLOWED:
        code, out, err = cli("sql", "--db", store, _fill(q, od))
        assert code == 0, (q, err)
    # read-only SQL reads no file but the store either: DuckDB's connection has no file access
    for q in ("SELECT count(*) FROM read_csv('{qrels}', delim = ' ', header = false)", "SELECT * FROM '{qrels}'"):
        code, out, err = cli("sql", "--db", store, _fill(q, od))
        assert code == failures.USER and ("file system operations are disabled" in err or "does not exist" in err), (
            q,
            err,
        )
    assert sha256_of(store) == before
    # a result goes to a file through the writer, not through the query
    code, _, err = cli("sql", "--db", store, "SELECT name FROM runs ORDER BY name", "-o", tmp_path / "r.parquet")
    assert code == 0 and (tmp_path / "r.parquet").stat().st_size > 0


def test_read_only_through_the_library_too(sample_db):
    with evalstore.open(sample_db) as s:  # a writable store: store.sql without write=True is still read-only
        for q in READ_ONLY_REFUSED[5:20]:
            with pytest.raises(evalstore.StoreError, match="refused"):
                s.sql(_fill(q, Path("/nonexistent")))
        seq = s.con.execute("SELECT currval('run_id_seq')").fetchall()
        assert s.con.execute("SELECT currval('run_id_seq')").fetchall() == seq


# --------------------------------------------------------------------------- 4: the sandbox
SANDBOX_REFUSED = [
    "COPY (SELECT 1) TO '{tmp}/x.csv'",
    "COPY (SELECT 1) TO '{store}.tmp/x.csv'",
    "SELECT size FROM read_blob('{store}')",
    "SELECT * FROM read_text('{store}')",
    "SELECT * FROM read_blob('/etc/passwd')",
    "SELECT * FROM read_text('/etc/passwd')",
    "SELECT * FROM read_csv('{qrels}')",
    "SELECT * FROM '{qrels}'",
    'SELECT * FROM "{qrels}"',
    "SELECT * FROM glob('/*')",
    "SELECT * FROM parquet_metadata('{tmp}/x.parquet')",
    "SELECT * FROM read_duckdb('{store}', table_name='run_meta')",
    "SELECT * FROM sniff_csv('{qrels}')",
    "SELECT getenv('HOME')",
    "SET lock_configuration = false",
    "SET enable_external_access = true",
    "SELECT * FROM enable_profiling()",
    "SELECT * FROM (SELECT * FROM read_blob('{store}'))",
    "WITH x AS (SELECT * FROM read_text('/etc/passwd')) SELECT * FROM x",
    "SELECT bootstrap_asl([0.1, 0.5], [0.3, 0.1], 30000000, 0)",
]


def test_sandbox_reads_only_the_store_and_writes_nothing(cli, sample_db, tmp_path):
    store = sample_db
    before = sha256_of(store)
    listing = sorted(p.name for p in tmp_path.rglob("*"))
    for q in SANDBOX_REFUSED:
        code, _, err = cli("sql", "--sandbox", "--db", store, q.format(tmp=tmp_path, store=store, qrels=QRELS))
        assert code in (failures.USER, failures.USAGE), (q, err)
    assert sha256_of(store) == before and sorted(p.name for p in tmp_path.rglob("*")) == listing
    code, out, _ = cli("sql", "--sandbox", "--db", store, "SELECT count(*) AS n FROM runs")
    assert code == 0 and out.split()[-1] == "6"


def test_sandbox_with_a_temp_dir_opens_and_still_reads_no_file(cli, sample_db, tmp_path):
    spill = tmp_path / "spill"
    spill.mkdir()
    code, out, err = cli("--temp-dir", spill, "sql", "--sandbox", "--db", sample_db, "SELECT count(*) FROM scores")
    assert code == 0, err
    (spill / "planted.csv").write_text("a\n1\n")
    code, _, err = cli(
        "--temp-dir", spill, "sql", "--sandbox", "--db", sample_db, f"SELECT * FROM '{spill}/planted.csv'"
    )
    assert code == failures.USER and "reads no file" in err


def test_udfs_are_bounded_by_the_memory_limit(sample_db):
    with evalstore.open(sample_db, read_only=True, memory_limit="100MB") as s:
        with pytest.raises(evalstore.StoreError, match="bootstrap_asl: B x n"):
            s.sql("SELECT bootstrap_asl([0.1, 0.5], [0.3, 0.1], 30000000, 0)")
        with pytest.raises(evalstore.StoreError, match="randomisation_p: B"):
            s.sql("SELECT randomisation_p([0.1, 0.5], [0.3, 0.1], 100000000, 0)")
        assert 0 < s.sql("SELECT bootstrap_asl([0.1, 0.5, 0.2], [0.3, 0.1, 0.1], 1000, 0)").rows[0][0] <= 1


# --------------------------------------------------------------------------- 2: a string is one name
def test_a_string_is_one_name_everywhere(tmp_path):
    with evalstore.open(tmp_path / "s.duckdb") as s:
        s.ingest_qrels(QRELS, name="q", progress=False)
        for name in ("a", "b", "ab"):
            s.ingest_run(RUNS[0], name=name, progress=False)
        s.evaluate("q", "ab", ["AP"])
        s.drop_runs("ab")
        assert s.run_names() == ["a", "b"]
        s.ingest_qrels(QRELS, name="xy", progress=False)
        for name in ("x", "y"):
            s.ingest_qrels(QRELS, name=name, progress=False)
        s.drop_qrels("xy")
        assert s.qrels_names() == ["q", "x", "y"]
        assert set(s.evaluate("q", "a", ["AP"]).table()) == {"a"}
        with pytest.raises(evalstore.EvalstoreError, match="a run name is a string"):
            s.drop_runs([1])
        with pytest.raises(evalstore.EvalstoreError, match="give a run name"):
            s.drop_runs(5)


# --------------------------------------------------------------------------- 3, 6, 7: identity
def _tagged(path: Path, tag: str, score_shift: float = 0.0) -> Path:
    lines = []
    for ln in RUNS[0].read_text().splitlines():
        f = ln.split()
        f[4] = repr(float(f[4]) + score_shift)
        f[5] = tag
        lines.append(" ".join(f))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def test_two_files_of_one_call_under_one_name_are_refused_even_with_replace(cli, tmp_path):
    db = tmp_path / "s.duckdb"
    d1 = _tagged(tmp_path / "d1" / "run.txt", "T")
    d2 = _tagged(tmp_path / "d2" / "run.txt", "T", score_shift=1.0)
    assert cli("ingest", "run", d1, "--db", db)[0] == 0
    before = sha256_of(db)
    for extra in ([], ["--replace"]):
        code, _, err = cli("ingest", "run", d2, d1, *extra, "--db", db)
        assert code == failures.USER and "would both be stored as the run 'T'" in err, err
    assert sha256_of(db) == before


def test_declared_gains_are_part_of_a_sets_identity(cli, tmp_path):
    db = tmp_path / "s.duckdb"
    assert cli("ingest", "qrels", QRELS, "--name", "q", "--gains", "1:2:3", "--db", db)[0] == 0
    assert cli("ingest", "run", RUNS[0], "--db", db)[0] == 0
    code, out, _ = cli("eval", "-q", "q", "-m", "nDCG@10", "-f", "csv", "--db", db)
    old = float(out.splitlines()[1].split(",")[-1])
    code, _, err = cli("ingest", "qrels", QRELS, "--name", "q", "--gains", "1:10:100", "--db", db)
    assert code == failures.USER and "other declared gains (1:2:3 vs 1:10:100)" in err and "--replace" in err
    code, _, err = cli("ingest", "qrels", QRELS, "--name", "q", "--gains", "1:10:100", "--replace", "--db", db)
    assert code == 0 and "replaced" in err
    with evalstore.open(db, read_only=True) as s:
        assert s.sql("SELECT default_gains FROM qrels_sets WHERE name = 'q'").rows == [("1:10:100",)]
    code, out, _ = cli("eval", "-q", "q", "-m", "nDCG@10", "-f", "csv", "--db", db)
    assert float(out.splitlines()[1].split(",")[-1]) != old
    code, _, err = cli("ingest", "qrels", QRELS, "--name", "q", "--gains", "1:10:100", "--db", db)
    assert code == 0 and "nothing to do" in err


def test_the_same_content_from_gz_plain_or_a_pipe_is_one_run(cli, tmp_path, monkeypatch):
    db = tmp_path / "s.duckdb"
    gz = tmp_path / "r.txt.gz"
    gz.write_bytes(gzip.compress(RUNS[0].read_bytes()))
    assert cli("ingest", "run", gz, "--db", db)[0] == 0
    code, _, err = cli("ingest", "run", RUNS[0], "--db", db)
    assert code == 0 and "nothing to do" in err
    with evalstore.open(db, read_only=True) as s:
        sha, file_sha = s.sql("SELECT sha256, file_sha256 FROM runs").rows[0]
    assert sha == sha256_of(RUNS[0]) and file_sha == sha256_of(gz)


def test_replace_drops_the_analyses_that_read_the_old_content(cli, sample_db, tmp_path):
    from evalstore import meta

    with evalstore.open(sample_db) as s:
        meta.kendall(s, "sample", ["AP", "P@5"])
        s.compare("sample", "bm25", None, ["AP"])
        n = s.sql("SELECT count(*) FROM meta_runs").rows[0][0]
        assert n == 2
    changed = _tagged(tmp_path / "bm25.txt", "bm25", score_shift=0.5)
    lines = changed.read_text().splitlines()
    changed.write_text("\n".join(lines[:-3]) + "\n")  # other content under the same name
    code, _, err = cli("ingest", "run", changed, "--replace", "--db", sample_db)
    assert code == 0 and "dropped 2 stored analysis(es) that read the old content" in err
    with evalstore.open(sample_db, read_only=True) as s:
        assert s.sql("SELECT count(*) FROM meta_runs").rows[0][0] == 0
        assert s.sql("SELECT count(*) FROM meta_pair_tests").rows[0][0] == 0


# --------------------------------------------------------------------------- 8: db check and indexes
def _unlisted_blocks(path: Path) -> list[int]:
    """Blocks of the store file that hold neither table columns nor catalogue metadata: indexes."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        tables = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()]
        used: set[int] = set()
        for t in tables:
            used |= {r[0] for r in con.execute(f"SELECT block_id FROM pragma_storage_info('{t}')").fetchall()}
        used |= {r[0] for r in con.execute("SELECT block_id FROM pragma_metadata_info()").fetchall()}
        size = con.execute("SELECT block_size, total_blocks FROM pragma_database_size()").fetchall()[0]
    finally:
        con.close()
    return [b for b in range(int(size[1])) if b not in used]


def test_db_check_reads_the_indexes(sample_db, tmp_path):
    report = check_store(sample_db)
    assert report.ok and len(report.indexes) >= 6  # primary keys and unique names
    found = False
    for block in _unlisted_blocks(sample_db):
        damaged = tmp_path / f"d{block}.duckdb"
        shutil.copy(sample_db, damaged)
        with open(damaged, "r+b") as f:
            f.seek(4096 * 3 + block * 262144 + 100)  # the file header, then 256 KiB blocks
            data = f.read(3)
            f.seek(-3, os.SEEK_CUR)
            f.write(bytes(b ^ 0xFF for b in data))
        report = check_store(damaged)
        if report.error is None and all(err is None for _, _, err in report.tables) and not report.ok:
            found = True  # the tables read back, an index does not: db check says so ...
            label = next(i for i, err in report.indexes if err and "Corrupt" in err)
            table, column = label.split(" (")[0], label.split("(")[1].split(",")[0].rstrip(")")
            con = duckdb.connect(str(damaged))  # ... and a write to that table fails, as the audit saw
            with pytest.raises(duckdb.Error, match="(?i)corrupt"):
                con.execute(f'UPDATE "{table}" SET "{column}" = "{column}"')
            con.close()
            break
    assert found, "no index block found to damage"


# --------------------------------------------------------------------------- 9: disk problems
def test_a_full_disk_at_commit_is_a_full_disk():
    code, msg = failures.explain(
        duckdb.TransactionException("Failed to commit: Could not write file: No space left on device")
    )
    assert code == failures.IO and "the disk is full" in msg
    code, msg = failures.explain(OSError(errno.EROFS, "Read-only file system"))
    assert code == failures.IO and "read-only" in msg
    code, msg = failures.explain(duckdb.IOException('Cannot open file "x": Read-only file system'))
    assert code == failures.IO and "read-only" in msg
    code, msg = failures.explain(duckdb.TransactionException("Catalog write-write conflict"))
    assert code == failures.BUSY


# --------------------------------------------------------------------------- 10, 11: before any work
def test_every_option_is_checked_before_any_work(cli, sample_db):
    before = sha256_of(sample_db)
    for args in (
        ["subsample", "--qrels", "sample", "--fractions", "0.5", "--format", "nope"],
        ["meta", "kendall", "-q", "sample", "-m", "AP", "--format", "nope"],
        ["meta", "swap", "-q", "sample", "-m", "AP", "--format", "nope"],
        ["meta", "discpower", "-q", "sample", "-m", "AP", "--format", "nope"],
        ["meta", "tests", "-q", "sample", "-m", "AP", "--format", "nope"],
        ["eval", "-q", "sample", "-m", "AP", "--format", "nope"],
        ["compare", "-q", "sample", "-b", "bm25", "-m", "AP", "--format", "nope"],
        ["eval", "-q", "sample", "-m", "AP", "-o", "x.xlsx"],
        ["export", "leaderboard", "-q", "sample", "-m", "AP", "-o", "lb.xlsx"],
    ):
        code, _, err = cli(*args, "--db", sample_db)
        assert code == failures.USAGE, (args, err)
    assert sha256_of(sample_db) == before


def test_commands_that_read_refuse_a_missing_store(cli, tmp_path):
    missing = tmp_path / "typo.duckdb"
    for args in (
        ["eval", "-q", "q", "-m", "AP"],
        ["drop", "run", "x", "--yes"],
        ["subsample", "list"],
        ["subsample", "--qrels", "q", "--fractions", "0.5"],
        ["compare", "-q", "q", "-b", "x", "-m", "AP"],
        ["meta", "kendall", "-q", "q", "-m", "AP"],
        ["export", "leaderboard", "-q", "q", "-o", tmp_path / "lb.csv"],
        ["export", "store", tmp_path / "layout"],
        ["list", "runs"],
        ["sql", "SELECT 1"],
    ):
        code, _, err = cli(*args, "--db", missing)
        assert code == failures.USER and f"the store {missing} does not exist" in err, (args, err)
        assert not missing.exists() and not (tmp_path / "layout").exists()


# --------------------------------------------------------------------------- 12: one escaping rule
HOSTILE = "a&b_%$\x1b[31mRED\nX\tY|z"


def test_hostile_names_print_escaped_through_every_writer(cli, tmp_path):
    db = tmp_path / "s.duckdb"
    with evalstore.open(db) as s:
        s.ingest_qrels(QRELS, name="q", progress=False)
        s.ingest_run(RUNS[:2], progress=False)
        s.ingest_run(RUNS[2], name=HOSTILE, progress=False)
    shown = "a&b_%$\\x1b[31mRED\\x0aX\\x09Y|z"
    checked = 0
    for args in (
        ["compare", "-q", "q", "-b", "bm25", "-m", "AP"],
        ["compare", "-q", "q", "-b", "bm25", "-m", "AP", "-f", "markdown", "--effects", "-B", "100"],
        ["compare", "-q", "q", "-b", "bm25", "-m", "AP", "-f", "latex"],
        ["compare", "-q", "q", "-b", "bm25", "-m", "AP", "-f", "csv"],
        ["compare", "-q", "q", "-b", "bm25", "-m", "AP", "-f", "tsv"],
        ["compare", "-q", "q", "-b", "bm25", "-m", "AP", "--per-topic"],
        ["compare", "-q", "q", "-b", HOSTILE, "-m", "AP", "-f", "markdown"],
        ["eval", "-q", "q", "-m", "AP"],
        ["eval", "-q", "q", "-m", "AP", "-f", "markdown"],
        ["eval", "-q", "q", "-m", "AP", "-f", "latex"],
        ["eval", "-q", "q", "-m", "AP", "-f", "csv"],
        ["eval", "-q", "q", "-m", "AP", "-f", "tsv"],
        ["eval", "-q", "q", "-m", "AP", "-f", "trec"],
        ["eval", "-q", "q", "-m", "AP", "-f", "trec", "--per-topic"],
        ["list", "runs"],
        ["list", "runs", "-f", "markdown"],
        ["sql", "SELECT name FROM runs"],
        ["meta", "discpower", "-q", "q", "-m", "AP", "-B", "200", "--pairs", "--no-save", "-f", "markdown"],
        ["meta", "tests", "-q", "q", "-m", "AP", "--pairs", "-t", "t", "--no-save"],
    ):
        code, out, err = cli(*args, "--db", db)
        assert code == 0, (args, err)
        for text in (out, err):
            assert "\x1b" not in text and "RED\nX" not in text and "X\tY" not in text, (args, text)
        assert "RED" in out + err, args
        checked += 1
    code, out, _ = cli("eval", "-q", "q", "-m", "AP", "-f", "trec", "--db", db)
    assert all(len(line.split("\t")) == 4 for line in out.splitlines())  # run, measure, topic, value
    code, out, _ = cli("eval", "-q", "q", "-m", "AP", "--db", db, "-f", "csv")
    assert shown in out
    code, out, _ = cli("compare", "-q", "q", "-b", "bm25", "-m", "AP", "-f", "latex", "--db", db)
    assert "a\\&b\\_\\%\\$\\textbackslash{}x1b{[}31mRED\\textbackslash{}x0aX" in out  # [ braced: issue 32.1
    assert checked == 19


# --------------------------------------------------------------------------- 13: limits and parameters
def test_limits_and_parameters_follow_one_rule(cli, sample_db, tmp_path):
    for bad in ("-5GB", "abc", "0", "0GB", "150%"):
        code, _, err = cli("--memory-limit", bad, "list", "runs", "--db", sample_db)
        assert code == failures.USAGE and "memory limit" in err, bad
    code, _, err = cli("--memory-limit", "1KB", "list", "runs", "--db", sample_db)
    assert code == failures.MEMORY
    code, _, err = cli("ingest", "qrels", QRELS, "--name", "g", "--gains", "1::3", "--db", sample_db)
    assert code == failures.USER and "no empty element" in err
    for good, bad in (("SetP(relative=yes)", "SetP(relative=maybe)"), ("AP(judged_only='true')", "AP(judged_only=2)")):
        registry.parse_metric(good)
        with pytest.raises(evalstore.MetricError, match="must be true or false"):
            registry.parse_metric(bad)
    assert registry.parse_metric("SetP(relative=yes)")[0].spec.name == "SetRelP"
    code, _, err = cli("ingest", "run", RUNS[0], "--name", "n" * 300, "--db", sample_db)
    assert code == failures.USER and "at most 200" in err
    with evalstore.open(sample_db) as s:  # a long name stored by an older evalstore
        s.sql(f"UPDATE run_meta SET name = '{'é' * 150}' WHERE name = 'bm25'", write=True)
    code, _, err = cli("export", "store", tmp_path / "layout", "--db", sample_db)
    assert code == failures.USER and "nothing was written" in err and not (tmp_path / "layout").exists()


# --------------------------------------------------------------------------- 14: the Python API
Q = {"q1": {"d1": 2, "d2": 0, "d3": 1}, "q2": {"d4": 1}}
API_MISUSE = [
    lambda: evalstore.evaluate(Q, {"r": {}}, ["AP"]),
    lambda: evalstore.Evaluator(Q, ["AP"]).evaluate({}),
    lambda: evalstore.Evaluator(Q, ["AP"]).evaluate_many({"a": {}}),
    lambda: evalstore.Evaluator(Q, ["AP"]).evaluate_many({}),
    lambda: evalstore.evaluate(Q, {}, ["AP"]),
    lambda: evalstore.evaluate({"q1": {"d1": 10**12}}, {"q1": {"d1": 1.0}}, ["AP"]),
    lambda: evalstore.evaluate(Q, {"q1": {"d1": 10**400}}, ["AP"]),
    lambda: evalstore.evaluate(Q, {"q1": {"d1": float("nan")}}, ["AP"]),
    lambda: evalstore.evaluate(Q, {"q1": {"d1": "x"}}, ["AP"]),
    lambda: evalstore.evaluate(Q, {"q1": {"d1": 1.0}}, None),
    lambda: evalstore.evaluate(Q, {"q1": {"d1": 1.0}}, [None]),
    lambda: evalstore.evaluate(Q, {"q1": {"d1": 1.0}}, [5]),
    lambda: evalstore.evaluate(Q, {"q1": {"d1": 1.0}}, []),
    lambda: evalstore.evaluate(Q, None, ["AP"]),
    lambda: evalstore.evaluate(Q, 5, ["AP"]),
    lambda: evalstore.evaluate(None, {"q1": {"d1": 1.0}}, ["AP"]),
    lambda: evalstore.evaluate({}, {"q1": {"d1": 1.0}}, ["AP"]),
    lambda: evalstore.Evaluator(Q, ["nope"]),
    lambda: evalstore.open(123),
    lambda: evalstore.open(":memory:", threads="a"),
    lambda: evalstore.open(":memory:", threads=0),
    lambda: evalstore.open(":memory:", memory_limit="-5GB"),
    lambda: evalstore.open(":memory:", memory_limit=5),
    lambda: evalstore.open(":memory:").sql(123),
    lambda: evalstore.open(":memory:").sql(""),
    lambda: evalstore.open(":memory:").evaluate("q"),
    lambda: evalstore.open(":memory:").drop_runs(None),
    lambda: evalstore.open(":memory:").ingest_run(5),
]


def test_every_public_entry_point_raises_evalstores_own_errors():
    held = 0
    for case in API_MISUSE:
        with pytest.raises(EvalstoreError) as info:
            case()
        assert str(info.value) and "Traceback" not in str(info.value)
        held += 1
    assert held == len(API_MISUSE) == 28


def test_an_empty_run_with_complete_scores_every_topic_zero():
    res = evalstore.evaluate(Q, {"r": {}}, ["AP", "P@5", "nDCG@10"], complete=True)
    assert res.per_topic == [("r", t, m, 0.0) for t in ("q1", "q2") for m in ("AP", "P@5", "nDCG@10")]
    one = evalstore.evaluate(Q, {"q1": {"d1": 1.2, "d3": 0.4}}, ["AP"])  # one run as {topic: {doc: score}}
    assert one.means == [("run", "AP", 1.0, 1)]


# --------------------------------------------------------------------------- 15: determinism
def _synthetic(store, n_runs: int = 8, n_topics: int = 40, depth: int = 1000, seed: int = 7) -> None:
    rng = np.random.default_rng(seed)
    topics = np.repeat([f"t{i}" for i in range(n_topics)], 300)
    docs = np.tile([f"d{j}" for j in range(300)], n_topics)
    grades = rng.choice([0, 0, 0, 1, 2, 3], size=topics.size)
    store.ingest_qrels(pa.table({"topic": topics, "doc": docs, "grade": grades}), name="syn", progress=False)
    for r in range(n_runs):
        t = np.repeat([f"t{i}" for i in range(n_topics)], depth)
        d = np.array([f"d{j}" for j in range(depth)] * n_topics)
        score = np.round(rng.normal(size=t.size), 2)  # rounded: many ties
        store.ingest_run(pa.table({"topic": t, "doc": d, "score": score}), name=f"r{r}", progress=False)


@pytest.mark.slow
def test_two_identical_evaluations_agree_to_the_last_bit(tmp_path):
    """Every metric's sums are exact (exact_sum), so DuckDB's split of the rows among threads
    cannot change the last bit (infAP, AP, nDCG, bpref and Q-measure did)."""
    metrics = []
    for spec in (s for s in registry.all_metrics() if s.kind == "judgments"):  # (answers: a set of their own)
        for name in (spec.name, spec.name + "@10", spec.name + "(max_rel=3)", spec.name + "(mult=0.5)"):
            try:
                registry.parse_metric(name)
            except evalstore.MetricError:
                continue
            metrics.append(name)
            break
    with evalstore.open(tmp_path / "s.duckdb", threads=2) as s:
        _synthetic(s)
        first = s.evaluate("syn", metrics=metrics, recompute=True, progress=False).per_topic
        for _ in range(2):
            again = s.evaluate("syn", metrics=metrics, recompute=True, progress=False).per_topic
            differ = {m for (_, _, m, a), (_, _, _, b) in zip(first, again) if a != b and not (a != a and b != b)}
            assert not differ, sorted(differ)
    assert len(metrics) > 70
