"""Measures of one's own against the built-ins (issue 45's reference check): P@k, RR and nDCG@k
re-implemented as user measures, once in SQL over ``ranked`` (and ``judgments``) and once as Python
functions over Arrow tables, equal evalstore's built-in P@k, RR and nDCG@k to the bit on every
topic of every run of the ir_measures conformance kit's ad hoc collections (a store's evaluation
and the in-memory one, with and without ``complete``)."""

from __future__ import annotations

import irm_kit
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from support import SHARED, need_shared

import evalstore
from evalstore.metrics.user import register_measure, unregister_measure
from evalstore.metrics.user.sums import exact_sums

pytestmark = pytest.mark.shared
KIT = SHARED / irm_kit.KIT_NAME

SQL = {
    "sqlP": """-- precision at k: relevant documents in the top k, over k
-- cutoff: required
SELECT qrels, run, topic, count(*) FILTER (WHERE grade >= 1 AND rank <= ${k}) / ${k} AS value
FROM ranked GROUP BY qrels, run, topic""",
    "sqlRR": """-- reciprocal rank of the first relevant document
SELECT qrels, run, topic, max(1.0 / rank) AS value
FROM ranked WHERE grade >= 1 AND rank <= ${k} GROUP BY qrels, run, topic""",
    "sqlnDCG": """-- nDCG with the grades as gains (trec_eval's ndcg_cut)
-- reads: ranked, judgments
WITH ideal AS (
    SELECT qrels, topic, grade, row_number() OVER (PARTITION BY qrels, topic ORDER BY grade DESC, doc) AS rank
    FROM judgments WHERE grade > 0
), idcg AS (
    SELECT qrels, topic, exact_sum(grade / log2(rank + 1)) AS idcg FROM ideal WHERE rank <= ${k} GROUP BY qrels, topic
), dcg AS (
    SELECT qrels, run, topic, exact_sum(grade / log2(rank + 1)) AS dcg
    FROM ranked WHERE grade > 0 AND rank <= ${k} GROUP BY qrels, run, topic
)
SELECT d.qrels, d.run, d.topic, d.dcg / i.idcg AS value FROM dcg d JOIN idcg i USING (qrels, topic) WHERE i.idcg > 0""",
}
KEYS = ["qrels", "run", "topic"]


def _top(ranked: pa.Table, k: int | None):
    """The ranked list (a DataFrame) cut at k."""
    run = ranked.to_pandas()
    return run if k is None else run[run["rank"] <= k]


def py_p(ranked: pa.Table, k: int):
    run = _top(ranked, None)
    hits = ((run["grade"].fillna(0) >= 1) & (run["rank"] <= k)).groupby([run[c] for c in KEYS]).sum()
    out = hits.rename("value").reset_index()
    out["value"] = out["value"] / k
    return out


def py_rr(ranked: pa.Table, k: int | None):
    run = _top(ranked, k)
    out = run[run["grade"].fillna(0) >= 1].groupby(KEYS)["rank"].min().reset_index()
    out["value"] = 1.0 / out["rank"]
    return out[[*KEYS, "value"]]


def py_ndcg(ranked: pa.Table, k: int | None, judgments: pa.Table):
    """nDCG with grades as gains: the sums taken as the SQL's exact_sum (evalstore's exact_sums)."""
    ideal = judgments.to_pandas()
    ideal = ideal[ideal["grade"] > 0].sort_values(["qrels", "topic", "grade"], ascending=[True, True, False])
    ideal["rank"] = ideal.groupby(["qrels", "topic"]).cumcount() + 1
    ideal = ideal if k is None else ideal[ideal["rank"] <= k]
    by = ideal.groupby(["qrels", "topic"])
    idcg = pd.Series(exact_sums(ideal["grade"] / np.log2(ideal["rank"] + 1), by.ngroup()), by.size().index)
    run = _top(ranked, k)
    run = run[run["grade"].fillna(0) > 0]
    by = run.groupby(KEYS)
    dcg = pd.Series(exact_sums(run["grade"] / np.log2(run["rank"] + 1), by.ngroup()), by.size().index)
    out = dcg.rename("dcg").reset_index().merge(idcg.rename("idcg").reset_index(), on=["qrels", "topic"])
    out = out[out["idcg"] > 0]
    out["value"] = out["dcg"] / out["idcg"]
    return out[[*KEYS, "value"]]


@pytest.fixture(scope="module")
def measures():
    for name, sql in SQL.items():
        register_measure(name, sql=sql)
    register_measure("pyP", python=py_p, cutoff="required")
    register_measure("pyRR", python=py_rr, cutoff="optional")
    register_measure("pynDCG", python=py_ndcg, reads=("ranked", "judgments"), cutoff="optional")
    yield
    for name in [*SQL, "pyP", "pyRR", "pynDCG"]:
        unregister_measure(name)


CASES = [(f"P@{k}", f"{{}}P@{k}") for k in (1, 5, 10, 20)]
CASES += [("RR", "{}RR"), ("RR@5", "{}RR@5"), ("nDCG", "{}nDCG"), ("nDCG@5", "{}nDCG@5"), ("nDCG@10", "{}nDCG@10")]


def _pairs():
    return [(built, own.format(lang)) for built, own in CASES for lang in ("sql", "py")]


def _compare(res, pairs) -> int:
    by = {(r, t, m): v for r, t, m, v in res.per_topic}
    n = 0
    for built, own in pairs:
        keys = [(r, t) for r, t, m in by if m == built]
        assert keys, built
        for r, t in keys:
            a, b = by[(r, t, built)], by[(r, t, own)]
            assert a == b or (a != a and b != b), f"{own} differs from {built} on run {r} topic {t}: {b!r} != {a!r}"
            n += 1
    return n


@pytest.mark.parametrize("collection", ["adhoc", "tiny"])
@pytest.mark.parametrize("complete", [False, True])
def test_own_measures_equal_the_builtins_in_a_store(measures, collection, complete):
    kit = need_shared(KIT)
    qrels, runs = irm_kit.COLLECTIONS[collection]
    with evalstore.open(":memory:") as store:
        store.ingest_qrels(kit / qrels, name=collection, progress=False)
        store.ingest_run(sorted(kit.glob(runs)), progress=False)
        pairs = _pairs()
        res = store.evaluate(collection, None, [m for p in pairs for m in p], complete=complete, progress=False)
        assert _compare(res, pairs) > (500 if collection == "adhoc" else 20)


def test_own_measures_equal_the_builtins_in_memory(measures):
    kit = need_shared(KIT)
    qrels, runs = irm_kit.COLLECTIONS["adhoc"]
    pairs = _pairs()
    res = evalstore.evaluate(kit / qrels, sorted(str(p) for p in kit.glob(runs)), [m for p in pairs for m in p])
    assert _compare(res, pairs) > 500
