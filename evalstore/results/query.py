"""An :class:`~evalstore.results.eval_result.EvalResult` of per-topic scores held in a DuckDB table.

For a store's evaluation the rows are in a temporary table of the evaluation's connection, which
is dropped when the evaluation ends: they are fetched once as an Arrow table (columnar, no Python
object per score) and shaped by :mod:`evalstore.results.shaping` when the result is first read. On
100,000 topics x 5 metrics this is what makes evaluating stored runs again cheap (issue 29, 42).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import duckdb

from ..db.query import arrow_table
from .eval_result import EvalResult, Stored, result_of_arrow


def result_of_table(
    con: duckdb.DuckDBPyConnection,
    qrels: str,
    stored: Mapping[str, Stored],
    runs: Mapping[str, int],
    source: str,
    params: Sequence[object] = (),
    notes: Sequence[str] = (),
) -> EvalResult:
    """The result of the rows ``run_id, topic, key, value`` that the SQL query ``source`` gives
    (its parameters ``params``, positional ``?``); ``runs`` maps each run's name, in output order,
    to its id (rows of other runs are left out); ``stored`` as for ``result_of_rows``."""
    keys = sorted({stored[d].key for d in stored})
    rows = arrow_table(
        con,
        f"SELECT run_id::INTEGER AS run_id, topic, key, value FROM ({source}) "
        "WHERE run_id IN (SELECT unnest(?::INTEGER[])) AND key IN (SELECT unnest(?::VARCHAR[]))",
        [*params, list(runs.values()), keys],
    )
    return result_of_arrow(qrels, stored, runs, rows, notes)
