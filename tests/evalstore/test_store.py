"""The store: locations and URLs, migrations (upgrade from migration 1, newer-store error), the
write lock, read-only opening, ad-hoc SQL and SQLAlchemy."""

from __future__ import annotations

import duckdb
import pytest
from support import FIXTURES, holding_lock, store_at_migration_1

import evalstore
from evalstore.db import available_migrations, inspect_store
from evalstore.errors import StoreError, StoreLockedError

FIX = FIXTURES / "ingest"


def test_default_location_env_var_and_urls(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("EVALSTORE_DB", raising=False)
    with evalstore.open() as s:
        assert s.location == "evalstore.duckdb"
        s.ingest_qrels(FIX / "qrels_small.txt", name="q", progress=False)
    assert (tmp_path / "evalstore.duckdb").exists()
    monkeypatch.setenv("EVALSTORE_DB", str(tmp_path / "env.duckdb"))
    with evalstore.open() as s:
        assert s.location == str(tmp_path / "env.duckdb")
    with evalstore.open(f"duckdb:///{tmp_path / 'evalstore.duckdb'}") as s:  # absolute: duckdb:////...
        assert s.qrels_names() == ["q"]
    with evalstore.open("duckdb:///evalstore.duckdb") as s:  # relative to the cwd
        assert s.qrels_names() == ["q"]
    with evalstore.open("duckdb:///:memory:") as s:
        assert s.location == ":memory:" and s.qrels_names() == []
    with pytest.raises(StoreError, match="only DuckDB stores are supported"):
        evalstore.open("sqlite:///x.db")
    with pytest.raises(StoreError, match="folder .* does not exist"):
        evalstore.open(tmp_path / "no" / "such" / "x.duckdb")


def test_opening_a_store_at_migration_1_upgrades_it_and_keeps_the_data(tmp_path):
    path = tmp_path / "v1.duckdb"
    store_at_migration_1(path)
    info = inspect_store(path)
    assert (info["schema_version"], info["state"]) == (1, "older")
    with pytest.raises(StoreError, match="needs upgrading"):
        evalstore.open(path, read_only=True)
    with evalstore.open(path) as s:
        newest = len(available_migrations())
        assert s.schema_version() == newest > 1
        assert [a["version"] for a in s.status()["applied"]] == list(range(1, newest + 1))
        assert s.sql("SELECT run, topic, doc, rank FROM run_rows ORDER BY rank").rows == [
            ("old", "q1", "dA", 1),
            ("old", "q1", "dB", 2),
        ]
        assert s.sql("SELECT qrels, doc, grade FROM qrels").rows == [("oldq", "dA", 1)]
        # the upgraded store is fully usable: ingest and evaluate
        s.ingest_run(FIX / "run_small.txt", progress=False)
        assert s.evaluate("oldq", ["old"], ["P@1"]).value("old", "q1", "P@1") == 1.0
    assert inspect_store(path)["state"] == "current"


def test_a_store_from_a_newer_evalstore_is_refused(tmp_path):
    path = tmp_path / "new.duckdb"
    evalstore.open(path).close()
    con = duckdb.connect(str(path))
    con.execute("INSERT INTO schema_migrations (version, name) VALUES (99, 'future')")
    con.close()
    for ro in (False, True):
        with pytest.raises(StoreError) as e:
            evalstore.open(path, read_only=ro)
        msg = str(e.value)
        assert "schema version 99" in msg and "newer evalstore" in msg and "Upgrade evalstore" in msg
    assert inspect_store(path)["state"] == "newer"


def test_a_failing_migration_is_rolled_back(tmp_path, monkeypatch):
    import evalstore.db.migrations as st

    path = tmp_path / "v1.duckdb"
    store_at_migration_1(path)
    real = st.available_migrations()

    class Broken(st.Migration):
        def sql(self):
            return "CREATE TABLE half_done (x INTEGER); SELECT * FROM no_such_table;"

    monkeypatch.setattr(st, "available_migrations", lambda: real[:1] + [Broken(2, "broken", real[1].path)])
    with pytest.raises(StoreError, match="upgrading .* to schema version 2 .* failed"):
        evalstore.open(path)
    con = duckdb.connect(str(path))
    assert con.execute("SELECT max(version) FROM schema_migrations").fetchall() == [(1,)]
    assert con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'half_done'").fetchall() == [
        (0,)
    ]
    con.close()


@pytest.fixture
def locked_store(tmp_path):
    """A store file held open for writing by another process (until the fixture ends)."""
    path = tmp_path / "locked.duckdb"
    evalstore.open(path).close()
    with holding_lock(path) as pid:
        yield path, pid


def test_a_store_locked_by_another_process(locked_store):
    path, pid = locked_store
    for ro in (False, True):
        with pytest.raises(StoreLockedError) as e:
            evalstore.open(path, read_only=ro)
        assert "is open in another process" in str(e.value) or "is open for writing in another process" in str(e.value)
        assert f"PID {pid}" in str(e.value)


def test_read_only_store(tmp_path):
    path = tmp_path / "ro.duckdb"
    with evalstore.open(path) as s:
        s.ingest_qrels(FIX / "qrels_small.txt", name="q", progress=False)
    with evalstore.open(path, read_only=True) as a, evalstore.open(path, read_only=True) as b:
        assert a.read_only and a.qrels_names() == b.qrels_names() == ["q"]
        with pytest.raises(StoreError, match="SQL error: .*read-only"):
            a.sql("DELETE FROM qrels_data", write=True)
        with pytest.raises(evalstore.IngestError, match="open read-only"):
            a.ingest_run(FIX / "run_small.txt", progress=False)
    with pytest.raises(StoreError, match="does not exist"):
        evalstore.open(tmp_path / "missing.duckdb", read_only=True)


def test_sql_is_read_only_unless_asked(sample_store):
    s = sample_store
    n = s.sql("SELECT count(*) FROM run_rows").rows[0][0]
    res = s.sql("SELECT run, count(*) AS n FROM run_rows GROUP BY run ORDER BY run LIMIT 2")
    assert res.columns == ["run", "n"] and len(res) == 2 and res.records()[0]["run"] == "bm25"
    assert s.sql("SELECT ? + 1 AS x", [41]).rows == [(42,)]
    for q in (
        "DELETE FROM run_row_data",
        "DROP VIEW runs",
        "CREATE TABLE t (x INT)",
        "COPY runs TO 'x.csv'",
        "SELECT 1; DELETE FROM run_meta",
        "ATTACH 'other.duckdb'",
    ):
        with pytest.raises(StoreError, match="this statement is refused"):
            s.sql(q)
    # EXPLAIN ANALYZE runs its statement: the inner statement is classified, and refused here
    for q in (
        "EXPLAIN ANALYZE INSERT INTO run_row_data SELECT * FROM run_row_data",
        "EXPLAIN ANALYZE SET threads = 1",
        "SELECT 1; DROP TABLE run_meta",
        "WITH d AS (DELETE FROM run_meta RETURNING *) SELECT * FROM d",
        "COPY run_meta FROM 'x.csv'",
        "ATTACH 'other.duckdb'",
        "INSTALL httpfs",
        "PRAGMA threads = 1",
        "CHECKPOINT",
    ):
        with pytest.raises(StoreError, match="this statement is refused"):
            s.sql(q)
    assert s.sql("SELECT count(*) FROM run_rows").rows[0][0] == n
    assert s.sql("EXPLAIN SELECT 1").rows and s.sql("PRAGMA table_info('run_meta')").rows
    with pytest.raises(StoreError, match="SQL error: .*no_such_column"):
        s.sql("SELECT no_such_column FROM runs")
    with pytest.raises(StoreError, match="empty SQL query"):
        s.sql("  ;  ")
    s.sql("DELETE FROM run_row_data WHERE run_id = (SELECT run_id FROM run_meta WHERE name = 'random')", write=True)
    assert s.sql("SELECT count(*) FROM run_rows WHERE run = 'random'").rows == [(0,)]


def test_sqlalchemy_engine(sample_store, tmp_path):
    import sqlalchemy as sa

    engine = sample_store.sqlalchemy_engine()
    with engine.connect() as c:
        got = c.execute(sa.text("SELECT name, n_rows FROM runs WHERE name = :n"), {"n": "bm25"}).fetchall()
        assert got == sample_store.sql("SELECT name, n_rows FROM runs WHERE name = 'bm25'").rows
    assert {"runs", "qrels_sets", "run_rows", "qrels", "scores", "leaderboard"} <= set(
        sa.inspect(engine).get_view_names()
    )
    engine.dispose()
    assert sample_store.sql("SELECT count(*) FROM runs").rows == [(6,)]
    # a store file not open in this process: a plain duckdb:/// URL
    path = tmp_path / "sa.duckdb"
    with evalstore.open(path) as s:
        s.ingest_qrels(FIX / "qrels_small.txt", name="q", progress=False)
    engine = sa.create_engine(f"duckdb:///{path}")
    with engine.connect() as c:
        assert c.execute(sa.text("SELECT n_judged FROM qrels_sets")).fetchall() == [(6,)]
    engine.dispose()


def test_store_methods_are_the_library_functions_with_the_store_bound():
    """A Store method that takes a library function's arguments is that function: one signature, one
    docstring (the meta and subsample commands call them too)."""
    import inspect

    from evalstore import Store, meta
    from evalstore.comparison import compare
    from evalstore.subsample import create_subsamples, topic_sizes

    pairs = [(Store.compare, compare), (Store.kendall, meta.kendall), (Store.significance_tests, meta.tests),
             (Store.create_subsamples, create_subsamples), (Store.subsample_sizes, topic_sizes)]  # fmt: skip
    for method, fn in pairs:
        assert method.__wrapped__ is fn and method.__doc__ == fn.__doc__
    with evalstore.open(":memory:") as s:
        assert list(inspect.signature(s.compare).parameters)[:2] == ["qrels", "baseline"]
        assert s.significance_tests.__name__ == "significance_tests"


def test_migration_23_gives_stored_evaluations_their_summaries(tmp_path):
    """A store of schema version 22 (evaluations without a summary) upgraded: each stored
    evaluation gets the summary the result gives, bit for bit."""
    path = tmp_path / "v22.duckdb"
    with evalstore.open(path) as s:
        s.ingest_qrels(FIX / "qrels_small.txt", name="q", progress=False)
        s.ingest_run(FIX / "run_small.txt", progress=False)
        result = s.evaluate("q", None, ["AP", "gm_map", "num_rel_ret", "nDCG@10"])
    con = duckdb.connect(str(path))
    con.execute("ALTER TABLE evaluations DROP COLUMN summary")
    con.execute("DELETE FROM schema_migrations WHERE version = 23")
    con.close()
    assert inspect_store(path)["schema_version"] == 22
    with evalstore.open(path) as s:
        got = {
            (run, m): (v, n)
            for run, m, v, n in s.sql(
                "SELECT r.name, e.metric, e.summary, e.n_topics FROM evaluations e JOIN run_meta r USING (run_id)"
            ).rows
        }
    assert len(got) == len(result.means) == 4
    for run, metric, summary, n in result.means:
        assert got[(run, result.stored_names[metric])] == (summary, n)
