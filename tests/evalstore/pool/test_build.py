"""Pools worked by hand on a three-run, two-topic collection (docs/pools.md): depth, RBP (sum and
max) and RRF pooling, which run brought what at what rank, the next round without the judged
documents, the ranks as written, and every refused request storing nothing. The agreement with
trectools' TrecPoolMaker on TREC DL 2019 is tests/conformance/test_trectools.py.

Runs (scores descending give the evaluation ranks)::

    A  t1: d1 d2 d3 d4    t2: e1 e2
    B  t1: d2 d5 d1       t2: e3 e1 e2
    C  t1: d6 d1          t2: e2
"""

from __future__ import annotations

import pytest

from evalstore.errors import IngestError, NotFoundError, PoolError

RUNS = {
    "A": {"t1": ["d1", "d2", "d3", "d4"], "t2": ["e1", "e2"]},
    "B": {"t1": ["d2", "d5", "d1"], "t2": ["e3", "e1", "e2"]},
    "C": {"t1": ["d6", "d1"], "t2": ["e2"]},
}


def ranked(docs: list[str]) -> dict[str, float]:
    return {d: float(len(docs) - i) for i, d in enumerate(docs)}


@pytest.fixture
def pooled(store):
    for name, topics in RUNS.items():
        store.ingest_run({t: ranked(docs) for t, docs in topics.items()}, name=name)
    store.ingest_qrels({"t1": {"d1": 1, "d2": 0}, "t2": {"e2": -1}}, name="round1")
    return store


def docs(store, pool: str) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for t, d in store.sql("SELECT topic, doc FROM pools WHERE pool = ?", [pool]).rows:
        out.setdefault(t, set()).add(d)
    return out


def test_a_depth_pool_is_the_union_of_every_run_s_top_k(pooled):
    res = pooled.pool("d2", depth=2)
    assert docs(pooled, "d2") == {"t1": {"d1", "d2", "d5", "d6"}, "t2": {"e1", "e2", "e3"}}
    assert (res.n_docs, res.n_topics, res.runs) == (7, 2, ["A", "B", "C"])
    assert res.summary() == "pool 'd2' added: depth-2 pool of 3 runs; 7 documents over 2 topics (3.5 per topic)"
    # who brought each document, at what rank (only ranks <= 2 contribute to a depth pool)
    brought = pooled.sql("SELECT run, topic, doc, rank FROM pool_runs WHERE pool = 'd2' ORDER BY topic, doc, run").rows
    assert brought == [
        ("A", "t1", "d1", 1), ("C", "t1", "d1", 2), ("A", "t1", "d2", 2), ("B", "t1", "d2", 1),
        ("B", "t1", "d5", 2), ("C", "t1", "d6", 1),
        ("A", "t2", "e1", 1), ("B", "t2", "e1", 2), ("A", "t2", "e2", 2), ("C", "t2", "e2", 1), ("B", "t2", "e3", 1),
    ]  # fmt: skip
    assert pooled.sql("SELECT n_runs, best_rank, value FROM pool_data WHERE doc = 'd1'").rows == [(2, 1, None)]


def test_an_rbp_pool_keeps_the_k_documents_of_highest_summed_weight(pooled):
    pooled.pool("rbp", strategy="rbp", depth=2, p=0.5)
    # weights (1-p) p^(r-1) = .5, .25, .125, .0625; every rank counts:
    # t1: d1 = .5 (A1) + .125 (B3) + .25 (C2) = .875, d2 = .25 + .5 = .75, d6 = .5, d5 = .25, d3 = .125
    # t2: e2 = .25 (A2) + .125 (B3) + .5 (C1) = .875, e1 = .5 + .25 = .75, e3 = .5
    assert docs(pooled, "rbp") == {"t1": {"d1", "d2"}, "t2": {"e2", "e1"}}
    values = dict(pooled.sql("SELECT doc, value FROM pool_data ORDER BY doc").rows)
    assert values == {"d1": 0.875, "d2": 0.75, "e1": 0.75, "e2": 0.875}
    # an rbp pool records every run that retrieved a pooled document, whatever its rank
    assert pooled.sql("SELECT count(*) FROM pool_runs WHERE pool = 'rbp' AND doc = 'd1'").rows == [(3,)]


def test_rbp_max_ties_are_broken_by_docno_descending(pooled):
    pooled.pool("max", strategy="rbp", rbp_agg="max", depth=2, p=0.5)
    # every run's first document weighs .5: d1, d2 and d6 tie in t1 (e1, e2, e3 in t2); trec_eval's
    # order of tied scores, docno descending, keeps d6 and d2 (e3 and e2)
    assert docs(pooled, "max") == {"t1": {"d6", "d2"}, "t2": {"e3", "e2"}}


def test_an_rrf_pool_sums_one_over_k_plus_rank(pooled):
    pooled.pool("rrf", strategy="rrf", depth=2, k=0)
    # k = 0: t1 d1 = 1 + 1/3 + 1/2, d2 = 1/2 + 1, d6 = 1; t2 e2 = 1/2 + 1/3 + 1, e1 = 1 + 1/2
    assert docs(pooled, "rrf") == {"t1": {"d1", "d2"}, "t2": {"e2", "e1"}}
    values = dict(pooled.sql("SELECT doc, value FROM pool_data").rows)
    assert values["d1"] == pytest.approx(1 + 1 / 3 + 1 / 2, abs=1e-15)
    pooled.pool("rrf60", strategy="rrf", depth=1)  # k = 60 by default
    assert dict(
        pooled.sql("SELECT doc, value FROM pool_data JOIN pool_meta USING (pool_id) WHERE name = 'rrf60'").rows
    ) == {
        "d1": pytest.approx(1 / 61 + 1 / 63 + 1 / 62, abs=1e-15),
        "e2": pytest.approx(1 / 62 + 1 / 63 + 1 / 61, abs=1e-15),
    }


def test_the_next_round_leaves_out_what_is_judged(pooled):
    # round1 judges d1 and d2 of t1; e2's grade -1 is pooled but not judged yet, so e2 stays
    pooled.pool("next", depth=2, exclude_judged="round1")
    assert docs(pooled, "next") == {"t1": {"d5", "d6"}, "t2": {"e1", "e2", "e3"}}
    pooled.pool("next_rbp", strategy="rbp", depth=2, p=0.5, exclude_judged="round1")
    assert docs(pooled, "next_rbp") == {"t1": {"d6", "d5"}, "t2": {"e2", "e1"}}
    desc = pooled.sql("SELECT description FROM pool_sets WHERE name = 'next'").rows[0][0]
    assert desc == "depth-2 pool of 3 runs, without the documents judged in round1"


def test_the_runs_to_pool_can_be_chosen(pooled):
    pooled.pool("ab", ["A", "B"], depth=1)
    assert docs(pooled, "ab") == {"t1": {"d1", "d2"}, "t2": {"e1", "e3"}}


def test_submitted_ranks_are_read_as_written(pooled, tmp_path):
    run = tmp_path / "d.run"
    run.write_text("t1 Q0 x1 1 0.1 D\nt1 Q0 x2 2 0.9 D\n")
    pooled.ingest_run(run)
    pooled.pool("eval", ["D"], depth=1)
    pooled.pool("written", ["D"], depth=1, ranks="submitted")
    assert docs(pooled, "eval") == {"t1": {"x2"}}  # the evaluation rank: score descending
    assert docs(pooled, "written") == {"t1": {"x1"}}
    zero = tmp_path / "z.run"
    zero.write_text("t1 Q0 y1 0 0.5 Z\n")
    pooled.ingest_run(zero)
    with pytest.raises(PoolError, match="'Z' has a rank column that does not count from 1"):
        pooled.pool("zero", ["Z"], depth=1, ranks="submitted")


def test_replace_rebuilds_a_pool_under_its_name(pooled):
    pooled.pool("p", depth=1)
    with pytest.raises(PoolError, match="a pool named 'p' exists"):
        pooled.pool("p", depth=2)
    res = pooled.pool("p", depth=2, replace=True)
    assert res.replaced and res.summary().startswith("pool 'p' replaced")
    assert pooled.sql("SELECT depth, n_docs FROM pool_sets WHERE name = 'p'").rows == [(2, 7)]
    assert pooled.sql("SELECT count(*) FROM pool_runs WHERE pool = 'p'").rows == [(11,)]


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"strategy": "topX"}, PoolError, "unknown pooling strategy 'topX'; use one of depth, rbp, rrf"),
        ({"depth": 0}, PoolError, "at least 1, not 0"),
        ({"depth": -3}, PoolError, "at least 1, not -3"),
        ({"depth": True}, PoolError, "not True"),
        ({"depth": 5}, PoolError, "the depth 5 is beyond the runs' depth: the deepest ranking has 4 documents"),
        ({"strategy": "rbp", "p": 0}, PoolError, "strictly between 0 and 1, not 0"),
        ({"strategy": "rbp", "p": 1.0}, PoolError, "strictly between 0 and 1, not 1.0"),
        ({"strategy": "rbp", "rbp_agg": "mean"}, PoolError, "by sum or max, not 'mean'"),
        ({"p": 0.5}, PoolError, "p and the RBP aggregate belong to --strategy rbp, not depth"),
        ({"strategy": "rbp", "k": 10}, PoolError, "k belongs to --strategy rrf, not rbp"),
        ({"strategy": "rrf", "k": -1}, PoolError, "RRF's k is a number >= 0, not -1"),
        ({"ranks": "file"}, PoolError, "evaluation or submitted, not 'file'"),
        ({"runs": ["A", "nope"]}, NotFoundError, "no run named 'nope'"),
        ({"exclude_judged": "nope"}, NotFoundError, "no qrels set named 'nope'"),
        ({"name": ""}, IngestError, "the pool name is empty"),
    ],
)
def test_bad_requests_are_refused_and_store_nothing(pooled, kwargs, error, message):
    pooled.pool("kept", depth=1)
    name = kwargs.pop("name", "new")
    runs = kwargs.pop("runs", None)
    with pytest.raises(error, match=message):
        pooled.pool(name, runs, **kwargs)
    assert pooled.sql("SELECT name FROM pool_sets").rows == [("kept",)]
    assert pooled.sql("SELECT count(*) FROM pool_data").rows == [(6,)]


def test_nothing_left_to_judge_is_refused(pooled):
    pooled.ingest_qrels(
        {"t1": {d: 0 for d in "d1 d2 d3 d4 d5 d6".split()}, "t2": {"e1": 0, "e2": 1, "e3": 0}}, name="all"
    )
    with pytest.raises(PoolError, match="no document that 'all' does not judge already: nothing to pool"):
        pooled.pool("none", depth=2, exclude_judged="all")
    assert pooled.sql("SELECT count(*) FROM pool_sets").rows == [(0,)]


def test_dropping_a_run_keeps_the_pool_and_drops_its_contributions(pooled):
    pooled.pool("p", depth=2)
    pooled.drop_runs("C")
    assert docs(pooled, "p")["t1"] == {"d1", "d2", "d5", "d6"}
    assert pooled.sql("SELECT DISTINCT run FROM pool_runs ORDER BY run").rows == [("A",), ("B",)]
    plan = pooled.drop_pools("p")
    assert plan.summary() == "1 pool (p), 7 pooled documents"
    assert pooled.sql("SELECT count(*) FROM pool_data").rows == [(0,)]
    with pytest.raises(NotFoundError, match="no pool named 'p' in the store; build one"):
        pooled.drop_pools("p")
