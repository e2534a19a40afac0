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
from .lockdown import Lockdown
from .migrations import applied, available_migrations, schema_version
from .query import QueryResult, run_query


class StoreHandle:
    """An open store as the library's lower layers see it: the connection, transactions, name
    lookups and ad-hoc SQL. :class:`evalstore.Store` (:func:`evalstore.open`) adds the operations
    (ingest, evaluate, compare, drop, ...) on top.

    The DuckDB connection is ``store.con``; the documented relations (``runs``, ``qrels_sets``,
    ``run_rows``, ``qrels``, ``scores``, ``leaderboard``, ...) can be queried with :meth:`sql`.
    """

    def __init__(
        self, con: duckdb.DuckDBPyConnection, location: str, read_only: bool = False, lockdown: Lockdown | None = None
    ):
        self.con: duckdb.DuckDBPyConnection = con
        self.location = location
        self.read_only = read_only
        #: how DuckDB locks the connection down (:mod:`evalstore.db.lockdown`), None: not at all
        self.lockdown = lockdown
        self._in_tx = False

    @property
    def sandbox(self) -> bool:
        """True for a store opened with ``evalstore.open(path, sandbox=True)``."""
        return self.lockdown is Lockdown.SANDBOX

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
        """All-or-nothing block. Nested use joins the outer transaction. On a store opened
        read-only, DuckDB's refusal of a change becomes a StoreError that says so."""
        if self._in_tx:
            yield self
            return
        self.con.execute("BEGIN TRANSACTION")
        self._in_tx = True
        try:
            yield self
        except BaseException as e:
            self._in_tx = False
            try:
                self.con.execute("ROLLBACK")
            except duckdb.Error:
                pass
            if self.read_only and isinstance(e, duckdb.Error) and "read-only mode" in str(e):
                raise StoreError(
                    f"the store {self.location} is open read-only, and this changes it: open it for writing "
                    f"(evalstore.open(path) without read_only=True, sandbox or query_only) to store anything; a "
                    f"read-only store reads runs, qrels and stored scores, and evaluates without storing"
                ) from e
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

        Read-only unless ``write=True``. On a store opened with ``query_only=True`` or
        ``sandbox=True`` DuckDB itself refuses every change of the store, a setting or a file
        (:mod:`evalstore.db.lockdown`); on any store the statements run in a read-only
        transaction that is rolled back (DuckDB refuses changes to the store), and a statement
        that could change the connection or write a file is refused before it runs
        (:mod:`evalstore.db.sqlsafety`, from DuckDB's own parser: the second layer, and the
        only one against files and settings on a store opened for writing in your own program).
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
            subsamples = {r[0] for r in self.con.execute("SELECT name FROM subsamples").fetchall()}
            raise NotFoundError(
                f"no qrels set named {name!r} in the store"
                + _known(name, self.qrels_names(), "qrels sets", "qrels", aside=subsamples)
            )
        return rows[0][0]

    def run_names(self) -> list[str]:
        return [r[0] for r in self.con.execute("SELECT name FROM run_meta ORDER BY name").fetchall()]

    def qrels_names(self) -> list[str]:
        return [r[0] for r in self.con.execute("SELECT name FROM qrels_meta ORDER BY name").fetchall()]

    def list_runs(self) -> QueryResult:
        return self.sql(
            "SELECT name, kind, unit, tag, format, n_topics, n_rows, sha256[1:12] AS sha256, "
            "ingested_at::TIMESTAMP(0) AS ingested_at, source, "
            # how the run was made: ingested from source, or a fused run's recipe (stale: an input changed)
            "CASE WHEN recipe IS NULL THEN 'ingested' WHEN stale THEN recipe || ' (stale: an input run changed "
            "since; evalstore fuse --refresh --name ' || name || ')' ELSE recipe END AS made "
            "FROM runs ORDER BY name"
        )

    def list_qrels(self) -> QueryResult:
        return self.sql(
            "SELECT name, kind, format, n_topics, n_judged, max_grade, nuggets, sha256[1:12] AS sha256, "
            "ingested_at::TIMESTAMP(0) AS ingested_at, source FROM qrels_sets ORDER BY name"
        )

    def list_topics(self) -> QueryResult:
        """The topic sets (``evalstore ingest topics``), with the qrels sets whose judged topics
        they hold (all of them: ``judged`` = the qrels set's topics found in the set)."""
        return self.sql(
            "SELECT s.name, s.format, s.field, s.n_topics, "
            "(SELECT string_agg(q.name || ' (' || q.found || '/' || q.n_topics || ')', ', ' ORDER BY q.name) FROM ("
            "  SELECT qs.name, qs.n_topics, count(DISTINCT t.topic) AS found FROM qrels_sets qs "
            "  JOIN (SELECT DISTINCT qrels, topic FROM qrels) j ON j.qrels = qs.name "
            "  JOIN topics t ON t.topics = s.name AND t.topic = j.topic "
            "  WHERE NOT qs.subsample GROUP BY qs.name, qs.n_topics) q) AS qrels_topics, "
            "s.sha256[1:12] AS sha256, s.ingested_at::TIMESTAMP(0) AS ingested_at, s.source "
            "FROM topic_sets s ORDER BY s.name"
        )

    def list_nuggets(self) -> QueryResult:
        return self.sql(
            "SELECT name, format, n_topics, n_nuggets, n_vital, sha256[1:12] AS sha256, "
            "ingested_at::TIMESTAMP(0) AS ingested_at, source FROM nugget_sets ORDER BY name"
        )

    def list_docs(self) -> QueryResult:
        """The doc sets (``evalstore ingest docs``)."""
        return self.sql(
            "SELECT name, format, n_docs, sha256[1:12] AS sha256, ingested_at::TIMESTAMP(0) AS ingested_at, source "
            "FROM doc_sets ORDER BY name"
        )


def _known(name: str, names: list[str], plural: str, kind: str, aside: set[str] | frozenset[str] = frozenset()) -> str:
    """The end of a not-found message: the closest names ("did you mean"), else some of the names
    (``aside``: names counted, not listed: a qrels set's subsamples)."""
    if not names:
        return f"; ingest one with `evalstore ingest {kind} FILE`"
    close = (
        difflib.get_close_matches(name, names, n=3, cutoff=0.6)
        or [n for n in names if name.lower() == n.lower() or name.lower() in n.lower()][:3]
    )
    if close:
        return f" (did you mean {' or '.join(repr(c) for c in close)}?)"
    listed = [n for n in names if n not in aside] or names
    more = f"; and {len(names) - len(listed)} subsample(s)" if len(listed) < len(names) else ""
    return f" ({plural}: {', '.join(listed[:20])}{' ...' if len(listed) > 20 else ''}{more})"
