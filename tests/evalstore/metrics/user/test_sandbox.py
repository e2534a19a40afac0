"""Running measures of one's own: the values, the built-ins' rule for topics without a row, and the
sandbox, which holds what a measure could reach even if the parse-tree check let it through."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pytest

import evalstore
from evalstore.errors import MetricError
from evalstore.metrics import registry
from evalstore.metrics.user import definition, register_measure, unregister_measure
from evalstore.metrics.user.sandbox import sandbox

QRELS = {"q1": {"d1": 2, "d2": 0, "d3": 1}, "q2": {"d4": 1}, "q3": {"d9": 1}}
RUN = {"q1": {"d3": 3.0, "d1": 2.0, "d7": 1.0}, "q2": {"d5": 2.0, "d4": 1.0}}


@pytest.fixture
def own():
    names = []

    def add(name, **kw):
        register_measure(name, **kw)
        names.append(name)

    yield add
    for n in names:
        unregister_measure(n)


def test_ranked_is_the_ranked_list_as_evalstore_ranks_it(own):
    seen = {}

    def capture(ranked):
        seen["rows"] = sorted(ranked.select(["topic", "doc", "rank", "score", "grade"]).to_pylist(),
                              key=lambda r: (r["topic"], r["rank"]))  # fmt: skip
        return (
            ranked.group_by(["qrels", "run", "topic"])
            .aggregate([("rank", "max")])
            .rename_columns(["qrels", "run", "topic", "value"])
        )

    own("depth", python=capture)
    res = evalstore.evaluate(QRELS, RUN, ["depth"], depth=2)
    assert seen["rows"] == [
        {"topic": "q1", "doc": "d3", "rank": 1, "score": 3.0, "grade": 1},
        {"topic": "q1", "doc": "d1", "rank": 2, "score": 2.0, "grade": 2},
        {"topic": "q2", "doc": "d5", "rank": 1, "score": 2.0, "grade": None},  # unjudged: NULL
        {"topic": "q2", "doc": "d4", "rank": 2, "score": 1.0, "grade": 1},
    ]
    assert res.value("run", "q1", "depth") == 2.0


def test_topics_without_a_row_score_what_the_builtins_give(own):
    # a measure that returns rows only for topics with a relevant document in the top 1
    own("first", sql="SELECT qrels, run, topic, 1 AS value FROM ranked WHERE rank = 1 AND grade >= 1 GROUP BY ALL")
    res = evalstore.evaluate(QRELS, RUN, ["first", "P@1"], complete=True)
    assert [(t, res.value("run", t, "first"), res.value("run", t, "P@1")) for t in ("q1", "q2", "q3")] == [
        ("q1", 1.0, 1.0), ("q2", 0.0, 0.0), ("q3", 0.0, 0.0)  # q3: the run lacks it, scored 0 with complete
    ]  # fmt: skip
    assert {t for _, t, m, _ in evalstore.evaluate(QRELS, RUN, ["first"]).per_topic} == {"q1", "q2"}


def test_a_measure_that_returns_a_topic_twice_is_refused(own):
    own("twice", sql="SELECT qrels, run, topic, rank AS value FROM ranked")
    with pytest.raises(MetricError, match="measure twice returns several rows for topic"):
        evalstore.evaluate(QRELS, RUN, ["twice"])


def test_a_python_measure_gets_its_relations_and_cutoff_and_its_errors_name_it(own):
    got = {}

    def f(ranked, k, judgments):
        got.update(k=k, judged=judgments.num_rows)
        return pa.table({"qrels": [], "run": [], "topic": [], "value": []})

    own("py", python=f, reads=("judgments", "ranked"), cutoff="optional")
    evalstore.evaluate(QRELS, RUN, ["py@3"])
    assert got == {"k": 3, "judged": 5}
    own("broken", python=lambda ranked: 1 / 0)
    with pytest.raises(MetricError, match="measure broken raised ZeroDivisionError"):
        evalstore.evaluate(QRELS, RUN, ["broken"])
    own("shape", python=lambda ranked: ranked)
    with pytest.raises(MetricError, match="measure shape returns the columns"):
        evalstore.evaluate(QRELS, RUN, ["shape"])


def test_a_builtin_name_cannot_be_taken():
    with pytest.raises(MetricError, match="name of a built-in metric"):
        register_measure("ndcg", sql="SELECT qrels, run, topic, 1 AS value FROM ranked")
    with pytest.raises(MetricError, match="'official' is a trec_eval name of built-in metrics"):
        register_measure("official", sql="SELECT qrels, run, topic, 1 AS value FROM ranked")
    with pytest.raises(MetricError, match="trec_eval name"):
        register_measure("P_10", sql="SELECT qrels, run, topic, 1 AS value FROM ranked")


def test_the_sandbox_reaches_no_file_no_store_and_no_setting(tmp_path):
    secret = tmp_path / "secret.csv"
    secret.write_text("a\n1\n")
    with sandbox() as con:
        for sql in (f"SELECT * FROM read_csv('{secret}')", f"SELECT * FROM '{secret}'", f"ATTACH '{tmp_path}/x.db'"):
            with pytest.raises(duckdb.PermissionException):
                con.execute(sql)
        with pytest.raises(duckdb.Error, match="configuration has been locked|Cannot change"):
            con.execute("SET enable_external_access = true")
        assert con.execute("SELECT count(*) FROM duckdb_tables()").fetchall() == [(0,)]


def test_what_the_check_might_miss_the_sandbox_cannot_reach(own, monkeypatch, tmp_path):
    """Defence in depth: with the parse-tree check switched off, a definition that reads a store
    table or a file still fails, in the sandbox, and the store is unchanged."""
    with evalstore.open(tmp_path / "s.duckdb") as store:
        store.ingest_qrels(QRELS, name="q")
        store.ingest_run(RUN, name="r")
        own("leak", sql="SELECT qrels, run, topic, 1 AS value FROM ranked")
        spec = registry.get("leak")
        monkeypatch.setattr(definition, "check_sql", lambda measure, sql: None)
        monkeypatch.setattr("evalstore.metrics.user.sandbox.check_sql", lambda measure, sql: None)
        for body in ("SELECT r.qrels, r.run, r.topic, count(*) AS value FROM ranked r, score_data GROUP BY ALL",
                     f"SELECT qrels, run, topic, 1 AS value FROM ranked, read_csv('{tmp_path}/x.csv')"):  # fmt: skip
            object.__setattr__(spec.user, "body", body)  # the frozen definition, changed behind the check
            with pytest.raises(MetricError, match="measure leak failed in DuckDB"):
                store.evaluate("q", ["r"], ["leak"], progress=False)
        assert store.sql("SELECT count(*) FROM scores").rows == [(0,)]
