"""The SQL metric engine: bulk evaluation of many metrics for many runs in DuckDB.

For each evaluation context (a combination of ``rel``, ``judged_only`` and ``gains``) the engine
builds the ranked judged list once (``sql/ranked_list.sql``), for all requested runs, then runs
every requested metric's SQL block over it in one UNION ALL statement. Scores are stored in
``score_data`` (view ``scores``) under the canonical metric name; evaluating the same thing again
replaces the earlier rows instead of duplicating them.

Evaluation options (apply to all metrics of a call):

* ``convention``: ``'trec_eval'`` (default) or ``'ntcireval'``.

  ============================  =================================  ==================================
  what                          trec_eval                          ntcireval
  ============================  =================================  ==================================
  order of a run's documents    score desc, ties docno desc        file order (res files, TREC lines)
  topics with no relevant doc   scored 0 and averaged in           dropped (NTCIREVAL prints nothing)
  truncation                    none (``depth=``, trec_eval -M)     top 1000 (``depth=``, -truncate)
  ERR's g_max                   top declared gain (same)           top declared gain
  ============================  =================================  ==================================

* ``complete`` (trec_eval ``-c``): topics of the qrels missing from a run score 0 and enter the
  mean. Default False: only topics both in the qrels and in the run are evaluated (trec_eval 9,
  pytrec_eval and ir_measures; trec_eval 10 refuses such runs without -c).
* ``depth``: evaluate only the top ``depth`` documents of each topic (trec_eval ``-M``).
"""

from __future__ import annotations

import math
import re
import string
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import MetricError
from ..resources import read_sql
from ..version import __version__ as ENGINE_VERSION
from . import registry
from .registry import MetricInstance

CONVENTIONS = ("trec_eval", "ntcireval")
NTCIREVAL_DEFAULT_DEPTH = 1000
_NO_DEPTH = 2_000_000_000
_BLOCK_RE = re.compile(r"^--\s*@(metric|fragment)\s+(\S+)\s*$", re.M)


# --------------------------------------------------------------------------- SQL blocks
_blocks_cache: dict[str, tuple[dict[str, str], dict[str, str]]] = {}


def sql_blocks(filename: str) -> dict[str, str]:
    """The ``-- @metric NAME`` blocks of a family SQL file."""
    return _parse_sql_file(filename)[0]


def sql_fragments(filename: str) -> dict[str, str]:
    """The ``-- @fragment NAME`` blocks of a family SQL file: pieces of SQL (typically CTEs) that
    several metric blocks of the same file share, included as ``${NAME}``."""
    return _parse_sql_file(filename)[1]


def _parse_sql_file(filename: str) -> tuple[dict[str, str], dict[str, str]]:
    if filename not in _blocks_cache:
        parts = _BLOCK_RE.split(read_sql(filename))
        blocks: dict[str, str] = {}
        fragments: dict[str, str] = {}
        for i in range(1, len(parts), 3):
            body = parts[i + 2].strip().rstrip(";").strip()
            (blocks if parts[i] == "metric" else fragments)[parts[i + 1]] = body
        _blocks_cache[filename] = (blocks, fragments)
    return _blocks_cache[filename]


def metric_sql(inst: MetricInstance, options: Options) -> str:
    filename, _, block = inst.spec.sql.partition("#")
    blocks = sql_blocks(filename)
    if block not in blocks:
        raise MetricError(f"internal: SQL block {block!r} missing from sql/{filename}")
    values = {k: sql_literal(v) for k, v in inst.params}
    values["k"] = str(inst.cutoff if inst.cutoff is not None else _NO_DEPTH)
    values["has_cutoff"] = "TRUE" if inst.cutoff is not None else "FALSE"
    values["depth"] = str(options.depth_value)
    values["gmax"] = sql_literal(options.gmax)
    values["convention"] = sql_literal(options.convention)
    try:
        for name, fragment in sql_fragments(filename).items():
            values[name] = string.Template(fragment).substitute(values)
        return string.Template(blocks[block]).substitute(values)
    except KeyError as e:
        raise MetricError(f"internal: SQL block {inst.spec.sql} uses undefined placeholder {e}") from None


def sql_literal(v: Any) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isinf(v):
            return "'inf'::DOUBLE"
        return repr(v) + "::DOUBLE"
    if isinstance(v, (tuple, list)):
        return "[" + ", ".join(sql_literal(x) for x in v) + "]"
    return "'" + str(v).replace("'", "''") + "'"


# --------------------------------------------------------------------------- options
@dataclass
class Options:
    convention: str = "trec_eval"
    complete: bool = False
    depth: int | None = None
    gmax: float | None = None  # set per context: the top declared gain
    pool: bool = True  # subsamples: parent's dropped docs are "pooled, unjudged"

    @property
    def depth_value(self) -> int:
        if self.depth is not None:
            return self.depth
        return NTCIREVAL_DEFAULT_DEPTH if self.convention == "ntcireval" else _NO_DEPTH

    def canonical_extra(self) -> dict[str, Any]:
        """Options that change values, appended to the canonical metric name when not default."""
        extra: dict[str, Any] = {}
        if self.convention != "trec_eval":
            extra["convention"] = self.convention
        if self.complete:
            extra["complete"] = True
        if self.depth is not None:
            extra["depth"] = self.depth
        return extra


def make_options(convention: str = "trec_eval", complete: bool = False, depth: int | None = None) -> Options:
    if convention not in CONVENTIONS:
        raise MetricError(f"unknown convention {convention!r}; use one of {', '.join(CONVENTIONS)}")
    if depth is not None and depth < 1:
        raise MetricError(f"depth must be a positive number of documents, not {depth}")
    return Options(convention=convention, complete=bool(complete), depth=depth)


# --------------------------------------------------------------------------- results
@dataclass
class EvalResult:
    """Per-topic scores and per-run summaries of one evaluation."""

    qrels: str
    metrics: list[str]  # display names, in request order
    canonical: dict[str, str]  # display name -> canonical name
    per_topic: list[tuple[str, str, str, float]] = field(default_factory=list)  # run, topic, metric, value
    means: list[tuple[str, str, float, int]] = field(default_factory=list)  # run, metric, mean, n_topics
    aggregates: dict[str, str] = field(default_factory=dict)

    def mean(self, run: str, metric: str) -> float:
        for r, m, v, _ in self.means:
            if r == run and m == metric:
                return v
        raise KeyError((run, metric))

    def value(self, run: str, topic: str, metric: str) -> float:
        for r, t, m, v in self.per_topic:
            if r == run and t == topic and m == metric:
                return v
        raise KeyError((run, topic, metric))

    def table(self) -> dict[str, dict[str, float]]:
        """``{run: {metric: mean}}``."""
        out: dict[str, dict[str, float]] = {}
        for r, m, v, _ in self.means:
            out.setdefault(r, {})[m] = v
        return out

    def topics(self) -> dict[str, dict[str, dict[str, float]]]:
        """``{run: {topic: {metric: value}}}``."""
        out: dict[str, dict[str, dict[str, float]]] = {}
        for r, t, m, v in self.per_topic:
            out.setdefault(r, {}).setdefault(t, {})[m] = v
        return out


def summarise(values: Sequence[float], aggregate: str) -> float:
    vals = [v for v in values if v is not None]
    if not vals:
        return float("nan")
    if aggregate == "sum":
        return float(sum(vals))
    if aggregate == "gmean":
        return math.exp(sum(math.log(max(v, 1e-5)) for v in vals) / len(vals))
    return sum(vals) / len(vals)


# --------------------------------------------------------------------------- gains
def gain_expr(gains: tuple[float, ...] | None) -> str:
    """SQL mapping a grade to its gain: grade itself for grades > 0 (trec_eval), or the declared
    gain of level g (levels 1..n; level 0 and negative grades have gain 0)."""
    if gains is None:
        return "CASE WHEN grade > 0 THEN grade ELSE 0 END"
    lst = "[" + ", ".join(repr(float(g)) for g in gains) + "]::DOUBLE[]"
    return f"CASE WHEN grade > 0 THEN ({lst})[grade] ELSE 0 END"


def parse_gains(text: str | None) -> tuple[float, ...] | None:
    if not text:
        return None
    return tuple(float(x) for x in text.split(":"))


# --------------------------------------------------------------------------- the engine
def resolve_metrics(metrics: Sequence[str] | str) -> list[MetricInstance]:
    if isinstance(metrics, str):
        metrics = [metrics]
    out: list[MetricInstance] = []
    for m in metrics:
        out.extend(registry.parse(m))
    if not out:
        raise MetricError("no metric given; e.g. -m AP -m nDCG@10")
    return out


# Optional columns of rl_judged: name -> SQL (over ranked k, rl_ideal i, window w). Each costs a
# window aggregate or a join over every judged row, so only those that a metric names are built.
RUNNING_COLUMNS = {
    "cnt": "sum(k.isrel) OVER w",
    "cg": "sum(k.gain) OVER w",
    "jrank": "sum(CASE WHEN k.judged THEN 1 ELSE 0 END) OVER w",
    "cg_ideal": "coalesce(i.cg, t.ideal_total)",
    "gain_ideal": "coalesce(i.gain, 0)",
}


def columns_named(sql_texts: Sequence[str]) -> set[str]:
    """The optional rl_judged columns that some of the given metric SQL texts name."""
    return {c for c in RUNNING_COLUMNS if any(re.search(rf"\b{c}\b", t) for t in sql_texts)}


def build_ranked_list(
    con,
    qrels_ids: Sequence[int],
    run_ids: Sequence[int],
    context: dict[str, Any],
    options: Options,
    columns: set[str] | None = None,
) -> None:
    """(Re)build the rl_* relations of ``sql/ranked_list.sql`` for one evaluation context, for all
    the given qrels sets and runs at once. ``columns``: the optional rl_judged columns to build
    (default: all of :data:`RUNNING_COLUMNS`)."""
    columns = set(RUNNING_COLUMNS) if columns is None else set(columns)
    run_list = ", ".join(str(int(r)) for r in run_ids)
    qrels_list = ", ".join(str(int(q)) for q in qrels_ids)
    if options.convention == "ntcireval":
        con.execute(f"""CREATE OR REPLACE TEMP TABLE rl_file_order AS
            SELECT run_id, topic, doc, row_number() OVER (PARTITION BY run_id, topic ORDER BY line_no) AS rank, score
            FROM run_row_data WHERE run_id IN ({run_list})""")
        rank_source = "SELECT run_id, topic, doc, rank, score FROM rl_file_order"
    else:
        rank_source = f"SELECT run_id, topic, doc, rank, score FROM run_row_data WHERE run_id IN ({run_list})"
    if options.complete:
        pairs = (
            f"SELECT q.qrels_id, r.run_id, q.topic FROM (SELECT unnest([{run_list}]) AS run_id) r "
            f"CROSS JOIN rl_qtopics q"
        )
    else:
        pairs = "SELECT q.qrels_id, r.run_id, r.topic FROM ret r JOIN rl_qtopics q ON q.topic = r.topic"
    values = {
        "qrels_ids": qrels_list,
        "run_ids": run_list,
        "rel": str(int(context["rel"])),
        "gain_expr": gain_expr(context["gains"]),
        "depth": str(options.depth_value),
        "rank_source": rank_source,
        "judged_only": "TRUE" if context["judged_only"] else "FALSE",
        "use_pool": "TRUE" if options.pool else "FALSE",
        "topic_pairs": pairs,
        "topic_filter": "q.R > 0" if options.convention == "ntcireval" else "TRUE",
        "condensed_rank": (
            "row_number() OVER (PARTITION BY qrels_id, run_id, topic ORDER BY orig_rank)"
            if context["judged_only"]
            else "orig_rank"
        ),
        "running_columns": "".join(f",\n       {RUNNING_COLUMNS[c]} AS {c}" for c in RUNNING_COLUMNS if c in columns),
        "ideal_join": (
            "LEFT JOIN rl_ideal i ON i.qrels_id = k.qrels_id AND i.topic = k.topic AND i.rank = k.rank"
            if columns & {"cg_ideal", "gain_ideal"}
            else ""
        ),
        "running_window": (
            "WINDOW w AS (PARTITION BY k.qrels_id, k.run_id, k.topic ORDER BY k.rank ROWS UNBOUNDED PRECEDING)"
            if columns & {"cnt", "cg", "jrank"}
            else ""
        ),
    }
    script = string.Template(read_sql("ranked_list.sql")).substitute(values)
    for stmt in _statements(script):
        con.execute(stmt)


def _statements(script: str) -> list[str]:
    lines = [ln for ln in script.splitlines() if not ln.lstrip().startswith("--")]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]


def _check_gains(con, qrels_ids: Sequence[int], gains: tuple[float, ...] | None, names: dict[int, str]) -> None:
    if gains is None:
        return
    for qid in qrels_ids:
        top = con.execute("SELECT max(grade) FROM qrels_data WHERE qrels_id = ?", [qid]).fetchone()[0]
        if top is not None and top > len(gains):
            raise MetricError(
                f"gains={':'.join(f'{g:g}' for g in gains)} declares {len(gains)} relevance levels but qrels "
                f"{names.get(qid, qid)!r} has grade {top}; give one gain per level 1..{top} (as NTCIREVAL's -g)"
            )


def _top_grade(con, qrels_ids: Sequence[int]) -> float:
    """Highest grade of the qrels sets and of the sets they were subsampled from."""
    ids = ", ".join(str(int(q)) for q in qrels_ids)
    query = f"""SELECT max(grade) FROM qrels_data WHERE qrels_id IN ({ids})
                OR qrels_id IN (SELECT parent_id FROM subsample_meta WHERE qrels_id IN ({ids}))"""
    top = con.execute(query).fetchone()[0]
    return float(top or 1)


@dataclass
class _Unit:
    """One evaluation pass: a context, the qrels sets that share it, the metric instances."""

    context: dict[str, Any]
    qrels_ids: list[int] = field(default_factory=list)
    instances: list[MetricInstance] = field(default_factory=list)


def effective_context(inst: MetricInstance, declared: tuple[float, ...] | None) -> dict[str, Any]:
    ctx = dict(inst.context())
    if inst.spec.param("gains") is not None and ctx["gains"] is None and declared is not None:
        ctx["gains"] = declared
    if inst.spec.param("gains") is None:
        ctx["gains"] = None  # metrics without gains share the context of any gains
    return ctx


def compute(
    con,
    qrels_ids: Sequence[int],
    run_ids: Sequence[int],
    instances: Sequence[MetricInstance],
    options: Options,
    *,
    declared_gains: dict[int, tuple[float, ...] | None] | None = None,
    qrels_names: dict[int, str] | None = None,
    progress=None,
) -> dict[tuple[int, str], str]:
    """Compute every instance for every (qrels set, run) into temp table
    ``_eval_out(qrels_id, run_id, topic, metric, value)`` (metric = canonical name).

    Returns ``{(qrels_id, display name): canonical name}``."""
    declared_gains = declared_gains or {}
    units: dict[tuple, _Unit] = {}
    canon_of: dict[tuple[int, str], str] = {}
    extra = options.canonical_extra()
    for qid in qrels_ids:
        for inst in instances:
            ctx = effective_context(inst, declared_gains.get(qid))
            key = tuple(sorted(ctx.items()))
            unit = units.setdefault(key, _Unit(ctx))
            if qid not in unit.qrels_ids:
                unit.qrels_ids.append(qid)
            if inst not in unit.instances:
                unit.instances.append(inst)
            canon_of[(qid, inst.display)] = _canonical_for(inst, ctx, extra)
    con.execute(
        "CREATE OR REPLACE TEMP TABLE _eval_out "
        "(qrels_id INTEGER, run_id INTEGER, topic VARCHAR, metric VARCHAR, value DOUBLE)"
    )
    for unit in units.values():
        ctx = unit.context
        _check_gains(con, unit.qrels_ids, ctx["gains"], qrels_names or {})
        # The parent's dropped documents (pool rows of a subsample) only matter to metrics that
        # read pooled-but-unjudged rows (infAP); every other metric treats them as unjudged, so
        # they are added only when such a metric is in the unit.
        opts = Options(
            options.convention,
            options.complete,
            options.depth,
            pool=options.pool and any(i.spec.needs_pool for i in unit.instances),
        )
        opts.gmax = max(ctx["gains"]) if ctx["gains"] else _top_grade(con, unit.qrels_ids)
        bodies: dict[str, tuple[MetricInstance, str]] = {}
        for inst in unit.instances:
            canon = _canonical_for(inst, ctx, extra)
            if canon not in bodies:
                bodies[canon] = (inst, metric_sql(inst, opts))
        build_ranked_list(
            con, unit.qrels_ids, run_ids, ctx, opts, columns=columns_named([b for _, b in bodies.values()])
        )
        selects = []
        for canon, (inst, body) in bodies.items():
            missing = "NULL" if inst.spec.missing is None else repr(float(inst.spec.missing))
            selects.append(
                f"SELECT t.qrels_id, t.run_id, t.topic, {sql_literal(canon)} AS metric, "
                f"coalesce(m.value::DOUBLE, {missing}) AS value "
                f"FROM rl_topics t LEFT JOIN ({body}) m USING (qrels_id, run_id, topic)"
            )
        try:
            con.execute("INSERT INTO _eval_out " + "\nUNION ALL\n".join(selects))
        except Exception as e:  # duckdb.Error, with the metric names for context
            names = ", ".join(i.display for i in unit.instances)
            raise MetricError(f"computing {names} failed in DuckDB: {e}") from None
        if progress is not None:
            progress.advance(len(unit.instances) * len(unit.qrels_ids))
    return canon_of


def _canonical_for(inst: MetricInstance, ctx: dict[str, Any], extra: dict[str, Any]) -> str:
    """Canonical name with the effective gains (a qrels set's declared gains are spelled out)."""
    params = dict(inst.params)
    if "gains" in params and params["gains"] is None and ctx.get("gains") is not None:
        params["gains"] = ctx["gains"]
    if "gains" in params and params["gains"] is None:
        params["gains"] = "grade"
    fake = MetricInstance(inst.spec, tuple(sorted(params.items())), inst.cutoff, inst.display)
    return fake.canonical(extra)


def evaluate_store(
    store, qrels: str, runs: Sequence[str] | str | None = None, metrics: Sequence[str] | str = ("AP",), **options
) -> EvalResult:
    """Evaluate ``runs`` (names; all runs when None) against the qrels set ``qrels``.

    Computes every metric for all runs at once in DuckDB, stores the per-topic scores (unless
    ``save=False``) and returns them with per-run summaries. Options: ``convention``,
    ``complete``, ``depth``, ``pool``, ``save``, ``progress`` (see :func:`evaluate_bulk`)."""
    return evaluate_bulk(store, [qrels], runs, metrics, **options)[qrels]


def evaluate_bulk(
    store,
    qrels: Sequence[str],
    runs: Sequence[str] | str | None = None,
    metrics: Sequence[str] | str = ("AP",),
    *,
    convention: str = "trec_eval",
    complete: bool = False,
    depth: int | None = None,
    pool: bool = True,
    save: bool = True,
    progress: bool | None = None,
) -> dict[str, EvalResult]:
    """Evaluate runs against several qrels sets (e.g. a qrels set and all its subsamples) in bulk:
    one ranked judged list per context covers every qrels set and run at once.

    ``pool``: for a subsample, treat the parent's judged documents that it dropped as "in the
    pool but unjudged" (what infAP needs; no other metric is affected). Returns
    ``{qrels name: EvalResult}``."""
    options = make_options(convention, complete, depth)
    options.pool = pool
    con = store.con
    if isinstance(qrels, str):
        qrels = [qrels]
    qrels = list(dict.fromkeys(qrels))
    qrels_ids = {name: store.qrels_id(name) for name in qrels}
    if runs is None:
        runs = store.run_names()
        if not runs:
            raise MetricError("the store has no runs; ingest some with `evalstore ingest run FILE`")
    elif isinstance(runs, str):
        runs = [runs]
    run_ids = {name: store.run_id(name) for name in runs}
    instances = resolve_metrics(metrics)
    declared = {
        qid: parse_gains(con.execute("SELECT default_gains FROM qrels_meta WHERE qrels_id = ?", [qid]).fetchone()[0])
        for qid in qrels_ids.values()
    }
    from ..progress import progress_bar

    total = len(instances) * len(qrels_ids)
    with progress_bar(total, "evaluating", enabled=progress, min_total=2) as bar:
        canon_of = compute(
            con,
            list(qrels_ids.values()),
            list(run_ids.values()),
            instances,
            options,
            declared_gains=declared,
            qrels_names={v: k for k, v in qrels_ids.items()},
            progress=bar,
        )
    aggregates = {canon_of[(qid, i.display)]: i.spec.aggregate for qid in qrels_ids.values() for i in instances}
    if save:
        _save(store, aggregates)
    results = {
        name: _collect(con, name, qid, run_ids, instances, canon_of, aggregates) for name, qid in qrels_ids.items()
    }
    drop_work_tables(con)
    return results


# temporary relations of one evaluation (ranked list + output); dropped when it is done so that a
# long-lived connection does not keep hundreds of MB of judged rows alive
_WORK_TABLES = (
    "rl_qrels",
    "rl_qtopics",
    "rl_ideal",
    "rl_file_order",
    "rl_hits",
    "rl_topics",
    "rl_judged",
    "_eval_out",
    "_eval_agg",
)


def drop_work_tables(con) -> None:
    con.execute("DROP VIEW IF EXISTS rl_retrieved")
    for t in _WORK_TABLES:
        con.execute(f"DROP TABLE IF EXISTS {t}")


def _save(store, aggregates: dict[str, str]) -> None:
    con = store.con
    with store.transaction():
        con.execute("""DELETE FROM score_data WHERE (qrels_id, run_id, metric) IN
                       (SELECT DISTINCT qrels_id, run_id, metric FROM _eval_out)""")
        con.execute("""DELETE FROM evaluations WHERE (qrels_id, run_id, metric) IN
                       (SELECT DISTINCT qrels_id, run_id, metric FROM _eval_out)""")
        con.execute(
            "INSERT INTO score_data (run_id, qrels_id, metric, topic, value) "
            "SELECT run_id, qrels_id, metric, topic, value FROM _eval_out"
        )
        con.execute(
            "CREATE OR REPLACE TEMP TABLE _eval_agg AS SELECT unnest(?::VARCHAR[]) AS metric, "
            "unnest(?::VARCHAR[]) AS aggregate",
            [list(aggregates), list(aggregates.values())],
        )
        con.execute(
            """INSERT INTO evaluations (run_id, qrels_id, metric, aggregate, n_topics, engine_version)
                       SELECT o.run_id, o.qrels_id, o.metric, a.aggregate, count(o.value), ? FROM _eval_out o
                       JOIN _eval_agg a USING (metric) GROUP BY o.run_id, o.qrels_id, o.metric, a.aggregate""",
            [ENGINE_VERSION],
        )


def _collect(con, qrels: str, qrels_id: int, run_ids: dict[str, int], instances, canon_of, aggregates) -> EvalResult:
    id_to_name = {v: k for k, v in run_ids.items()}
    canonical = {i.display: canon_of[(qrels_id, i.display)] for i in instances}
    rows = con.execute(
        "SELECT run_id, topic, metric, value FROM _eval_out WHERE qrels_id = ? ORDER BY run_id, topic", [qrels_id]
    ).fetchall()
    by_canon: dict[str, list[str]] = {}
    for disp, canon in canonical.items():
        by_canon.setdefault(canon, []).append(disp)
    order = {d: i for i, d in enumerate(canonical)}
    per_topic = []
    for run_id, topic, canon, value in rows:
        for disp in by_canon.get(canon, []):
            per_topic.append((id_to_name[run_id], topic, disp, value))
    per_topic.sort(key=lambda r: (r[0], _topic_key(r[1]), order.get(r[2], 0)))
    groups: dict[tuple[str, str], list[float]] = {}
    for run, _, disp, value in per_topic:
        groups.setdefault((run, disp), []).append(value)
    means = []
    for run in run_ids:
        for disp in order:
            vals = groups.get((run, disp), [])
            agg = aggregates[canonical[disp]]
            means.append((run, disp, summarise(vals, agg), sum(v is not None for v in vals)))
    return EvalResult(
        qrels=qrels,
        metrics=list(order),
        canonical=canonical,
        per_topic=per_topic,
        means=means,
        aggregates={d: aggregates[canonical[d]] for d in order},
    )


def _topic_key(topic: str):
    """trec_eval prints topics in strcmp order; we sort the same way (byte order)."""
    return topic.encode("utf-8")
