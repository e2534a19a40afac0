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
``migrations/`` alone; tests/evalstore/evaluation/test_in_memory.py checks every block against the store's results).
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

from ..base.arguments import metric_names
from ..db.connection import Settings, connect
from ..db.query import arrow_table
from ..errors import ArgumentError, IngestError, MetricError, is_resource_error
from ..ingest.fast import block_starts, ranked_rows
from ..ingest.tables import BATCH_LINES, RunPart, read_coded_qrels, read_run, read_runs
from ..metrics import engine, sql_functions
from ..metrics.gains import check_gains
from ..metrics.options import DEFAULTS, EvalOptions, options_from
from ..metrics.params import format_list, parse_gains
from ..metrics.ranked_list import render
from ..metrics.references import order_clause
from ..metrics.registry import MetricInstance
from ..metrics.user.sandbox import scores as user_scores
from ..results.eval_result import EvalResult, result_of_arrow
from ..results.shaping import as_raw, raw_table
from ..results.shaping import cursor as shaping_cursor
from .numpy_measures import QrelsIndex, dict_parts, numpy_measures, run_scores
from .stored import metric_notes, unrelated_note

_QRELS_ID = 1
#: Narrow the parts of run files to the judged docnos only when there are at most this many (about
#: the lines of a part: the lookup then costs no more than the part).
NARROW_DOCS = 50_000
#: Run lines per batch of run files for each qrels row, at least, for the SQL: every batch reads the
#: qrels' side of the ranked list, so the cost stays linear in the topics. (The numpy measures look
#: a batch up in the qrels by its own topics and docnos: batches of BATCH_LINES, whatever the qrels;
#: 1,000,000 topics x 10 with 2,000,000 qrels rows: peak 0.75 GB instead of 1.05, no more CPU.)
BATCH_PER_QRELS_ROW = 2
_QRELS_SIDE = ("rl_qrels", "rl_qtopics", "rl_ideal", "rl_subtopics")
#: The columns of a run handed to the SQL (and ``rank`` when the reader ranked it).
_RUN_COLUMNS = ("topic", "doc", "score", "ln")

_base_lock = threading.Lock()
_base: duckdb.DuckDBPyConnection | None = None


def _cursor(udfs: bool, settings: Settings | None = None) -> duckdb.DuckDBPyConnection:
    """A new connection to the process-wide in-memory database (temporary tables are private to it),
    on one thread with the default memory budget; with ``settings``, a database of its own with
    those resources (one evaluation of large run files, or a memory limit of the caller's)."""
    global _base
    if settings is not None:
        cur = connect(":memory:", settings=settings)
        if udfs:
            sql_functions.register(cur)
        return cur
    with _base_lock:
        if _base is None:
            # one thread: the per-call queries are small, and pipelines on several threads only add
            # scheduling (measured: 4.9 instead of 5.7 ms per call on 10 topics x 100 documents)
            _base = connect(":memory:", settings=Settings.resolve(threads=1))
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
    ``convention``, ``complete``, ``depth`` (see :meth:`evalstore.Store.evaluate`; or ``options``, an
    :class:`~evalstore.metrics.options.EvalOptions`) and
    ``gains`` (the qrels' declared gains, as ``ingest qrels --gains``).
    ``threads``: None (default) runs each call on one thread of a process-wide database (per-call
    queries are small); a number gives the evaluator a database of its own with that many threads,
    for a few large evaluations (:func:`evalstore.evaluate` of run files uses every core).
    ``memory_limit`` (e.g. ``'1GB'``) and ``temp_directory`` (where DuckDB spills; ``''``: never,
    a query beyond the limit fails) also give it a database of its own with those settings
    (default: ``$EVALSTORE_MEMORY_LIMIT``, ``$EVALSTORE_TEMP_DIR``, else 128 MB per thread and at
    least 512 MB, spilling to a folder of the system's temp directory).

    :meth:`evaluate` takes one run (``{topic: {doc: score}}``, a DataFrame, an Arrow table or
    namedtuples) and returns ``{topic: {metric: value}}`` (pytrec_eval's shape; metric names as
    given); :meth:`evaluate_many` takes ``{name: run}``; :meth:`result` returns an
    :class:`~evalstore.results.eval_result.EvalResult` with the means. ``prepare=False`` skips building the
    qrels' side of the ranked list ahead (for a single call, as :func:`evalstore.evaluate` makes)."""

    def __init__(
        self,
        qrels: Any,
        metrics: Sequence[str] | str = ("AP", "nDCG@10"),
        *,
        convention: str = DEFAULTS.convention,
        complete: bool = DEFAULTS.complete,
        depth: int | None = DEFAULTS.depth,
        options: EvalOptions | None = None,
        gains: str | Sequence[float] | None = None,
        qrels_format: str = "trec",
        run_format: str = "trec",
        prepare: bool = True,
        threads: int | None = None,
        memory_limit: str | None = None,
        temp_directory: str | None = None,
    ) -> None:
        self._run_format = run_format
        self._options = options_from(options, convention=convention, complete=complete, depth=depth).with_pool(False)
        declared = _declared(gains)
        names_given = tuple(metric_names(metrics))
        read = read_coded_qrels(qrels, qrels_format)
        table = read.table
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
        # the simplest measures under the default options: computed in numpy over the qrels indexed
        # here (evaluation/numpy_measures.py), no statement per call
        self._numpy = numpy_measures(plan.names, self._options, declared)
        if self._numpy is not None:
            # no statement to run: DuckDB only takes the logarithms of the discounts, on the
            # process-wide database that shapes the results (one database a command, not two: 0.05 CPU-s)
            con = self._con = shaping_cursor()
        else:
            own = threads is not None or memory_limit is not None or temp_directory is not None
            con = self._con = _cursor(
                plan.udfs, Settings.resolve(memory_limit, threads, temp_directory) if own else None
            )
            _register_relations(con, table, declared, top)
        # the judged topics as Arrow (a million topics: no Python string each unless .topics is read)
        self._judged_topics = read.topics.dictionary
        self._prepare = prepare
        self._declared = declared
        self._names_given = names_given
        self._queries: dict[tuple[str, bool, bool], list[str | _Steps]] = {}
        # query -> its WITH clause and unit, for the unit's measures of one's own (run apart, sandboxed)
        self._user_parts: dict[str | _Steps, tuple[str, _Unit]] = {}
        self._keys: dict[bool, dict[str, str]] = {}
        # runs read from files may hand the SQL only the rows whose docno the qrels judge, with each
        # topic's count of rows, when every pass ranks in trec_eval's order and no block reads
        # rl_retrieved (which would then hold only those rows); the lookup of the judged docnos costs
        # their number for every part or call, so it is done only where they are fewer than the rows
        # it filters (NARROW_DOCS for a file's parts; with many queries, narrowing would cost the
        # number of queries times the number of parts)
        self._narrow = plan.narrow
        self._judged_docs = read.docs.dictionary
        self._qrels_rows = table.num_rows
        self._prepared_units: set[int] = set()
        self._index = (
            QrelsIndex(read.coded_table(), functools.partial(_log2_of, con), qrels) if self._numpy is not None else None
        )
        for unit in plan.units:
            if unit.gains is not None and top is not None and top > len(unit.gains):
                check_gains(con, [_QRELS_ID], unit.gains, {_QRELS_ID: "qrels"})  # raises with the store's message
        if prepare and self._index is None:
            self._queries_for("sql")

    @functools.cached_property
    def topics(self) -> list[str]:
        """The qrels' topics, sorted by their UTF-8 bytes (sorted in Arrow on first read)."""
        judged = self._judged_topics
        return judged.take(pc.sort_indices(judged.cast(pa.binary()))).to_pylist()

    def _prepare_unit(self, u: int, unit: _Unit) -> None:
        """The qrels' side of unit ``u``'s ranked list as tables ``<relation>_<u>``, once."""
        if u not in self._prepared_units:
            for _, stmt in unit.qrels_side:
                self._con.execute(stmt)
            for name, _ in unit.qrels_side:
                self._con.execute(f"ALTER TABLE {name} RENAME TO {name}_{u}")
            self._prepared_units.add(u)

    def _queries_for(self, mode: str, complete: bool | None = None) -> list[str | _Steps]:
        """The queries of a call (``mode``: see :func:`_compile`; ``complete=False``: without the
        padding of the topics a run lacks, for the parts of a run). With ``prepare``, the qrels' side
        of the ranked list is built once, here, as tables ``<relation>_<unit>``; without, it is part
        of each query."""
        options = self._options if complete is None or complete == self._options.complete else self._options.unpadded()
        known = self._queries.get((mode, options.complete, self._prepare))
        if known is not None:
            return known
        plan = _compile(self._names_given, options, self._declared, self._top_grade, mode)
        if options != self._options:  # the keys of this plan's rows -> the keys the result reads
            self._keys[options.complete] = {n.key: self._names[d].key for d, n in plan.names.items()}
        queries: list[str | _Steps] = []
        for u, unit in enumerate(plan.units):
            if unit.steps is not None:  # many metrics: the ranked list as tables, the blocks in chunks
                self._prepare_unit(u, unit)
                steps = unit.steps.for_unit(u)
                queries.append(steps)
                self._user_parts[steps] = (unit.with_prepared.replace(_UNIT, str(u)), unit)
                continue
            if not self._prepare:  # one call: the qrels' side is part of the query
                queries.append(unit.query_inline)
                self._user_parts[unit.query_inline] = (unit.with_inline, unit)
                continue
            self._prepare_unit(u, unit)
            query = unit.query_prepared.replace(_UNIT, str(u))
            queries.append(query)
            self._user_parts[query] = (unit.with_prepared.replace(_UNIT, str(u)), unit)
        self._queries[(mode, options.complete, self._prepare)] = queries
        return queries

    # ------------------------------------------------------------------------------------------
    def evaluate(self, run: Any) -> dict[str, dict[str, float]]:
        """``{topic: {metric: value}}`` for one run (topics of the run that the qrels judge; all
        topics of the qrels with ``complete=True``); an empty run gives ``{}``, as pytrec_eval's
        ``RelevanceEvaluator.evaluate({})`` does."""
        return self.evaluate_many({"run": run})["run"]

    def evaluate_many(self, runs: Mapping[str, Any]) -> dict[str, dict[str, dict[str, float]]]:
        """``{run name: {topic: {metric: value}}}`` for several runs, in one query."""
        if not isinstance(runs, Mapping) or not runs:
            raise ArgumentError("give the runs as {name: run} with at least one run (one run: evaluate(run))")
        names = list(runs)
        tables = self._tables(names, [runs[n] for n in names], allow_empty=True)
        if not any(t.num_rows for t in tables) and not self._options.complete:
            return {n: {} for n in names}  # nothing retrieved: no topic to score (pytrec_eval's {})
        rows_given = sum(t.num_rows for t in tables)
        if self._narrows(tables, rows_given):
            narrow = [ranked_rows(t, self._judged_docs) for t in tables]
            rows = self._run([t for t, _ in narrow], names, [c for _, c in narrow if c is not None])
        else:
            rows = self._run(tables, names)
        return nested(rows, names, self._by_key)

    def _narrows(self, tables: Sequence[pa.Table], rows_given: int) -> bool:
        """Runs given in memory are ranked and narrowed to the judged docnos in Arrow before the
        SQL when the judged docnos are fewer than their rows (not for the numpy path)."""
        return (
            self._narrow
            and self._index is None
            and all(t.num_rows for t in tables)
            and len(self._judged_docs) <= rows_given
        )

    def result(self, runs: Mapping[str, Any], qrels_name: str = "qrels") -> EvalResult:
        """The evaluation of ``{name: run}`` as an :class:`EvalResult` (per-topic rows and means).
        Runs that share no topic with the qrels are left out, with a note."""
        if not isinstance(runs, Mapping) or not runs:
            raise ArgumentError("give the runs as {name: run} with at least one run")
        names = list(runs)
        # dicts, for the numpy measures: their judged rows ranked straight from the dicts
        parts = dict_parts(self._index, runs) if self._index is not None else None
        if parts is None:
            tables = self._tables(names, [runs[n] for n in names])
            if self._narrows(tables, sum(t.num_rows for t in tables)):
                # ranked in Arrow and narrowed to the judged docnos, as evaluate_many and run files are
                parts = [RunPart(n, *ranked_rows(t, self._judged_docs)) for n, t in zip(names, tables)]
            else:
                parts = [RunPart(n, t, None) for n, t in zip(names, tables)]
        return self._result([parts], qrels_name, whole=True)

    def result_files(self, paths: Any, qrels_name: str = "qrels") -> EvalResult:
        """The evaluation of run files (a path, a glob or a list; each run named by its tag) as an
        :class:`EvalResult`: each file read once (:func:`evalstore.ingest.tables.read_runs`) and evaluated in
        batches of about a million lines (for the SQL, at least twice the qrels' rows: each batch's
        query reads the qrels' side of the ranked list, so the cost stays linear in the topics),
        while the next files are read. The qrels' side is built once for all batches."""
        keep = self._judged_docs if self._narrow and len(self._judged_docs) <= NARROW_DOCS else None
        self._prepare = True
        lines = BATCH_LINES if self._index is not None else max(BATCH_LINES, BATCH_PER_QRELS_ROW * self._qrels_rows)
        return self._result(read_runs(paths, self._run_format, keep_docs=keep, batch_lines=lines), qrels_name)

    def _result(self, batches: Iterable[list[RunPart]], qrels_name: str, whole: bool = False) -> EvalResult:
        """The result of runs given as batches of parts (``whole``: one part per run). The parts of
        runs read from files are evaluated without ``complete``'s padding (a part has some of its
        run's topics); the topics of the qrels a run lacks are padded once it is read
        (:meth:`_padding`)."""
        judged = self._judged_topics
        runs: dict[str, bool] = {}  # name -> shares a topic with the qrels (or is empty)
        ids: dict[str, int] = {}  # name -> its id in the rows (order of first appearance)
        had: dict[str, list[pa.Array]] = {}  # with complete: the topics each run has
        parts: list[pa.Table] = []  # rows as computed: run_id (ids), topic, key, value
        pad = self._options.complete and not whole
        # the numpy measures score every judged topic of a run (never padded): a run shares a topic
        # with the qrels when it has scores, and its topics need no lookup of their own (a million
        # topics: one hash table of the qrels' topics less per batch)
        scored_only = self._index is not None and not pad
        for batch in batches:
            if scored_only:
                topics = [None] * len(batch)
            else:
                topics = [pc.unique((p.counts if p.counts is not None else p.table).column("topic")) for p in batch]
                # (one lookup in the qrels' topics per batch, not per part)
                shared = pc.is_in(pa.concat_arrays(topics), value_set=judged).to_numpy(zero_copy_only=False)
            at = 0
            for part, tops in zip(batch, topics):
                if part.restart and part.name in ids:  # the run's file was read again by the general reader
                    gone = ids[part.name]
                    parts = [t.filter(pc.not_equal(t.column("run_id"), gone)) for t in parts]
                    had.pop(part.name, None)
                    runs[part.name] = False
                if tops is None:  # (scored_only: an empty part shares, others once they have scores)
                    shares = not (part.table.num_rows or part.counts is not None and part.counts.num_rows)
                else:
                    shares = len(tops) == 0 or bool(shared[at : at + len(tops)].any())
                    at += len(tops)
                runs[part.name] = runs.get(part.name, False) or shares
                ids.setdefault(part.name, len(ids) + 1)
                if pad:
                    had.setdefault(part.name, []).append(tops)
            ok = [p for p in batch if p.table.num_rows or p.counts is not None and p.counts.num_rows or whole]
            if not ok:
                continue
            narrow = all(p.counts is not None for p in ok)
            rows = self._run(
                [p.table for p in ok],
                [p.name for p in ok],
                [p.counts for p in ok if p.counts is not None] if narrow else None,
                complete=None if whole else False,
            )
            batch_ids = rows.column("run_id").to_numpy()
            if scored_only:
                for i in np.flatnonzero(np.bincount(batch_ids, minlength=len(ok) + 1)).tolist():
                    runs[ok[i - 1].name] = True
            # the batch's run ids (positions in ok, from 1) -> the runs' ids
            to_id = np.array([0] + [ids[p.name] for p in ok], dtype=np.int32)
            run_col = pa.array(to_id[batch_ids])
            parts.append(rows.set_column(0, "run_id", run_col))
        names = [n for n, shares in runs.items() if shares]
        left_out = [n for n, shares in runs.items() if not shares]
        if not names:
            raise MetricError(
                f"no run ({', '.join(left_out[:10])}{' ...' if len(left_out) > 10 else ''}) shares a topic with "
                f"qrels {qrels_name}: are the runs and the qrels of the same collection?"
            )
        if pad:
            parts += self._padding({n: ids[n] for n in names}, had)
        rows = pa.concat_tables(parts) if parts else raw_table([], [], [], [])
        return result_of_arrow(
            qrels_name,
            self._names,
            {n: ids[n] for n in names},
            rows,
            ([unrelated_note(left_out, qrels_name)] if left_out else [])
            + metric_notes(self._instances, qrels_name, self._top_grade, has_subtopics=False),
        )

    def _padding(self, ids: Mapping[str, int], had: Mapping[str, Sequence[pa.Array]]) -> list[pa.Table]:
        """With ``complete``: the rows of the qrels topics each run lacks, as a run that retrieved
        nothing scores them (one evaluation of an empty run, whatever the number of runs)."""
        empty = pa.table({c: pa.array([], t) for c, t in (("topic", pa.string()), ("doc", pa.string()),
                                                          ("score", pa.float64()), ("ln", pa.int64()))})  # fmt: skip
        rows = self._run([empty], ["run"])
        out = []
        for name, run_id in ids.items():
            tops = had.get(name, [])
            lacking = rows
            if tops:
                lacking = rows.filter(pc.invert(pc.is_in(rows.column("topic"), value_set=pa.concat_arrays(tops))))
            out.append(lacking.set_column(0, "run_id", pa.array(np.full(lacking.num_rows, run_id, np.int32))))
        return out

    def close(self) -> None:
        self._con.close()

    def __enter__(self) -> Evaluator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<evalstore.Evaluator {len(self.topics)} topics, metrics {', '.join(self.metrics)}>"

    # ------------------------------------------------------------------------------------------
    def _tables(self, names: Sequence[str], runs: Iterable[Any], allow_empty: bool = False) -> list[pa.Table]:
        """The runs as tables; a run without rows is an error unless ``allow_empty`` or ``complete``
        (every topic then scores as a run that retrieved nothing)."""
        empty = allow_empty or self._options.complete
        return [read_run(r, self._run_format, f"run {n!r}", allow_empty=empty) for n, r in zip(names, runs)]

    def _run(
        self,
        tables: Sequence[pa.Table],
        names: Sequence[str],
        counts: Sequence[pa.Table] | None = None,
        complete: bool | None = None,
    ) -> pa.Table:
        """Evaluate runs (run_id = position + 1): the rows ``run_id, topic, key, value`` as an Arrow
        table (:data:`evalstore.results.shaping.RAW_SCHEMA`). Runs read from files come ranked (trec_eval's
        order); with ``counts`` (each run's rows per topic) they hold only the rows whose docno the
        qrels judge (a narrower ranked list). Runs given in memory are ranked in SQL.
        ``complete=False``: the parts of runs, evaluated without complete's padding."""
        if self._index is not None and self._numpy is not None:
            return _numpy_rows(self._index, self._numpy, tables, names, counts)
        ranked = all("rank" in t.column_names for t in tables)
        mode = "narrow" if counts is not None else "ranked" if ranked else "sql"
        table = _with_run_ids([t.select(list(_RUN_COLUMNS + (("rank",) if ranked else ()))) for t in tables])
        queries = self._queries_for(mode, complete)
        con = self._con
        if counts is not None:
            con.register("_ev_counts", _with_run_ids(list(counts)))
        con.register("_ev_run", table)
        if self._run_meta:
            con.register("_ev_names", pa.table({"run_id": list(range(1, len(names) + 1)), "name": list(names)}))
        try:
            got = []
            for q in queries:
                if isinstance(q, _Steps):
                    got += q.run(con)
                else:
                    got.append(as_raw(arrow_table(con, q)))
                with_clause, unit = self._user_parts[q]
                if unit.user:
                    got.append(_user_table(con, with_clause, unit))
            rows = got[0] if len(got) == 1 else pa.concat_tables(got)
            keys = self._keys.get(complete) if complete is not None and complete != self._options.complete else None
            if keys:  # this plan's keys -> the keys the result reads (a few distinct values)
                coded = pc.dictionary_encode(rows.column("key").combine_chunks())
                renamed = pa.array([keys[k] for k in coded.dictionary.to_pylist()], pa.string())
                rows = rows.set_column(2, "key", renamed.take(coded.indices))
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


def nested(
    rows: pa.Table, names: Sequence[str], by_key: Mapping[str, Sequence[str]]
) -> dict[str, dict[str, dict[str, float]]]:
    """``{run name: {topic: {metric: value}}}`` of :meth:`Evaluator._run`'s rows (``run_id`` into
    ``names`` from 1, ``topic``, ``key``, ``value``), each key shown under its names in ``by_key``,
    the topics in byte order. When a run's keys score the same topics (every built-in measure does)
    each topic's dict is made at once from the keys' value lists, not a row at a time."""
    out: dict[str, dict[str, dict[str, float]]] = {n: {} for n in names}
    rows = rows.sort_by([("run_id", "ascending"), ("key", "ascending"), ("topic", "ascending")])
    for run_id, part in _segments(rows, "run_id"):
        run = out[names[run_id - 1]]
        groups = list(_segments(part, "key"))
        topics = groups[0][1].column("topic")
        if all(g.column("topic").equals(topics) for _, g in groups):
            shown = [(disp, g.column("value").to_pylist()) for key, g in groups for disp in by_key[key]]
            disps = [disp for disp, _ in shown]
            for topic, values in zip(topics.to_pylist(), zip(*(v for _, v in shown))):
                run[topic] = dict(zip(disps, values))
            continue
        for topic, key, value in zip(*(part.column(c).to_pylist() for c in ("topic", "key", "value"))):
            per_topic = run.setdefault(topic, {})  # (measures of one's own may score some topics only)
            for disp in by_key[key]:
                per_topic[disp] = value
    return out


def _segments(table: pa.Table, column: str) -> Iterable[tuple[Any, pa.Table]]:
    """``(value, rows)`` for each run of equal values of ``column`` in ``table`` (sorted on it)."""
    col = table.column(column)
    bounds = np.append(block_starts(col), table.num_rows)
    for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        yield col[a].as_py(), table.slice(a, b - a)


def _numpy_rows(
    index: QrelsIndex,
    measures: list[Any],
    tables: Sequence[pa.Table],
    names: Sequence[str],
    counts: Sequence[pa.Table] | None,
) -> pa.Table:
    """:meth:`Evaluator._run`'s rows computed in numpy (evaluation/numpy_measures.py). The parts of
    one run (a run file read in parts of whole topics, ``names`` alike) are evaluated together, as
    one table: each call looks the run's topics and docnos up in the qrels'."""
    first: dict[str, int] = {}  # name -> the run id of its rows (its first table's position + 1)
    for i, name in enumerate(names):
        first.setdefault(name, i + 1)
    parts = []
    for name, run_id in first.items():
        at = [i for i, n in enumerate(names) if n == name]
        table = pa.concat_tables([tables[i] for i in at]) if len(at) > 1 else tables[at[0]]
        count = (pa.concat_tables([counts[i] for i in at]) if len(at) > 1 else counts[at[0]]) if counts else None
        got = run_scores(index, measures, table, count)
        parts.append(got.add_column(0, "run_id", pa.array(np.full(got.num_rows, run_id, np.int32))))
    return as_raw(pa.concat_tables(parts) if len(parts) > 1 else parts[0])


def _log2_of(con: duckdb.DuckDBPyConnection, n: int) -> np.ndarray:
    """``log2(r + 1)`` for r = 1..n as DuckDB computes it (the discounts of the SQL blocks)."""
    got = con.execute("SELECT log2(i + 1) AS d FROM range(1, ? + 1) t(i) ORDER BY i", [n]).fetchnumpy()
    return np.asarray(got["d"], dtype=np.float64)


def _register_relations(
    con: duckdb.DuckDBPyConnection, table: pa.Table, declared: tuple[float, ...] | None, top: int | None
) -> None:
    """The store relations the SQL reads (see the module docstring), as Arrow tables on ``con``."""
    con.register("qrels_data", table.add_column(0, "qrels_id", pa.array([_QRELS_ID] * table.num_rows, pa.int32())))
    no_parents = pa.table({"qrels_id": pa.array([], pa.int32()), "parent_id": pa.array([], pa.int32())})
    con.register("subsample_meta", no_parents)
    # no subtopic judgments: diversity metrics count one subtopic per topic (sql/ranked_list.sql)
    none = pa.array([], pa.string())
    con.register(
        "subtopic_qrels_data",
        pa.table(
            {
                "qrels_id": pa.array([], pa.int32()),
                "topic": none,
                "subtopic": none,
                "doc": none,
                "grade": pa.array([], pa.int32()),
            }
        ),
    )
    con.register(
        "subtopic_probs",
        pa.table(
            {"qrels_id": pa.array([], pa.int32()), "topic": none, "subtopic": none, "prob": pa.array([], pa.float64())}
        ),
    )
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


def _with_run_ids(tables: Sequence[pa.Table]) -> pa.Table:
    """The tables one after the other, each with its position + 1 as ``run_id``."""
    parts = [t.append_column("run_id", pa.array(np.full(t.num_rows, i + 1, np.int32))) for i, t in enumerate(tables)]
    return parts[0] if len(parts) == 1 else pa.concat_tables(parts, promote_options="permissive")


_UNIT = "${unit}"


@dataclass(frozen=True)
class _Unit:
    """The SQL of one evaluation context: the qrels' side of the ranked list as statements (run
    once per Evaluator) and the query of a call, with that side as tables or inline; the WITH
    clause of the ranked list alone and the measures of one's own, which run apart (sandboxed)."""

    gains: tuple[float, ...] | None
    qrels_side: tuple[tuple[str, str], ...]  # (relation, CREATE statement)
    query_prepared: str  # reads <relation>_${unit}
    query_inline: str
    with_prepared: str = ""
    with_inline: str = ""
    user: tuple[tuple[MetricInstance, str], ...] = ()
    options: EvalOptions = DEFAULTS
    gmax: float = 1.0
    steps: _Steps | None = None  # more blocks than one statement holds: the ranked list as tables


@dataclass(frozen=True)
class _Steps:
    """A call's work for a unit of many metrics: the ranked list's relations made as temporary
    tables (the qrels' side as views of the unit's prepared tables), the metric blocks run
    :data:`~evalstore.metrics.engine.BLOCKS_PER_STATEMENT` to a statement over them (a bounded
    number of hash tables in memory at once, the ranked list built once), the tables dropped."""

    setup: tuple[str, ...]
    selects: tuple[str, ...]
    teardown: tuple[str, ...]

    def for_unit(self, u: int) -> _Steps:
        return _Steps(tuple(x.replace(_UNIT, str(u)) for x in self.setup), self.selects, self.teardown)

    def run(self, con: duckdb.DuckDBPyConnection) -> list[pa.Table]:
        try:
            for stmt in self.setup:
                con.execute(stmt)
            return [as_raw(arrow_table(con, q)) for q in self.selects]
        finally:
            for stmt in self.teardown:
                try:
                    con.execute(stmt)
                except duckdb.Error:
                    pass


def _user_table(con: duckdb.DuckDBPyConnection, with_clause: str, unit: _Unit) -> pa.Table:
    """``(run_id, topic, key, value)`` of a unit's measures of one's own, over the ranked list of
    the call (its relations read through ``with_clause``), as :data:`~evalstore.results.shaping.RAW_SCHEMA`."""
    table = user_scores(
        unit.user,
        unit.options,
        lambda q: arrow_table(con, with_clause + "\n" + q),
        lambda inst: engine.placeholder_values(inst, unit.options, unit.gmax),
        engine.value_sql,
    )
    return as_raw(table.select(["run_id", "topic", "key", "value"]))


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
    metrics: tuple[str, ...], options: EvalOptions, declared: tuple[float, ...] | None, top: int | None, mode: str
) -> _Plan:
    """The metrics' SQL for a qrels set with declared gains ``declared`` and highest grade ``top``:
    rendered once per process for each such combination (a call of :func:`evalstore.evaluate`
    then only loads the data and runs the query). ``mode``: ``'sql'``, the runs are ranked in SQL;
    ``'ranked'``, they carry their rank in trec_eval's order (read from files), used where the
    context's order is trec_eval's; ``'narrow'``, ranked and holding only the rows whose docno the
    qrels judge, with each topic's rows counted in ``_ev_counts(run_id, topic, n)``."""
    instances = engine.resolve_metrics(list(metrics))
    _no_answer_metrics(instances)
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
            [_QRELS_ID],
            [],
            unit.context,
            sql.options,
            sql.columns,
            rank_source,
            runs_sql,
            as_ctes=True,
            counts_source=counts,
        )
        for name, body in ctes:
            inline.append(f"{name} AS ({body})")
            if name in _QRELS_SIDE:
                side.append((name, f"CREATE OR REPLACE TEMP TABLE {name} AS {body}"))
                prepared.append(f"{name} AS (SELECT * FROM {name}_{_UNIT})")
            else:
                prepared.append(f"{name} AS ({body})")
        union = sql.union or "SELECT NULL::INTEGER AS run_id, NULL AS topic, NULL AS key, NULL::DOUBLE AS value LIMIT 0"
        tail = "\nSELECT run_id, topic, key, value FROM (" + union + ")"
        with_prepared, with_inline = "WITH " + ",\n".join(prepared), "WITH " + ",\n".join(inline)
        steps = _steps(sql, ctes, run_meta) if len(sql.selects) > engine.BLOCKS_PER_STATEMENT else None
        out.append(
            _Unit(gains, tuple(side), with_prepared + tail, with_inline + tail, with_prepared, with_inline, sql.user,
                  sql.options, gmax, steps)
        )  # fmt: skip
    udfs = any(i.spec.block.udfs for i in instances)
    return _Plan(instances, names, by_key, out, run_meta, udfs, narrow_ok)


def _no_answer_metrics(instances: Sequence[MetricInstance]) -> None:
    """Metrics of generated answers need stored answers and their labels: refused here."""
    answers = [i.display for i in instances if i.spec.kind != "judgments"]
    if answers:
        raise MetricError(
            f"{', '.join(answers)} evaluate{'s' if len(answers) == 1 else ''} generated answers, not ranked lists: "
            "give the answers and their assignments or support labels (evalstore.evaluate(assignments, answers, "
            "metrics); docs/rag.md)"
        )


def _steps(sql: Any, ctes: Sequence[tuple[str, str]], run_meta: bool) -> _Steps:
    """A unit with more metric blocks than a statement holds: the ranked list made as temporary
    tables once (the qrels' side as views of its prepared tables), then the blocks in chunks."""
    setup, teardown = [], []
    if run_meta:
        setup.append("CREATE OR REPLACE TEMP VIEW run_meta AS SELECT run_id, name FROM _ev_names")
        teardown.append("DROP VIEW IF EXISTS run_meta")
    for name, body in ctes:
        if name in _QRELS_SIDE:
            setup.append(f"CREATE OR REPLACE TEMP VIEW {name} AS SELECT * FROM {name}_{_UNIT}")
            teardown.append(f"DROP VIEW IF EXISTS {name}")
        else:
            setup.append(f"CREATE OR REPLACE TEMP TABLE {name} AS {body}")
            teardown.append(f"DROP TABLE IF EXISTS {name}")
    selects = tuple("SELECT run_id, topic, key, value FROM (" + c + ")" for c in sql.chunks())
    return _Steps(tuple(setup), selects, tuple(reversed(teardown)))


def _declared(gains: str | Sequence[float] | None) -> tuple[float, ...] | None:
    if gains is None:
        return None
    try:
        return parse_gains(gains, "gains")
    except MetricError as e:
        raise IngestError(str(e)) from None
