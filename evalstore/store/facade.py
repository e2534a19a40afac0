"""The :class:`Store` facade: one object for everything a notebook or the CLI does with a store.

Its methods are thin: each delegates to the module that owns the job (:mod:`evalstore.ingest`,
:mod:`evalstore.evaluate`, :mod:`evalstore.store.query`, ...).
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import duckdb

from ..comparison import Comparison, compare
from ..drop import DropPlan, drop_qrels, drop_runs
from ..errors import NotFoundError, StoreError
from ..evaluate import evaluate
from ..ingest import IngestResult, ingest_qrels, ingest_runs
from ..result import EvalResult
from .connection import Settings, check_metadata, connect, register_functions, resolve_location
from .migrations import applied, available_migrations, check_current, migrate, schema_version
from .query import QueryResult, run_query

if TYPE_CHECKING:
    import sqlalchemy

    from ..meta.design import Design
    from ..repro import Reproduction


class Store:
    """An open evaluation store. Use :func:`evalstore.open` to get one.

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

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<evalstore.Store {self.location!r} schema v{self.schema_version()}>"

    @property
    def in_transaction(self) -> bool:
        """True inside :meth:`transaction`."""
        return self._in_tx

    @contextmanager
    def transaction(self) -> Iterator[Store]:
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
    ) -> QueryResult:
        """Run ad-hoc SQL (DuckDB dialect) and return all rows of the last statement.

        Read-only unless ``write=True``: a statement that could change the store or the
        connection is refused (:mod:`evalstore.store.sqlsafety`; ``COPY (query) TO 'file'`` is
        allowed), and the statements run inside a transaction that is rolled back.
        ``sandbox=True`` requires a store opened with ``evalstore.open(path, sandbox=True)``
        (DuckDB applies the sandbox to a whole database instance): no file or network access.
        Errors are raised as :class:`StoreError` with DuckDB's message."""
        if sandbox and not self.sandbox:
            raise StoreError(
                "sandboxed queries need a store opened for them: evalstore.open(path, sandbox=True) "
                "(CLI: evalstore sql --sandbox); DuckDB applies the sandbox to a whole database instance"
            )
        if write and self.sandbox:
            raise StoreError("a sandboxed store is read-only: write=True is refused")
        return run_query(self.con, query, params, write=write, in_transaction=self._in_tx, sandbox=self.sandbox)

    def sqlalchemy_engine(self, **kwargs: Any) -> sqlalchemy.engine.Engine:
        """An SQLAlchemy engine (duckdb-engine) whose connections are cursors of this store's
        DuckDB connection, so it sees the same database (also ``:memory:`` stores) and the
        store's SQL functions. Close the store after disposing of the engine."""
        import sqlalchemy  # optional heavy imports, only when asked for
        from duckdb_engine import ConnectionWrapper

        def creator() -> ConnectionWrapper:
            if self.con is None:
                raise StoreError("the store is closed")
            cur = self.con.cursor()
            register_functions(cur)
            return ConnectionWrapper(cur)

        return sqlalchemy.create_engine("duckdb://", creator=creator, **kwargs)

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
            "ingested_at::TIMESTAMP(0) AS ingested_at, source FROM runs ORDER BY name"
        )

    def list_qrels(self) -> QueryResult:
        return self.sql(
            "SELECT name, format, n_topics, n_judged, max_grade, sha256[1:12] AS sha256, "
            "ingested_at::TIMESTAMP(0) AS ingested_at, source FROM qrels_sets ORDER BY name"
        )

    # ------------------------------------------------------------------ ingestion (evalstore.ingest)
    def ingest_run(self, paths: str | os.PathLike | Iterable, **kwargs: Any) -> list[IngestResult]:
        """Ingest TREC or NTCIR run file(s); see :func:`evalstore.ingest.ingest_runs`."""
        return ingest_runs(self, paths, **kwargs)

    def ingest_qrels(self, paths: str | os.PathLike | Iterable, **kwargs: Any) -> list[IngestResult]:
        """Ingest TREC or NTCIR qrels file(s); see :func:`evalstore.ingest.ingest_qrels`."""
        return ingest_qrels(self, paths, **kwargs)

    def drop_runs(self, names: Sequence[str]) -> DropPlan:
        """Remove runs, their scores and the analyses that read them; see :mod:`evalstore.drop`."""
        return drop_runs(self, names)

    def drop_qrels(self, names: Sequence[str]) -> DropPlan:
        """Remove qrels sets, their scores, subsamples and analyses; see :mod:`evalstore.drop`."""
        return drop_qrels(self, names)

    # ------------------------------------------------------------------ evaluation (evalstore.evaluate)
    def evaluate(
        self,
        qrels: str,
        runs: Sequence[str] | None = None,
        metrics: Sequence[str] | str = ("AP",),
        **options: Any,
    ) -> EvalResult:
        """Compute metrics for runs against a qrels set, store the per-topic scores, return them.

        See :mod:`evalstore.evaluate` for the options."""
        return evaluate(self, qrels, runs, metrics, **options)

    def compare(
        self,
        qrels: str,
        baseline: str,
        runs: Sequence[str] | None = None,
        metrics: Sequence[str] | str = ("AP",),
        **options: Any,
    ) -> Comparison:
        """Compare runs with a baseline: means, significance, effect sizes (stored as an analysis).

        See :func:`evalstore.compare.compare` for the options."""
        return compare(self, qrels, baseline, runs, metrics, **options)

    # ------------------------------------------------------------------ reproducibility and design (issue 24)
    def repro(
        self,
        qrels: str,
        baseline: str,
        advanced: str,
        rep_baseline: str,
        rep_advanced: str,
        metrics: Sequence[str] | str = ("AP",),
        *,
        rep_qrels: str | None = None,
        rbo_p: float = 0.8,
        cut: int = 1000,
        order: str = "trec_eval",
        missing: str = "error",
        convention: str = "trec_eval",
        complete: bool = False,
        depth: int | None = None,
        save: bool = True,
    ) -> Reproduction:
        """Breuer et al.'s reproducibility (or, with ``rep_qrels``, replicability) measures of a
        baseline/advanced pair and its reproduction, as repro_eval 0.5.0 computes them.

        See :func:`evalstore.repro.reproducibility`; ``.to_dict()`` has repro_eval's shape."""
        from ..repro import reproducibility

        return reproducibility(
            self, qrels, baseline, advanced, rep_baseline, rep_advanced, metrics, rep_qrels=rep_qrels, rbo_p=rbo_p,
            cut=cut, order=order, missing=missing, convention=convention, complete=complete, depth=depth, save=save,
        )  # fmt: skip

    def design(
        self,
        qrels: str,
        metric: str,
        *,
        test: str = "t",
        alpha: float = 0.05,
        beta: float = 0.20,
        min_diff: float,
        systems: int | None = None,
        runs: Sequence[str] | None = None,
        missing: str = "error",
        convention: str = "trec_eval",
        complete: bool = False,
        depth: int | None = None,
        save: bool = True,
    ) -> Design:
        """Topic set size design (Sakai 2016) with V_E from the stored scores of ``metric`` on ``qrels``.

        See :func:`evalstore.meta.design.design`."""
        from ..meta.design import design

        return design(
            self, qrels, metric, test=test, alpha=alpha, beta=beta, min_diff=min_diff, systems=systems,
            runs=list(runs) if runs is not None else None, missing=missing, convention=convention, complete=complete,
            depth=depth, save=save,
        )  # fmt: skip


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


def open(  # noqa: A001
    url_or_path: str | os.PathLike | None = None,
    *,
    read_only: bool = False,
    memory_limit: str | None = None,
    threads: int | None = None,
    temp_directory: str | None = None,
    sandbox: bool = False,
    wait: float = 0.0,
    create: bool = True,
) -> Store:
    """Open (creating or upgrading if needed) an evaluation store.

    ``url_or_path``: a file path, an SQLAlchemy URL such as ``duckdb:///path.duckdb`` or
    ``duckdb:///:memory:``, ``":memory:"``, or None for ``$EVALSTORE_DB`` / ``./evalstore.duckdb``.
    ``read_only=True`` opens an existing, up-to-date store without taking the write lock (several
    readers may share it); DuckDB then refuses every change.
    ``memory_limit`` (e.g. ``'1.5GB'``), ``threads``, ``temp_directory`` (where DuckDB spills):
    DuckDB's resource settings (default ``$EVALSTORE_MEMORY_LIMIT`` etc.; see :class:`Settings`).
    ``sandbox=True``: for untrusted queries; the store is opened read-only and DuckDB refuses every
    file system and network access and every change of settings (for the whole connection).
    ``wait``: seconds to keep retrying while another process holds the store.
    ``create=False``: a store file that does not exist is an error instead of a new empty store
    (the command line creates stores only in ``ingest`` and ``demo``).
    """
    if url_or_path is not None and not isinstance(url_or_path, (str, os.PathLike)):
        raise StoreError(f"a store is a path or a duckdb:/// URL, not {type(url_or_path).__name__} {url_or_path!r}")
    location = resolve_location(url_or_path)
    if not create and location != ":memory:" and not os.path.exists(location):
        raise StoreError(
            f"the store {location} does not exist; create it by ingesting qrels or runs "
            f"(evalstore ingest ... --db {location}), or point --db / $EVALSTORE_DB at an existing store"
        )
    if sandbox:
        if location == ":memory:":
            raise StoreError("a sandboxed store must be a store file (an in-memory store is empty)")
        read_only = True
    settings = Settings.resolve(memory_limit, threads, temp_directory)
    con = connect(location, read_only=read_only, settings=settings, sandbox=sandbox, wait=wait)
    read_only = read_only and location != ":memory:"
    try:
        # the SQL functions first: migrations may call them (0004 converts metric names)
        register_functions(con)
        if read_only:
            check_current(con, location)
        else:
            check_metadata(con, location)
            migrate(con, location)
    except BaseException:
        con.close()
        raise
    return Store(con, location, read_only=read_only, sandbox=sandbox)
