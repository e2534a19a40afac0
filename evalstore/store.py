"""The evaluation store: one DuckDB database holding runs, qrels, subsamples and scores.

``evalstore.open()`` returns a :class:`Store`. The schema is created and upgraded by the numbered
SQL files in ``migrations/`` (applied in order, each inside a transaction, recorded in the table
``schema_migrations``). Opening a store written by a newer evalstore fails with a clear message.
"""
from __future__ import annotations

import os
import re
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

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


def resolve_location(url_or_path: str | os.PathLike | None) -> str:
    """Turn a path, an SQLAlchemy URL (``duckdb:///x.duckdb``, ``duckdb:///:memory:``), or None
    (``$EVALSTORE_DB``, else ``./evalstore.duckdb``) into a DuckDB database location."""
    if url_or_path is None:
        url_or_path = os.environ.get(ENV_VAR) or DEFAULT_PATH
    loc = os.fspath(url_or_path)
    if loc.startswith("duckdb:"):
        from sqlalchemy.engine import make_url

        url = make_url(loc)
        loc = url.database or ":memory:"
    if loc in ("", ":memory:"):
        return ":memory:"
    return loc


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

    def __init__(self, con: duckdb.DuckDBPyConnection, location: str):
        self.con = con
        self.location = location
        self._in_tx = False

    # ------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        if self.con is not None:
            self.con.close()
            self.con = None

    def __enter__(self) -> "Store":
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
            "SELECT version, name, applied_at FROM schema_migrations ORDER BY version").fetchall()
        return {
            "location": self.location,
            "schema_version": self.schema_version(),
            "code_schema_version": len(available_migrations()),
            "applied": [{"version": v, "name": n, "applied_at": str(a)} for v, n, a in applied],
            "n_runs": self.con.execute("SELECT count(*) FROM run_meta").fetchone()[0],
            "n_qrels": self.con.execute("SELECT count(*) FROM qrels_meta").fetchone()[0],
        }

    # ------------------------------------------------------------------ queries
    def sql(self, query: str, params: Sequence[Any] | dict | None = None, *, write: bool = False) -> QueryResult:
        """Run ad-hoc SQL and return all rows. Read-only unless ``write=True``."""
        if not write:
            try:
                statements = duckdb.extract_statements(query)
            except duckdb.Error as e:
                raise StoreError(f"SQL error: {e}") from None
            for st in statements:
                kind = st.type.name
                if kind not in _READ_ONLY_TYPES:
                    raise StoreError(
                        f"this statement would change the store ({kind}); ad-hoc SQL is read-only "
                        f"unless you pass write=True (CLI: --write)")
        try:
            cur = self.con.execute(query, params) if params is not None else self.con.execute(query)
            cols = [d[0] for d in cur.description] if cur.description else []
            rows = cur.fetchall() if cur.description else []
        except duckdb.Error as e:
            raise StoreError(f"SQL error: {e}") from None
        return QueryResult(cols, rows)

    def run_id(self, name: str) -> int:
        row = self.con.execute("SELECT run_id FROM run_meta WHERE name = ?", [name]).fetchone()
        if row is None:
            known = [r[0] for r in self.con.execute("SELECT name FROM run_meta ORDER BY name LIMIT 20").fetchall()]
            raise NotFoundError(f"no run named {name!r} in the store"
                                + (f" (runs: {', '.join(known)}{' ...' if len(known) == 20 else ''})" if known
                                   else "; ingest one with `evalstore ingest run FILE`"))
        return row[0]

    def qrels_id(self, name: str) -> int:
        row = self.con.execute("SELECT qrels_id FROM qrels_meta WHERE name = ?", [name]).fetchone()
        if row is None:
            known = [r[0] for r in self.con.execute("SELECT name FROM qrels_meta ORDER BY name LIMIT 20").fetchall()]
            raise NotFoundError(f"no qrels set named {name!r} in the store"
                                + (f" (qrels sets: {', '.join(known)})" if known
                                   else "; ingest one with `evalstore ingest qrels FILE`"))
        return row[0]

    def run_names(self) -> list[str]:
        return [r[0] for r in self.con.execute("SELECT name FROM run_meta ORDER BY name").fetchall()]

    def qrels_names(self) -> list[str]:
        return [r[0] for r in self.con.execute("SELECT name FROM qrels_meta ORDER BY name").fetchall()]

    def list_runs(self) -> QueryResult:
        return self.sql("SELECT name, tag, format, n_topics, n_rows, sha256[1:12] AS sha256, "
                        "ingested_at::TIMESTAMP(0) AS ingested_at, source FROM runs ORDER BY name")

    def list_qrels(self) -> QueryResult:
        return self.sql("SELECT name, format, n_topics, n_judged, max_grade, sha256[1:12] AS sha256, "
                        "ingested_at::TIMESTAMP(0) AS ingested_at, source FROM qrels_sets ORDER BY name")

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


def _schema_version(con) -> int:
    exists = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'schema_migrations'").fetchone()[0]
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
            f"(pip install -U evalstore) to open it.")
    if current == 0:
        con.execute("CREATE TABLE IF NOT EXISTS schema_migrations ("
                    "version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, "
                    "applied_at TIMESTAMP NOT NULL DEFAULT current_timestamp)")
    for m in migrations[current:]:
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute(m.sql())
            con.execute("INSERT INTO schema_migrations (version, name) VALUES (?, ?)", [m.version, m.name])
        except duckdb.Error as e:
            con.execute("ROLLBACK")
            raise StoreError(f"upgrading {location} to schema version {m.version} ({m.path.name}) failed: {e}") from None
        con.execute("COMMIT")


def connect(location: str, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """Open the DuckDB database, translating DuckDB's lock error into a plain message."""
    if location != ":memory:":
        parent = Path(location).expanduser().resolve().parent
        if not parent.is_dir():
            raise StoreError(f"cannot create the store {location}: folder {parent} does not exist")
    try:
        return duckdb.connect(location, read_only=read_only and location != ":memory:")
    except duckdb.IOException as e:
        msg = str(e)
        if "lock" in msg.lower():
            pid = re.search(r"PID (\d+)", msg)
            raise StoreLockedError(
                f"the store {location} is open for writing in another process"
                f"{' (PID ' + pid.group(1) + ')' if pid else ''}; close that program or wait "
                f"for it to finish, then try again.") from None
        raise StoreError(f"cannot open the store {location}: {msg}") from None
    except duckdb.Error as e:
        raise StoreError(f"cannot open the store {location}: {e}") from None


def open(url_or_path: str | os.PathLike | None = None, *, read_only: bool = False) -> Store:  # noqa: A001
    """Open (creating or upgrading if needed) an evaluation store.

    ``url_or_path``: a file path, an SQLAlchemy URL such as ``duckdb:///path.duckdb`` or
    ``duckdb:///:memory:``, ``":memory:"``, or None for ``$EVALSTORE_DB`` / ``./evalstore.duckdb``.
    """
    location = resolve_location(url_or_path)
    con = connect(location, read_only=read_only)
    try:
        if read_only:
            v = _schema_version(con)
            if v != len(available_migrations()):
                raise StoreError(f"the store {location} has schema version {v} and needs upgrading "
                                 f"to {len(available_migrations())}; open it once without read-only.")
        else:
            _migrate(con, location)
        from .udfs import register_udfs

        register_udfs(con)
    except BaseException:
        con.close()
        raise
    return Store(con, location)
