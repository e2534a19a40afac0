"""A fast evaluator for notebooks and training loops: qrels loaded once, one query per call.

``Evaluator(qrels, metrics, **options)`` keeps one DuckDB connection (a cursor of a process-wide
in-memory database) holding the qrels and, per evaluation context, the qrels' side of the ranked
judged list (``rl_qrels``, ``rl_qtopics``, ``rl_ideal`` of ``sql/ranked_list.sql``). A call hands
the run to DuckDB as an Arrow table and runs one statement: the run's side of the ranked list
(``rl_retrieved``, ``rl_hits``, ``rl_topics``, ``rl_judged``) as common table expressions under the
metric blocks of the SQL files, rendered once. Same SQL, same numbers as a store's evaluation.

The connection holds no store schema: the SQL reads only the store relations that the ranked list
and the blocks declare (``-- reads:``): ``qrels_data(qrels_id, topic, doc, grade)``,
``qrels_meta(qrels_id, default_gains, max_grade)``, ``subsample_meta(qrels_id, parent_id)`` and
``subtopic_qrels_data``/``subtopic_probs`` (empty: a qrels set given here has no subtopics),
created here as temporary tables with those columns (the store's schema stays defined by
``migrations/`` alone; tests/metrics/test_evaluator.py checks every block against the store's results).
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from . import sql_functions
from .aggregate import aggregate
from .arguments import metric_names
from .errors import ArgumentError, IngestError, MetricError, is_resource_error
from .evaluation import metric_notes, unrelated_note
from .facade import open as open_store
from .ingest.sources import is_path, qrels_table, run_table
from .metrics import engine
from .metrics.gains import check_gains
from .metrics.options import Options, make_options
from .metrics.params import format_list, parse_gains
from .metrics.ranked_list import render
from .metrics.references import order_clause
from .metrics.registry import MetricInstance
from .result import EvalResult

_QRELS_ID = 1
_STATEMENT = re.compile(r"^CREATE OR REPLACE TEMP (?:TABLE|VIEW) (\w+) AS\s*(.*)$", re.S)
_QRELS_SIDE = ("rl_qrels", "rl_qtopics", "rl_ideal", "rl_subtopics")

_base_lock = threading.Lock()
_base: duckdb.DuckDBPyConnection | None = None


def _cursor(udfs: bool) -> duckdb.DuckDBPyConnection:
    """A new connection to the process-wide in-memory database (temporary tables are private to it)."""
    global _base
    with _base_lock:
        if _base is None:
            # one thread: the per-call queries are small, and pipelines on several threads only add
            # scheduling (measured: 4.9 instead of 5.7 ms per call on 10 topics x 100 documents)
            _base = duckdb.connect(
                ":memory:",
                config={"autoinstall_known_extensions": False, "autoload_known_extensions": False, "threads": 1},
            )
        cur = _base.cursor()
    if udfs:
        sql_functions.register(cur)
    return cur


class Evaluator:
    """Evaluate runs against one qrels set with a fixed list of metrics, fast.

    ``qrels``: ``{topic: {doc: grade}}``, a path to a TREC qrels file, a pandas or polars
    DataFrame or a pyarrow Table (columns ``query_id, doc_id, relevance`` or ``topic, doc,
    grade``), or an iterable of namedtuples with those fields (ir_datasets' ``qrels_iter()``).
    ``metrics``: names as anywhere in evalstore (``"nDCG@10"``, ``"map"``, ``"P(rel=2)@10"``).
    ``options``: ``convention``, ``complete``, ``depth`` (see :meth:`evalstore.Store.evaluate`) and
    ``gains`` (the qrels' declared gains, as ``ingest qrels --gains``).

    :meth:`evaluate` takes one run (``{topic: {doc: score}}``, a DataFrame, an Arrow table or
    namedtuples) and returns ``{topic: {metric: value}}`` (pytrec_eval's shape; metric names as
    given); :meth:`evaluate_many` takes ``{name: run}``; :meth:`result` returns an
    :class:`~evalstore.result.EvalResult` with the means. ``prepare=False`` skips building the
    qrels' side of the ranked list ahead (for a single call, as :func:`evalstore.evaluate` makes)."""

    def __init__(
        self,
        qrels: Any,
        metrics: Sequence[str] | str = ("AP", "nDCG@10"),
        *,
        convention: str = "trec_eval",
        complete: bool = False,
        depth: int | None = None,
        gains: str | Sequence[float] | None = None,
        qrels_format: str = "trec",
        run_format: str = "trec",
        prepare: bool = True,
    ) -> None:
        self._run_format = run_format
        self._options = make_options(convention, complete, depth, False)
        declared = _declared(gains)
        names_given = tuple(metric_names(metrics))
        table = _from_files(qrels, "qrels", qrels_format) if is_path(qrels) else qrels_table(qrels)
        top = pc.max(table.column("grade")).as_py()
        self._top_grade = top
        plan = _compile(names_given, self._options, declared, top)
        self._instances = plan.instances
        self.metrics = [i.display for i in plan.instances]
        self._names = plan.names
        self._by_key = plan.by_key
        # the runs' names as a table: blocks that name runs read it, and with complete it lists the
        # runs (an empty run has no row in the run's table but is scored on every topic)
        self._run_meta = plan.run_meta or self._options.complete
        self._con = _cursor(plan.udfs)
        con = self._con
        # the store relations the SQL reads, as Arrow tables registered on the connection
        con.register("qrels_data", table.add_column(0, "qrels_id", pa.array([_QRELS_ID] * table.num_rows, pa.int32())))
        no_parents = pa.table({"qrels_id": pa.array([], pa.int32()), "parent_id": pa.array([], pa.int32())})
        con.register("subsample_meta", no_parents)
        # no subtopic judgments: diversity metrics count one subtopic per topic (sql/ranked_list.sql)
        none = pa.array([], pa.string())
        con.register(
            "subtopic_qrels_data",
            pa.table({"qrels_id": pa.array([], pa.int32()), "topic": none, "subtopic": none, "doc": none,
                      "grade": pa.array([], pa.int32())}),
        )  # fmt: skip
        con.register(
            "subtopic_probs",
            pa.table({"qrels_id": pa.array([], pa.int32()), "topic": none, "subtopic": none,
                      "prob": pa.array([], pa.float64())}),
        )  # fmt: skip
        con.register(
            "qrels_meta",
            pa.table(
                {
                    "qrels_id": pa.array([_QRELS_ID], pa.int32()),
                    "name": ["qrels"],
                    "default_gains": pa.array([format_list(declared) if declared is not None else None], pa.string()),
                    "max_grade": pa.array([top], pa.int32()),
                }
            ),
        )
        self.topics = sorted(pc.unique(table.column("topic")).to_pylist(), key=lambda t: t.encode("utf-8"))
        self._queries: list[str] = []
        for u, unit in enumerate(plan.units):
            if unit.gains is not None and top is not None and top > len(unit.gains):
                check_gains(con, [_QRELS_ID], unit.gains, {_QRELS_ID: "qrels"})  # raises with the store's message
            if not prepare:  # one call: the qrels' side is part of the query
                self._queries.append(unit.query_inline)
                continue
            for _, stmt in unit.qrels_side:  # built once, here, kept as <name>_<unit>
                con.execute(stmt)
            for name, _ in unit.qrels_side:
                con.execute(f"ALTER TABLE {name} RENAME TO {name}_{u}")
            self._queries.append(unit.query_prepared.replace(_UNIT, str(u)))

    # ------------------------------------------------------------------------------------------
    def evaluate(self, run: Any) -> dict[str, dict[str, float]]:
        """``{topic: {metric: value}}`` for one run (topics of the run that the qrels judge; all
        topics of the qrels with ``complete=True``)."""
        return self.evaluate_many({"run": run})["run"]

    def evaluate_many(self, runs: Mapping[str, Any]) -> dict[str, dict[str, dict[str, float]]]:
        """``{run name: {topic: {metric: value}}}`` for several runs, in one query."""
        if not isinstance(runs, Mapping) or not runs:
            raise ArgumentError("give the runs as {name: run} with at least one run (one run: evaluate(run))")
        names = list(runs)
        rows = self._rows(names, [runs[n] for n in names])
        out: dict[str, dict[str, dict[str, float]]] = {n: {} for n in names}
        by_key = self._by_key
        for run_id, topic, key, value in rows:
            per_topic = out[names[run_id - 1]].setdefault(topic, {})
            for disp in by_key[key]:
                per_topic[disp] = value
        return out

    def result(self, runs: Mapping[str, Any], qrels_name: str = "qrels") -> EvalResult:
        """The evaluation of ``{name: run}`` as an :class:`EvalResult` (per-topic rows and means).
        Runs that share no topic with the qrels are left out, with a note."""
        if not isinstance(runs, Mapping) or not runs:
            raise ArgumentError("give the runs as {name: run} with at least one run")
        names = list(runs)
        tables = self._tables(names, [runs[n] for n in names])
        judged = pa.array(self.topics, pa.string())
        # a run that shares no topic with the qrels is of another collection: left out; an empty run
        # (allowed with complete) is scored on every topic as a run that retrieved nothing
        related = [t.num_rows == 0 or pc.any(pc.is_in(t.column("topic"), judged)).as_py() is True for t in tables]
        left_out = [n for n, ok in zip(names, related) if not ok]
        if left_out and len(left_out) == len(names):
            raise MetricError(
                f"no run ({', '.join(names[:10])}{' ...' if len(names) > 10 else ''}) shares a topic with "
                f"qrels {qrels_name}: are the runs and the qrels of the same collection?"
            )
        names = [n for n, ok in zip(names, related) if ok]
        rows = self._run([t for t, ok in zip(tables, related) if ok], names)
        order = {d: i for i, d in enumerate(self.metrics)}
        per_topic = [
            (names[run_id - 1], topic, disp, value) for run_id, topic, key, value in rows for disp in self._by_key[key]
        ]
        per_topic.sort(key=lambda r: (names.index(r[0]), r[1].encode("utf-8"), order[r[2]]))
        groups: dict[tuple[str, str], list[float]] = {}
        for run, _, disp, value in per_topic:
            groups.setdefault((run, disp), []).append(value)
        means = [
            (run, disp, aggregate(groups.get((run, disp), []), self._names[disp].aggregate),
             sum(v is not None for v in groups.get((run, disp), [])))
            for run in names
            for disp in self.metrics
        ]  # fmt: skip
        return EvalResult(
            qrels=qrels_name,
            metrics=list(self.metrics),
            stored_names={d: n.metric for d, n in self._names.items()},
            per_topic=per_topic,
            means=means,
            aggregates={d: n.aggregate for d, n in self._names.items()},
            notes=([unrelated_note(left_out, qrels_name)] if left_out else [])
            + metric_notes(self._instances, qrels_name, self._top_grade, has_subtopics=False),
        )

    def close(self) -> None:
        self._con.close()

    def __enter__(self) -> Evaluator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<evalstore.Evaluator {len(self.topics)} topics, metrics {', '.join(self.metrics)}>"

    # ------------------------------------------------------------------------------------------
    def _tables(self, names: Sequence[str], runs: Iterable[Any]) -> list[pa.Table]:
        complete = self._options.complete
        return [
            _from_files(r, "run", self._run_format) if is_path(r) else run_table(r, f"run {n!r}", allow_empty=complete)
            for n, r in zip(names, runs)
        ]

    def _rows(self, names: Sequence[str], runs: Iterable[Any]) -> list[tuple[int, str, str, float]]:
        return self._run(self._tables(names, runs), names)

    def _run(self, tables: Sequence[pa.Table], names: Sequence[str]) -> list[tuple[int, str, str, float]]:
        if len(tables) == 1:
            t = tables[0]
            table = t.append_column("run_id", pa.array([1] * t.num_rows, pa.int32()))
        else:
            table = pa.concat_tables(
                t.append_column("run_id", pa.array([i + 1] * t.num_rows, pa.int32())) for i, t in enumerate(tables)
            )
        con = self._con
        con.register("_ev_run", table)
        if self._run_meta:
            con.register("_ev_names", pa.table({"run_id": list(range(1, len(names) + 1)), "name": list(names)}))
        try:
            rows: list[tuple[int, str, str, float]] = []
            for q in self._queries:
                rows.extend(con.execute(q).fetchall())
            return rows
        except duckdb.Error as e:
            if is_resource_error(e):
                raise
            raise MetricError(f"evaluating {', '.join(self.metrics)} failed in DuckDB: {e}") from None
        finally:
            con.unregister("_ev_run")
            if self._run_meta:
                con.unregister("_ev_names")


_UNIT = "${unit}"


@dataclass(frozen=True)
class _Unit:
    """The SQL of one evaluation context: the qrels' side of the ranked list as statements (run
    once per Evaluator) and the query of a call, with that side as tables or inline."""

    gains: tuple[float, ...] | None
    qrels_side: tuple[tuple[str, str], ...]  # (relation, CREATE statement)
    query_prepared: str  # reads <relation>_${unit}
    query_inline: str


@dataclass(frozen=True)
class _Plan:
    instances: list[MetricInstance]
    names: dict[str, engine.StoredName]  # display name -> stored name
    by_key: dict[str, list[str]]  # output key -> display names
    units: list[_Unit]
    run_meta: bool  # a block names runs in its messages (reads run_meta)
    udfs: bool


@functools.lru_cache(maxsize=64)
def _compile(metrics: tuple[str, ...], options: Options, declared: tuple[float, ...] | None, top: int | None) -> _Plan:
    """The metrics' SQL for a qrels set with declared gains ``declared`` and highest grade ``top``:
    rendered once per process for each such combination (a call of :func:`evalstore.evaluate`
    then only loads the data and runs the query)."""
    instances = engine.resolve_metrics(list(metrics))
    units, stored = engine.plan([_QRELS_ID], instances, options, {_QRELS_ID: declared})
    names = {disp: n for (_, disp), n in stored.items()}
    by_key: dict[str, list[str]] = {}
    for disp, n in names.items():
        by_key.setdefault(n.key, []).append(disp)
    run_meta = any("run_meta" in i.spec.block.reads for i in instances)
    out = []
    for unit in units:
        rank_source = (
            "SELECT run_id, topic, doc, row_number() OVER (PARTITION BY run_id, topic ORDER BY "
            + order_clause(unit.context.order, "ln")
            + ") AS rank, score FROM _ev_run"
        )
        gains = unit.context.gains
        gmax = max(gains) if gains else float(top or 1)
        sql = engine.unit_sql(unit, options, gmax)
        head = ["run_meta AS (SELECT run_id, name FROM _ev_names)"] if run_meta else []
        prepared, inline, side = list(head), list(head), []
        runs_sql = "SELECT run_id FROM _ev_names" if options.complete else "SELECT DISTINCT run_id FROM _ev_run"
        for stmt in render([_QRELS_ID], [], unit.context, sql.options, sql.columns, rank_source, runs_sql):
            m = _STATEMENT.match(stmt)
            if m is None:
                raise MetricError(f"internal: unexpected ranked-list statement {stmt[:60]!r}")
            name, body = m.groups()
            inline.append(f"{name} AS ({body})")
            if name in _QRELS_SIDE:
                side.append((name, stmt))
                prepared.append(f"{name} AS (SELECT * FROM {name}_{_UNIT})")
            else:
                prepared.append(f"{name} AS ({body})")
        tail = "\nSELECT run_id, topic, key, value FROM (" + sql.union + ")"
        out.append(
            _Unit(gains, tuple(side), "WITH " + ",\n".join(prepared) + tail, "WITH " + ",\n".join(inline) + tail)
        )
    udfs = any(i.spec.block.udfs for i in instances)
    return _Plan(instances, names, by_key, out, run_meta, udfs)


def _declared(gains: str | Sequence[float] | None) -> tuple[float, ...] | None:
    if gains is None:
        return None
    try:
        return parse_gains(gains, "gains")
    except MetricError as e:
        raise IngestError(str(e)) from None


def _from_files(paths: Any, kind: str, fmt: str) -> pa.Table:
    """Rows of qrels or run files read and checked by the store's ingest (in a throw-away store)."""
    with open_store(":memory:") as s:
        if kind == "qrels":
            s.ingest_qrels(paths, name="qrels", format=fmt, progress=False)
            return arrow_table(s.con, "SELECT topic, doc, grade FROM qrels_data")
        [res] = s.ingest_run(paths, name="run", format=fmt, progress=False)
        return arrow_table(
            s.con, "SELECT topic, doc, coalesce(score, -rank)::DOUBLE AS score FROM run_row_data ORDER BY line_no"
        )


def arrow_table(con: duckdb.DuckDBPyConnection, query: str, params: list | None = None) -> pa.Table:
    """The result of a query as an Arrow table (duckdb 2 spells it to_arrow_table, 1.x arrow)."""
    rel = con.sql(query, params=params)
    fetch = getattr(rel, "to_arrow_table", None) or getattr(rel, "arrow")  # noqa: B009
    return fetch()
