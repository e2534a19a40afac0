"""The query page's engine: one read-only statement in DuckDB's sandbox, with a row cap and a time limit.

What keeps a query from changing or reading anything is DuckDB's, for the whole connection: the
store is opened with ``evalstore.open(path, sandbox=True)`` (:mod:`evalstore.db.lockdown`): a
read-only connection, ``enable_external_access = false``, the local file system disabled (not even
the store file's bytes or a temp folder are reachable; the page never spills), no extension
installed or loaded, ``lock_configuration`` set last, and none of evalstore's Python functions over
lists registered on that database instance. On top, as second layers: the statement check of
:meth:`evalstore.Store.sql` (:mod:`evalstore.db.sqlsafety`, DuckDB's parser), and this page runs
one statement of the kinds that only read (a query, ``EXPLAIN``, a describing ``PRAGMA``).

A query (``SELECT``, ``FROM``, ``WITH``, ``SHOW``, ``DESCRIBE``, ``SUMMARIZE``, ``VALUES``) runs
as ``SELECT * FROM (query) LIMIT cap + 1``, so DuckDB stops after the rows shown; a timer
interrupts the connection (``con.interrupt()``) when the time limit is reached.

Limits that hold whatever the query:

* time: DuckDB checks for the interrupt between its steps, but not inside a Python function it
  calls; evalstore's Python functions over lists (``bootstrap_asl``, ``ndpm``, ...: one call can
  run for minutes) do not exist on the page's connection, and the table functions that ignore an
  interrupt (``test_all_types``) are refused by the second layer;
* size: rows are converted to Python a few at a time and the result stops at :data:`ROW_CAP`
  rows or :data:`BYTE_CAP` bytes of values, whichever comes first (``truncated`` says which);
* what is shown: absolute paths of this machine (the store's folder, the home, temp and extension
  folders, which ``PRAGMA database_list``, ``duckdb_extensions()`` or ``current_setting`` show)
  are replaced by short names in results and messages (:func:`redact`). That is courtesy, not a
  guarantee (a query can spell a path otherwise): no path leads anywhere from this connection.
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import duckdb

from ..db.sqlsafety import statement_kind
from ..errors import EvalstoreError, StoreError, StoreLockedError
from ..metrics.sql_functions import list_function_names
from ..store import open as open_store

ROW_CAP = 1000
TIME_LIMIT = 5.0
#: bytes of values the page shows at most (and the CSV download holds)
BYTE_CAP = 8 << 20
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
    truncated: str | None = None  # why rows were left out (the row or byte cap), else None
    error: str | None = None
    elapsed: float = 0.0
    ran: bool = False


@dataclass(frozen=True)
class SqlLimits:
    """The query page's store and limits (``evalstore serve``'s options): :meth:`run` runs a query
    under them."""

    location: str
    row_cap: int = ROW_CAP
    time_limit: float = TIME_LIMIT
    wait: float = 0.0
    memory_limit: str | None = None
    threads: int | None = None

    def run(self, query: str) -> SqlOutcome:
        return run(
            self.location,
            query,
            row_cap=self.row_cap,
            time_limit=self.time_limit,
            wait=self.wait,
            memory_limit=self.memory_limit,
            threads=self.threads,
            yield_to_writers=True,
        )


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
    kind = statement_kind(sts[0])
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


def _explained(message: str) -> str:
    """DuckDB's message, with what the page offers instead when a query calls one of evalstore's
    Python functions over lists (they do not exist on the page's connection)."""
    if "does not exist" in message:
        missing = sorted(name for name in list_function_names() if f"name {name} " in message)
        if missing:
            return (
                f"evalstore's Python functions over lists ({', '.join(missing)}) are not available on this page: "
                f"DuckDB cannot stop them at the page's time limit; run the query with `evalstore sql` instead"
            )
    return message


def run(
    location: str,
    query: str,
    *,
    row_cap: int = ROW_CAP,
    time_limit: float = TIME_LIMIT,
    wait: float = 0.0,
    memory_limit: str | None = None,
    threads: int | None = None,
    byte_cap: int = BYTE_CAP,
    yield_to_writers: bool = False,
) -> SqlOutcome:
    """Run ``query`` on the store at ``location`` in the sandbox; errors become ``outcome.error``
    (a busy store raises :class:`~evalstore.errors.StoreLockedError`; ``yield_to_writers``: a
    writer waiting for the store counts as busy, see :func:`evalstore.open`)."""
    out = SqlOutcome(query)
    if not query.strip():
        return out
    try:
        statement = prepare(query, row_cap)
    except EvalstoreError as e:
        out.error = str(e)
        return out
    store = open_store(
        location,
        sandbox=True,
        wait=wait,
        memory_limit=memory_limit,
        threads=threads,
        yield_to_writers=yield_to_writers,
    )
    con = store.con
    secrets = private_paths(location, con)

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
        res = store.sql(statement, sandbox=True, max_rows=row_cap, max_bytes=byte_cap)
        out.columns = [redact(c, secrets) for c in res.columns]
        out.rows = [tuple(redact(v, secrets) for v in r) for r in res.rows]
        out.truncated = res.truncated
        out.ran = True
    except StoreLockedError:
        raise
    except duckdb.InterruptException:
        out.error = f"the query was stopped after {time_limit:g} s (the time limit of this page)"
    except (StoreError, EvalstoreError) as e:
        out.error = _explained(str(e))
    except duckdb.Error as e:
        if "interrupt" in str(e).lower():
            out.error = f"the query was stopped after {time_limit:g} s (the time limit of this page)"
        else:
            out.error = f"DuckDB: {str(e).strip().splitlines()[0]}"
    finally:
        timer.cancel()
        out.elapsed = time.perf_counter() - start
        store.close()
    if out.error:
        out.error = redact(out.error, secrets)
    return out


def private_paths(location: str, con: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    """``(absolute path, what the page shows instead)`` for the folders of this machine a query can
    see: the store file and folder, DuckDB's home, extension, secret and temp folders, the user's
    home, the system's temp folder, the server's working folder; longest first."""
    store = os.path.abspath(os.path.expanduser(location))
    pairs = [(store, os.path.basename(store)), (os.path.dirname(store), "<store folder>")]
    for setting, label in (
        ("extension_directory", "<extension folder>"),
        ("secret_directory", "<secret folder>"),
        ("home_directory", "<duckdb home>"),
        ("temp_directory", "<temp folder>"),
    ):
        try:
            value = con.execute(f"SELECT current_setting('{setting}')").fetchone()[0]  # type: ignore[index]
        except duckdb.Error:
            continue
        if isinstance(value, str) and os.path.isabs(value):
            pairs.append((os.path.normpath(value), label))
    pairs += [(tempfile.gettempdir(), "<tmp>"), (os.path.expanduser("~"), "~"), (os.getcwd(), ".")]
    seen: dict[str, str] = {}
    for path, label in pairs:
        real = os.path.realpath(path)
        for p in (path, real):
            if len(p) > 1 and p not in seen:  # never "/" alone
                seen[p] = label
    return sorted(seen.items(), key=lambda kv: -len(kv[0]))


def redact(value: Any, secrets: list[tuple[str, str]]) -> Any:
    """``value`` with every path of ``secrets`` replaced by its label (in strings, lists and
    dicts; other values as they are)."""
    if isinstance(value, str):
        for path, label in secrets:
            if path in value:
                value = value.replace(path, label)
        return value
    if isinstance(value, list):
        return [redact(v, secrets) for v in value]
    if isinstance(value, tuple):
        return tuple(redact(v, secrets) for v in value)
    if isinstance(value, dict):
        return {redact(k, secrets): redact(v, secrets) for k, v in value.items()}
    return value
