"""The evaluation store: one DuckDB database holding runs, qrels, subsamples and scores.

``evalstore.open()`` returns a :class:`Store`. The schema is created and upgraded by the numbered
SQL files in ``migrations/`` (applied in order, each inside a transaction together with its row in
the table ``schema_migrations``). Opening a store written by a newer evalstore fails with a clear
message; opening an older one upgrades it.

SQLAlchemy: ``store.sqlalchemy_engine()`` gives an engine on the open store (duckdb-engine);
without an open store in the same process, ``sqlalchemy.create_engine("duckdb:///path.duckdb")``
works too.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from .errors import NotFoundError, StoreError, StoreLockedError
from .resources import migrations_dir

DEFAULT_PATH = "evalstore.duckdb"
ENV_VAR = "EVALSTORE_DB"

_MIGRATION_RE = re.compile(r"^(\d{4})_([A-Za-z0-9_]+)\.sql$")

# Statement types that cannot change the database: allowed by Store.sql() without write=True.
_READ_ONLY_TYPES = {"SELECT", "EXPLAIN", "PRAGMA"}


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    path: Path

    def sql(self) -> str:
        return self.path.read_text(encoding="utf-8")


def available_migrations() -> list[Migration]:
    """The migrations shipped with this version of evalstore, in order."""
    out = []
    for p in sorted(migrations_dir().iterdir()):
        m = _MIGRATION_RE.match(p.name)
        if m:
            out.append(Migration(int(m.group(1)), m.group(2), p))
    versions = [m.version for m in out]
    if versions != list(range(1, len(out) + 1)):
        raise StoreError(f"migrations in {migrations_dir()} are not numbered 1..n: {versions}")
    return out


_URL_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


def resolve_location(url_or_path: str | os.PathLike | None) -> str:
    """Turn a path, an SQLAlchemy URL (``duckdb:///x.duckdb``, ``duckdb:////abs/x.duckdb``,
    ``duckdb:///:memory:``), or None (``$EVALSTORE_DB``, else ``./evalstore.duckdb``) into a DuckDB
    database location."""
    if url_or_path is None:
        url_or_path = os.environ.get(ENV_VAR) or DEFAULT_PATH
    loc = os.fspath(url_or_path)
    m = _URL_RE.match(loc)
    if m:
        scheme = m.group(1).lower()
        if scheme.split("+")[0] != "duckdb":
            raise StoreError(
                f"{loc!r}: only DuckDB stores are supported; give a file path or a URL such as "
                f"duckdb:///path/to/store.duckdb"
            )
        from sqlalchemy.engine import make_url

        try:
            url = make_url(loc)
        except Exception as e:  # sqlalchemy.exc.ArgumentError and friends
            raise StoreError(f"{loc!r} is not a valid database URL ({e}); use duckdb:///path/to/store.duckdb") from None
        loc = url.database or ":memory:"
    if loc in ("", ":memory:"):
        return ":memory:"
    return os.path.expanduser(loc)


@dataclass
class QueryResult:
    """Rows of an ad-hoc query with their column names."""

    columns: list[str]
    rows: list[tuple]

    def __iter__(self):
        return iter(self.rows)

    def __len__(self):
        return len(self.rows)

    def records(self) -> list[dict[str, Any]]:
        return [dict(zip(self.columns, r)) for r in self.rows]


class Store:
    """An open evaluation store. Use :func:`evalstore.open` to get one.

    The DuckDB connection is ``store.con``; the documented relations (``runs``, ``qrels_sets``,
    ``run_rows``, ``qrels``, ``scores``, ``leaderboard``, ...) can be queried with :meth:`sql`.
    """

    def __init__(self, con: duckdb.DuckDBPyConnection, location: str, read_only: bool = False):
        self.con: duckdb.DuckDBPyConnection = con
        self.location = location
        self.read_only = read_only
        self._in_tx = False

    # ------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        if self.con is not None:
            self.con.close()
            self.con = None  # type: ignore[assignment]  # closed: any further use fails loudly

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<evalstore.Store {self.location!r} schema v{self.schema_version()}>"

    @contextmanager
    def transaction(self):
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
        return _schema_version(self.con)

    def status(self) -> dict[str, Any]:
        """Schema version of the store, newest version this code knows, applied migrations."""
        applied = self.con.execute(
            "SELECT version, name, applied_at FROM schema_migrations ORDER BY version"
        ).fetchall()
        return {
            "location": self.location,
            "exists": True,
            "state": "current",
            "schema_version": self.schema_version(),
            "code_schema_version": len(available_migrations()),
            "applied": [{"version": v, "name": n, "applied_at": str(a)} for v, n, a in applied],
            "n_runs": self.con.execute("SELECT count(*) FROM run_meta").fetchall()[0][0],
            "n_qrels": self.con.execute("SELECT count(*) FROM qrels_meta").fetchall()[0][0],
        }

    # ------------------------------------------------------------------ queries
    def sql(self, query: str, params: Sequence[Any] | dict | None = None, *, write: bool = False) -> QueryResult:
        """Run ad-hoc SQL (DuckDB dialect) and return all rows of the last statement.

        Read-only unless ``write=True``: only SELECT-like statements (SELECT, WITH, FROM, SHOW,
        DESCRIBE, SUMMARIZE, EXPLAIN, PRAGMA) are accepted, and they run inside a transaction
        that is rolled back, so that e.g. ``EXPLAIN ANALYZE INSERT ...`` leaves no trace.
        Errors are raised as :class:`StoreError` with DuckDB's message."""
        if not query or not query.strip():
            raise StoreError("empty SQL query")
        try:
            statements = duckdb.extract_statements(query)
        except duckdb.Error as e:
            raise StoreError(f"SQL error: {e}") from None
        if not statements:
            raise StoreError("empty SQL query (only comments or semicolons)")
        if not write:
            for st in statements:
                kind = st.type.name
                if kind not in _READ_ONLY_TYPES:
                    raise StoreError(
                        f"this statement would change the store ({kind}); ad-hoc SQL is read-only "
                        f"unless you pass write=True (CLI: --write)"
                    )
        sandbox = not write and not self._in_tx
        try:
            if sandbox:
                self.con.execute("BEGIN TRANSACTION")
            try:
                cur = self.con.execute(query, params) if params is not None else self.con.execute(query)
                cols = [d[0] for d in cur.description] if cur.description else []
                rows = cur.fetchall() if cur.description else []
            finally:
                if sandbox:
                    self.con.execute("ROLLBACK")
        except duckdb.Error as e:
            raise StoreError(f"SQL error: {e}") from None
        return QueryResult(cols, rows)

    def sqlalchemy_engine(self, **kwargs):
        """An SQLAlchemy engine (duckdb-engine) whose connections are cursors of this store's
        DuckDB connection, so it sees the same database (also ``:memory:`` stores) and the
        store's SQL functions. Close the store after disposing of the engine."""
        import sqlalchemy
        from duckdb_engine import ConnectionWrapper

        def creator():
            if self.con is None:
                raise StoreError("the store is closed")
            cur = self.con.cursor()
            _register_udfs(cur)
            return ConnectionWrapper(cur)

        return sqlalchemy.create_engine("duckdb://", creator=creator, **kwargs)

    def run_id(self, name: str) -> int:
        rows = self.con.execute("SELECT run_id FROM run_meta WHERE name = ?", [name]).fetchall()
        row = rows[0] if rows else None
        if row is None:
            known = [r[0] for r in self.con.execute("SELECT name FROM run_meta ORDER BY name LIMIT 20").fetchall()]
            raise NotFoundError(
                f"no run named {name!r} in the store"
                + (
                    f" (runs: {', '.join(known)}{' ...' if len(known) == 20 else ''})"
                    if known
                    else "; ingest one with `evalstore ingest run FILE`"
                )
            )
        return row[0]

    def qrels_id(self, name: str) -> int:
        rows = self.con.execute("SELECT qrels_id FROM qrels_meta WHERE name = ?", [name]).fetchall()
        row = rows[0] if rows else None
        if row is None:
            known = [r[0] for r in self.con.execute("SELECT name FROM qrels_meta ORDER BY name LIMIT 20").fetchall()]
            raise NotFoundError(
                f"no qrels set named {name!r} in the store"
                + (f" (qrels sets: {', '.join(known)})" if known else "; ingest one with `evalstore ingest qrels FILE`")
            )
        return row[0]

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
    def ingest_run(self, paths: str | os.PathLike | Iterable, **kwargs):
        """Ingest TREC or NTCIR run file(s); see :func:`evalstore.ingest.ingest_runs`."""
        from .ingest import ingest_runs

        return ingest_runs(self, paths, **kwargs)

    def ingest_qrels(self, paths: str | os.PathLike | Iterable, **kwargs):
        """Ingest TREC or NTCIR qrels file(s); see :func:`evalstore.ingest.ingest_qrels`."""
        from .ingest import ingest_qrels

        return ingest_qrels(self, paths, **kwargs)

    # ------------------------------------------------------------------ evaluation (evalstore.metrics)
    def evaluate(self, qrels: str, runs: Sequence[str] | None = None, metrics: Sequence[str] = ("AP",), **options):
        """Compute metrics for runs against a qrels set, store the per-topic scores, return them.

        See :func:`evalstore.metrics.engine.evaluate_store`.
        """
        from .metrics.engine import evaluate_store

        return evaluate_store(self, qrels, runs, metrics, **options)


def inspect_store(url_or_path: str | os.PathLike | None = None) -> dict[str, Any]:
    """Schema version and applied migrations of a store, without upgrading or locking it for
    writing (``evalstore db status``). Works on stores older or newer than this evalstore."""
    location = resolve_location(url_or_path)
    newest = len(available_migrations())
    out: dict[str, Any] = {
        "location": location,
        "exists": location == ":memory:" or Path(location).exists(),
        "schema_version": 0,
        "code_schema_version": newest,
        "applied": [],
        "n_runs": None,
        "n_qrels": None,
    }
    if location == ":memory:" or not out["exists"]:
        out["state"] = "missing" if location != ":memory:" else "empty"
        return out
    con = connect(location, read_only=True)
    try:
        v = _schema_version(con)
        out["schema_version"] = v
        if v:
            out["applied"] = [
                {"version": a, "name": n, "applied_at": str(t)}
                for a, n, t in con.execute(
                    "SELECT version, name, applied_at FROM schema_migrations ORDER BY version"
                ).fetchall()
            ]
        tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        if "run_meta" in tables:
            out["n_runs"] = con.execute("SELECT count(*) FROM run_meta").fetchall()[0][0]
        if "qrels_meta" in tables:
            out["n_qrels"] = con.execute("SELECT count(*) FROM qrels_meta").fetchall()[0][0]
    finally:
        con.close()
    out["state"] = "current" if v == newest else ("newer" if v > newest else "older")
    return out


def _schema_version(con) -> int:
    exists = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'schema_migrations'"
    ).fetchall()[0][0]
    if not exists:
        return 0
    # fetchall, not fetchone: DuckDB 2.0 keeps a half-read result open, and create_function (UDF
    # registration right after this) then fails with "connection has an unfinished result".
    v = con.execute("SELECT max(version) FROM schema_migrations").fetchall()[0][0]
    return int(v or 0)


def _migrate(con, location: str) -> None:
    migrations = available_migrations()
    current = _schema_version(con)
    newest = len(migrations)
    if current > newest:
        raise StoreError(
            f"the store {location} has schema version {current}, but this evalstore only knows "
            f"versions up to {newest}: it was written by a newer evalstore. Upgrade evalstore "
            f"(pip install -U evalstore) to open it."
        )
    for m in migrations[current:]:
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                "version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, "
                "applied_at TIMESTAMP NOT NULL DEFAULT current_timestamp)"
            )
            con.execute(m.sql())
            con.execute("INSERT INTO schema_migrations (version, name) VALUES (?, ?)", [m.version, m.name])
        except duckdb.Error as e:
            con.execute("ROLLBACK")
            raise StoreError(
                f"upgrading {location} to schema version {m.version} ({m.path.name}) failed: {e}"
            ) from None
        con.execute("COMMIT")


def _register_udfs(con) -> None:
    """Register evalstore's SQL functions on a connection. Connections to the same database in one
    process (a store opened twice, cursors) share one DuckDB instance, where the functions may
    already be registered: that is fine."""
    from .udfs import register_udfs

    try:
        register_udfs(con)
    except duckdb.CatalogException as e:
        if "already exists" not in str(e):
            raise


def connect(location: str, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """Open the DuckDB database, translating DuckDB's lock error into a plain message."""
    if location != ":memory:":
        parent = Path(location).expanduser().resolve().parent
        if not parent.is_dir():
            raise StoreError(f"cannot create the store {location}: folder {parent} does not exist")
    elif read_only:
        read_only = False  # an in-memory database cannot be opened read-only
    if read_only and not Path(location).expanduser().exists():
        raise StoreError(
            f"the store {location} does not exist; create it by ingesting qrels or runs "
            f"(evalstore ingest ... --db {location})"
        )
    try:
        con = duckdb.connect(location, read_only=read_only)
    except duckdb.IOException as e:
        msg = str(e)
        if "lock" in msg.lower():
            pid = re.search(r"PID (\d+)", msg)
            raise StoreLockedError(
                f"the store {location} is open for writing in another process"
                f"{' (PID ' + pid.group(1) + ')' if pid else ''}; close that program or wait "
                f"for it to finish, then try again."
            ) from None
        raise StoreError(f"cannot open the store {location}: {msg}") from None
    except duckdb.Error as e:
        raise StoreError(f"cannot open the store {location}: {e}") from None
    try:
        # DuckDB's own progress bar would print into the output of long queries (pipes, CSV).
        con.execute("SET enable_progress_bar = false")
    except duckdb.Error:
        pass
    return con


def open(url_or_path: str | os.PathLike | None = None, *, read_only: bool = False) -> Store:  # noqa: A001
    """Open (creating or upgrading if needed) an evaluation store.

    ``url_or_path``: a file path, an SQLAlchemy URL such as ``duckdb:///path.duckdb`` or
    ``duckdb:///:memory:``, ``":memory:"``, or None for ``$EVALSTORE_DB`` / ``./evalstore.duckdb``.
    ``read_only=True`` opens an existing, up-to-date store without taking the write lock (several
    readers may share it); DuckDB then refuses every change.
    """
    location = resolve_location(url_or_path)
    con = connect(location, read_only=read_only)
    read_only = read_only and location != ":memory:"
    try:
        if read_only:
            v = _schema_version(con)
            newest = len(available_migrations())
            if v > newest:
                _migrate(con, location)  # raises the "newer evalstore" error
            if v != newest:
                raise StoreError(
                    f"the store {location} has schema version {v} and needs upgrading "
                    f"to {newest}; open it once for writing (`evalstore db upgrade`, or "
                    f"evalstore.open() without read_only)."
                )
        else:
            _migrate(con, location)
        _register_udfs(con)
    except BaseException:
        con.close()
        raise
    return Store(con, location, read_only=read_only)
