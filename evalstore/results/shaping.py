"""Per-topic scores as computed (``run_id, topic, key, value`` in any order) named and ordered as an
:class:`~evalstore.results.eval_result.EvalResult` holds them, in DuckDB over Arrow.

Every evaluation path ends here: the in-memory one (:class:`evalstore.Evaluator`, run files), the
store's (:mod:`evalstore.results.query`) and Spark's. The rows stay an Arrow table; DuckDB joins
each to its run's name and to every metric that shares its key, orders them (run in output order,
topic in byte order as trec_eval prints them, metric in request order) and summarises each
(run, metric) by the metric's aggregate with the correctly rounded sums of
:mod:`evalstore.base.aggregate` (the SQL of the store's ``leaderboard`` view, the same double as
:func:`~evalstore.base.aggregate.aggregate`). No Python object is made per score: an
``EvalResult`` asks for the ordered table or the means when it is first read
(:class:`Unshaped`), never before.

The queries run on a process-wide in-memory DuckDB database of their own (with the store's
resource settings: memory limit and spill folder), a cursor per query.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import duckdb
import pyarrow as pa

from ..base.aggregate import summaries_sql
from ..db.query import arrow_table

#: The columns (and types) of per-topic rows as computed.
RAW_SCHEMA = pa.schema([("run_id", pa.int32()), ("topic", pa.string()), ("key", pa.string()), ("value", pa.float64())])
#: The columns of an ordered per-topic table.
SCORES_SCHEMA = pa.schema(
    [("run", pa.string()), ("topic", pa.string()), ("metric", pa.string()), ("value", pa.float64())]
)

_lock = threading.Lock()
_base: duckdb.DuckDBPyConnection | None = None


def cursor() -> duckdb.DuckDBPyConnection:
    """A cursor of the process-wide database that shapes results (made on first use)."""
    global _base
    with _lock:
        if _base is None:
            from ..db.connection import connect  # the store's settings: memory limit, spill folder

            _base = connect(":memory:")
        return _base.cursor()


def raw_table(run_ids: Any, topics: Any, keys: Any, values: Any) -> pa.Table:
    """Per-topic rows as computed, with :data:`RAW_SCHEMA`'s types."""
    return pa.table(
        {
            "run_id": pa.array(run_ids, pa.int32()) if not isinstance(run_ids, pa.Array) else run_ids.cast(pa.int32()),
            "topic": topics if isinstance(topics, (pa.Array, pa.ChunkedArray)) else pa.array(topics, pa.string()),
            "key": keys if isinstance(keys, (pa.Array, pa.ChunkedArray)) else pa.array(keys, pa.string()),
            "value": values if isinstance(values, (pa.Array, pa.ChunkedArray)) else pa.array(values, pa.float64()),
        }
    )


def as_raw(table: pa.Table) -> pa.Table:
    """``table``'s ``run_id, topic, key, value`` columns with :data:`RAW_SCHEMA`'s types (DuckDB
    hands VARCHAR on as Arrow strings or string views, HUGEINT ids as decimals)."""
    return _typed(table.select(RAW_SCHEMA.names), RAW_SCHEMA)


@dataclass(frozen=True)
class Unshaped:
    """Per-topic rows as computed (``rows``: :data:`RAW_SCHEMA`, any order; rows of runs not in
    ``runs`` are left out) and how to name them: ``runs`` maps each run's name, in output order, to
    its id in the rows; ``keys[i]`` is the key the scores of ``displays[i]`` (request order) have,
    ``aggregates[i]`` its summary (mean, gmean, sum)."""

    rows: pa.Table
    runs: tuple[tuple[str, int], ...]
    displays: tuple[str, ...]
    keys: tuple[str, ...]
    aggregates: tuple[str, ...]

    def _names(self) -> tuple[str, list[Any]]:
        """The CTEs naming runs and metrics, and their parameters."""
        ids = [i for _, i in self.runs]
        names = [n for n, _ in self.runs]
        sql = """r AS (SELECT unnest(?::INTEGER[]) AS run_id, unnest(?::VARCHAR[]) AS run,
                              generate_subscripts(?::INTEGER[], 1) AS pos),
                 d AS (SELECT unnest(?::VARCHAR[]) AS key, unnest(?::VARCHAR[]) AS metric,
                              generate_subscripts(?::VARCHAR[], 1) AS ord)"""
        return sql, [ids, names, ids, list(self.keys), list(self.displays), list(self.keys)]

    def scores(self) -> pa.Table:
        """``run, topic, metric, value`` ordered by run (output order), topic (byte order) and
        metric (request order)."""
        if not self.runs or not self.displays or self.rows.num_rows == 0:
            return SCORES_SCHEMA.empty_table()
        names, params = self._names()
        cur = cursor()
        try:
            cur.register("_shape_rows", self.rows)
            # DuckDB compares VARCHAR bytewise: ORDER BY topic is trec_eval's byte order (UTF-8)
            got = arrow_table(
                cur,
                f"""WITH {names}
                    SELECT r.run, s.topic, d.metric, s.value
                    FROM _shape_rows s JOIN r USING (run_id) JOIN d USING (key)
                    ORDER BY r.pos, s.topic, d.ord""",
                params,
            )
        finally:
            cur.close()
        return _typed(got, SCORES_SCHEMA)

    def means(self) -> list[tuple[str, str, float, int]]:
        """``(run, metric, summary, n_topics)`` for every run (output order) and metric (request
        order): the summary by :func:`evalstore.base.aggregate.aggregate`'s rule (NaN without a
        value); n_topics counts the topics with a score (NaN included, None not)."""
        found: dict[tuple[int, str], tuple[float, int]] = {}
        kinds = sorted(set(self.aggregates))
        if self.runs and self.displays and self.rows.num_rows:
            ids = [i for _, i in self.runs]
            cur = cursor()
            try:
                cur.register("_shape_rows", self.rows)
                for how in kinds:
                    keys = sorted({k for k, a in zip(self.keys, self.aggregates) if a == how})
                    rows = cur.execute(
                        summaries_sql(
                            "(SELECT run_id, key, value FROM _shape_rows WHERE key IN (SELECT unnest(?::VARCHAR[])) "
                            "AND run_id IN (SELECT unnest(?::INTEGER[])))",
                            "run_id, key",
                            how,
                        ),
                        [keys, ids],
                    ).fetchall()
                    for run_id, key, summary, n in rows:
                        found[(int(run_id), how + "\0" + key)] = (float(summary), n)
            finally:
                cur.close()
        out = []
        for name, run_id in self.runs:
            for disp, key, how in zip(self.displays, self.keys, self.aggregates):
                summary, n = found.get((run_id, how + "\0" + key), (math.nan, 0))
                out.append((name, disp, summary, int(n)))
        return out


def _typed(table: pa.Table, schema: pa.Schema) -> pa.Table:
    cols = [table.column(i).cast(f.type) if table.column(i).type != f.type else table.column(i)
            for i, f in enumerate(schema)]  # fmt: skip
    return pa.Table.from_arrays(cols, schema=schema)


def unshaped(
    rows: pa.Table,
    runs: Mapping[str, int],
    stored: Mapping[str, Any],
) -> Unshaped:
    """:class:`Unshaped` of ``rows`` (:data:`RAW_SCHEMA`), ``runs`` (name -> id, in output order) and
    ``stored`` (each requested metric's display name, in request order -> how its scores are stored:
    ``.key``, ``.aggregate``)."""
    displays = tuple(stored)
    return Unshaped(
        as_raw(rows),
        tuple((str(n), int(i)) for n, i in runs.items()),
        displays,
        tuple(stored[d].key for d in displays),
        tuple(stored[d].aggregate for d in displays),
    )


def rows_table(rows: Sequence[tuple[Any, str, str, float | None]], ids: Mapping[Any, int]) -> pa.Table:
    """Python rows ``(run, topic, key, value)`` as a raw table, each run given its id by ``ids``
    (rows of other runs left out)."""
    kept = [r for r in rows if r[0] in ids]
    return raw_table(
        [ids[r[0]] for r in kept],
        [r[1] for r in kept],
        [r[2] for r in kept],
        [None if r[3] is None else float(r[3]) for r in kept],
    )
