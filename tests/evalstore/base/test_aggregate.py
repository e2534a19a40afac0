"""The one rule for a run's score over its topics (evalstore.base.aggregate): the mean, geometric mean
and sum of the per-topic values, with correctly rounded sums, in Python and in the SQL of the
leaderboard view, giving the same double."""

from __future__ import annotations

import math
import random

import duckdb
import numpy as np
import pytest
from support import DATA_DIR, ROOT, need_shared

import evalstore
from evalstore.base.aggregate import (
    AGGREGATES,
    GMEAN_FLOOR,
    aggregate,
    aggregate_rows,
    exact_sum_sql,
    sql,
    summaries_sql,
)


def test_hand_computed_values():
    # the exact sum of the doubles .1, .2, .3 is 0.6000000000000000055..., nearest the double 0.6;
    # adding them one by one gives 0.6000000000000001
    assert math.fsum([0.1, 0.2, 0.3]) == 0.6 and 0.1 + 0.2 + 0.3 == 0.6000000000000001
    assert aggregate([0.1, 0.2, 0.3]) == aggregate([0.3, 0.2, 0.1]) == 0.6 / 3
    assert aggregate([1.0, 3.0, 9.0], "gmean") == pytest.approx(3.0, abs=1e-15)
    assert aggregate([0.0, 1.0], "gmean") == math.exp(math.log(GMEAN_FLOOR) / 2)  # a zero counts as the floor 1e-5
    assert aggregate([2.0, 5.0, None, float("nan")], "sum") == 7.0  # missing values are left out
    assert math.isnan(aggregate([None], "mean"))
    np.testing.assert_array_equal(aggregate_rows(np.array([[0.1, 0.2, 0.3], [1.0, 0.0, 0.5]])), [0.6 / 3, 0.5])
    with pytest.raises(ValueError, match="unknown aggregate"):
        aggregate([1.0], "median")


def _values(rng: random.Random) -> list[float]:
    n = rng.randint(1, 300)
    kind = rng.choice(["uniform", "tiny", "log", "counts", "thirds"])
    if kind == "uniform":
        return [rng.random() for _ in range(n)]
    if kind == "tiny":
        return [rng.random() ** 8 for _ in range(n)]
    if kind == "log":  # what the geometric mean sums: negative values
        return [math.log(max(rng.random(), 1e-5)) for _ in range(n)]
    if kind == "counts":
        return [float(rng.randint(0, 10**9)) + rng.random() for _ in range(n)]
    return [rng.choice([1 / 3, 2 / 3, 1 / 7, 0.1]) * rng.randint(0, 9) for _ in range(n)]


def _sets_table(con: duckdb.DuckDBPyConnection, sets: list[list[float]]) -> None:
    """The sets as one table v(s, value): set number, value (one round trip for all of them)."""
    import pyarrow as pa

    ids = [i for i, vals in enumerate(sets) for _ in vals]
    values = [x for vals in sets for x in vals]
    con.register("sets", pa.table({"s": pa.array(ids, pa.int32()), "value": pa.array(values, pa.float64())}))
    con.execute("CREATE OR REPLACE TEMP TABLE v AS SELECT * FROM sets")
    con.unregister("sets")


def test_sql_sum_is_fsum_bit_for_bit():
    """exact_sum_sql on 1,000 random sets (uniform, tiny, negative, large, repeating fractions)
    equals math.fsum exactly; a plain SQL sum does not always. All sets in one grouped query."""
    con = duckdb.connect()
    rng = random.Random(20261126)
    sets = [_values(rng) for _ in range(1000)]
    _sets_table(con, sets)
    rows = con.execute(f"SELECT s, {exact_sum_sql('value')}, sum(value) FROM v GROUP BY s ORDER BY s").fetchall()
    assert [r[0] for r in rows] == list(range(len(sets)))
    plain_differs = 0
    for (_, exact, plain), vals in zip(rows, sets, strict=True):
        assert exact == math.fsum(vals), vals
        plain_differs += plain != exact
    assert plain_differs > 0  # the exactness is not free: a naive sum differs on some sets


def test_sql_aggregates_equal_python_bit_for_bit():
    con = duckdb.connect()
    rng = random.Random(7)
    sets = [[abs(v) for v in _values(rng)] + [0.0] * rng.randint(0, 2) for _ in range(300)]
    _sets_table(con, sets)
    columns = ", ".join(sql(how) for how in AGGREGATES)
    rows = con.execute(f"SELECT s, {columns} FROM v GROUP BY s ORDER BY s").fetchall()
    assert len(rows) == len(sets)
    for row, vals in zip(rows, sets, strict=True):
        for how, got in zip(AGGREGATES, row[1:], strict=True):
            assert got == aggregate(vals, how), (how, vals)


def test_sql_of_no_value_is_null():
    con = duckdb.connect()
    con.execute("CREATE TEMP TABLE v (value DOUBLE)")
    con.execute("INSERT INTO v VALUES (NULL)")
    assert con.execute(f"SELECT {sql('mean')}, {sql('sum')}, {sql('gmean')} FROM v").fetchone() == (None, None, None)


@pytest.mark.parametrize("how", AGGREGATES)
def test_summaries_sql_is_the_python_rule_per_group(how):
    """One row per group: the aggregate of the values that are not NaN (NaN when none is; NULL is
    missing), and n_topics counting NaN but not NULL, as EvalResult.means gives them."""
    rng = random.Random(7)
    groups = {
        "g1": [rng.random() for _ in range(50)],
        "g2": [0.0, 0.25, math.nan, 1.0],
        "g3": [math.nan, math.nan],
    }
    con = duckdb.connect()
    con.execute("CREATE TABLE r (g VARCHAR, value DOUBLE)")
    con.executemany("INSERT INTO r VALUES (?, ?)", [(g, v) for g, vs in groups.items() for v in vs] + [("g2", None)])
    got = {g: (v, n) for g, v, n in con.execute(summaries_sql("r", "g", how)).fetchall()}
    for g, vs in groups.items():
        want = aggregate(vs, how)
        assert got[g][0] == want or (math.isnan(got[g][0]) and math.isnan(want)), (g, got[g][0], want)
        assert got[g][1] == len(vs)  # NaN counted, the NULL of g2 not


def test_the_summaries_migration_holds_the_one_rule():
    """Migration 23 gives each stored evaluation its summary by summaries_sql's SQL, word for word."""
    text = (ROOT / "migrations" / "0023_evaluation_summaries.sql").read_text(encoding="utf-8")
    for how in AGGREGATES:
        assert sql(how, "v") in text and f"coalesce({sql(how, 'v')}, 'NaN'::DOUBLE) AS summary" in text, how


def test_the_leaderboard_migration_holds_the_one_rule():
    """The leaderboard view's means are aggregate.sql's expressions, word for word."""
    text = (ROOT / "migrations" / "0013_exact_means.sql").read_text(encoding="utf-8")
    for how in AGGREGATES:
        assert sql(how, "s.value") in text, how


#: one metric of each aggregate, and the metrics that showed a last-bit difference under avg()
VIEW_METRICS = ["AP", "nDCG@10", "P@10", "RR", "Bpref", "ERR@10", "Q-measure", "gm_map", "num_ret", "num_rel_ret"]


def _view_equals_result(path, qrels: str) -> int:
    with evalstore.open(path) as s:
        result = s.evaluate(qrels, None, VIEW_METRICS)
        board = {
            (run, metric): mean
            for run, metric, mean in s.sql("SELECT run, metric, mean FROM leaderboard WHERE qrels = ?", [qrels]).rows
        }
    n = 0
    for run, metric, mean, _ in result.means:
        assert board[(run, result.stored_names[metric])] == mean, (run, metric)  # the same double
        n += 1
    return n


def test_leaderboard_means_are_evalresult_means_bit_for_bit(sample_db):
    assert _view_equals_result(sample_db, "sample") == 6 * len(VIEW_METRICS)


@pytest.mark.shared
def test_leaderboard_means_are_evalresult_means_on_dl2019(tmp_path):
    d = need_shared(DATA_DIR / "trec-dl-2019-passage")
    with evalstore.open(tmp_path / "dl.duckdb") as s:
        s.ingest_qrels(d / "qrels.txt", name="dl19", progress=False)
        s.ingest_run(sorted((d / "runs").glob("*.gz"))[:12], progress=False)
    assert _view_equals_result(tmp_path / "dl.duckdb", "dl19") == 12 * len(VIEW_METRICS)
