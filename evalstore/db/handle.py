"""The store as the library's lower layers see it: :class:`StoreHandle`.

Ingest, evaluation, meta-evaluation, subsamples, layout and drop need only this of a store: the
DuckDB connection (``con``), ``transaction()``, the id lookups (``run_id``, ``qrels_id``, with the
closest names in the error), the stored names, ad-hoc SQL (``sql``) and ``read_only``/``location``.
They type against it, so none of them imports the :class:`evalstore.Store` facade that sits on top
of them (the facade is a subclass that adds the operations; :mod:`evalstore.store`).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import duckdb

from ..errors import NotFoundError, StoreError
from .migrations import applied, available_migrations, schema_version
from .query import QueryResult, run_query


class StoreHandle:
    """An open store as the library's lower layers see it: the connection, transactions, name
    lookups and ad-hoc SQL. :class:`evalstore.Store` (:func:`evalstore.open`) adds the operations
    (ingest, evaluate, compare, drop, ...) on top.

    The DuckDB connection is ``store.con``; the documented relations (``runs``, ``qrels_sets``,
    ``run_rows``, ``qrels``, ``scores``, ``leaderboard``, ...) can be queried with :meth:`sql`.
    """

    def __init__(self, con: duckdb.DuckDBPyConnection, location: str, read_only: bool = False, sandbox: bool = False):
        self.con: duckdb.DuckDBPyConnection = con
        self.location = location
        self.read_only = read_only
        self.sandbox = sandbox
        self._in_tx = False

    # ------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        if self.con is not None:
            self.con.close()
            self.con = None  # type: ignore[assignment]  # closed: any further use fails loudly

    def __enter__(self) -> StoreHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<evalstore.{type(self).__name__} {self.location!r} schema v{self.schema_version()}>"

    @property
    def in_transaction(self) -> bool:
        """True inside :meth:`transaction`."""
        return self._in_tx

    @contextmanager
    def transaction(self) -> Iterator[StoreHandle]:
        """All-or-nothing block. Nested use joins the outer transaction."""
        if self._in_tx:
            yield self
            return
        self.con.execute("BEGIN TRANSACTION")
        self._in_tx = True
        try:
            yield self
        except BaseException:
            self._in_tx = False
            try:
                self.con.execute("ROLLBACK")
            except duckdb.Error:
                pass
            raise
        else:
            self._in_tx = False
            self.con.execute("COMMIT")

    # ------------------------------------------------------------------ schema
    def schema_version(self) -> int:
        return schema_version(self.con)

    def status(self) -> dict[str, Any]:
        """Schema version of the store, newest version this code knows, applied migrations."""
        return {
            "location": self.location,
            "exists": True,
            "state": "current",
            "schema_version": self.schema_version(),
            "code_schema_version": len(available_migrations()),
            "applied": applied(self.con),
            "n_runs": self.con.execute("SELECT count(*) FROM run_meta").fetchall()[0][0],
            "n_qrels": self.con.execute("SELECT count(*) FROM qrels_meta").fetchall()[0][0],
        }

    # ------------------------------------------------------------------ queries
    def sql(
        self,
        query: str,
        params: Sequence[Any] | dict | None = None,
        *,
        write: bool = False,
        sandbox: bool = False,
        max_rows: int | None = None,
        max_bytes: int | None = None,
    ) -> QueryResult:
        """Run ad-hoc SQL (DuckDB dialect) and return all rows of the last statement.

        Read-only unless ``write=True``: a statement that could change the store or the
        connection is refused (:mod:`evalstore.db.sqlsafety`; ``COPY (query) TO 'file'`` is
        allowed), and the statements run inside a transaction that is rolled back.
        ``sandbox=True`` requires a store opened with ``evalstore.open(path, sandbox=True)``
        (DuckDB applies the sandbox to a whole database instance): no file or network access.
        ``max_rows``, ``max_bytes``: keep at most that many rows and bytes of values
        (``result.truncated`` says when rows were left out).
        Errors are raised as :class:`StoreError` with DuckDB's message."""
        if sandbox and not self.sandbox:
            raise StoreError(
                "sandboxed queries need a store opened for them: evalstore.open(path, sandbox=True) "
                "(CLI: evalstore sql --sandbox); DuckDB applies the sandbox to a whole database instance"
            )
        if write and self.sandbox:
            raise StoreError("a sandboxed store is read-only: write=True is refused")
        return run_query(
            self.con,
            query,
            params,
            write=write,
            in_transaction=self._in_tx,
            sandbox=self.sandbox,
            max_rows=max_rows,
            max_bytes=max_bytes,
        )

    # ------------------------------------------------------------------ names and ids
    def run_id(self, name: str) -> int:
        rows = self.con.execute("SELECT run_id FROM run_meta WHERE name = ?", [name]).fetchall()
        if not rows:
            raise NotFoundError(f"no run named {name!r} in the store" + _known(name, self.run_names(), "runs", "run"))
        return rows[0][0]

    def qrels_id(self, name: str) -> int:
        rows = self.con.execute("SELECT qrels_id FROM qrels_meta WHERE name = ?", [name]).fetchall()
        if not rows:
            raise NotFoundError(
                f"no qrels set named {name!r} in the store" + _known(name, self.qrels_names(), "qrels sets", "qrels")
            )
        return rows[0][0]

    def run_names(self) -> list[str]:
        return [r[0] for r in self.con.execute("SELECT name FROM run_meta ORDER BY name").fetchall()]

    def qrels_names(self) -> list[str]:
        return [r[0] for r in self.con.execute("SELECT name FROM qrels_meta ORDER BY name").fetchall()]

    def list_runs(self) -> QueryResult:
        return self.sql(
            "SELECT name, tag, format, n_topics, n_rows, sha256[1:12] AS sha256, "
            "ingested_at::TIMESTAMP(0) AS ingested_at, source, "
            # how the run was made: ingested from source, or a fused run's recipe (stale: an input changed)
            "CASE WHEN recipe IS NULL THEN 'ingested' WHEN stale THEN recipe || ' (stale: an input run changed "
            "since; evalstore fuse --refresh --name ' || name || ')' ELSE recipe END AS made "
            "FROM runs ORDER BY name"
        )

    def list_qrels(self) -> QueryResult:
        return self.sql(
            "SELECT name, format, n_topics, n_judged, max_grade, sha256[1:12] AS sha256, "
            "ingested_at::TIMESTAMP(0) AS ingested_at, source FROM qrels_sets ORDER BY name"
        )


def _known(name: str, names: list[str], plural: str, kind: str) -> str:
    """The end of a not-found message: the closest names ("did you mean"), else some of the names."""
    if not names:
        return f"; ingest one with `evalstore ingest {kind} FILE`"
    close = (
        difflib.get_close_matches(name, names, n=3, cutoff=0.6)
        or [n for n in names if name.lower() == n.lower() or name.lower() in n.lower()][:3]
    )
    if close:
        return f" (did you mean {' or '.join(repr(c) for c in close)}?)"
    return f" ({plural}: {', '.join(names[:20])}{' ...' if len(names) > 20 else ''})"
