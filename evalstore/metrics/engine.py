"""The SQL metric engine: many metrics for many runs and qrels sets, in bulk, in DuckDB.

:func:`compute` groups the requested metric instances by evaluation :class:`Context` (``rel``,
``judged_only``, ``gains``), builds the ranked judged list once per context for all runs and
qrels sets at once (:mod:`.ranked_list`), then runs the metrics' SQL blocks over it in ``UNION ALL``
statements of :data:`BLOCKS_PER_STATEMENT` blocks into an output table that the evaluation's context owns
(:class:`evalstore.evaluation.context.EvaluationContext`, which also plans the evaluation once with
:func:`plan_pairs`). Storing and shaping the result is :mod:`evalstore.evaluation.stored`'s job.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import duckdb

from ..base.arguments import metric_names
from ..db.query import arrow_table
from ..errors import MetricError, is_resource_error
from . import answer_lists, registry, sqlfile
from .gains import check_gains, top_grade
from .names import GAIN_IS_GRADE, canonical, resolved, short
from .options import CONVENTION_ORDER, NO_DEPTH, EvalOptions
from .ranked_list import OPTIONAL_RELATIONS, Context, build
from .references import REFERENCES, Reference
from .registry import MetricInstance
from .user.definition import inline_sql
from .user.relations import UNDERLYING
from .user.sandbox import scores


class Progress(Protocol):
    def advance(self, n: int = 1) -> None: ...


def resolve_metrics(metrics: Sequence[str] | str) -> list[MetricInstance]:
    """Metric instances from names (a trec_eval name with several cutoffs gives several)."""
    out: list[MetricInstance] = []
    for m in metric_names(metrics):
        out.extend(registry.parse_metric(m))
    if not out:
        raise MetricError("no metric given; e.g. -m AP -m nDCG@10")
    return out


def effective_context(
    inst: MetricInstance, declared: tuple[float, ...] | None, options: EvalOptions | None = None
) -> Context:
    """The context an instance is computed in against a qrels set with ``declared`` gains: a
    metric that takes gains but was given none uses the declared ones; metrics without gains
    share the context of any gains. The order of the run's documents is the convention's; under
    ``ir_measures``, that of the metric's provider."""
    ctx = inst.context()
    if inst.spec.kind != "judgments":  # a judged list of answers: no relevance, gains or order
        return Context(kind=inst.spec.kind)
    gains = ctx.gains
    if inst.spec.param("gains") is None:
        gains = None
    elif gains is None and declared is not None:
        gains = declared
    ref = provider_conventions(inst, options)
    order = ref.order if ref is not None else CONVENTION_ORDER[options.convention if options else "trec_eval"]
    return Context(ctx.rel, ctx.judged_only, gains, order)


def provider_conventions(inst: MetricInstance, options: EvalOptions | None) -> Reference | None:
    """The ir_measures provider whose conventions (tie order, rounding, padding) ``inst`` follows:
    under the ir_measures convention, the metric's provider; otherwise None."""
    if options is not None and options.convention == "ir_measures" and inst.provider is not None:
        return REFERENCES[inst.provider]
    return None


@dataclass(frozen=True)
class StoredName:
    """How the scores of one requested metric on one qrels set are stored."""

    metric: str  # the short canonical name (scores.metric)
    key: str  # the full identity within one evaluation: every parameter resolved, and the options
    aggregate: str
    params: dict[str, Any]  # every parameter resolved (evaluations.params)


def stored_name(
    inst: MetricInstance, ctx: Context, options: EvalOptions, declared: tuple[float, ...] | None
) -> StoredName:
    """The name, key and resolved parameters of ``inst`` computed in ``ctx`` against a qrels set
    with ``declared`` gains (see :mod:`.names`)."""
    params = dict(inst.params)
    full = dict(params)
    if "gains" in full and full["gains"] is None:
        full["gains"] = ctx.gains if ctx.gains is not None else GAIN_IS_GRADE
    return StoredName(
        metric=short(inst.spec, params, inst.cutoff, options.canonical_extra(), declared),
        key=canonical(inst.spec.name, full, inst.cutoff, options.canonical_extra()),
        aggregate=inst.spec.aggregate,
        params=resolved(inst.spec, params, inst.cutoff, options.as_dict(), ctx.gains),
    )


def placeholder_values(inst: MetricInstance, options: EvalOptions, gmax: float | None = None) -> dict[str, str]:
    """The SQL literals of a block's ``${placeholders}``: the metric's parameters and the engine's
    values (:data:`~evalstore.metrics.sqlfile.ENGINE_VALUES`)."""
    values = {k: sqlfile.literal(v) for k, v in inst.params}
    values["k"] = str(inst.cutoff if inst.cutoff is not None else NO_DEPTH)
    values["has_cutoff"] = "TRUE" if inst.cutoff is not None else "FALSE"
    values["depth"] = str(options.depth_value)
    values["gmax"] = sqlfile.literal(gmax)
    values["convention"] = sqlfile.literal(options.convention)
    return values


def metric_sql(inst: MetricInstance, options: EvalOptions, gmax: float | None = None) -> str:
    """The rendered SQL block of one instance: ``SELECT qrels_id, run_id, topic, value ...``."""
    if inst.spec.user is not None:  # a measure of one's own, inline (Spark; the engine runs it sandboxed)
        return inline_sql(inst.spec.user, placeholder_values(inst, options, gmax))
    filename, _, block = inst.spec.sql.partition("#")
    f = sqlfile.load(filename)
    values = placeholder_values(inst, options, gmax)
    try:
        return f.render(block, values)
    except KeyError as e:
        raise MetricError(f"internal: SQL block {inst.spec.sql} uses undefined placeholder {e}") from None


def value_sql(inst: MetricInstance, options: EvalOptions) -> str:
    """The value of an evaluated topic ``t`` (a row of ``rl_topics``) from its block's row ``m``:
    the metric's missing value where the block has no row, ir_measures' padding of a topic the run
    lacks, the provider's rounding."""
    missing = "NULL" if inst.spec.missing is None else repr(float(inst.spec.missing))
    value = f"coalesce(m.value::DOUBLE, {missing})"
    ref = provider_conventions(inst, options)
    if options.convention == "ir_measures":
        # ir_measures does not compute a topic the run lacks: it pads it with 0 (NumRel too)
        pads = ref is None or ref.pads
        value = f"CASE WHEN t.in_run THEN {value} ELSE {'0.0' if pads else 'NULL'} END"
    if ref is not None and ref.digits is not None:
        value = f"round_even({value}, {ref.digits})"  # printf rounds half to even
    return value


#: what each kind of judged set holds and what to ingest, for messages
KIND_TEXT = {
    "judgments": ("relevance judgments", "ranked lists against relevance judgments (evalstore ingest qrels)"),
    "nuggets": ("nugget assignments", "answers against nugget assignments (evalstore ingest assignments)"),
    "support": ("citation support labels", "answers' citations against support labels (evalstore ingest support)"),
}


def check_kinds(
    con: duckdb.DuckDBPyConnection,
    qrels_ids: Sequence[int],
    instances: Sequence[MetricInstance],
    qrels_names: Mapping[int, str] | None = None,
) -> None:
    """Every metric reads the kind of judged set it is evaluated against: a ranked-list metric
    relevance judgments, a nugget metric nugget assignments, a support metric support labels
    (``qrels_meta.kind``); MetricError otherwise, before any work."""
    if not qrels_ids or not instances:
        return
    kinds = dict(
        con.execute(
            "SELECT qrels_id, kind FROM qrels_meta WHERE qrels_id IN (SELECT unnest(?::INTEGER[]))", [list(qrels_ids)]
        ).fetchall()
    )
    for qid in qrels_ids:
        kind = kinds.get(qid) or "judgments"
        wrong = [i.display for i in instances if i.spec.kind != kind]
        if wrong:
            other = instances[[i.display for i in instances].index(wrong[0])].spec.kind
            name = (qrels_names or {}).get(qid, str(qid))
            verb = "evaluates" if len(wrong) == 1 else "evaluate"
            raise MetricError(
                f"{', '.join(wrong)} {verb} {KIND_TEXT[other][1]}, but {name!r} holds {KIND_TEXT[kind][0]}: name a "
                f"set of {KIND_TEXT[other][0]} with --qrels (evalstore list qrels shows each set's kind)"
            )


@dataclass
class _Unit:
    """One evaluation pass: a context, the qrels sets that share it, the metric instances."""

    context: Context
    qrels_ids: list[int] = field(default_factory=list)
    instances: list[MetricInstance] = field(default_factory=list)


def plan_pairs(
    qrels_ids: Sequence[int],
    instances: Sequence[MetricInstance],
    options: EvalOptions,
    declared_gains: Mapping[int, tuple[float, ...] | None],
) -> dict[tuple[int, str], tuple[Context, StoredName]]:
    """``{(qrels_id, display name): (context, stored name)}``: where each metric is computed on each
    qrels set, and the name its scores are stored under (the plan of an evaluation)."""
    out: dict[tuple[int, str], tuple[Context, StoredName]] = {}
    for qid in qrels_ids:
        for inst in instances:
            ctx = effective_context(inst, declared_gains.get(qid), options)
            out[(qid, inst.display)] = (ctx, stored_name(inst, ctx, options, declared_gains.get(qid)))
    return out


def group_units(
    pairs: Mapping[tuple[int, str], tuple[Context, StoredName]],
    qrels_ids: Sequence[int],
    instances: Sequence[MetricInstance],
) -> list[_Unit]:
    """The passes (one per context) over ``qrels_ids`` x ``instances`` of a plan (:func:`plan_pairs`)."""
    units: dict[Context, _Unit] = {}
    for qid in qrels_ids:
        for inst in instances:
            ctx = pairs[(qid, inst.display)][0]
            unit = units.setdefault(ctx, _Unit(ctx))
            if qid not in unit.qrels_ids:
                unit.qrels_ids.append(qid)
            if inst not in unit.instances:
                unit.instances.append(inst)
    return list(units.values())


def plan(
    qrels_ids: Sequence[int],
    instances: Sequence[MetricInstance],
    options: EvalOptions,
    declared_gains: Mapping[int, tuple[float, ...] | None],
) -> tuple[list[_Unit], dict[tuple[int, str], StoredName]]:
    """The passes (one per context) and ``{(qrels_id, display name): stored name}``."""
    pairs = plan_pairs(qrels_ids, instances, options, declared_gains)
    return group_units(pairs, qrels_ids, instances), {k: n for k, (_, n) in pairs.items()}


@dataclass(frozen=True)
class UnitSQL:
    """The metric SQL of one pass: the options it runs with, the optional ranked-list columns and
    relations it reads, and one ``SELECT qrels_id, run_id, topic, key, value`` per distinct metric key."""

    options: EvalOptions
    columns: frozenset[str]
    selects: tuple[str, ...]
    reads: frozenset[str] = frozenset()  # the ranked-list relations the blocks read
    #: measures of one's own and their keys, run apart in a sandbox (:mod:`evalstore.metrics.user.sandbox`)
    user: tuple[tuple[MetricInstance, str], ...] = ()

    @property
    def union(self) -> str:
        return "\nUNION ALL\n".join(self.selects)

    def chunks(self, size: int | None = None) -> list[str]:
        """The selects as ``UNION ALL`` statements of at most ``size`` (:data:`BLOCKS_PER_STATEMENT`) each."""
        n = size or BLOCKS_PER_STATEMENT
        return ["\nUNION ALL\n".join(self.selects[i : i + n]) for i in range(0, len(self.selects), n)]


#: Metric blocks per statement of the store's evaluation. DuckDB builds every hash table (joins,
#: aggregates) of the branches of one UNION ALL before it probes any, so they are all in memory at
#: once, and each holds a few MB whatever its size (partitions per thread): every metric at once
#: (77 blocks, 8 runs x 40 topics x 1,000 docs, 2 threads) held ~400 MB of hash tables and failed
#: to pin a block under the default 488 MiB budget. 16 blocks hold ~100 MB; the ranked list's
#: tables are read once per statement (a few ms each).
BLOCKS_PER_STATEMENT = 16


def unit_sql(unit: _Unit, options: EvalOptions, gmax: float | None, *, inline_user: bool = False) -> UnitSQL:
    """The SQL of one pass over the ranked list (``gmax``: the top gain or grade, for metrics that
    normalise by it). Every (qrels, run, topic) of ``rl_topics`` gets a value: a metric's missing
    value where its block has no row. Measures of one's own are left to the sandbox (``user``),
    except with ``inline_user`` (Spark) where SQL ones are selects as the built-ins are."""
    ctx = unit.context
    # The parent's dropped documents (pool rows of a subsample) only matter to metrics that
    # read pooled-but-unjudged rows (infAP); every other metric treats them as unjudged, so
    # they are added only when such a metric is in the unit.
    opts = options.with_pool(options.pool and any(i.spec.needs_pool for i in unit.instances))
    bodies: dict[str, tuple[MetricInstance, str]] = {}
    user: dict[str, MetricInstance] = {}
    for inst in unit.instances:
        key = stored_name(inst, ctx, options, None).key
        if key in bodies or key in user:
            continue
        if inst.spec.user is not None and not (inline_user and inst.spec.user.language == "sql"):
            user[key] = inst
        else:
            bodies[key] = (inst, metric_sql(inst, opts, gmax))
    needs = frozenset().union(*(i.spec.block.needs for i in [*(i for i, _ in bodies.values()), *user.values()]))
    selects = []
    for key, (inst, body) in bodies.items():
        selects.append(
            f"SELECT t.qrels_id, t.run_id, t.topic, {sqlfile.literal(key)} AS key, {value_sql(inst, options)} AS value "
            f"FROM rl_topics t LEFT JOIN ({body}) m USING (qrels_id, run_id, topic)"
        )
    reads = frozenset().union(*(i.spec.block.reads for i in [*(i for i, _ in bodies.values()), *user.values()]))
    reads = frozenset().union(*(UNDERLYING.get(r, {r}) for r in reads))
    optional = reads & frozenset(OPTIONAL_RELATIONS)  # e.g. rl_subtopics: built only when read
    columns = (needs & frozenset(sqlfile.RUNNING_COLUMNS)) | optional
    return UnitSQL(opts, columns, tuple(selects), reads, tuple((i, k) for k, i in user.items()))


def compute(
    con: duckdb.DuckDBPyConnection,
    units: Sequence[_Unit],
    run_ids: Sequence[int],
    options: EvalOptions,
    output: str,
    *,
    qrels_names: Mapping[int, str] | None = None,
    progress: Progress | None = None,
    rank_source: str | None = None,
) -> None:
    """Compute every unit's instances for its qrels sets and ``run_ids`` into the table ``output
    (qrels_id, run_id, topic, key, value)``: per unit, the ranked list is built
    (:func:`evalstore.metrics.ranked_list.build`) and the metric blocks run a few per statement
    (:data:`BLOCKS_PER_STATEMENT`: a bounded number of hash tables in memory at once).
    ``rank_source``: the runs' rows when they are not stored runs (see ``build``)."""
    for unit in units:
        ctx = unit.context
        if ctx.kind == "judgments":
            check_gains(con, unit.qrels_ids, ctx.gains, qrels_names or {})
            gmax = max(ctx.gains) if ctx.gains else top_grade(con, unit.qrels_ids)
            sql = unit_sql(unit, options, gmax)
            build(con, unit.qrels_ids, run_ids, ctx, sql.options, columns=sql.columns, rank_source=rank_source)
        else:
            if rank_source is not None:
                raise MetricError(f"{ctx.kind} metrics evaluate stored answers, not candidate runs")
            sql = unit_sql(unit, options, None)
            answer_lists.build(con, ctx.kind, unit.qrels_ids, run_ids, options.complete)
        try:
            for chunk in sql.chunks():
                con.execute(f"INSERT INTO {output} " + chunk)
            if sql.user:
                _user_scores(con, sql, options, gmax, output)
        except duckdb.Error as e:
            if is_resource_error(e):
                raise
            failed = ", ".join(i.display for i in unit.instances)
            raise MetricError(f"computing {failed} failed in DuckDB: {e}") from None
        if progress is not None:
            progress.advance(len(unit.instances) * len(unit.qrels_ids))


def _user_scores(con: duckdb.DuckDBPyConnection, sql: UnitSQL, options: EvalOptions, gmax: float, output: str) -> None:
    """The measures of one's own of a pass, run in their sandbox over the ranked list built on ``con``."""
    table = scores(
        sql.user,
        options,
        lambda q: arrow_table(con, q),
        lambda inst: placeholder_values(inst, sql.options, gmax),
        value_sql,
    )
    con.register("_user_scores", table)
    try:
        con.execute(f"INSERT INTO {output} SELECT qrels_id, run_id, topic, key, value FROM _user_scores")
    finally:
        con.unregister("_user_scores")
