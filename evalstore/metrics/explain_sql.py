"""The queries of :mod:`evalstore.explain.explanation`: a metric block's per-rank relation over the ranked judged
list of some runs and topics.

:func:`split_final_select` keeps a rendered block's WITH clause (its CTEs, the per-rank relation
among them); :func:`query` builds the ranked list ``eval`` builds (:func:`evalstore.metrics.ranked_list.render`)
for a group of runs restricted to the topics, and reads, per (run, topic): every retrieved document
joined to the relation with the running value (the exact window sum of the contributions, as
``exact_sum`` takes it, divided by ``norm``), the sum and the norm, the block's own value, R, and
the ideal list's terms per topic. :func:`chunks` groups the runs so that one pass holds at most
:data:`CHUNK_ROWS` run rows.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import MetricError
from . import answer_lists, ranked_list, sqlfile
from .options import EvalOptions
from .ranked_list import Context
from .references import ORDERS, order_clause

#: Columns every per-rank relation has (beside qrels_id, run_id, topic); ``norm`` is optional.
TERM_COLUMNS = ("doc", "rank", "grade", "gain", "discount", "contribution")
IDEAL_COLUMNS = ("rank", "gain", "discount", "contribution")
_KEYS = ("qrels_id", "run_id", "topic")
#: The exact sum of ``exact_sum`` (evalstore.metrics.sqlfile.EXACT_SUM_SQL) as a running window sum.
_RUNNING_SUM = "CAST(sum(CAST(coalesce({x}, 0) AS DECIMAL(38, 24))) OVER ({w} ROWS UNBOUNDED PRECEDING) AS DOUBLE)"
_RUNNING_MAX = "coalesce(max({x}) OVER ({w} ROWS UNBOUNDED PRECEDING), 0)"
_IN_TOPICS = "topic IN (SELECT unnest($t::VARCHAR[]))"
_IN_RUNS = "run_id IN (SELECT unnest($r::INTEGER[]))"
#: Run rows explained per pass (a pass builds the ranked list of its runs; bounded memory).
CHUNK_ROWS = 200_000

Key = tuple[int, str]  # (run_id, topic)


@dataclass
class Found:
    """What the queries read, merged over the passes."""

    columns: list[str] = field(default_factory=list)
    extras: list[str] = field(default_factory=list)
    rows: dict[Key, list[tuple]] = field(default_factory=dict)
    totals: dict[Key, tuple[float | None, float | None]] = field(default_factory=dict)
    block_values: dict[Key, float | None] = field(default_factory=dict)
    R: dict[Key, int | None] = field(default_factory=dict)
    ideal_columns: list[str] = field(default_factory=list)
    ideal: dict[str, list[tuple]] = field(default_factory=dict)


def query(
    con: Any,
    found: Found,
    qrels_id: int,
    run_ids: list[int],
    topics: list[str],
    ctx: Context,
    options: EvalOptions,
    columns: frozenset[str],
    body: str,
    decl: sqlfile.Explain,
) -> None:
    """One pass over ``run_ids`` (see the module docstring), into ``found``."""
    ctes, _ = split_final_select(body)
    params = {"q": qrels_id, "r": run_ids, "t": topics}
    answers = ctx.kind != "judgments"  # the judged list of answers: its items, not retrieved documents
    try:
        if answers:
            statements = answer_lists.render(ctx.kind, [qrels_id], run_ids, options.complete)
        else:
            statements = ranked_list.render(
                [qrels_id], run_ids, ctx, options, columns, rank_source(run_ids, topics, ctx.order)
            )
        for stmt in statements:
            con.execute(stmt)
        if answers:
            cols, rows, extras, has_norm = _per_item(con, ctes, decl, params)
        else:
            cols, rows, extras, has_norm = _per_rank(con, ctes, decl, params, ctx.order != "trec_eval", ctx.judged_only)
        found.columns, found.extras = cols, extras
        found.rows.update(rows)
        found.totals.update(_totals(con, ctes, decl.relation, decl.running, has_norm, params))
        found.block_values.update(
            ((r, t), v)
            for r, t, v in con.execute(
                f"SELECT run_id, topic, any_value(value) FROM ({body}) b WHERE qrels_id = $q AND {_IN_RUNS} "
                f"AND {_IN_TOPICS} GROUP BY run_id, topic",
                params,
            ).fetchall()
        )
        if decl.ideal and not found.ideal_columns:
            found.ideal_columns, found.ideal = _ideal(con, ctes, decl.ideal, params)
        if not answers:
            found.R.update(
                ((r, t), n)
                for r, t, n in con.execute(
                    f"SELECT run_id, topic, R FROM rl_topics WHERE qrels_id = $q AND {_IN_RUNS} AND {_IN_TOPICS}",
                    params,
                ).fetchall()
            )
    finally:
        ranked_list.drop(con)


def chunks(con: Any, run_ids: list[int], topics: list[str]) -> list[list[int]]:
    """The runs in groups of at most :data:`CHUNK_ROWS` rows on ``topics`` (a run at least)."""
    sizes = dict(
        con.execute(
            "SELECT run_id, count(*) FROM run_row_data WHERE run_id IN (SELECT unnest($r::INTEGER[])) "
            "AND topic IN (SELECT unnest($t::VARCHAR[])) GROUP BY run_id",
            {"r": run_ids, "t": topics},
        ).fetchall()
    )
    out: list[list[int]] = []
    rows = 0
    for r in run_ids:
        n = int(sizes.get(r, 0))
        if not out or (rows + n > CHUNK_ROWS and out[-1]):
            out.append([])
            rows = 0
        out[-1].append(r)
        rows += n
    return out


def rank_source(run_ids: Sequence[int], topics: Sequence[str], order: str) -> str:
    """The runs' rows on ``topics`` with their evaluation rank in ``order`` (as
    :func:`evalstore.metrics.ranked_list.build` ranks every topic: the stored rank is trec_eval's)."""
    where = (
        f"run_id IN ({', '.join(str(int(r)) for r in run_ids)}) "
        f"AND topic IN (SELECT unnest({sqlfile.literal(list(topics))}::VARCHAR[]))"
    )
    if order == "trec_eval":
        return f"SELECT run_id, topic, doc, rank, score FROM run_row_data WHERE {where}"
    if order not in ORDERS:
        raise MetricError(f"internal: unknown order {order!r}")
    return (
        "SELECT run_id, topic, doc, row_number() OVER (PARTITION BY run_id, topic ORDER BY "
        f"{order_clause(order, 'line_no')}) AS rank, score FROM run_row_data WHERE {where}"
    )


def split_final_select(sql: str) -> tuple[str, str]:
    """``WITH a AS (...), b AS (...) SELECT ...`` -> (the WITH clause, the final SELECT): the
    final SELECT is the first ``SELECT`` outside every parenthesis."""
    code = sqlfile.strip_comments(sql).strip()
    if not re.match(r"WITH\b", code, re.I):
        raise MetricError("internal: an explainable block must start with WITH (its per-rank relation is a CTE)")
    depth, i, n = 0, 0, len(code)
    while i < n:
        c = code[i]
        if c == "'":
            i = code.index("'", i + 1) + 1
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif depth == 0 and re.match(r"SELECT\b", code[i : i + 7], re.I) and not re.match(r"\w", code[i - 1]):
            return code[:i].rstrip(), code[i:]
        i += 1
    raise MetricError("internal: no final SELECT in the block")


def _relation_columns(con: Any, ctes: str, relation: str) -> list[str]:
    return [d[0] for d in con.execute(f"{ctes} SELECT * FROM {relation} LIMIT 0").description]


def _per_rank(
    con: Any, ctes: str, decl: sqlfile.Explain, params: dict, other_order: bool, judged_only: bool
) -> tuple[list[str], dict[tuple[int, str], list[tuple]], list[str], bool]:
    """The per-rank rows of each (run, topic): every retrieved document joined to the block's relation."""
    have = _relation_columns(con, ctes, decl.relation)
    missing = [c for c in (*_KEYS, *TERM_COLUMNS) if c not in have]
    if missing:
        raise MetricError(f"internal: the explain relation {decl.relation} lacks {', '.join(missing)}")
    extras = [c for c in have if c not in (*_KEYS, *TERM_COLUMNS, "norm")]
    has_norm = "norm" in have
    window = "PARTITION BY r.run_id, r.topic ORDER BY r.rank"
    running = (_RUNNING_SUM if decl.running == "sum" else _RUNNING_MAX).format(x="x.contribution", w=window)
    select = ["r.rank", "r.doc", "r.score", "j.grade"]
    names = ["rank", "doc", "score", "grade"]
    if other_order:
        select.append("o.rank")
        names.append("trec_eval rank")
    if judged_only:
        select.append("j.rank")
        names.append("eval rank")
    select += ["x.gain", "x.discount", *[f'x."{e}"' for e in extras], "x.contribution"]
    select.append(f"{running} / n.norm" if has_norm else f"{running} / 1")
    names += ["gain", "discount", *extras, "contribution", "running"]
    sql = f"""{ctes}, __x AS (SELECT * FROM {decl.relation} WHERE qrels_id = $q AND {_IN_RUNS} AND {_IN_TOPICS}),
        __n AS (SELECT run_id, topic, any_value({"norm" if has_norm else "1"}) AS norm FROM __x GROUP BY run_id, topic)
        SELECT r.run_id, r.topic, {", ".join(select)}
        FROM rl_retrieved r
        LEFT JOIN rl_judged j ON j.qrels_id = $q AND j.run_id = r.run_id AND j.topic = r.topic AND j.doc = r.doc
        LEFT JOIN __x x ON x.run_id = r.run_id AND x.topic = r.topic AND x.doc = r.doc
        LEFT JOIN __n n ON n.run_id = r.run_id AND n.topic = r.topic
        LEFT JOIN run_row_data o ON o.run_id = r.run_id AND o.topic = r.topic AND o.doc = r.doc
        WHERE r.{_IN_RUNS} AND r.{_IN_TOPICS}
        ORDER BY r.run_id, r.topic, r.rank"""
    out: dict[tuple[int, str], list[tuple]] = {}
    for row in con.execute(sql, params).fetchall():
        out.setdefault((row[0], row[1]), []).append(tuple(row[2:]))
    return names, out, extras, has_norm


def _per_item(
    con: Any, ctes: str, decl: sqlfile.Explain, params: dict
) -> tuple[list[str], dict[tuple[int, str], list[tuple]], list[str], bool]:
    """The rows of each (run, topic) of an answer's judged list (its nuggets, or its sentences and
    citations): the block's relation itself, in its ``rank`` order, with the running value."""
    have = _relation_columns(con, ctes, decl.relation)
    missing = [c for c in (*_KEYS, *TERM_COLUMNS, "norm") if c not in have]
    if missing:
        raise MetricError(f"internal: the explain relation {decl.relation} lacks {', '.join(missing)}")
    extras = [c for c in have if c not in (*_KEYS, *TERM_COLUMNS, "norm")]
    running = _RUNNING_SUM.format(x="x.contribution", w="PARTITION BY x.run_id, x.topic ORDER BY x.rank")
    names = ["rank", "doc", "grade", *extras, "gain", "discount", "contribution", "running"]
    cols = ", ".join(["x.rank", "x.doc", "x.grade", *[f'x."{e}"' for e in extras], "x.gain", "x.discount"])
    # (norm 0: a topic without vital nuggets, which scores 0)
    sql = f"""{ctes} SELECT x.run_id, x.topic, {cols}, x.contribution,
               CASE WHEN x.norm = 0 THEN 0.0 ELSE {running} / x.norm END
        FROM {decl.relation} x WHERE x.qrels_id = $q AND x.{_IN_RUNS} AND x.{_IN_TOPICS}
        ORDER BY x.run_id, x.topic, x.rank"""
    out: dict[tuple[int, str], list[tuple]] = {}
    for row in con.execute(sql, params).fetchall():
        out.setdefault((row[0], row[1]), []).append(tuple(row[2:]))
    return names, out, extras, True


def _totals(
    con: Any, ctes: str, relation: str, running: str, has_norm: bool, params: dict
) -> dict[tuple[int, str], tuple[float | None, float | None]]:
    """``{(run_id, topic): (sum or largest contribution, norm)}``."""
    agg = sqlfile.expand_exact_sums("exact_sum(contribution)") if running == "sum" else "max(contribution)"
    norm = "any_value(norm)" if has_norm else "1"
    rows = con.execute(
        f"{ctes} SELECT run_id, topic, {agg}, {norm} FROM {relation} "
        f"WHERE qrels_id = $q AND {_IN_RUNS} AND {_IN_TOPICS} GROUP BY run_id, topic",
        params,
    ).fetchall()
    return {(r, t): (_float(s), _float(n)) for r, t, s, n in rows}


def _float(v: Any) -> float | None:
    return None if v is None else float(v)


def _ideal(con: Any, ctes: str, relation: str, params: dict) -> tuple[list[str], dict[str, list[tuple]]]:
    have = _relation_columns(con, ctes, relation)
    missing = [c for c in ("qrels_id", "topic", *IDEAL_COLUMNS) if c not in have]
    if missing:
        raise MetricError(f"internal: the ideal relation {relation} lacks {', '.join(missing)}")
    extras = [c for c in have if c not in ("qrels_id", "topic", *IDEAL_COLUMNS)]
    running = _RUNNING_SUM.format(x="contribution", w="PARTITION BY topic ORDER BY rank")
    cols = ["rank", "gain", "discount", *extras, "contribution", "running"]
    quoted = "".join(f'"{e}", ' for e in extras)
    sql = (
        f"{ctes} SELECT topic, rank, gain, discount, {quoted}contribution, {running} FROM {relation} "
        f"WHERE qrels_id = $q AND {_IN_TOPICS} ORDER BY topic, rank"
    )
    out: dict[str, list[tuple]] = {}
    for row in con.execute(sql, {"q": params["q"], "t": params["t"]}).fetchall():
        out.setdefault(row[0], []).append(tuple(row[1:]))
    return cols, out
