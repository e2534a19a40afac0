"""Read-only SQL by construction: the guarantee DuckDB gives a locked-down connection, tried with
every bypass found so far and with statements generated from DuckDB's own lists.

The guarantee: **no statement that a locked-down connection accepts writes a file, changes a
setting or changes the store** (``evalstore.open(p, query_only=True)``: what ``evalstore sql``
runs; ``evalstore.open(p, sandbox=True)``: the web's pages, ``evalstore sql --sandbox``, which
also reads no file at all). The tests run the statements on the connection itself
(``store.con.execute``), past the statement check of :mod:`evalstore.db.sqlsafety`, so what they
show is DuckDB's doing; the file system around the store (its folder, a planted secret in the
spill folder's parent, the working folder) and DuckDB's settings are compared before and after.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from pathlib import Path

import duckdb
import pytest
from support import sha256_of

import evalstore
from evalstore.cli import failures

#: every bypass of the text-based checks found so far, {dir}: a folder beside the store,
#: {spill}: the --temp-dir (the sandbox read files planted there through a CTE's name)
KNOWN_BYPASSES = [
    # issue 21: EXPLAIN ANALYZE runs the COPY it explains; COPY ... OVERWRITE wipes a folder
    "EXPLAIN ANALYZE COPY (SELECT 1) TO '{dir}/e.csv'",
    "COPY (SELECT 1 AS a, 2 AS b) TO '{dir}' (FORMAT parquet, PARTITION_BY (a), OVERWRITE)",
    "COPY (SELECT 1 AS a) TO '.' (FORMAT parquet, PARTITION_BY (a), OVERWRITE_OR_IGNORE)",
    # issue 39: a ')' in a string literal ended the "options" of EXPLAIN for the regex
    "EXPLAIN ANALYZE (SELECT ') SELECT 1 --' AS a, * FROM enable_logging(storage := 'file', storage_path := 'logs'))",
    "EXPLAIN ANALYZE (SELECT ') SELECT 1 --' AS a, * FROM enable_logging(storage := 'file', "
    "storage_path := '{dir}/logs'))",
    "EXPLAIN ANALYZE (SELECT ') SELECT 1 --' AS a, * FROM checkpoint())",
    "EXPLAIN ANALYZE (SELECT ') SELECT 1 --' AS a, * FROM force_checkpoint())",
    "EXPLAIN ANALYZE (SELECT ') SELECT 1 --' AS a, nextval('run_id_seq'))",
    "EXPLAIN ANALYZE (SELECT ') SELECT 1 --' AS a, * FROM enable_profiling())",
    "EXPLAIN ANALYZE (SELECT ') SELECT 1 --' AS a, * FROM read_text('{spill}/*'))",
    # issue 39: a CTE's name let the sandbox's relation check pass a file in the temp folder
    "SELECT * FROM (WITH \"{spill}/creds.csv\" AS (SELECT 1) SELECT 1) AS a, '{spill}/creds.csv'",
    "SELECT * FROM (WITH \"{spill_rel}/creds.csv\" AS (SELECT 1) SELECT 1) AS a, '{spill_rel}/creds.csv'",
]
#: the bypass of the web page's refusal of evalstore's Python functions over lists, which DuckDB
#: cannot interrupt at the page's time limit (``evalstore sql`` may call them: no time limit there)
SANDBOX_BYPASSES = [
    "EXPLAIN ANALYZE (SELECT ') SELECT 1 --' AS a, diversity_greedy_gains([1, 2], [[1], [2]], 0.5))",
    "EXPLAIN ANALYZE (SELECT ') SELECT 1 --' AS a, bootstrap_asl([0.1, 0.2], [0.3, 0.1], 1000, 0))",
]


class Around:
    """A copy of a store in its own folder, a planted secret in the folder given as --temp-dir,
    the working folder: what must read and stay the same."""

    def __init__(self, sample_db: Path, root: Path) -> None:
        self.root = root
        self.dir = root / "od"
        self.dir.mkdir()
        self.store = self.dir / "s.duckdb"
        shutil.copy(sample_db, self.store)
        (self.dir / "keep.txt").write_text("keep")
        self.spill = root / "spill"
        self.spill.mkdir()
        (self.spill / "creds.csv").write_text("secret,42\n")
        self.sha = sha256_of(self.store)

    def fill(self, q: str) -> str:
        return q.format(dir=self.dir, spill=self.spill, spill_rel="spill")

    def files(self) -> dict[str, tuple[int, int]]:
        """Every file (size, modification time) and folder under the root, the private spill
        folders left out (DuckDB's own spill files come and go there)."""
        out: dict[str, tuple[int, int]] = {}
        for folder, dirs, names in os.walk(self.root):
            for name in dirs + names:
                p = os.path.join(folder, name)
                if "evalstore-sql-" in p:
                    continue
                st = os.lstat(p)
                out[p] = (0, 0) if name in dirs else (st.st_size, st.st_mtime_ns)
        return out


def _settings(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    return dict(con.execute("SELECT name, value FROM duckdb_settings()").fetchall())


def _run(con: duckdb.DuckDBPyConnection, q: str, limit: float = 5.0) -> bool:
    """Whether the connection accepts ``q`` (runs it to the end, interrupted after ``limit`` s)."""
    timer = threading.Timer(limit, con.interrupt)
    timer.start()
    try:
        con.execute(q).fetchall()
        return True
    except (duckdb.Error, RuntimeError, ValueError):
        return False
    finally:
        timer.cancel()


def _open(around: Around, level: str):
    kwargs = {"sandbox": True} if level == "sandbox" else {"query_only": True}
    return evalstore.open(around.store, temp_directory=str(around.spill), memory_limit="300MB", **kwargs)


def _changes(around: Around, con, files0, settings0, q: str) -> list[str]:
    out = []
    files1, settings1 = around.files(), _settings(con)
    for path in sorted(set(files0) | set(files1)):
        if files0.get(path) != files1.get(path):
            out.append(f"{q!r} changed the file {path}")
    for name in sorted(set(settings0) | set(settings1)):
        if settings0.get(name) != settings1.get(name):
            out.append(f"{q!r} changed the setting {name}: {settings0.get(name)!r} -> {settings1.get(name)!r}")
    return out


def _try_all(around: Around, level: str, statements: list[str], limit: float = 5.0) -> tuple[list[str], int]:
    """Run every statement on a locked-down connection, past the statement check; the changes
    each accepted one made (an empty list: the guarantee held) and how many were accepted."""
    changes, accepted = [], 0
    cwd = os.getcwd()
    os.chdir(around.dir)  # relative paths land beside the store
    try:
        with _open(around, level) as s:
            files0, settings0 = around.files(), _settings(s.con)
            for q in statements:
                if _run(s.con, q, limit):
                    accepted += 1
                    found = _changes(around, s.con, files0, settings0, q)
                    if found:
                        changes += found
                        files0, settings0 = around.files(), _settings(s.con)
    finally:
        os.chdir(cwd)
    assert sha256_of(around.store) == around.sha, "the store file changed"
    return changes, accepted


@pytest.mark.parametrize("level", ["query", "sandbox"])
def test_no_known_bypass_changes_anything_on_the_connection_itself(sample_db, tmp_path, level):
    around = Around(sample_db, tmp_path)
    changes, _ = _try_all(around, level, [around.fill(q) for q in KNOWN_BYPASSES + SANDBOX_BYPASSES])
    assert changes == []
    with _open(around, level) as s:
        # the readers of the planted secret fail in DuckDB, not in a text check
        for q in KNOWN_BYPASSES[-2:]:
            with pytest.raises(duckdb.PermissionException):
                s.con.execute(around.fill(q)).fetchall()
        with pytest.raises(duckdb.Error):  # nextval: the store is read-only
            s.con.execute("SELECT nextval('run_id_seq')").fetchall()
        with pytest.raises(duckdb.InvalidInputException, match="configuration has been locked"):
            s.con.execute("SELECT * FROM enable_logging(storage := 'file', storage_path := 'logs')").fetchall()
        if level == "sandbox":  # evalstore's Python functions over lists are not on the connection
            with pytest.raises(duckdb.CatalogException, match="bootstrap_asl does not exist"):
                s.con.execute("SELECT bootstrap_asl([0.1, 0.2], [0.3, 0.1], 1000, 0)").fetchall()


# ---------------------------------------------------------------------- generated statements
#: statements of every kind DuckDB's parser knows, aimed at files beside the store
STATEMENT_KINDS = [
    "COPY (SELECT 1) TO '{dir}/copy.csv'", "COPY runs TO '{dir}/runs.parquet' (FORMAT parquet)",
    "COPY run_meta FROM '{dir}/keep.txt'", "COPY FROM DATABASE s TO memory", "EXPORT DATABASE '{dir}/exp'",
    "EXPORT DATABASE '{spill}/exp'", "IMPORT DATABASE '{dir}'", "ATTACH '{dir}/new.duckdb' AS n",
    "ATTACH ':memory:' AS m", "DETACH s", "USE memory", "INSTALL httpfs", "LOAD httpfs", "LOAD '{dir}/x.so'",
    "UPDATE EXTENSIONS", "CHECKPOINT", "FORCE CHECKPOINT", "VACUUM", "VACUUM ANALYZE", "ANALYZE",
    "INSERT INTO run_meta SELECT * FROM run_meta", "UPDATE run_meta SET tag = 'x'", "DELETE FROM score_data",
    "TRUNCATE score_data", "CREATE TABLE t AS SELECT 1", "CREATE TEMP TABLE t AS SELECT 1",
    "CREATE MACRO m() AS 1", "CREATE SEQUENCE q", "CREATE VIEW w AS SELECT 1", "CREATE SCHEMA z",
    "CREATE TYPE e AS ENUM ('a')", "CREATE INDEX i ON run_meta (name)", "DROP VIEW runs", "DROP TABLE run_meta",
    "ALTER TABLE run_meta ADD COLUMN z INT", "ALTER VIEW runs RENAME TO r", "COMMENT ON TABLE run_meta IS 'x'",
    "CREATE SECRET (TYPE s3, KEY_ID 'a', SECRET 'b')", "CREATE PERSISTENT SECRET p (TYPE s3, KEY_ID 'a', SECRET 'b')",
    "SET VARIABLE v = 1", "RESET VARIABLE v", "PREPARE p AS SELECT 1", "EXECUTE p", "DEALLOCATE p",
    "BEGIN TRANSACTION", "COMMIT", "ROLLBACK", "PIVOT runs ON format USING count(*)",
    "MERGE INTO run_meta USING run_meta AS o ON false WHEN NOT MATCHED THEN INSERT BY NAME",
    "CALL enable_logging(storage := 'file', storage_path := '{dir}/log')", "CALL checkpoint()",
    "SELECT * FROM json_execute_serialized_sql(json_serialize_sql('SELECT 1'))",
    "SELECT * FROM query('COPY (SELECT 1) TO ''{dir}/q.csv''')",
]  # fmt: skip


def _values(kind: str | None, name: str, folder: Path) -> list[str]:
    """Arguments of a DuckDB type for a generated call: for text, a path beside the store, the
    planted secret and a bare word."""
    kind = (kind or "ANY").upper()
    if kind in ("VARCHAR", "ANY", "VARIANT", "JSON"):
        return [f"'{folder}/{name}'", f"'{folder.parent / 'spill' / 'creds.csv'}'", "'file'"]
    if kind.endswith("[]"):
        return [f"['{folder}/{name}']"]
    if kind == "BOOLEAN":
        return ["true"]
    if "INT" in kind or kind in ("DOUBLE", "FLOAT"):
        return ["1"]
    if kind.startswith("MAP"):
        return [f"MAP {{'path': '{folder}/{name}'}}"]
    if kind == "TABLE":
        return ["(SELECT 1)"]
    return [f"NULL::{kind}"]


def _generated(folder: Path) -> list[str]:
    """Calls of every table function and PRAGMA DuckDB lists (positionally with up to three
    arguments, and with each named parameter), one call of every scalar, aggregate and macro
    function, and ``SET``/``RESET`` of every setting."""
    con = duckdb.connect()
    out: list[str] = []
    rows = con.execute(
        "SELECT function_name, function_type, parameters, parameter_types FROM duckdb_functions() "
        "WHERE function_type IN ('table', 'pragma', 'table_macro') AND function_name NOT LIKE 'test_%' "
        "ORDER BY ALL"
    ).fetchall()
    for name, ftype, params, types in rows:
        first = _values(types[0] if types else None, name, folder)
        if ftype == "pragma":
            out += [f"PRAGMA {name}"] + [f"PRAGMA {name}({v})" for v in first] + [f"PRAGMA {name} = {first[0]}"]
            continue
        out.append(f"SELECT * FROM {name}()")
        for k in range(1, min(len(types), 3) + 1):
            rest = [_values(t, name, folder)[0] for t in types[1:k]]
            out += [f"SELECT * FROM {name}({', '.join([v, *rest])})" for v in first]
        for p, t in zip(params, types):
            out += [f"SELECT * FROM {name}({first[0]}, {p} := {v})" for v in _values(t, name, folder)]
    for name, types in con.execute(
        "SELECT function_name, any_value(parameter_types) FROM duckdb_functions() "
        "WHERE function_type IN ('scalar', 'aggregate', 'macro') GROUP BY ALL ORDER BY ALL"
    ).fetchall():
        if name.isidentifier():
            out.append(f'SELECT "{name}"({", ".join(_values(t, name, folder)[0] for t in types or [])})')
    for (name,) in con.execute("SELECT name FROM duckdb_settings() ORDER BY name").fetchall():
        out += [f"SET {name} = '{folder}/set'", f"SET {name} = 1", f"SET {name} = true", f"RESET {name}"]
    con.close()
    return out


@pytest.mark.parametrize("level", ["query", "sandbox"])
def test_no_statement_the_locked_connection_accepts_writes_a_file_or_changes_a_setting(sample_db, tmp_path, level):
    around = Around(sample_db, tmp_path)
    kinds = [around.fill(q) for q in STATEMENT_KINDS]
    generated = _generated(around.dir)
    # each wrapped too, as the bypasses were: EXPLAIN ANALYZE of it (kinds and table functions)
    wrapped = [f"EXPLAIN ANALYZE {q}" for q in kinds + [g for g in generated if g.startswith("SELECT * FROM")]]
    statements = kinds + generated + wrapped
    assert len(statements) > 3000
    start = time.monotonic()
    changes, accepted = _try_all(around, level, statements, limit=2.0)
    assert changes == [], changes[:10]
    assert accepted > 500  # the connection is usable: queries, descriptions, pure functions run
    assert time.monotonic() - start < 300


def test_what_duckdb_refuses_on_its_own(sample_db, tmp_path):
    """The reasons, from DuckDB: each kind of change meets one of the guarantees."""
    around = Around(sample_db, tmp_path)
    with _open(around, "query") as s:
        con = s.con
        refusals = {
            f"COPY (SELECT 1) TO '{around.dir}/x.csv'": "file system operations are disabled",
            f"EXPORT DATABASE '{around.dir}/exp'": "file system operations are disabled",
            f"COPY (SELECT 1) TO '{around.store}.wal'": "belongs to an attached database",
            f"SELECT * FROM read_text('{around.spill}/creds.csv')": "file system operations are disabled",
            "INSERT INTO run_meta SELECT * FROM run_meta": "read-only",
            "SELECT nextval('run_id_seq')": "read-only",
            "SET threads = 1": "configuration has been locked",
            "SET lock_configuration = false": "configuration has been locked",
            "SET enable_external_access = true": "configuration has been locked",
            "SELECT * FROM enable_profiling()": "configuration has been locked",
            "PRAGMA enable_profiling": "configuration has been locked",
            "INSTALL httpfs": "file system operations are disabled",
            "LOAD httpfs": "disabled through configuration",
            f"ATTACH '{around.dir}/n.duckdb'": "file system operations are disabled",
        }
        for q, why in refusals.items():
            with pytest.raises(duckdb.Error, match=why):
                con.execute(q).fetchall()
        folder = con.execute("SELECT current_setting('temp_directory')").fetchone()[0]
        allowed = con.execute("SELECT current_setting('allowed_directories')").fetchone()[0]
        # the spill folder is a private one inside --temp-dir, never --temp-dir itself
        assert Path(folder).parent == around.spill.resolve() and Path(folder).name.startswith("evalstore-sql-")
        assert [a.rstrip("/") for a in allowed] == [folder] and oct(os.stat(folder).st_mode & 0o777) == "0o700"
    with _open(around, "sandbox") as s:
        for q in (f"SELECT count(*) FROM read_blob('{around.store}')", "SELECT * FROM glob('*')"):
            with pytest.raises(duckdb.PermissionException, match="LocalFileSystem has been disabled"):
                s.con.execute(q).fetchall()


# ---------------------------------------------------------------------- the CLI and the page
def test_the_hostile_commands_of_the_audit_fail_and_change_nothing(cli, sample_db, tmp_path, monkeypatch):
    around = Around(sample_db, tmp_path)
    monkeypatch.chdir(tmp_path)
    files = around.files()
    for q, sandbox in [(q, s) for q in KNOWN_BYPASSES for s in ([], ["--sandbox"])] + [
        (q, ["--sandbox"]) for q in SANDBOX_BYPASSES
    ]:
        code, out, err = cli("--temp-dir", around.spill, "sql", *sandbox, "--db", around.store, around.fill(q))
        assert code == failures.USER and "secret" not in out, (q, sandbox, out, err)
    assert around.files() == files and sha256_of(around.store) == around.sha
    assert not (tmp_path / "logs").exists() and not (around.dir / "logs").exists()


def test_read_only_sql_still_does_what_users_do(cli, sample_db, tmp_path):
    around = Around(sample_db, tmp_path)
    for q in ("SELECT count(*) AS n FROM runs", "FROM leaderboard LIMIT 3", "DESCRIBE scores", "SHOW TABLES",
              "EXPLAIN ANALYZE SELECT count(*) FROM scores", "PRAGMA table_info('runs')", "SUMMARIZE runs",
              "SELECT bootstrap_asl([0.1, 0.5, 0.2], [0.3, 0.1, 0.1], 1000, 0) AS p"):  # fmt: skip
        code, out, err = cli("--temp-dir", around.spill, "--memory-limit", "200MB", "sql", "--db", around.store, q)
        assert code == 0, (q, err)
    out_file = tmp_path / "r.json"
    code, _, err = cli("sql", "--db", around.store, "SELECT name FROM runs ORDER BY name", "-o", out_file)
    assert code == 0 and "bm25" in out_file.read_text()
    # a sort larger than the memory limit spills into the private folder and finishes
    big = (
        "SELECT count(*) AS n FROM (SELECT md5(i::VARCHAR) || md5((i + 1)::VARCHAR) AS s "
        "FROM range(2000000) t(i) ORDER BY s)"
    )
    code, out, err = cli(
        "--temp-dir", around.spill, "--memory-limit", "60MB", "--threads", "1", "sql", "--db", around.store, big
    )
    assert code == 0 and out.split()[-1] == "2000000", err
    private = [p for p in around.spill.iterdir() if p.name != "creds.csv"]
    assert [p.name[:14] for p in private] == ["evalstore-sql-"] and not any(private[0].iterdir())
    # --write is the trusted path, as before
    code, _, err = cli("sql", "--write", "--db", around.store, f"COPY (SELECT 1 AS a) TO '{tmp_path / 'w.csv'}'")
    assert code == 0 and (tmp_path / "w.csv").exists(), err
    with evalstore.open(around.store, query_only=True) as s:
        assert s.sql("SELECT count(*) FROM runs WHERE n_rows > ?", [0]).rows[0][0] == 6
        assert s.sql("SELECT count(*) FROM runs WHERE name = $n", {"n": "bm25"}).rows[0][0] == 1
