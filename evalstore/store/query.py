"""Ad-hoc SQL over a store: the result type and the read-only rule.

Read-only (the default) accepts only statements that change nothing: not the store, not the
connection, no file (:mod:`.sqlsafety`); they also run inside a transaction that is rolled back.
The sandbox rule adds that no file is read either.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import duckdb

from ..errors import StoreError, is_resource_error
from ..optional import require_pandas
from .sqlsafety import check_read_only, statements


@dataclass
class QueryResult:
    """Rows of an ad-hoc query with their column names."""

    columns: list[str]
    rows: list[tuple]

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
) -> QueryResult:
    """Run ad-hoc SQL and return all rows of the last statement (see the module docstring).
    ``in_transaction``: the caller's transaction is open (a read-only query then joins it instead
    of opening and rolling back its own); ``sandbox``: the sandbox rule. Errors are raised as
    StoreError with DuckDB's message."""
    check_statements(query, write=write, sandbox=sandbox, con=con)
    rollback = not write and not in_transaction
    try:
        if rollback:
            con.execute("BEGIN TRANSACTION")
        try:
            cur = con.execute(query, params) if params is not None else con.execute(query)
            cols = [d[0] for d in cur.description] if cur.description else []
            rows = cur.fetchall() if cur.description else []
        finally:
            if rollback:
                con.execute("ROLLBACK")
    except duckdb.Error as e:
        if is_resource_error(e):  # out of memory, disk full, damaged file, interrupted: the CLI explains them
            raise
        raise StoreError(f"SQL error: {e}") from None
    return QueryResult(cols, rows)
