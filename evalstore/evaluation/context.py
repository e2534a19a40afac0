"""One evaluation of stored runs: its plan, its temporary tables and the one writer of scores.

An :class:`EvaluationContext` is opened for an evaluation of qrels sets x runs x metrics with
options (``with EvaluationContext(...) as ctx``). It

* computes the **plan** once: the evaluation context of every (qrels set, metric) pair and the name
  its scores are stored under (:func:`evalstore.metrics.engine.plan_pairs`). Incremental reuse
  (:meth:`reuse`) only filters it; each engine job (:meth:`compute`) takes its units from it;
* owns the **temporary tables** of the evaluation: the engine's output (one row per qrels set, run,
  topic and metric key), the stored name of each key, the reused cells, and the ranked list's
  relations. Their names are private to the context (unique per context); nothing outside this
  module names them. They are dropped when the ``with`` block ends, whatever happened;
* **saves the scores** (:meth:`save_scores`): every evaluated (qrels set, run, metric) replaces the
  stored one, scores and ``evaluations`` row alike, in one transaction. The store path
  (:mod:`evalstore.evaluation.stored`) and the import of scores computed by Spark
  (:func:`evalstore.layout.import_scores`) both store through it; the Spark backend takes its plan
  from :func:`evalstore.metrics.engine.plan` the same way.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import duckdb

from ..base.aggregate import AGGREGATES, summaries_sql
from ..metrics import engine
from ..metrics.options import EvalOptions
from ..metrics.ranked_list import drop as drop_ranked_list
from ..metrics.registry import MetricInstance
from ..version import __version__ as ENGINE_VERSION
from . import incremental

if TYPE_CHECKING:
    from ..db.handle import StoreHandle

_serial = itertools.count(1)


class EvaluationContext:
    """One evaluation: ``qrels_ids`` x runs x ``instances`` with ``options`` (see the module
    docstring). ``declared_gains``: each qrels set's declared gains; ``qrels_names``: the sets'
    names, for messages."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        qrels_ids: Sequence[int] = (),
        instances: Sequence[MetricInstance] = (),
        options: EvalOptions | None = None,
        declared_gains: Mapping[int, tuple[float, ...] | None] | None = None,
        qrels_names: Mapping[int, str] | None = None,
    ) -> None:
        self.con = con
        self.qrels_ids = list(qrels_ids)
        self.instances = list(instances)
        self.options = options or EvalOptions()
        self.declared_gains = dict(declared_gains or {})
        self.qrels_names = dict(qrels_names or {})
        engine.check_kinds(con, self.qrels_ids, self.instances, self.qrels_names)
        # the plan, computed once: the context and stored name of every (qrels set, metric) pair
        self.pairs = engine.plan_pairs(self.qrels_ids, self.instances, self.options, self.declared_gains)
        self.names: dict[tuple[int, str], engine.StoredName] = {k: n for k, (_, n) in self.pairs.items()}
        n = next(_serial)
        self._out, self._keys, self._reused = f"_eval_out_{n}", f"_eval_keys_{n}", f"_eval_reused_{n}"
        self._reused_cells = False  # stored scores reused (:meth:`add_reused`), read by :meth:`scores`

    # ------------------------------------------------------------------ tables
    def __enter__(self) -> EvaluationContext:
        con = self.con
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE {self._out} "
            "(qrels_id INTEGER, run_id INTEGER, topic VARCHAR, key VARCHAR, value DOUBLE)"
        )
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE {self._keys} "
            "(qrels_id INTEGER, key VARCHAR, metric VARCHAR, aggregate VARCHAR, params JSON)"
        )
        distinct = {(qid, n.key): n for (qid, _), n in self.names.items()}
        if distinct:
            con.execute(
                f"INSERT INTO {self._keys} SELECT unnest($1::INTEGER[]), unnest($2::VARCHAR[]), "
                "unnest($3::VARCHAR[]), unnest($4::VARCHAR[]), unnest($5::JSON[])",
                [
                    [qid for qid, _ in distinct],
                    [key for _, key in distinct],
                    [n.metric for n in distinct.values()],
                    [n.aggregate for n in distinct.values()],
                    [json.dumps(n.params, sort_keys=True) for n in distinct.values()],
                ],
            )
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Drop the context's temporary tables and the ranked list's relations."""
        for stmt in (
            *(f"DROP TABLE IF EXISTS {t}" for t in (self._out, self._keys, self._reused)),
            None,
        ):
            try:
                if stmt is None:
                    drop_ranked_list(self.con)
                else:
                    self.con.execute(stmt)
            except duckdb.Error:  # a transaction that an error aborted: the tables go with the connection
                pass

    # ------------------------------------------------------------------ the work
    def reuse(self, run_ids: Sequence[int]) -> incremental.Plan:
        """The cells (qrels set, run, metric) to compute, the others reused from stored evaluations
        of the same run and qrels content, metric, options and engine version."""
        return incremental.missing(
            self.con, self._reused, self.qrels_ids, run_ids, self.instances, self.options, self.names
        )

    def everything(self, run_ids: Sequence[int]) -> incremental.Plan:
        """The plan that computes every cell (``recompute``, or nothing stored to reuse)."""
        return incremental.everything(self.qrels_ids, run_ids, self.instances)

    def compute(self, job: incremental.Job, progress: engine.Progress | None = None) -> None:
        """Compute one job's cells into the context's output table."""
        units = engine.group_units(self.pairs, job.qrels_ids, job.instances)
        engine.compute(
            self.con, units, job.run_ids, self.options, self._out, qrels_names=self.qrels_names, progress=progress
        )

    def add_reused(self, plan: incremental.Plan) -> None:
        """Take the stored per-topic scores of the plan's reused cells into the result: :meth:`scores`
        reads them beside the output table's (not copied into it: 500,000 scores of 100,000 topics
        cost 0.1 s to copy), so that the result is shaped from one query whether a score was
        computed now or before."""
        self._reused_cells = bool(plan.reused)

    def add_scores(self, query: str, params: Sequence[object] = ()) -> None:
        """Add scores computed elsewhere: ``query`` gives ``qrels_id, run_id, topic, metric, value,
        aggregate, params`` (the metric is its own key)."""
        self.con.execute(
            f"CREATE OR REPLACE TEMP TABLE {self._reused} AS {query}",
            list(params),
        )
        self.con.execute(f"INSERT INTO {self._out} SELECT qrels_id, run_id, topic, metric, value FROM {self._reused}")
        self.con.execute(
            f"INSERT INTO {self._keys} SELECT qrels_id, metric, metric, any_value(aggregate), "
            f"any_value(params)::JSON FROM {self._reused} GROUP BY qrels_id, metric"
        )

    def scores(self, qrels_id: int) -> tuple[str, list[object]]:
        """The query (and its parameters) of the rows ``run_id, topic, key, value`` of one qrels
        set, for :func:`evalstore.results.query.result_of_table`."""
        query = f"SELECT run_id, topic, key, value FROM {self._out} WHERE qrels_id = ?"
        if not self._reused_cells:
            return query, [qrels_id]
        reused = (
            f"SELECT s.run_id, s.topic, r.key, s.value FROM score_data s "
            f"JOIN {self._reused} r USING (qrels_id, run_id, metric) WHERE s.qrels_id = ?"
        )
        return f"{query} UNION ALL {reused}", [qrels_id, qrels_id]

    def save_scores(self, store: StoreHandle, *, pool: bool | None = None, engine_version: str = ENGINE_VERSION) -> int:
        """Replace the stored scores of every evaluated (qrels set, run, metric) by the context's
        (scores and ``evaluations`` rows; ``pool``: the pool option they were computed with, by
        default the context's). Returns the number of (qrels set, run, metric) evaluations stored."""
        con = store.con
        pool = self.options.pool if pool is None else pool
        # key_pos: the metric's place in the call, so that evaluations are stored in the order the
        # metrics were asked for (the explorer's default metric is the first one evaluated)
        named = f"""SELECT o.qrels_id, o.run_id, o.topic, o.value, n.metric, n.aggregate, n.params, n.rowid AS key_pos
                    FROM {self._out} o JOIN {self._keys} n USING (qrels_id, key)"""
        # each evaluation's summary (mean, gmean or sum) is stored with it: evaluating again reads it
        summaries = " UNION ALL ".join(
            summaries_sql(f"(SELECT * FROM ({named}) WHERE aggregate = '{how}')", "run_id, qrels_id, metric", how)
            for how in AGGREGATES
        )
        with store.transaction():
            for table in ("score_data", "evaluations"):
                con.execute(f"""DELETE FROM {table} WHERE (qrels_id, run_id, metric) IN
                                (SELECT DISTINCT qrels_id, run_id, metric FROM ({named}))""")
            con.execute(
                "INSERT INTO score_data (run_id, qrels_id, metric, topic, value) "
                f"SELECT run_id, qrels_id, metric, topic, value FROM ({named})"
            )
            return len(
                con.execute(
                    f"""INSERT INTO evaluations (run_id, qrels_id, metric, aggregate, n_topics, engine_version, params,
                                                 run_sha256, qrels_sha256, pool, summary)
                        SELECT e.run_id, e.qrels_id, e.metric, e.agg, e.n, e.ver, e.params, r.sha256, q.sha256, ?,
                               m.summary FROM
                        (SELECT run_id, qrels_id, metric, any_value(aggregate) AS agg, count(value) AS n, ? AS ver,
                                any_value(params) AS params, min(key_pos) AS pos
                         FROM ({named}) GROUP BY run_id, qrels_id, metric) e
                        LEFT JOIN ({summaries}) m USING (run_id, qrels_id, metric)
                        JOIN run_meta r USING (run_id) JOIN qrels_meta q USING (qrels_id)
                        ORDER BY e.pos, e.qrels_id, e.run_id RETURNING 1""",
                    [pool, engine_version],
                ).fetchall()
            )
