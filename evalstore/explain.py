"""Why a score is what it is: one metric, one run, one topic, rank by rank.

:func:`explain` runs the metric's own SQL block (``sql/<family>.sql``) over the same ranked judged
list that ``eval`` builds (:mod:`evalstore.metrics.ranked_list`), restricted to one run and one
topic, and reads the block's per-rank relation: the CTE its ``-- explain:`` declaration names,
whose ``contribution`` column the block sums into the value (``sum / norm``; the largest term for
RR and Success). Nothing of a metric is computed in Python: the per-rank table is the block's
intermediate relation joined to every retrieved document (unjudged ones have no grade and add 0),
the running value is the exact window sum of the contributions divided by the block's ``norm``
(the same exact sum the block takes, so the last running value is the block's value to the last
bit), and the ideal list is the CTE of the ideal list's terms where the block has one (nDCG,
nERR).

Every explanation checks itself: the block's value over this ranked list, the last running value
and the value ``eval`` computes for the same run, topic, metric and options (an evaluation of
the run that stores nothing) must agree exactly (or, under the ir_measures convention for
gdeval's metrics, after gdeval's rounding to 5 decimals); otherwise it raises.

:func:`compare_conventions` explains the same case under each convention: the order each gives
the run's documents, its depth and its value.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import MetricError
from .evaluation import evaluate_runs
from .metrics import engine, ranked_list, sqlfile
from .metrics.gains import check_gains, declared_gains, top_grade
from .metrics.options import CONVENTIONS, NO_DEPTH, Options, make_options
from .metrics.references import ORDERS, order_clause
from .metrics.registry import MetricInstance, all_metrics

if TYPE_CHECKING:
    from .store.handle import StoreHandle

#: Columns every per-rank relation has (beside qrels_id, run_id, topic); ``norm`` is optional.
TERM_COLUMNS = ("doc", "rank", "grade", "gain", "discount", "contribution")
IDEAL_COLUMNS = ("rank", "gain", "discount", "contribution")
_KEYS = ("qrels_id", "run_id", "topic")
#: The exact sum of ``exact_sum`` (evalstore.metrics.sqlfile.EXACT_SUM_SQL) as a running window sum.
_RUNNING_SUM = "CAST(sum(CAST(coalesce({x}, 0) AS DECIMAL(38, 24))) OVER ({w} ROWS UNBOUNDED PRECEDING) AS DOUBLE)"
_RUNNING_MAX = "coalesce(max({x}) OVER ({w} ROWS UNBOUNDED PRECEDING), 0)"

#: What the orders of evalstore.metrics.references.ORDERS are, for readers.
ORDER_TEXT = {
    "trec_eval": "score descending, ties by docno descending (trec_eval)",
    "float32": "score as a 32-bit float descending, ties by docno descending (trec_eval <= 9.0.8)",
    "docno_asc": "score descending, ties by docno ascending",
    "score_file": "score descending, ties in file order",
    "file": "file order, scores ignored (NTCIREVAL)",
}


@dataclass
class Explanation:
    """One metric on one run and topic, rank by rank.

    ``rows``: one per retrieved document in evaluation order (after ``depth``) under ``columns``:
    ``rank`` (in the convention's order), ``doc``, ``score``, ``grade`` (None: unjudged), ``trec_eval
    rank`` (when the convention orders otherwise), ``eval rank`` (when the metric ranks judged
    documents only), then the block's ``gain``, ``discount``, the block's own further columns
    (``extras``), ``contribution`` and ``running`` (the value so far). ``ideal_rows`` (under
    ``ideal_columns``): the ideal list's terms when the block has one. ``value``: what ``eval``
    computes; ``total`` and ``norm``: the sum of the contributions and its divisor (value = total /
    norm, or the largest term when ``running == 'max'``)."""

    metric: str  # as requested
    stored_as: str  # the stored (canonical) name
    qrels: str
    run: str
    topic: str
    convention: str
    order: str  # a key of references.ORDERS
    depth: int | None
    sql: str  # where the block is, e.g. 'sql/trec_eval.sql -- @metric AP'
    relation: str  # the CTE read
    running_kind: str  # 'sum' or 'max'
    doc: str  # the metric's description (the registry's)
    columns: list[str]
    rows: list[tuple[Any, ...]]
    extras: list[str]
    value: float | None
    total: float | None
    norm: float | None
    ideal_columns: list[str] = field(default_factory=list)
    ideal_rows: list[tuple[Any, ...]] = field(default_factory=list)
    cutoff: int | None = None
    R: int | None = None
    rounded: int | None = None  # eval rounds the value to this many decimals (gdeval's, under ir_measures)
    notes: list[str] = field(default_factory=list)

    def column(self, name: str) -> list[Any]:
        i = self.columns.index(name)
        return [r[i] for r in self.rows]

    def records(self) -> list[dict[str, Any]]:
        return [dict(zip(self.columns, r)) for r in self.rows]

    def ideal_records(self) -> list[dict[str, Any]]:
        return [dict(zip(self.ideal_columns, r)) for r in self.ideal_rows]

    def last_contributing(self) -> int:
        """How many rows reach the last row with a nonzero contribution (0 when none has one)."""
        c = self.columns.index("contribution")
        return max((i + 1 for i, r in enumerate(self.rows) if r[c]), default=0)


def explainable() -> list[str]:
    """The metrics whose SQL block has a per-rank relation (``-- explain:``), by name."""
    return sorted((s.name for s in all_metrics() if s.block.explain), key=str.lower)


def explain(
    store: StoreHandle,
    metric: str,
    qrels: str,
    run: str,
    topic: str,
    *,
    convention: str = "trec_eval",
    complete: bool = False,
    depth: int | None = None,
    pool: bool = True,
) -> Explanation:
    """Explain ``metric`` of ``run`` on ``topic`` against ``qrels`` (see the module docstring).
    The options are those of ``eval`` (:mod:`evalstore.evaluation`)."""
    return explain_topics(
        store, metric, qrels, run, [str(topic)], convention=convention, complete=complete, depth=depth, pool=pool
    )[str(topic)]


def explain_topics(
    store: StoreHandle,
    metric: str,
    qrels: str,
    run: str,
    topics: Sequence[str] | None = None,
    *,
    convention: str = "trec_eval",
    complete: bool = False,
    depth: int | None = None,
    pool: bool = True,
) -> dict[str, Explanation]:
    """:func:`explain` for several topics of one run (every evaluated topic when ``topics`` is
    None): ``{topic: explanation}``."""
    found = explain_runs(
        store, metric, qrels, [run], topics, convention=convention, complete=complete, depth=depth, pool=pool
    )
    return {t: ex for (_, t), ex in found.items()}


def explain_runs(
    store: StoreHandle,
    metric: str,
    qrels: str,
    runs: Sequence[str] | None = None,
    topics: Sequence[str] | None = None,
    *,
    convention: str = "trec_eval",
    complete: bool = False,
    depth: int | None = None,
    pool: bool = True,
) -> dict[tuple[str, str], Explanation]:
    """:func:`explain` for several runs (all when None) and topics (every evaluated topic when
    None) at once: one evaluation, one ranked list, one query per relation. ``{(run, topic):
    explanation}``, by run as given and topic in byte order (or as given)."""
    inst = _one_instance(metric)
    decl = inst.spec.block.explanation
    if decl is None:
        raise MetricError(
            f"{inst.display}: its SQL block (sql/{inst.spec.sql.replace('#', ' -- @metric ')}) has no per-rank "
            f"relation to show; explain works for {', '.join(explainable())}"
        )
    options = make_options(convention, complete, depth, pool)
    qid = store.qrels_id(qrels)
    names = list(dict.fromkeys(runs)) if runs is not None else store.run_names()
    rids = {r: store.run_id(r) for r in names}
    con = store.con
    # what eval computes: the one evaluation path, for these runs, storing nothing
    result = evaluate_runs(
        store, qrels, names, [metric], convention=convention, complete=complete, depth=depth, pool=pool,
        save=False, progress=False,
    )  # fmt: skip
    evaluated = {(r, t): v for r, t, m, v in result.per_topic if m == inst.display}
    if topics is None:
        wanted = list(evaluated)
    else:
        wanted = [(r, str(t)) for r in names for t in dict.fromkeys(topics)]
        for r, t in wanted:
            if (r, t) not in evaluated:
                raise MetricError(_not_evaluated(store, qid, rids[r], qrels, r, t, options))
    declared = declared_gains(con, [qid])[qid]
    ctx = engine.effective_context(inst, declared, options)
    check_gains(con, [qid], ctx.gains, {qid: qrels})
    gmax = max(ctx.gains) if ctx.gains else top_grade(con, [qid])
    opts = options.with_pool(options.pool and inst.spec.needs_pool)
    block = inst.spec.block
    columns = (block.needs & frozenset(sqlfile.RUNNING_COLUMNS)) | (
        block.reads & frozenset(ranked_list.OPTIONAL_RELATIONS)
    )
    if not wanted:
        return {}
    topic_list = list(dict.fromkeys(t for _, t in wanted))
    body = engine.metric_sql(inst, opts, gmax)
    ctes, _ = split_final_select(body)
    per_rank: dict[tuple[int, str], list[tuple]] = {}
    totals: dict[tuple[int, str], tuple[float | None, float | None]] = {}
    raw: dict[tuple[int, str], float | None] = {}
    R: dict[tuple[int, str], int | None] = {}
    ideal: dict[str, list[tuple]] = {}
    ideal_cols: list[str] = []
    for chunk in _chunks(con, list(dict.fromkeys(rids[r] for r, _ in wanted)), topic_list):
        params = {"q": qid, "r": chunk, "t": topic_list}
        try:
            source = _rank_source(chunk, topic_list, ctx.order)
            for stmt in ranked_list.render([qid], chunk, ctx, opts, columns, source):
                con.execute(stmt)
            cols, rows, extras, has_norm = _per_rank(con, ctes, decl, params, ctx.order != "trec_eval", ctx.judged_only)
            per_rank.update(rows)
            totals.update(_totals(con, ctes, decl.relation, decl.running, has_norm, params))
            raw.update(
                ((r, t), v)
                for r, t, v in con.execute(
                    f"SELECT run_id, topic, any_value(value) FROM ({body}) b WHERE qrels_id = $q AND {_IN_RUNS} "
                    f"AND {_IN_TOPICS} GROUP BY run_id, topic",
                    params,
                ).fetchall()
            )
            if decl.ideal and not ideal_cols:
                ideal_cols, ideal = _ideal(con, ctes, decl.ideal, params)
            R.update(
                ((r, t), n)
                for r, t, n in con.execute(
                    f"SELECT run_id, topic, R FROM rl_topics WHERE qrels_id = $q AND {_IN_RUNS} AND {_IN_TOPICS}",
                    params,
                ).fetchall()
            )
        finally:
            ranked_list.drop(con)
    out = {}
    for run, t in wanted:
        key = (rids[run], t)
        total, norm = totals.get(key, (None, None))
        ex = Explanation(
            metric=inst.display,
            stored_as=result.stored_names[inst.display],
            qrels=qrels,
            run=run,
            topic=t,
            convention=convention,
            order=ctx.order,
            depth=options.depth_value if options.depth_value < NO_DEPTH else None,
            sql="sql/" + inst.spec.sql.replace("#", " -- @metric "),
            relation=decl.relation,
            running_kind=decl.running,
            doc=inst.spec.doc,
            columns=cols,
            rows=per_rank.get(key, []),
            extras=extras,
            value=evaluated[(run, t)],
            total=total,
            norm=norm,
            ideal_columns=ideal_cols,
            ideal_rows=ideal.get(t, []),
            cutoff=inst.cutoff,
            R=None if (n_rel := R.get(key)) is None else int(n_rel),
        )
        _check(ex, inst, options, raw.get(key))
        out[(run, t)] = ex
    return out


def compare_conventions(
    store: StoreHandle,
    metric: str,
    qrels: str,
    run: str,
    topic: str,
    *,
    complete: bool = False,
    depth: int | None = None,
    conventions: Sequence[str] = CONVENTIONS,
) -> dict[str, Explanation | str]:
    """``{convention: explanation}`` of the same case under each convention; a convention that does
    not evaluate the topic (ntcireval drops topics without relevant documents) maps to why not."""
    out: dict[str, Explanation | str] = {}
    for conv in conventions:
        try:
            out[conv] = explain(store, metric, qrels, run, topic, convention=conv, complete=complete, depth=depth)
        except MetricError as e:
            if "is not evaluated" not in str(e):
                raise
            out[conv] = str(e)
    return out


# ---------------------------------------------------------------------------------------------
def _one_instance(metric: str) -> MetricInstance:
    insts = engine.resolve_metrics([metric])
    if len(insts) != 1:
        raise MetricError(f"{metric!r} names {len(insts)} metrics ({', '.join(i.display for i in insts)}); explain one")
    return insts[0]


#: Run rows explained per pass (a pass builds the ranked list of its runs; bounded memory).
CHUNK_ROWS = 200_000


def _chunks(con: Any, run_ids: list[int], topics: list[str]) -> list[list[int]]:
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


def _rank_source(run_ids: Sequence[int], topics: Sequence[str], order: str) -> str:
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


_IN_TOPICS = "topic IN (SELECT unnest($t::VARCHAR[]))"
_IN_RUNS = "run_id IN (SELECT unnest($r::INTEGER[]))"


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


def _not_evaluated(store: StoreHandle, qid: int, rid: int, qrels: str, run: str, topic: str, options: Options) -> str:
    con = store.con
    judged = con.execute(
        "SELECT count(*), count(*) FILTER (WHERE grade >= 1) FROM qrels_data WHERE qrels_id = ? AND topic = ?",
        [qid, topic],
    ).fetchall()[0]
    retrieved = con.execute("SELECT count(*) FROM run_row_data WHERE run_id = ? AND topic = ?", [rid, topic]).fetchall()
    why = []
    if not judged[0]:
        why.append(f"qrels {qrels!r} judge no document of it")
    elif options.convention == "ntcireval" and not judged[1]:
        why.append("it has no relevant document, and the ntcireval convention drops such topics")
    if not retrieved[0][0] and not options.complete:
        why.append(f"run {run!r} retrieves nothing for it (--complete scores such a topic 0)")
    return f"topic {topic!r} is not evaluated: " + ("; ".join(why) or "no score for it")


def _check(ex: Explanation, inst: MetricInstance, options: Options, raw: float | None) -> None:
    """The block's value, the last running value and eval's value agree (see the module docstring)."""
    missing = inst.spec.missing
    block_value = raw if raw is not None else missing
    last = ex.rows[-1][-1] if ex.rows else None
    problems = []
    if raw is not None and last is not None and float(last) != float(raw):
        problems.append(f"the last running value {last!r} is not the block's value {raw!r}")
    ref = engine.provider_conventions(inst, options)
    if ref is not None and ref.digits is not None:
        # gdeval prints 5 decimals: eval rounds the block's value (half to even)
        ex.rounded = ref.digits
        ex.notes.append(f"{ref.name} prints {ref.digits} decimals: eval's value is the block's value rounded")
        close = block_value is not None and ex.value is not None
        if not close or abs(float(block_value) - float(ex.value)) > 0.5 * 10.0**-ref.digits * (1 + 1e-9):  # type: ignore[arg-type]
            problems.append(f"eval computes {ex.value!r}, the block over this ranked list {block_value!r}")
    elif not _same(block_value, ex.value):
        problems.append(f"eval computes {ex.value!r}, the block over this ranked list {block_value!r}")
    if problems:
        raise MetricError(
            f"internal: explaining {ex.metric} of {ex.run} on topic {ex.topic}: " + "; ".join(problems)
            + " (please report this)"
        )  # fmt: skip


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return float(a) == float(b) or (a != a and b != b)
