"""Ad-hoc SQL over a store: the result type and the read-only rule.

Read-only (the default) accepts only statements that cannot change the database: SELECT-like
statements, EXPLAIN and PRAGMA. They run inside a transaction that is rolled back, so that e.g.
``EXPLAIN ANALYZE INSERT ...`` leaves no trace.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import duckdb

from ..errors import StoreError

# Statement types that cannot change the database: allowed without write=True.
READ_ONLY_TYPES = {"SELECT", "EXPLAIN", "PRAGMA"}


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
        """The rows as a pandas DataFrame (pandas is optional)."""
        import pandas as pd

        return pd.DataFrame.from_records(self.rows, columns=self.columns)

    def pl(self) -> Any:
        """The rows as a polars DataFrame (polars is optional)."""
        import polars as pl

        return pl.from_arrow(self.arrow())

    def __repr__(self) -> str:
        return f"<QueryResult {len(self.rows)} row(s) x {len(self.columns)} column(s): {', '.join(self.columns)}>"


def check_statements(query: str, *, write: bool) -> None:
    """Raise StoreError for an empty query, a syntax error, or (unless ``write``) a statement
    that could change the store."""
    if not query or not query.strip():
        raise StoreError("empty SQL query")
    try:
        statements = duckdb.extract_statements(query)
    except duckdb.Error as e:
        raise StoreError(f"SQL error: {e}") from None
    if not statements:
        raise StoreError("empty SQL query (only comments or semicolons)")
    if write:
        return
    for st in statements:
        kind = st.type.name
        if kind not in READ_ONLY_TYPES:
            raise StoreError(
                f"this statement would change the store ({kind}); ad-hoc SQL is read-only "
                f"unless you pass write=True (CLI: --write)"
            )


def run_query(
    con: duckdb.DuckDBPyConnection,
    query: str,
    params: Sequence[Any] | dict | None = None,
    *,
    write: bool = False,
    in_transaction: bool = False,
) -> QueryResult:
    """Run ad-hoc SQL and return all rows of the last statement (see the module docstring).
    ``in_transaction``: the caller's transaction is open (a read-only query then joins it instead
    of opening and rolling back its own). Errors are raised as StoreError with DuckDB's message."""
    check_statements(query, write=write)
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
        raise StoreError(f"SQL error: {e}") from None
    return QueryResult(cols, rows)
