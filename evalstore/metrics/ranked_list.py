"""The ranked judged list (``sql/ranked_list.sql``): the relations every metric block reads.

Built once per evaluation :class:`Context` (a combination of ``rel``, ``judged_only`` and
``gains``) for all the runs and qrels sets of an evaluation at once, as temporary relations
``rl_*`` on the connection; :func:`drop` removes them when the evaluation is done.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, overload

import duckdb

from ..base.resources import read_sql
from .gains import gain_expr
from .options import EvalOptions
from .references import order_clause
from .sqlfile import RUNNING_COLUMNS

#: Temporary relations of one evaluation (ranked list and the engine's output); dropped when it is
#: done so that a long-lived connection does not keep hundreds of MB of judged rows alive.
WORK_TABLES = (
    "rl_qrels",
    "rl_qtopics",
    "rl_ideal",
    "rl_file_order",
    "rl_hits",
    "rl_topics",
    "rl_judged",
    "rl_subtopics",
    # the judged lists of generated answers (evalstore/metrics/answer_lists.py)
    "rl_judged_answers",
    "rl_nuggets",
    "rl_citations",
)
#: Relations built only when a block reads them: named in ``columns`` like an optional column.
OPTIONAL_RELATIONS = ("rl_subtopics",)
WORK_VIEWS = ("rl_retrieved",)


@dataclass(frozen=True)
class Context:
    """The parameters that shape the ranked judged list rather than a metric's formula, the
    order of the run's documents (a key of :data:`~evalstore.metrics.references.ORDERS`: the
    stored rank is ``trec_eval``'s; the others re-rank the rows), and the kind of judged set the
    metrics read: 'judgments' (this ranked judged list), or the judged lists of generated answers,
    'nuggets' and 'support' (:mod:`evalstore.metrics.answer_lists`)."""

    rel: int = 1
    judged_only: bool = False
    gains: tuple[float, ...] | None = None
    order: str = "trec_eval"
    kind: str = "judgments"


def build(
    con: duckdb.DuckDBPyConnection,
    qrels_ids: Sequence[int],
    run_ids: Sequence[int],
    context: Context,
    options: EvalOptions,
    columns: set[str] | frozenset[str] | None = None,
    rank_source: str | None = None,
) -> None:
    """(Re)build the rl_* relations for one context, for all the given qrels sets and runs at once.

    ``columns``: the optional rl_judged columns to build (default: all of
    :data:`~evalstore.metrics.sqlfile.RUNNING_COLUMNS`) and the optional relations
    (:data:`OPTIONAL_RELATIONS`, e.g. ``rl_subtopics``) to build (only when named).
    ``rank_source``: a query giving ``(run_id, topic, doc, rank, score)`` of runs that are not
    stored (the candidate fusions of ``fuse --optimize``), ranked in trec_eval's order."""
    run_list = ", ".join(str(int(r)) for r in run_ids)
    if rank_source is None and context.order != "trec_eval":
        order = order_clause(context.order, "line_no")
        con.execute(f"""CREATE OR REPLACE TEMP TABLE rl_file_order AS
            SELECT run_id, topic, doc, row_number() OVER (PARTITION BY run_id, topic ORDER BY {order}) AS rank, score
            FROM run_row_data WHERE run_id IN ({run_list})""")
        rank_source = "SELECT run_id, topic, doc, rank, score FROM rl_file_order"
    elif rank_source is None:
        rank_source = f"SELECT run_id, topic, doc, rank, score FROM run_row_data WHERE run_id IN ({run_list})"
    judged = columns is None or "jrank" in columns
    for stmt in render(
        qrels_ids,
        run_ids,
        context,
        options,
        columns,
        rank_source,
        every_judged=judged and every_judged(con, qrels_ids, options),
    ):
        con.execute(stmt)


#: The running columns that are simpler when every judged-list row is judged (no grade below 0, no
#: subsample's pool): the judged rows up to a row are all the rows up to it, its row number (typed as
#: the sum it replaces). DuckDB's window computes it for 0.2 CPU-s less per million judged rows.
EVERY_JUDGED = {"jrank": "CAST(row_number() OVER w AS HUGEINT)"}


def every_judged(con: duckdb.DuckDBPyConnection, qrels_ids: Sequence[int], options: EvalOptions) -> bool:
    """Every row of the qrels sets' ``rl_qrels`` is judged: no grade below 0 (trec_eval's "in the
    pool but unjudged") and, with ``pool``, no subsample among them (its parent's dropped documents
    come in with grade -1)."""
    ids = "(SELECT unnest($ids::INTEGER[]))"
    pooled = f"OR EXISTS (SELECT 1 FROM subsample_meta WHERE qrels_id IN {ids})" if options.pool else ""
    sql = f"SELECT NOT (EXISTS (SELECT 1 FROM qrels_data WHERE qrels_id IN {ids} AND grade < 0) {pooled})"
    return bool(con.execute(sql, {"ids": [int(q) for q in qrels_ids]}).fetchall()[0][0])


@overload
def render(
    qrels_ids: Sequence[int],
    run_ids: Sequence[int],
    context: Context,
    options: EvalOptions,
    columns: set[str] | frozenset[str] | None,
    rank_source: str,
    run_ids_sql: str | None = None,
    *,
    counts_source: str | None = None,
    as_ctes: Literal[False] = False,
    every_judged: bool = False,
) -> list[str]: ...


@overload
def render(
    qrels_ids: Sequence[int],
    run_ids: Sequence[int],
    context: Context,
    options: EvalOptions,
    columns: set[str] | frozenset[str] | None,
    rank_source: str,
    run_ids_sql: str | None = None,
    *,
    counts_source: str | None = None,
    as_ctes: Literal[True],
    every_judged: bool = False,
) -> list[tuple[str, str]]: ...


def render(
    qrels_ids: Sequence[int],
    run_ids: Sequence[int],
    context: Context,
    options: EvalOptions,
    columns: set[str] | frozenset[str] | None,
    rank_source: str,
    run_ids_sql: str | None = None,
    *,
    counts_source: str | None = None,
    as_ctes: bool = False,
    every_judged: bool = False,
) -> list[str] | list[tuple[str, str]]:
    """The statements of ``sql/ranked_list.sql`` for one context: ``rank_source`` is the query
    giving ``(run_id, topic, doc, rank, score)`` of the runs (stored runs, or a run given in
    memory to :class:`evalstore.Evaluator`); ``run_ids_sql`` a query giving the ``run_id`` of the
    runs when they are not ``run_ids`` (for ``complete``). ``counts_source``: a query giving ``(run_id,
    topic, n)``, the rows of each run and topic, when ``rank_source`` gives only the rows that some
    qrels set may judge (a narrower ranked list; no block may then read ``rl_retrieved``, which holds
    just those rows). ``as_ctes``: the relations as ``(name,
    query)`` pairs, in order, for a ``WITH`` clause (the in-memory evaluator, Spark) instead of
    ``CREATE OR REPLACE TEMP TABLE|VIEW name AS query`` statements. ``every_judged``: every
    ``rl_qrels`` row is judged (:func:`every_judged`), so ``jrank`` is the row's place in its list."""
    wanted = set(RUNNING_COLUMNS) if columns is None else set(columns)
    running = {**RUNNING_COLUMNS, **(EVERY_JUDGED if every_judged else {})}
    qrels_list = ", ".join(str(int(q)) for q in qrels_ids)
    values = {
        "qrels_ids": qrels_list,
        "rel": str(int(context.rel)),
        "gain_expr": gain_expr(context.gains),
        "depth": str(options.depth_value),
        "rank_source": rank_source,
        "judged_only": "TRUE" if context.judged_only else "FALSE",
        "use_pool": "TRUE" if options.pool else "FALSE",
        "topic_pairs": _topic_pairs(run_ids, options, run_ids_sql),
        "retrieved_counts": _retrieved_counts(counts_source, options.depth_value),
        "topic_filter": "p.R > 0" if options.convention == "ntcireval" else "TRUE",
        "condensed_rank": (
            "row_number() OVER (PARTITION BY qrels_id, run_id, topic ORDER BY orig_rank)"
            if context.judged_only
            else "orig_rank"
        ),
        "running_columns": "".join(f",\n       {running[c]} AS {c}" for c in running if c in wanted),
        "ideal_join": (
            "LEFT JOIN rl_ideal i ON i.qrels_id = k.qrels_id AND i.topic = k.topic AND i.rank = k.rank"
            if wanted & {"cg_ideal", "gain_ideal"}
            else ""
        ),
        "running_window": (
            "WINDOW w AS (PARTITION BY k.qrels_id, k.run_id, k.topic ORDER BY k.rank ROWS UNBOUNDED PRECEDING)"
            if wanted & {"cnt", "cg", "jrank"}
            else ""
        ),
    }
    skip = {r for r in OPTIONAL_RELATIONS if columns is None or r not in columns}
    relations = [
        r for r in relations_of(string.Template(read_sql("ranked_list.sql")).substitute(values)) if r[1] not in skip
    ]
    if as_ctes:
        return [(name, query) for _, name, query in relations]
    return [f"CREATE OR REPLACE TEMP {kind} {name} AS\n{query}" for kind, name, query in relations]


def _topic_pairs(run_ids: Sequence[int], options: EvalOptions, run_ids_sql: str | None) -> str:
    """The query of the (qrels set, run, topic) pairs evaluated: the topics each run retrieved for,
    or with ``complete`` every judged topic of every run (``in_run`` false where it retrieved none)."""
    qcols = "q.R, q.N, q.R_gain, q.ideal_total, q.max_grade, q.n_pool"
    if not options.complete:
        return (
            f"SELECT q.qrels_id, r.run_id, q.topic, r.n_ret, TRUE AS in_run, {qcols} "
            "FROM ret r JOIN rl_qtopics q ON q.topic = r.topic"
        )
    run_list = ", ".join(str(int(r)) for r in run_ids)
    runs = run_ids_sql or f"SELECT unnest([{run_list}]) AS run_id"
    return (
        f"SELECT q.qrels_id, u.run_id, q.topic, coalesce(r.n_ret, 0) AS n_ret, r.run_id IS NOT NULL AS in_run, "
        f"{qcols} FROM ({runs}) u CROSS JOIN rl_qtopics q "
        "LEFT JOIN ret r ON r.run_id = u.run_id AND r.topic = q.topic"
    )


def _retrieved_counts(counts_source: str | None, depth: int) -> str:
    """The query of each run's number of rows per topic (at most ``depth``; see :func:`render`)."""
    if counts_source is None:
        return "SELECT run_id, topic, count(*) AS n_ret FROM rl_retrieved GROUP BY run_id, topic"
    return (
        f"SELECT run_id, topic, least(n, {depth}) AS n_ret FROM ({counts_source}) c "
        "WHERE topic IN (SELECT DISTINCT topic FROM rl_qtopics)"
    )


def relations_of(script: str) -> list[tuple[str, str, str]]:
    """``(TABLE or VIEW, name, query)`` of each ``CREATE OR REPLACE TEMP TABLE|VIEW name AS query``
    statement of the ranked-list script (the only statements it has)."""
    out = []
    for stmt in statements(script):
        head, _, query = stmt.partition(" AS\n")
        words = head.split()
        if words[:4] != ["CREATE", "OR", "REPLACE", "TEMP"] or len(words) != 6 or words[4] not in ("TABLE", "VIEW"):
            raise ValueError(f"internal: sql/ranked_list.sql holds a statement of another form: {stmt[:60]!r}")
        out.append((words[4], words[5], query))
    return out


def statements(script: str) -> list[str]:
    """The statements of a script without its ``--`` comment lines."""
    lines = [ln for ln in script.splitlines() if not ln.lstrip().startswith("--")]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]


def drop(con: duckdb.DuckDBPyConnection) -> None:
    """Drop the rl_* relations."""
    for v in WORK_VIEWS:
        con.execute(f"DROP VIEW IF EXISTS {v}")
    for t in WORK_TABLES:
        con.execute(f"DROP TABLE IF EXISTS {t}")
