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
the run's documents, its depth and its value. The queries are in :mod:`evalstore.metrics.explain_sql`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..errors import MetricError
from ..evaluation.stored import evaluate_runs
from ..metrics import engine, ranked_list, sqlfile
from ..metrics.explain_sql import Found, chunks, query
from ..metrics.gains import check_gains, declared_gains, top_grade
from ..metrics.options import CONVENTIONS, NO_DEPTH, EvalOptions
from ..metrics.ranked_list import Context
from ..metrics.registry import MetricInstance, all_metrics
from ..metrics.user import relations as own_relations
from ..results.eval_result import EvalResult

if TYPE_CHECKING:
    from ..db.handle import StoreHandle
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
    query: str | None = None  # the topic's query text (the store's topic sets), if any
    #: the judged list explained: 'judgments' (a ranked list), 'nuggets' (an answer's assigned
    #: nuggets) or 'support' (an answer's sentences and citations)
    kind: str = "judgments"

    def column(self, name: str) -> list[Any]:
        i = self.columns.index(name)
        return [r[i] for r in self.rows]

    def records(self) -> list[dict[str, Any]]:
        return [dict(zip(self.columns, r)) for r in self.rows]

    def ideal_records(self) -> list[dict[str, Any]]:
        return [dict(zip(self.ideal_columns, r)) for r in self.ideal_rows]

    def last_contributing(self) -> int:
        """How many rows reach the last row with a nonzero contribution (0 when none has one, or for a
        measure of one's own, whose terms are its own)."""
        if "contribution" not in self.columns:
            return 0
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
    options: EvalOptions = EvalOptions(),
) -> Explanation:
    """Explain ``metric`` of ``run`` on ``topic`` against ``qrels`` (see the module docstring).
    The options are those of ``eval`` (:mod:`evalstore.evaluation.stored`)."""
    return explain_topics(store, metric, qrels, run, [str(topic)], options=options)[str(topic)]


def explain_topics(
    store: StoreHandle,
    metric: str,
    qrels: str,
    run: str,
    topics: Sequence[str] | None = None,
    *,
    options: EvalOptions = EvalOptions(),
) -> dict[str, Explanation]:
    """:func:`explain` for several topics of one run (every evaluated topic when ``topics`` is
    None): ``{topic: explanation}``."""
    found = explain_runs(store, metric, qrels, [run], topics, options=options)
    return {t: ex for (_, t), ex in found.items()}


def explain_runs(
    store: StoreHandle,
    metric: str,
    qrels: str,
    runs: Sequence[str] | None = None,
    topics: Sequence[str] | None = None,
    *,
    options: EvalOptions = EvalOptions(),
) -> dict[tuple[str, str], Explanation]:
    """:func:`explain` for several runs (all when None) and topics (every evaluated topic when
    None) at once: one evaluation, then passes of at most :data:`~evalstore.metrics.explain_sql.CHUNK_ROWS`
    run rows (one ranked list and one query per relation each). ``{(run, topic): explanation}``,
    by run as given and topic in byte order (or as given)."""
    if _one_instance(metric).spec.user is not None:
        return _own(store, metric, qrels, runs, topics, options)
    case = _case(store, metric, qrels, runs, topics, options)
    found = Found()
    topic_list = list(dict.fromkeys(t for _, t in case.wanted))
    body = engine.metric_sql(case.inst, case.options, case.gmax)
    run_ids = list(dict.fromkeys(case.run_ids[r] for r, _ in case.wanted))
    for group in chunks(store.con, run_ids, topic_list):
        query(store.con, found, case.qrels_id, group, topic_list, case.ctx, case.options, case.columns, body, case.decl)
    out = {}
    for run, t in case.wanted:
        ex = _explanation(case, found, qrels, run, t)
        _check(ex, case.inst, case.options, found.block_values.get((case.run_ids[run], t)))
        out[(run, t)] = ex
    return out


@dataclass
class _Case:
    """What an explanation needs before its queries: the metric, its block's declaration, the
    options the block runs with, eval's values and the (run, topic) pairs wanted."""

    inst: MetricInstance
    decl: sqlfile.Explain
    options: EvalOptions  # as the engine runs the block (pool only for metrics that read it)
    qrels_id: int
    run_ids: dict[str, int]
    evaluated: dict[tuple[str, str], float]
    stored_as: str
    wanted: list[tuple[str, str]]
    ctx: Context
    gmax: float
    columns: frozenset[str]
    queries: dict[str, str]


def _case(
    store: StoreHandle,
    metric: str,
    qrels: str,
    runs: Sequence[str] | None,
    topics: Sequence[str] | None,
    options: EvalOptions,
) -> _Case:
    inst = _one_instance(metric)
    decl = inst.spec.block.explanation
    if decl is None:
        raise MetricError(
            f"{inst.display}: its SQL block (sql/{inst.spec.sql.replace('#', ' -- @metric ')}) has no per-rank "
            f"relation to show; explain works for {', '.join(explainable())}"
        )
    qid, rids, result, evaluated, wanted = _evaluated(store, inst, qrels, runs, topics, options)
    con = store.con
    ctx = engine.effective_context(inst, declared_gains(con, [qid])[qid], options)
    check_gains(con, [qid], ctx.gains, {qid: qrels})
    block = inst.spec.block
    return _Case(
        inst=inst,
        decl=decl,
        options=options.with_pool(options.pool and inst.spec.needs_pool),
        qrels_id=qid,
        run_ids=rids,
        evaluated=evaluated,
        stored_as=result.stored_names[inst.display],
        wanted=wanted,
        ctx=ctx,
        gmax=max(ctx.gains) if ctx.gains else top_grade(con, [qid]),
        columns=(block.needs & frozenset(sqlfile.RUNNING_COLUMNS))
        | (block.reads & frozenset(ranked_list.OPTIONAL_RELATIONS)),
        queries=result.queries,
    )


def _evaluated(
    store: StoreHandle,
    inst: MetricInstance,
    qrels: str,
    runs: Sequence[str] | None,
    topics: Sequence[str] | None,
    options: EvalOptions,
) -> tuple[int, dict[str, int], EvalResult, dict[tuple[str, str], float], list[tuple[str, str]]]:
    """What eval computes for the runs (the one evaluation path, storing nothing), and the (run,
    topic) pairs wanted (every evaluated one when ``topics`` is None; a topic not evaluated is an
    error saying why): ``(qrels_id, run ids, result, values, wanted)``."""
    qid = store.qrels_id(qrels)
    names = list(dict.fromkeys(runs)) if runs is not None else store.run_names()
    rids = {r: store.run_id(r) for r in names}
    result = evaluate_runs(store, qrels, names, [inst.display], options=options, save=False, progress=False)
    evaluated = {(r, t): v for r, t, m, v in result.per_topic if m == inst.display}
    wanted = list(evaluated) if topics is None else [(r, str(t)) for r in names for t in dict.fromkeys(topics)]
    for r, t in wanted:
        if (r, t) not in evaluated:
            raise MetricError(_not_evaluated(store, qid, rids[r], qrels, r, t, options))
    return qid, rids, result, evaluated, wanted


def _explanation(case: _Case, found: Found, qrels: str, run: str, topic: str) -> Explanation:
    key = (case.run_ids[run], topic)
    total, norm = found.totals.get(key, (None, None))
    n_rel = found.R.get(key)
    depth = case.options.depth_value
    return Explanation(
        metric=case.inst.display,
        stored_as=case.stored_as,
        qrels=qrels,
        run=run,
        topic=topic,
        convention=case.options.convention,
        order=case.ctx.order,
        depth=depth if depth < NO_DEPTH else None,
        sql="sql/" + case.inst.spec.sql.replace("#", " -- @metric "),
        relation=case.decl.relation,
        running_kind=case.decl.running,
        doc=case.inst.spec.doc,
        columns=found.columns,
        rows=found.rows.get(key, []),
        extras=found.extras,
        value=case.evaluated[(run, topic)],
        total=total,
        norm=norm,
        ideal_columns=found.ideal_columns,
        ideal_rows=found.ideal.get(topic, []),
        cutoff=case.inst.cutoff,
        query=case.queries.get(topic),
        R=None if n_rel is None else int(n_rel),
        kind=case.ctx.kind,
    )


def compare_conventions(
    store: StoreHandle,
    metric: str,
    qrels: str,
    run: str,
    topic: str,
    *,
    options: EvalOptions = EvalOptions(),
    conventions: Sequence[str] = CONVENTIONS,
) -> dict[str, Explanation | str]:
    """``{convention: explanation}`` of the same case under each convention (``options``' other
    fields apply to every one); a convention that does not evaluate the topic (ntcireval drops topics
    without relevant documents) maps to why not."""
    out: dict[str, Explanation | str] = {}
    for conv in conventions:
        try:
            out[conv] = explain(store, metric, qrels, run, topic, options=replace(options, convention=conv))
        except MetricError as e:
            if "is not evaluated" not in str(e):
                raise
            out[conv] = str(e)
    return out


_OWN_NOTE = "a measure of one's own runs apart (sandboxed): shown is the ranked list it reads, and eval's value"


def _own(
    store: StoreHandle,
    metric: str,
    qrels: str,
    runs: Sequence[str] | None,
    topics: Sequence[str] | None,
    options: EvalOptions,
) -> dict[tuple[str, str], Explanation]:
    """A measure of one's own: its definition runs sandboxed (:mod:`evalstore.metrics.user`), so
    the explanation is what it reads, ``ranked`` for the run and topic as eval builds it, and
    eval's value."""
    inst = _one_instance(metric)
    own = inst.spec.user
    assert own is not None
    qid, rids, result, evaluated, wanted = _evaluated(store, inst, qrels, runs, topics, options)
    con = store.con
    ctx = engine.effective_context(inst, declared_gains(con, [qid])[qid], options)
    rows: dict[tuple[int, str], list[tuple[Any, ...]]] = {}
    try:
        ranked_list.build(con, [qid], list(rids.values()), ctx, options, columns=frozenset())
        for rid, topic, rank, doc, score, grade in con.execute(
            f"SELECT run, topic, rank, doc, score, grade FROM ({own_relations.query('ranked')}) "
            "WHERE topic IN (SELECT unnest($t::VARCHAR[])) ORDER BY run, topic, rank",
            {"t": [t for _, t in wanted]},
        ).fetchall():
            rows.setdefault((rid, topic), []).append((rank, doc, score, grade))
    finally:
        ranked_list.drop(con)
    depth = options.depth_value
    where = f"{own.language} measure {own.name} ({own.source}; `evalstore measure list` shows a stored definition)"
    return {
        (r, t): Explanation(
            metric=inst.display,
            stored_as=result.stored_names[inst.display],
            qrels=qrels,
            run=r,
            topic=t,
            convention=options.convention,
            order=ctx.order,
            depth=depth if depth < NO_DEPTH else None,
            sql=where,
            relation="ranked",
            running_kind="sum",
            doc=inst.spec.doc,
            columns=["rank", "doc", "score", "grade"],
            rows=rows.get((rids[r], t), []),
            extras=[],
            value=evaluated[(r, t)],
            total=None,
            norm=None,
            cutoff=inst.cutoff,
            notes=[
                "a measure of one's own runs apart (sandboxed): shown is the ranked list it reads, and eval's value"
            ],
        )  # fmt: skip
        for r, t in wanted
    }


# ---------------------------------------------------------------------------------------------
def _one_instance(metric: str) -> MetricInstance:
    insts = engine.resolve_metrics([metric])
    if len(insts) != 1:
        raise MetricError(f"{metric!r} names {len(insts)} metrics ({', '.join(i.display for i in insts)}); explain one")
    return insts[0]


def _not_evaluated(
    store: StoreHandle, qid: int, rid: int, qrels: str, run: str, topic: str, options: EvalOptions
) -> str:
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
    close = "" if judged[0] or retrieved[0][0] else _closest_topics(store, qid, topic)
    return f"topic {topic!r} is not evaluated: " + ("; ".join(why) or "no score for it") + close


def _closest_topics(store: StoreHandle, qid: int, topic: str) -> str:
    """ " (did you mean ...?)" with the qrels set's topics closest to ``topic``, if any is close."""
    import difflib

    topics = [
        t for (t,) in store.con.execute("SELECT DISTINCT topic FROM qrels_data WHERE qrels_id = ?", [qid]).fetchall()
    ]
    close = difflib.get_close_matches(topic, topics, n=3, cutoff=0.6)
    return f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""


def _check(ex: Explanation, inst: MetricInstance, options: EvalOptions, raw: float | None) -> None:
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
            f"internal: explaining {ex.metric} of {ex.run} on topic {ex.topic}: "
            + "; ".join(problems)
            + " (please report this)"
        )


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return float(a) == float(b) or (a != a and b != b)
