"""Incremental evaluation: reuse stored evaluations instead of computing them again.

A stored (run, qrels set, metric) evaluation is reused when everything its scores depend on is the
same: the run's content (``run_meta.sha256``), the qrels set's content (``qrels_meta.sha256``),
the canonical metric (the short name and the resolved parameters with the evaluation options,
``evaluations.params``), the pool option and the engine version; migration 0006 stores the hashes
and the pool option with every evaluation. :func:`missing` finds the cells (qrels set, run, metric)
to compute and groups them into rectangles (jobs) for the engine; the evaluation's context
(:class:`evalstore.evaluation.context.EvaluationContext`, which calls it with the plan it computed)
copies the reused cells' stored scores into its output table, so the result is shaped from one
table whether a score was computed now or before.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import duckdb

from ..metrics import engine
from ..metrics.options import EvalOptions
from ..metrics.registry import MetricInstance
from ..version import __version__ as ENGINE_VERSION

#: Run lines per engine job: the ranked lists of that many lines fit the default memory budget
#: (evalstore.base.memory_limit.default_memory_limit) without spilling, and evaluating 20 M lines
#: in such chunks is faster than in one piece even without a budget (docs/benchmark.md, "Memory").
CHUNK_LINES = 4_000_000


@dataclass(frozen=True)
class Job:
    """One call of the engine: every instance for every (qrels set, run) of the rectangle."""

    qrels_ids: list[int]
    run_ids: list[int]
    instances: list[MetricInstance]


@dataclass(frozen=True)
class Plan:
    jobs: list[Job]
    reused: int  # stored (run, qrels, metric) evaluations reused
    computed: int  # (run, qrels, metric) evaluations to compute


def missing(
    con: duckdb.DuckDBPyConnection,
    reused: str,
    qrels_ids: Sequence[int],
    run_ids: Sequence[int],
    instances: Sequence[MetricInstance],
    options: EvalOptions,
    names: Mapping[tuple[int, str], engine.StoredName],
) -> Plan:
    """Which (qrels set, run, metric) cells must be computed (``names``: the plan's stored name of
    each (qrels set, metric)); the reusable ones (qrels_id, run_id, metric, key) are written to the
    temporary table ``reused``. Runs that miss the same cells share one job."""
    wanted = {(qid, n.key): n for (qid, _), n in names.items()}
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE {reused} AS "
        "WITH w AS (SELECT unnest($1::INTEGER[]) AS qrels_id, unnest($2::VARCHAR[]) AS key, "
        "                  unnest($3::VARCHAR[]) AS metric, unnest($4::JSON[]) AS params), "
        "     r AS (SELECT unnest($5::INTEGER[]) AS run_id) "
        "SELECT e.qrels_id, e.run_id, e.metric, w.key "
        "FROM w JOIN evaluations e ON e.qrels_id = w.qrels_id AND e.metric = w.metric "
        "                          AND e.params::VARCHAR = w.params::VARCHAR "
        "JOIN r ON r.run_id = e.run_id "
        "JOIN run_meta rm ON rm.run_id = e.run_id AND rm.sha256 = e.run_sha256 "
        "JOIN qrels_meta qm ON qm.qrels_id = e.qrels_id AND qm.sha256 = e.qrels_sha256 "
        "WHERE e.engine_version = $6 AND e.pool = $7",
        [
            [qid for qid, _ in wanted],
            [key for _, key in wanted],
            [n.metric for n in wanted.values()],
            [json.dumps(n.params, sort_keys=True) for n in wanted.values()],
            list(run_ids),
            ENGINE_VERSION,
            options.pool,
        ],
    )
    have = set(con.execute(f"SELECT qrels_id, run_id, key FROM {reused}").fetchall())
    by_signature: dict[frozenset[tuple[int, str]], list[int]] = {}
    for rid in run_ids:
        sig = frozenset((qid, key) for qid, key in wanted if (qid, rid, key) not in have)
        if sig:
            by_signature.setdefault(sig, []).append(rid)
    jobs = []
    for sig, rids in by_signature.items():
        qids = [q for q in qrels_ids if any(sq == q for sq, _ in sig)]
        insts = [i for i in instances if any((q, names[(q, i.display)].key) in sig for q in qids)]
        jobs.append(Job(qids, rids, insts))
    # a job is a rectangle (its qrels sets x runs x metrics): a stored cell inside one is computed
    # again, so it is not reused as well (it would count twice: n_topics 86 for 43 topics)
    again = {
        (q, r, names[(q, i.display)].key)
        for job in jobs
        for q in job.qrels_ids
        for i in job.instances
        for r in job.run_ids
        if (q, r, names[(q, i.display)].key) in have
    }
    if again:
        cells = list(zip(*again))
        con.execute(
            f"DELETE FROM {reused} WHERE (qrels_id, run_id, key) IN "
            "(SELECT unnest($1::INTEGER[]), unnest($2::INTEGER[]), unnest($3::VARCHAR[]))",
            [list(cells[0]), list(cells[1]), list(cells[2])],
        )
    n_cells = len(wanted) * len(run_ids)
    n_reused = len(have) - len(again)
    return Plan(jobs, reused=n_reused, computed=n_cells - n_reused)


def everything(qrels_ids: Sequence[int], run_ids: Sequence[int], instances: Sequence[MetricInstance]) -> Plan:
    """The plan that computes every cell (``recompute``, or nothing stored to reuse)."""
    n = len({(q, i.display) for q in qrels_ids for i in instances}) * len(run_ids)
    return Plan([Job(list(qrels_ids), list(run_ids), list(instances))], reused=0, computed=n)


def without(plan: Plan, run_ids: set[int]) -> Plan:
    """The plan without the cells of ``run_ids`` (runs left out of the evaluation)."""
    if not run_ids:
        return plan
    jobs, dropped = [], 0
    for job in plan.jobs:
        keep = [r for r in job.run_ids if r not in run_ids]
        n_cells = len({(q, i.display) for q in job.qrels_ids for i in job.instances})
        dropped += (len(job.run_ids) - len(keep)) * n_cells
        if keep:
            jobs.append(Job(job.qrels_ids, keep, job.instances))
    return Plan(jobs, plan.reused, plan.computed - dropped)


def chunked(con: duckdb.DuckDBPyConnection, plan: Plan, max_lines: int) -> Plan:
    """The plan with each job's runs split into chunks of at most ``max_lines`` run lines (at
    least one run each): the engine's working set (the ranked lists of a chunk's runs) then stays
    the same size however many runs are evaluated, so that it fits the memory budget instead of
    spilling to disk."""
    if max_lines <= 0:
        return plan
    sizes = dict(con.execute("SELECT run_id, n_rows FROM run_meta").fetchall())
    jobs = []
    for job in plan.jobs:
        chunk: list[int] = []
        lines = 0
        for rid in job.run_ids:
            n = int(sizes.get(rid, 0))
            if chunk and lines + n > max_lines:
                jobs.append(Job(job.qrels_ids, chunk, job.instances))
                chunk, lines = [], 0
            chunk.append(rid)
            lines += n
        if chunk:
            jobs.append(Job(job.qrels_ids, chunk, job.instances))
    return Plan(jobs, plan.reused, plan.computed)
