"""Ad-hoc SQL over a store: the result type and the read-only rule.

Read-only (the default) rests on DuckDB: a store opened for queries is a locked-down connection
(:mod:`.lockdown`) that refuses every change of the store, a setting or a file; on any store the
statements run in a read-only transaction (DuckDB refuses changes to the store) that is rolled
back. The statement check of :mod:`.sqlsafety` (DuckDB's parser) is a second layer that refuses
what read-only SQL has no use for, with a message that says why. The sandbox rule adds that no
file is read either.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import duckdb

from ..base.optional import require_pandas
from ..errors import StoreError, is_resource_error
from .sqlsafety import NotReadOnly, check_read_only, statements


@dataclass
class QueryResult:
    """Rows of an ad-hoc query with their column names."""

    columns: list[str]
    rows: list[tuple]
    #: why rows were left out (``max_rows`` / ``max_bytes`` reached), else None
    truncated: str | None = None

    def __iter__(self) -> Iterator[tuple]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def records(self) -> list[dict[str, Any]]:
        return [dict(zip(self.columns, r)) for r in self.rows]

    def arrow(self) -> Any:
        """The rows as a pyarrow Table (types inferred from the values)."""
        import pyarrow as pa

        return pa.table({c: [r[i] for r in self.rows] for i, c in enumerate(self.columns)})

    def df(self) -> Any:
        """The rows as a pandas DataFrame (pandas is optional: ``pip install "evalstore[pandas]"``)."""
        require_pandas("QueryResult.df()")
        import pandas as pd

        return pd.DataFrame.from_records(self.rows, columns=self.columns)

    def pl(self) -> Any:
        """The rows as a polars DataFrame (polars is optional)."""
        import polars as pl

        return pl.from_arrow(self.arrow())

    def __repr__(self) -> str:
        return f"<QueryResult {len(self.rows)} row(s) x {len(self.columns)} column(s): {', '.join(self.columns)}>"


def arrow_table(con: duckdb.DuckDBPyConnection, query: str, params: list | None = None) -> Any:
    """The result of a query as a pyarrow Table, in bulk (duckdb 2 spells it to_arrow_table, 1.x arrow)."""
    rel = con.sql(query, params=params)
    fetch = getattr(rel, "to_arrow_table", None) or getattr(rel, "arrow")  # noqa: B009
    return fetch()


def arrow_reader(con: duckdb.DuckDBPyConnection, query: str, params: list | None = None, batch_size: int = 1 << 17):
    """The result of a query as a pyarrow RecordBatchReader of ``batch_size`` rows a batch (duckdb 2
    spells it to_arrow_reader, 1.x fetch_arrow_reader)."""
    rel = con.sql(query, params=params)
    fetch = getattr(rel, "to_arrow_reader", None) or getattr(rel, "fetch_arrow_reader")  # noqa: B009
    return fetch(batch_size)


def check_statements(
    query: str, *, write: bool, sandbox: bool = False, con: duckdb.DuckDBPyConnection | None = None
) -> None:
    """Raise StoreError for an empty query, a syntax error, or (unless ``write``) a statement
    that read-only SQL refuses (:mod:`.sqlsafety`); ``sandbox``: the sandbox rule, with the
    relations of ``con`` as the only ones a query may name."""
    if write:
        statements(query)
    else:
        check_read_only(query, sandbox=sandbox, relations=relations(con) if sandbox and con is not None else ())


def relations(con: duckdb.DuckDBPyConnection) -> set[str]:
    """The names of the tables and views a query on ``con`` can name (the store's, DuckDB's
    catalogue views such as ``information_schema.tables``)."""
    rows = con.execute("SELECT table_name FROM duckdb_tables() UNION SELECT view_name FROM duckdb_views()").fetchall()
    return {r[0] for r in rows}


def run_query(
    con: duckdb.DuckDBPyConnection,
    query: str,
    params: Sequence[Any] | dict | None = None,
    *,
    write: bool = False,
    in_transaction: bool = False,
    sandbox: bool = False,
    max_rows: int | None = None,
    max_bytes: int | None = None,
) -> QueryResult:
    """Run ad-hoc SQL and return all rows of the last statement (see the module docstring).
    ``in_transaction``: the caller's transaction is open (a read-only query then joins it instead
    of opening and rolling back its own); ``sandbox``: the sandbox rule. ``max_rows``,
    ``max_bytes``: keep at most that many rows, and stop before the rows' values (as Python
    objects) exceed that many bytes (``result.truncated`` says which cap was met). Errors are
    raised as StoreError with DuckDB's message."""
    check_statements(query, write=write, sandbox=sandbox, con=con)
    rollback = not write and not in_transaction
    truncated = None
    try:
        if rollback:
            begin_read_only(con)
        try:
            cur = con.execute(query, params) if params is not None else con.execute(query)
            cols = [d[0] for d in cur.description] if cur.description else []
            if not cur.description:
                rows: list[tuple] = []
            elif max_rows is None and max_bytes is None:
                rows = cur.fetchall()
            else:
                rows, truncated = _fetch_capped(cur, max_rows, max_bytes)
        finally:
            if rollback:
                con.execute("ROLLBACK")
    except duckdb.Error as e:
        if is_resource_error(e):  # out of memory, disk full, damaged file, interrupted: the CLI explains them
            raise
        if not write and _read_only_refusal(e):  # DuckDB's own refusal, said as the statement check says it
            first = str(e).strip().splitlines()[0]
            raise NotReadOnly(
                f"this statement is refused (it would change the store; DuckDB: {first}); ad-hoc SQL is read-only "
                f"unless you pass write=True (CLI: --write)"
            ) from None
        raise StoreError(f"SQL error: {e}") from None
    return QueryResult(cols, rows, truncated)


def _read_only_refusal(e: duckdb.Error) -> bool:
    """DuckDB refused a change: of a store opened read-only, or in a read-only transaction."""
    text = str(e)
    return "read-only mode" in text or "transaction is launched in read-only mode" in text


def begin_read_only(con: duckdb.DuckDBPyConnection) -> None:
    """Open a transaction in which DuckDB refuses every change of the store (``BEGIN TRANSACTION
    READ ONLY``; a plain transaction where DuckDB does not know it)."""
    try:
        con.execute("BEGIN TRANSACTION READ ONLY")
    except duckdb.ParserException:
        con.execute("BEGIN TRANSACTION")


#: rows converted to Python objects at a time when a result is capped (fewer while rows are large)
_FETCH = 64


def _fetch_capped(
    cur: duckdb.DuckDBPyConnection, max_rows: int | None, max_bytes: int | None
) -> tuple[list, str | None]:
    """The rows of ``cur`` up to ``max_rows`` rows and ``max_bytes`` bytes of values, converted a
    few at a time: one row first, then as many as the rows seen so far say fit (a result of a
    hundred 10 MB strings is never copied whole into Python)."""
    rows: list[tuple] = []
    size = 0
    want = 1
    while True:
        if max_rows is not None:
            want = min(want, max_rows - len(rows))
        if want <= 0:
            more = cur.fetchmany(1)
            return rows, f"the first {len(rows):,} rows; the result has more" if more else None
        chunk = cur.fetchmany(want)
        if not chunk:
            return rows, None
        for row in chunk:
            size += value_size(row)
            if max_bytes is not None and size > max_bytes:
                return rows, f"the first {len(rows):,} rows: the result reached {max_bytes / 2**20:g} MiB"
            rows.append(row)
        average = size / len(rows)
        left = (max_bytes - size) if max_bytes is not None else float("inf")
        want = int(max(1, min(_FETCH, left // max(average, 1.0))))


def value_size(value: Any, limit: int = 1 << 40) -> int:
    """About how many bytes a fetched value holds: the length of strings and bytes, 8 for other
    scalars, the sum for lists, tuples and dicts (structs, maps)."""
    if isinstance(value, (str, bytes, bytearray)):
        return len(value)
    if isinstance(value, (list, tuple)):
        total = 8
        for v in value:
            total += value_size(v)
            if total > limit:
                break
        return total
    if isinstance(value, dict):
        return 8 + sum(value_size(k) + value_size(v) for k, v in value.items())
    return 8
