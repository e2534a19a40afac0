"""The query page's engine: one read-only statement in DuckDB's sandbox, with a row cap and a time limit.

Layers, each enough on its own to stop a file read or a write:

* the store is opened with ``evalstore.open(path, sandbox=True)``: read-only, DuckDB's
  ``enable_external_access = false`` (no file system, no network, no extension) and
  ``lock_configuration`` (the query cannot turn it back on);
* :meth:`evalstore.Store.sql` with ``sandbox=True`` applies the library's read-only statement check;
* this page accepts one statement, of the kinds that only read (a query, ``EXPLAIN``, a
  describing ``PRAGMA``), so ``COPY ... TO`` and ``EXPORT`` are refused before they reach DuckDB.

A query (``SELECT``, ``FROM``, ``WITH``, ``SHOW``, ``DESCRIBE``, ``SUMMARIZE``, ``VALUES``) runs
as ``SELECT * FROM (query) LIMIT cap + 1``, so DuckDB stops after the rows shown; a timer
interrupts the connection (``con.interrupt()``) when the time limit is reached.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

import duckdb

from ..errors import EvalstoreError, StoreError, StoreLockedError
from ..facade import open as open_store

ROW_CAP = 1000
TIME_LIMIT = 5.0
#: the statement kinds the page runs (DuckDB's statement types)
ALLOWED = {"SELECT", "EXPLAIN", "PRAGMA"}

EXAMPLES = (
    "SELECT run, metric, round(mean, 4) AS mean, n_topics FROM leaderboard ORDER BY metric, mean DESC",
    "SELECT topic, metric, round(median(value), 4) AS median FROM scores GROUP BY ALL ORDER BY metric, median",
    "SELECT name, n_topics, n_judged, max_grade FROM qrels_sets",
    "SHOW TABLES",
)


@dataclass
class SqlOutcome:
    query: str
    columns: list[str] = field(default_factory=list)
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    truncated: bool = False
    error: str | None = None
    elapsed: float = 0.0
    ran: bool = False


class QueryRefused(EvalstoreError):
    """A statement the query page does not run."""


def prepare(query: str, row_cap: int) -> str:
    """The statement to run for ``query`` (one statement of an allowed kind), capped at ``row_cap + 1`` rows."""
    try:
        sts = duckdb.extract_statements(query)
    except duckdb.Error as e:
        raise QueryRefused(f"SQL error: {str(e).strip().splitlines()[0]}") from None
    if not sts:
        raise QueryRefused("empty query")
    if len(sts) > 1:
        raise QueryRefused(f"one statement at a time, please (this query has {len(sts)})")
    kind = sts[0].type.name
    if kind not in ALLOWED:
        raise QueryRefused(
            f"the query page only reads: {kind.replace('_', ' ')} statements are refused "
            f"(no COPY, EXPORT, ATTACH, SET or change of any kind)"
        )
    text = sts[0].query.strip()
    if kind == "SELECT":
        # newlines around the query: a trailing -- comment cannot swallow the limit
        return f"SELECT * FROM (\n{text}\n) AS evalstore_query LIMIT {int(row_cap) + 1}"
    return text


def run(
    location: str,
    query: str,
    *,
    row_cap: int = ROW_CAP,
    time_limit: float = TIME_LIMIT,
    wait: float = 0.0,
    memory_limit: str | None = None,
    threads: int | None = None,
) -> SqlOutcome:
    """Run ``query`` on the store at ``location`` in the sandbox; errors become ``outcome.error``
    (a busy store raises :class:`~evalstore.errors.StoreLockedError`)."""
    out = SqlOutcome(query)
    if not query.strip():
        return out
    try:
        statement = prepare(query, row_cap)
    except EvalstoreError as e:
        out.error = str(e)
        return out
    store = open_store(location, sandbox=True, wait=wait, memory_limit=memory_limit, threads=threads)
    con = store.con

    def stop() -> None:
        try:
            con.interrupt()
        except duckdb.Error:  # the query ended (and the connection closed) meanwhile
            pass

    timer = threading.Timer(time_limit, stop)
    timer.daemon = True
    start = time.perf_counter()
    try:
        timer.start()
        res = store.sql(statement, sandbox=True)
        out.columns, out.rows = list(res.columns), list(res.rows)
        out.ran = True
    except StoreLockedError:
        raise
    except duckdb.InterruptException:
        out.error = f"the query was stopped after {time_limit:g} s (the time limit of this page)"
    except (StoreError, EvalstoreError) as e:
        out.error = str(e)
    except duckdb.Error as e:
        if "interrupt" in str(e).lower():
            out.error = f"the query was stopped after {time_limit:g} s (the time limit of this page)"
        else:
            out.error = f"DuckDB: {str(e).strip().splitlines()[0]}"
    finally:
        timer.cancel()
        out.elapsed = time.perf_counter() - start
        store.close()
    if len(out.rows) > row_cap:
        out.rows = out.rows[:row_cap]
        out.truncated = True
    return out
