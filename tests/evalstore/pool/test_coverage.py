"""Coverage of a pool worked by hand: the share of each run's top k in the pool, Judged@k (stored as
a score), what each run brought and what it alone brought, and the pool's size per topic.

Runs (evaluation ranks)::

    A  t1: d1 d2 d3        t2: e1 e2
    B  t1: d2 d4           t2: e1
    N  t1: d9 d1           (not pooled)

Depth-2 pool of A and B: t1 {d1, d2, d4}, t2 {e1, e2}. qrels: d1 = 2, d2 = 0, d4 = 1, e2 = 1 (d3,
e1 unjudged).
"""

from __future__ import annotations

import pytest

from evalstore.errors import PoolError


def ranked(docs: str) -> dict[str, float]:
    names = docs.split()
    return {d: float(len(names) - i) for i, d in enumerate(names)}


@pytest.fixture
def covered(store):
    store.ingest_run({"t1": ranked("d1 d2 d3"), "t2": ranked("e1 e2")}, name="A")
    store.ingest_run({"t1": ranked("d2 d4"), "t2": ranked("e1")}, name="B")
    store.ingest_run({"t1": ranked("d9 d1")}, name="N")
    store.ingest_qrels({"t1": {"d1": 2, "d2": 0, "d4": 1}, "t2": {"e2": 1}}, name="q")
    store.pool("p", ["A", "B"], depth=2)
    return store


def test_each_run_s_contribution_and_coverage(covered):
    cov = covered.pool_coverage("p", qrels="q")
    by_run = {r["run"]: r for r in cov.runs}
    # A brought d1, d2 (t1) and e1, e2 (t2); d1 and e2 only A: d1 judged relevant, e2 relevant
    assert by_run["A"] == {
        "run": "A", "n_contributed": 4, "n_unique": 2, "n_unique_judged": 2, "n_unique_relevant": 2,
        "pooled_at_k": 1.0, "n_topics": 2, "judged_at_k": pytest.approx((2 / 2 + 1 / 2) / 2),
    }  # fmt: skip
    # B: d2, d4, e1; only d4 is B's alone (judged relevant)
    assert (by_run["B"]["n_contributed"], by_run["B"]["n_unique"], by_run["B"]["n_unique_relevant"]) == (3, 1, 1)
    assert by_run["B"]["judged_at_k"] == pytest.approx((2 / 2 + 0 / 1) / 2)
    # relevant at grade >= 2: only d1
    strict = {r["run"]: r for r in covered.pool_coverage("p", qrels="q", rel=2).runs}
    assert (strict["A"]["n_unique_relevant"], strict["B"]["n_unique_relevant"]) == (1, 0)
    # Judged@k is stored like any score: the leaderboard has it
    assert covered.sql("SELECT count(*) FROM leaderboard WHERE metric = 'Judged@2'").rows == [(2,)]


def test_a_run_outside_the_pool(covered):
    cov = covered.pool_coverage("p", ["N"], k=2)
    # N's top 2 of t1 (d9, d1): d1 is pooled; t2 is the pool's but N did not retrieve for it
    assert cov.runs == [{"run": "N", "n_contributed": 0, "n_unique": 0, "pooled_at_k": 0.5, "n_topics": 1}]
    assert cov.k == 2 and cov.qrels is None


def test_the_pool_s_size_per_topic(covered):
    sizes = covered.pool_sizes("p", qrels="q")
    assert sizes.topics == [
        {"topic": "t1", "n_docs": 3, "n_runs": 2, "n_judged": 3, "n_relevant": 2},
        {"topic": "t2", "n_docs": 2, "n_runs": 2, "n_judged": 1, "n_relevant": 1},
    ]
    assert covered.pool_sizes("p").topics[0] == {"topic": "t1", "n_docs": 3, "n_runs": 2}


def test_a_dropped_run_is_noted(covered):
    covered.drop_runs("B")
    cov = covered.pool_coverage("p")
    assert [r["run"] for r in cov.runs] == ["A"]
    assert cov.notes == ["1 run(s) of the pool are no longer stored: B"]


@pytest.mark.parametrize(("kwargs", "message"), [({"k": 0}, "k is a whole number >= 1"), ({"rel": 0}, "rel is")])
def test_bad_arguments(covered, kwargs, message):
    with pytest.raises(PoolError, match=message):
        covered.pool_coverage("p", **kwargs)
