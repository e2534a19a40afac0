"""How much of each run a pool covers and what each run brought to it (``evalstore pool coverage``).

Per run (the pool's runs, or any stored runs):

* ``pooled@k``: the share of its top k documents the pool holds, averaged over the pool's topics
  the run retrieved for (trectools' ``TrecPool.check_coverage`` reports the count: k times this
  share when the run has k documents a topic);
* ``judged@k`` (with a qrels set): ir_measures' ``Judged@k``, the share of its top k that the qrels
  set judges, computed by the metric engine and stored like any score (so ``eval -m Judged@10``,
  the ``leaderboard`` view and the explorer show the same column);
* ``n_contributed``: the pooled documents it brought (its rows in ``pool_contributions``);
  ``n_unique``: those no other run brought; with a qrels set, how many of those are judged and
  relevant (grade >= ``rel``): what the pool would lose without the run.

Per topic: the pool's size, the runs that brought its documents and, with a qrels set, how many of
them are judged and relevant. Each is one DuckDB statement over all runs and topics
(``sql/pool.sql``, blocks ``coverage_runs`` and ``coverage_topics``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..base.arguments import names
from ..errors import PoolError
from ..evaluation.stored import evaluate_runs
from .build import bound, render_block
from .manage import pool_id, pool_runs

if TYPE_CHECKING:
    from ..db.handle import StoreHandle


@dataclass
class Coverage:
    """The coverage of a pool: ``runs`` (a dict per run) and ``topics`` (a dict per topic), at depth
    ``k``, against the qrels set ``qrels`` (None: no judgments read)."""

    pool: str
    k: int
    qrels: str | None
    rel: int
    runs: list[dict[str, Any]] = field(default_factory=list)
    topics: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "pool": self.pool,
            "k": self.k,
            "qrels": self.qrels,
            "rel": self.rel,
            "runs": self.runs,
            "topics": self.topics,
        }


def pool_coverage(
    store: StoreHandle,
    pool: str,
    runs: str | Sequence[str] | None = None,
    *,
    qrels: str | None = None,
    k: int | None = None,
    rel: int = 1,
) -> Coverage:
    """The coverage of the pool ``pool`` for ``runs`` (default: the pool's runs still stored) at
    depth ``k`` (default: the pool's depth), with ``qrels``' judgments when given (relevant: grade
    >= ``rel``); see the module docstring."""
    pid = pool_id(store, pool)
    depth = int(store.con.execute("SELECT depth FROM pool_meta WHERE pool_id = ?", [pid]).fetchall()[0][0])
    k = depth if k is None else k
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise PoolError(f"the coverage depth k is a whole number >= 1, not {k!r}")
    _check_rel(rel)
    notes: list[str] = []
    if runs is None:
        wanted = pool_runs(store, pool)
        stored = set(store.run_names())
        gone = [r for r in wanted if r not in stored]
        if gone:
            notes.append(f"{len(gone)} run(s) of the pool are no longer stored: {', '.join(gone[:10])}")
        run_list = [r for r in wanted if r in stored]
    else:
        run_list = names(runs, "run")
    if not run_list:
        raise PoolError(f"no stored run to report the coverage of pool {pool!r} for")
    run_ids = [store.run_id(r) for r in run_list]
    qid = store.qrels_id(qrels) if qrels is not None else -1
    con = store.con
    values = {"pool": pid, "k": k, "qrels": qid, "rel": rel}
    con.execute("CREATE OR REPLACE TEMP TABLE _cov_runs AS SELECT unnest(?::INTEGER[]) AS run_id", [run_ids])
    try:
        sql = render_block("coverage_runs", {"runs": "_cov_runs"})
        per_run = _records(con.execute(sql, bound(sql, values)))
    finally:
        con.execute("DROP TABLE IF EXISTS _cov_runs")
    if qrels is None:
        for r in per_run:
            del r["n_unique_judged"], r["n_unique_relevant"]
    else:
        judged = _judged(store, qrels, run_list, k)
        for r in per_run:
            r["judged_at_k"] = judged.get(r["run"])
    per_topic = pool_sizes(store, pool, qrels=qrels, rel=rel).topics
    return Coverage(pool, k, qrels, rel, per_run, per_topic, notes)


def pool_sizes(store: StoreHandle, pool: str, *, qrels: str | None = None, rel: int = 1) -> Coverage:
    """The pool's size per topic (``Coverage.topics``: topic, n_docs, n_runs; with ``qrels``,
    n_judged and n_relevant: grade >= ``rel``)."""
    pid = pool_id(store, pool)
    k = int(store.con.execute("SELECT depth FROM pool_meta WHERE pool_id = ?", [pid]).fetchall()[0][0])
    _check_rel(rel)
    qid = store.qrels_id(qrels) if qrels is not None else -1
    sql = render_block("coverage_topics", {})
    per_topic = _records(store.con.execute(sql, bound(sql, {"pool": pid, "qrels": qid, "rel": rel})))
    if qrels is None:
        for t in per_topic:
            del t["n_judged"], t["n_relevant"]
    return Coverage(pool, k, qrels, rel, topics=per_topic)


def _check_rel(rel: int) -> None:
    if isinstance(rel, bool) or not isinstance(rel, int) or rel < 1:
        raise PoolError(f"rel is the lowest relevant grade, a whole number >= 1, not {rel!r}")


def _records(cursor: Any) -> list[dict[str, Any]]:
    cols = [d[0] for d in cursor.description]
    return [dict(zip(cols, row)) for row in cursor.fetchall()]


def _judged(store: StoreHandle, qrels: str, runs: list[str], k: int) -> dict[str, float | None]:
    """Each run's mean ``Judged@k`` on ``qrels`` (evaluated and stored by the engine)."""
    result = evaluate_runs(store, qrels, runs, [f"Judged@{k}"], progress=False)
    return {run: mean for run, _, mean, _ in result.means}
