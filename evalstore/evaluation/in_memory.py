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
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .. import sql_functions
from ..arguments import metric_names
from ..errors import ArgumentError, IngestError, MetricError, is_resource_error
from ..ingest.fast import ranked_rows
from ..ingest.sources import is_path, qrels_table, run_table
from ..metrics import engine
from ..metrics.gains import check_gains
from ..metrics.options import Options, make_options
from ..metrics.params import format_list, parse_gains
from ..metrics.ranked_list import render
from ..metrics.references import order_clause
from ..metrics.registry import MetricInstance
from ..result import EvalResult, result_of_rows
from ..run_files import RunRows, qrels_file, run_tables
from .stored import metric_notes, unrelated_note

_QRELS_ID = 1
_QRELS_SIDE = ("rl_qrels", "rl_qtopics", "rl_ideal", "rl_subtopics")
#: The columns of a run handed to the SQL (and ``rank`` when the reader ranked it).
_RUN_COLUMNS = ("topic", "doc", "score", "ln")

_base_lock = threading.Lock()
_base: duckdb.DuckDBPyConnection | None = None


def _cursor(udfs: bool, threads: int | None = None) -> duckdb.DuckDBPyConnection:
    """A new connection to the process-wide in-memory database (temporary tables are private to it);
    with ``threads``, a database of its own on that many threads (one evaluation of large run files)."""
    global _base
    if threads is not None:
        cur = duckdb.connect(
            ":memory:",
            config={"autoinstall_known_extensions": False, "autoload_known_extensions": False, "threads": threads},
        )
        if udfs:
            sql_functions.register(cur)
        return cur
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
    ``threads``: None (default) runs each call on one thread of a process-wide database (per-call
    queries are small); a number gives the evaluator a database of its own with that many threads,
    for a few large evaluations (:func:`evalstore.evaluate` of run files uses every core).

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
        threads: int | None = None,
    ) -> None:
        self._run_format = run_format
        self._options = make_options(convention, complete, depth, False)
        declared = _declared(gains)
        names_given = tuple(metric_names(metrics))
        table = qrels_file(qrels, qrels_format) if is_path(qrels) else qrels_table(qrels)
        top = pc.max(table.column("grade")).as_py()
        self._top_grade = top
        plan = _compile(names_given, self._options, declared, top, "sql")
        self._instances = plan.instances
        self.metrics = [i.display for i in plan.instances]
        self._names = plan.names
        self._by_key = plan.by_key
        # the runs' names as a table: blocks that name runs read it, and with complete it lists the
        # runs (an empty run has no row in the run's table but is scored on every topic)
        self._run_meta = plan.run_meta or self._options.complete
        self._con = _cursor(plan.udfs, threads)
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
        self._prepare = prepare
        self._declared = declared
        self._names_given = names_given
        self._queries: dict[str, list[str]] = {}
        # runs read from files may hand the SQL only the rows whose docno the qrels judge, with each
        # topic's count of rows, when every pass ranks in trec_eval's order and no block reads
        # rl_retrieved (which would then hold only those rows)
        self._narrow = plan.narrow
        self._judged_docs = pc.unique(table.column("doc"))
        self._prepared_units: set[int] = set()
        for unit in plan.units:
            if unit.gains is not None and top is not None and top > len(unit.gains):
                check_gains(con, [_QRELS_ID], unit.gains, {_QRELS_ID: "qrels"})  # raises with the store's message
        if prepare:
            self._queries_for("sql")

    def _queries_for(self, mode: str) -> list[str]:
        """The queries of a call (``mode``: see :func:`_compile`). With ``prepare``, the qrels' side
        of the ranked list is built once, here, as tables ``<relation>_<unit>``; without, it is part
        of each query."""
        queries = self._queries.get(mode)
        if queries is not None:
            return queries
        plan = _compile(self._names_given, self._options, self._declared, self._top_grade, mode)
        queries = []
        for u, unit in enumerate(plan.units):
            if not self._prepare:  # one call: the qrels' side is part of the query
                queries.append(unit.query_inline)
                continue
            if u not in self._prepared_units:
                for _, stmt in unit.qrels_side:
                    self._con.execute(stmt)
                for name, _ in unit.qrels_side:
                    self._con.execute(f"ALTER TABLE {name} RENAME TO {name}_{u}")
                self._prepared_units.add(u)
            queries.append(unit.query_prepared.replace(_UNIT, str(u)))
        self._queries[mode] = queries
        return queries

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
        tables = self._tables(names, [runs[n] for n in names])
        if self._narrow and all(t.num_rows for t in tables):
            narrow = [ranked_rows(t, self._judged_docs) for t in tables]
            rows = self._run([t for t, _ in narrow], names, [c for _, c in narrow if c is not None])
        else:
            rows = self._run(tables, names)
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
        return self._result([[(n, t, None) for n, t in zip(names, tables)]], qrels_name)

    def result_files(self, paths: Any, qrels_name: str = "qrels") -> EvalResult:
        """The evaluation of run files (a path, a glob or a list; each run named by its tag) as an
        :class:`EvalResult`: each file read once (:mod:`evalstore.run_files`) and evaluated in
        batches of about a million lines, while the next files are read."""
        keep = self._judged_docs if self._narrow else None
        return self._result(run_tables(paths, self._run_format, keep_docs=keep), qrels_name)

    def _result(self, batches: Iterable[list[RunRows]], qrels_name: str) -> EvalResult:
        judged = pa.array(self.topics, pa.string())
        names: list[str] = []
        left_out: list[str] = []
        named: list[tuple[str, str, str, float]] = []
        for batch in batches:
            # a run that shares no topic with the qrels is of another collection: left out; an empty run
            # (allowed with complete) is scored on every topic as a run that retrieved nothing
            ok = []
            for name, t, counts in batch:
                topics = (counts if counts is not None else t).column("topic")
                if len(topics) == 0 or pc.any(pc.is_in(topics, judged)).as_py() is True:
                    ok.append((name, t, counts))
                else:
                    left_out.append(name)
            if not ok:
                continue
            batch_names = [n for n, _, _ in ok]
            names += batch_names
            narrow = all(c is not None for _, _, c in ok)
            rows = self._run([t for _, t, _ in ok], batch_names, [c for _, _, c in ok] if narrow else None)
            named += [(batch_names[run_id - 1], topic, key, value) for run_id, topic, key, value in rows]
        if not names:
            raise MetricError(
                f"no run ({', '.join(left_out[:10])}{' ...' if len(left_out) > 10 else ''}) shares a topic with "
                f"qrels {qrels_name}: are the runs and the qrels of the same collection?"
            )
        return result_of_rows(
            qrels_name,
            self._names,
            names,
            named,
            ([unrelated_note(left_out, qrels_name)] if left_out else [])
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
            _one_run(r, self._run_format) if is_path(r) else run_table(r, f"run {n!r}", allow_empty=complete)
            for n, r in zip(names, runs)
        ]

    def _rows(self, names: Sequence[str], runs: Iterable[Any]) -> list[tuple[int, str, str, float]]:
        return self._run(self._tables(names, runs), names)

    def _run(
        self, tables: Sequence[pa.Table], names: Sequence[str], counts: Sequence[pa.Table] | None = None
    ) -> list[tuple[int, str, str, float]]:
        """Evaluate runs (run_id = position + 1). Runs read from files come ranked (trec_eval's
        order); with ``counts`` (each run's rows per topic) they hold only the rows whose docno the
        qrels judge (a narrower ranked list). Runs given in memory are ranked in SQL."""
        ranked = all("rank" in t.column_names for t in tables)
        mode = "narrow" if counts is not None else "ranked" if ranked else "sql"
        table = _with_run_ids([t.select(list(_RUN_COLUMNS + (("rank",) if ranked else ()))) for t in tables])
        queries = self._queries_for(mode)
        con = self._con
        if counts is not None:
            con.register("_ev_counts", _with_run_ids(list(counts)))
        con.register("_ev_run", table)
        if self._run_meta:
            con.register("_ev_names", pa.table({"run_id": list(range(1, len(names) + 1)), "name": list(names)}))
        try:
            rows: list[tuple[int, str, str, float]] = []
            for q in queries:
                rows.extend(con.execute(q).fetchall())
            return rows
        except duckdb.Error as e:
            if is_resource_error(e):
                raise
            raise MetricError(f"evaluating {', '.join(self.metrics)} failed in DuckDB: {e}") from None
        finally:
            con.unregister("_ev_run")
            if counts is not None:
                con.unregister("_ev_counts")
            if self._run_meta:
                con.unregister("_ev_names")


def _with_run_ids(tables: Sequence[pa.Table]) -> pa.Table:
    """The tables one after the other, each with its position + 1 as ``run_id``."""
    parts = [t.append_column("run_id", pa.array(np.full(t.num_rows, i + 1, np.int32))) for i, t in enumerate(tables)]
    return parts[0] if len(parts) == 1 else pa.concat_tables(parts, promote_options="permissive")


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
    narrow: bool  # runs read from files may come narrowed (see Evaluator._run)


@functools.lru_cache(maxsize=64)
def _compile(
    metrics: tuple[str, ...], options: Options, declared: tuple[float, ...] | None, top: int | None, mode: str
) -> _Plan:
    """The metrics' SQL for a qrels set with declared gains ``declared`` and highest grade ``top``:
    rendered once per process for each such combination (a call of :func:`evalstore.evaluate`
    then only loads the data and runs the query). ``mode``: ``'sql'``, the runs are ranked in SQL;
    ``'ranked'``, they carry their rank in trec_eval's order (read from files), used where the
    context's order is trec_eval's; ``'narrow'``, ranked and holding only the rows whose docno the
    qrels judge, with each topic's rows counted in ``_ev_counts(run_id, topic, n)``."""
    instances = engine.resolve_metrics(list(metrics))
    units, stored = engine.plan([_QRELS_ID], instances, options, {_QRELS_ID: declared})
    names = {disp: n for (_, disp), n in stored.items()}
    by_key: dict[str, list[str]] = {}
    for disp, n in names.items():
        by_key.setdefault(n.key, []).append(disp)
    run_meta = any("run_meta" in i.spec.block.reads for i in instances)
    out = []
    narrow_ok = True
    for unit in units:
        if mode != "sql" and unit.context.order == "trec_eval":
            rank_source = "SELECT run_id, topic, doc, rank, score FROM _ev_run"
        else:
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
        narrow_ok = narrow_ok and unit.context.order == "trec_eval" and "rl_retrieved" not in sql.reads
        counts = "SELECT run_id, topic, n FROM _ev_counts" if mode == "narrow" else None
        ctes = render(
            [_QRELS_ID], [], unit.context, sql.options, sql.columns, rank_source, runs_sql, as_ctes=True,
            counts_source=counts,
        )  # fmt: skip
        for name, body in ctes:
            inline.append(f"{name} AS ({body})")
            if name in _QRELS_SIDE:
                side.append((name, f"CREATE OR REPLACE TEMP TABLE {name} AS {body}"))
                prepared.append(f"{name} AS (SELECT * FROM {name}_{_UNIT})")
            else:
                prepared.append(f"{name} AS ({body})")
        tail = "\nSELECT run_id, topic, key, value FROM (" + sql.union + ")"
        out.append(
            _Unit(gains, tuple(side), "WITH " + ",\n".join(prepared) + tail, "WITH " + ",\n".join(inline) + tail)
        )
    udfs = any(i.spec.block.udfs for i in instances)
    return _Plan(instances, names, by_key, out, run_meta, udfs, narrow_ok)


def _declared(gains: str | Sequence[float] | None) -> tuple[float, ...] | None:
    if gains is None:
        return None
    try:
        return parse_gains(gains, "gains")
    except MetricError as e:
        raise IngestError(str(e)) from None


def _one_run(paths: Any, fmt: str) -> pa.Table:
    """The rows of one run given as a path (a file, or NTCIR res files forming one run)."""
    tables = [t for batch in run_tables(paths, fmt, name="run") for _, t, _ in batch]
    return tables[0]
