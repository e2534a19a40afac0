"""result_of_table (the store's result, shaped in DuckDB) gives exactly result_of_rows's result:
the same per-topic rows in the same order (run in output order, topic in byte order, metric in
request order), the same groups and means, metrics sharing a key, missing values, rows of runs
not asked for."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

import duckdb

from evalstore.results.eval_result import result_of_rows
from evalstore.results.query import result_of_table


@dataclass(frozen=True)
class Name:
    metric: str
    key: str
    aggregate: str


STORED = {
    "AP": Name("AP", "ap", "mean"),
    "map": Name("AP", "ap", "mean"),  # another spelling of the same scores
    "GM_AP": Name("GM_AP", "gm", "gmean"),
    "num_rel": Name("num_rel", "nr", "sum"),
}
TOPICS = ["10", "9", "Z", "a", "z", "é", "\uffff", "😀", "topic 1", "Topic"]


def rows(seed: int) -> list[tuple[int, str, str, float | None]]:
    rng = random.Random(seed)
    out: list[tuple[int, str, str, float | None]] = []
    for run_id in (3, 1, 7, 5):  # run 5 is not asked for
        for topic in rng.sample(TOPICS, 7):
            for key in ("ap", "gm", "nr", "unused"):
                value = None if rng.random() < 0.1 else (math.nan if rng.random() < 0.05 else rng.random())
                out.append((run_id, topic, key, value))
    rng.shuffle(out)
    return out


def same(a, b) -> bool:
    return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))


def test_result_of_table_is_result_of_rows():
    con = duckdb.connect()
    for seed in range(5):
        data = rows(seed)
        con.execute(
            "CREATE OR REPLACE TABLE t (qrels_id INTEGER, run_id INTEGER, topic VARCHAR, key VARCHAR, value DOUBLE)"
        )
        con.executemany("INSERT INTO t VALUES (1, ?, ?, ?, ?)", data)
        con.execute("INSERT INTO t VALUES (2, 3, 'other', 'ap', 1.0)")  # another qrels set: left out
        runs = {"r7": 7, "r1": 1, "r3": 3, "r9": 9}  # output order; r9 has no rows
        names = {v: k for k, v in runs.items()}
        want = result_of_rows(
            "q", STORED, list(runs), [(names[r], t, k, v) for r, t, k, v in data if r in names], ["a note"]
        )
        source = "SELECT run_id, topic, key, value FROM t WHERE qrels_id = ?"
        got = result_of_table(con, "q", STORED, runs, source, [1], ["a note"])
        assert len(got.per_topic) == len(want.per_topic) > 0
        assert all(x[:3] == y[:3] and same(x[3], y[3]) for x, y in zip(got.per_topic, want.per_topic, strict=True))
        assert [r[:2] for r in got.means] == [r[:2] for r in want.means]
        assert all(same(x[2], y[2]) and x[3] == y[3] for x, y in zip(got.means, want.means, strict=True))
        assert got.metrics == want.metrics and got.stored_names == want.stored_names
        assert got.aggregates == want.aggregates and got.notes == want.notes == ["a note"]
    # the topics in byte order, as trec_eval prints them
    first_run = [t for r, t, m, _ in got.per_topic if r == "r7" and m == "AP"]
    assert first_run == sorted(first_run, key=lambda t: t.encode())
    assert [r[2] for r in got.means if r[0] == "r9"] and all(math.isnan(r[2]) for r in got.means if r[0] == "r9")
