"""Names as written: scores are stored under the short canonical name (only non-default parameters
and options), with every resolved parameter beside it; metric_name() gives the stored name of any
spelling; migration 0004 converts the long names of older stores. Also the checks on numbers in
metric names (finite, in range, integers as integers, no repeated parameter)."""

from __future__ import annotations

import json

import duckdb
import pytest

import evalstore
from evalstore.db import available_migrations
from evalstore.errors import MetricError
from evalstore.metrics import parse_metric


def _stored(store) -> set[str]:
    return {r[0] for r in store.sql("SELECT DISTINCT metric FROM scores").rows}


def test_spellings_of_one_metric_store_as_one_name(sample_store):
    res = sample_store.evaluate("sample", ["bm25"], ["ndcg_cut_10", "nDCG@10", "nDCG(judged_only=false)@10"])
    assert set(res.stored_names.values()) == {"nDCG@10"}
    assert _stored(sample_store) == {"nDCG@10"}
    n = sample_store.sql("SELECT count(*) FROM scores WHERE metric = 'nDCG@10'").rows[0][0]
    assert n == 8  # one row per topic, not three
    lb = sample_store.sql("SELECT mean FROM leaderboard WHERE run = 'bm25' AND metric = 'nDCG@10'").rows
    assert lb[0][0] == pytest.approx(res.mean("bm25", "nDCG@10"), abs=1e-12)


def test_non_default_parameters_and_options_stay_in_the_name(sample_store):
    s = sample_store
    s.evaluate("sample", ["bm25"], ["map", "AP(rel=2)", "P.5,10", "Q-measure(beta=0.5)", "nDCG(gains=1:3:7)@5"])
    s.evaluate("sample", ["bm25"], ["map"], complete=True, depth=100)
    assert _stored(s) == {
        "AP", "AP(rel=2)", "P@5", "P@10", "Q-measure(beta=0.5)", "nDCG(gains=1:3:7)@5",
        "AP(complete=true,depth=100)",
    }  # fmt: skip


def test_resolved_parameters_are_stored_beside_the_name(sample_store):
    sample_store.evaluate("sample", ["bm25"], ["nDCG@10", "AP(rel=2)"], convention="ntcireval")
    rows = dict(sample_store.sql("SELECT DISTINCT metric, params FROM scores").rows)
    nd = json.loads(rows["nDCG(convention=ntcireval)@10"])
    assert nd == {"metric": "nDCG", "cutoff": 10, "gains": "grade", "judged_only": False, "dcg": "log2",
                  "convention": "ntcireval", "complete": False, "depth": None}  # fmt: skip
    ap = json.loads(rows["AP(convention=ntcireval,rel=2)"])
    assert ap["rel"] == 2 and ap["judged_only"] is False and ap["cutoff"] is None
    q = sample_store.sql("SELECT params->>'$.gains' FROM leaderboard WHERE metric LIKE 'nDCG%' LIMIT 1").rows
    assert q == [("grade",)]


def test_declared_gains_are_the_default(store, tmp_path):
    (tmp_path / "q.txt").write_text("1 0 a 2\n1 0 b 1\n")
    (tmp_path / "r.txt").write_text("1 Q0 a 1 2.0 r\n1 Q0 b 2 1.0 r\n")
    store.ingest_qrels(tmp_path / "q.txt", name="q", gains="1:3", progress=False)
    store.ingest_run(tmp_path / "r.txt", progress=False)
    res = store.evaluate("q", None, ["nDCG", "nDCG(gains=1:3)", "nDCG(gains=1:2)", "Q-measure"])
    assert res.stored_names == {"nDCG": "nDCG", "nDCG(gains=1:3)": "nDCG", "nDCG(gains=1:2)": "nDCG(gains=1:2)",
                             "Q-measure": "Q-measure"}  # fmt: skip
    params = json.loads(store.sql("SELECT any_value(params) FROM scores WHERE metric = 'Q-measure'").rows[0][0])
    assert params["gains"] == [1.0, 3.0]


def test_metric_name_sql_function(sample_store):
    q = "SELECT metric_name('ndcg_cut_10'), metric_name('map'), metric_name('P_10(rel=2)'), metric_name('P+')"
    assert sample_store.sql(q).rows == [("nDCG@10", "AP", "P(rel=2)@10", "P-plus")]
    sample_store.evaluate("sample", None, ["P@10"])
    n = sample_store.sql("SELECT count(*) FROM scores WHERE metric = metric_name('P.10')").rows[0][0]
    assert n == 6 * 8
    with pytest.raises(evalstore.StoreError, match="2 metrics"):
        sample_store.sql("SELECT metric_name('P.5,10')")


def _store_at_v3_with_long_names(path):
    """A store as evalstore 0.1 (schema 3) wrote it: long canonical names everywhere."""
    con = duckdb.connect(str(path))
    con.execute(
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, "
        "applied_at TIMESTAMP NOT NULL DEFAULT current_timestamp)"
    )
    for m in available_migrations()[:3]:
        con.execute(m.sql())
        con.execute("INSERT INTO schema_migrations (version, name) VALUES (?, ?)", [m.version, m.name])
    con.execute(
        "INSERT INTO run_meta (name, tag, source, format, sha256, n_topics, n_rows) "
        "VALUES ('r', 'r', 'x', 'trec', 'a', 1, 1)"
    )
    con.execute(
        "INSERT INTO qrels_meta (name, source, format, sha256, n_topics, n_judged, max_grade, default_gains) "
        "VALUES ('plain', 'x', 'trec', 'b', 1, 1, 2, NULL), ('declared', 'y', 'trec', 'c', 1, 1, 2, '1:3')"
    )
    long = [
        (1, "AP(judged_only=false,rel=1)", "mean"),
        (1, "nDCG(gains=grade,judged_only=false)@10", "mean"),
        (1, "nDCG(gains=1:2,judged_only=false)@10", "mean"),
        (1, "P(complete=true,judged_only=false,rel=2)@5", "mean"),
        (2, "Q-measure(beta=1,gains=1:3,judged_only=false)", "mean"),
        (2, "ERR(convention=ntcireval,gains=1:3,judged_only=false)@10", "mean"),
        (2, "NumRet(judged_only=false)", "sum"),
    ]
    for qid, metric, agg in long:
        con.execute("INSERT INTO evaluations (run_id, qrels_id, metric, aggregate, n_topics, engine_version) "
                    "VALUES (1, ?, ?, ?, 1, '0.1.0')", [qid, metric, agg])  # fmt: skip
        con.execute("INSERT INTO score_data VALUES (1, ?, ?, 't1', 0.5)", [qid, metric])
    con.execute(
        "INSERT INTO meta_runs (kind, params, seed, inputs, evalstore_version) "
        "VALUES ('kendall', '{}', NULL, '{}', '0.1.0')"
    )
    con.execute("INSERT INTO meta_discpower VALUES (1, 'declared', 'Q-measure(beta=1,gains=1:3,judged_only=false)', "
                "'bootstrap', 0.05, 'none', 2, 1, 1, 0, 0.0, NULL)")  # fmt: skip
    con.close()


def test_migration_converts_long_names(tmp_path):
    path = tmp_path / "v3.duckdb"
    _store_at_v3_with_long_names(path)
    with evalstore.open(path) as s:
        assert s.schema_version() == len(available_migrations())
        rows = dict(s.sql("SELECT qrels || ' ' || metric, value FROM scores").rows)
        assert set(rows) == {
            "plain AP", "plain nDCG@10", "plain nDCG(gains=1:2)@10", "plain P(complete=true,rel=2)@5",
            "declared Q-measure", "declared ERR-ntcir(convention=ntcireval)@10", "declared NumRet",
        }  # fmt: skip
        params = dict(s.sql("SELECT metric, params FROM scores WHERE qrels = 'declared'").rows)
        assert json.loads(params["Q-measure"])["gains"] == [1.0, 3.0]
        assert json.loads(params["ERR-ntcir(convention=ntcireval)@10"])["convention"] == "ntcireval"
        assert s.sql("SELECT metric FROM meta_discpower").rows == [("Q-measure",)]
        lb = dict(s.sql("SELECT metric, mean FROM leaderboard WHERE qrels = 'plain'").rows)
        assert lb["AP"] == 0.5


@pytest.mark.parametrize(
    "name, message",
    [
        ("AP(rel=1,rel=2)", "given twice"),
        ("P@99999999999999999999", "between 1 and"),
        ("P@10.5", "must be an integer"),
        ("P@0", "between 1 and"),
        ("nDCG(gains=nan:1:2)", "must be a number"),
        ("nDCG(gains=inf:inf:inf)", "must be a number"),
        ("Q-measure(gains=1e400:2)", "finite"),
        ("Q-measure(gains=3:2:1)", "non-decreasing"),
        ("Q-measure(beta=nan)", "must be a number"),
        ("AP(rel=1.5)", "must be an integer"),
        ("AP(rel=0x10)", "must be an integer"),
        ("SetF(beta=1_000)", "must be a number"),
    ],
)
def test_numbers_in_names_are_checked(name, message):
    with pytest.raises(MetricError, match=message):
        parse_metric(name)


def test_infinite_penalties_stay_allowed():
    """WRR(penalties=inf:inf:inf) is reciprocal rank (Sakai 2007): infinity is allowed there only."""
    (inst,) = parse_metric("WRR(penalties=inf:inf:inf)")
    assert inst.p["penalties"] == (float("inf"),) * 3
