"""The store's schema: the numbered SQL files of ``migrations/``, applied in order.

Each migration runs inside a transaction together with its row in the table
``schema_migrations``. A store written by a newer evalstore is refused with a clear message; an
older one is upgraded when opened for writing. :func:`inspect_store` reads the version of a store
without upgrading it or taking the write lock (``evalstore db status``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from ..base.resources import migrations_dir
from ..errors import StoreError
from .connection import connect, resolve_location

_MIGRATION_RE = re.compile(r"^(\d{4})_([A-Za-z0-9_]+)\.sql$")


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


def schema_version(con: duckdb.DuckDBPyConnection) -> int:
    """The highest migration applied to the database (0 for an empty one)."""
    exists = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'schema_migrations'"
    ).fetchall()[0][0]
    if not exists:
        return 0
    # fetchall, not fetchone: DuckDB 2.0 keeps a half-read result open, and create_function (UDF
    # registration right after this) then fails with "connection has an unfinished result".
    v = con.execute("SELECT max(version) FROM schema_migrations").fetchall()[0][0]
    return int(v or 0)


def applied(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """The migrations recorded in the database: version, name, applied_at (text)."""
    rows = con.execute("SELECT version, name, applied_at FROM schema_migrations ORDER BY version").fetchall()
    return [{"version": v, "name": n, "applied_at": str(a)} for v, n, a in rows]


def migrate(con: duckdb.DuckDBPyConnection, location: str) -> None:
    """Apply every pending migration, each in its own transaction."""
    migrations = available_migrations()
    current = schema_version(con)
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


def check_current(con: duckdb.DuckDBPyConnection, location: str) -> None:
    """For a read-only connection: refuse a store that is newer than this evalstore or needs upgrading."""
    v = schema_version(con)
    newest = len(available_migrations())
    if v > newest:
        migrate(con, location)  # raises the "newer evalstore" error
    if v != newest:
        raise StoreError(
            f"the store {location} has schema version {v} and needs upgrading "
            f"to {newest}; open it once for writing (`evalstore db upgrade`, or "
            f"evalstore.open() without read_only)."
        )


def inspect_store(url_or_path: str | os.PathLike | None = None, *, wait: float = 0.0) -> dict[str, Any]:
    """Schema version and applied migrations of a store, without upgrading it or locking it for
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
        "storage_version": None,
    }
    if location == ":memory:" or not out["exists"]:
        out["state"] = "missing" if location != ":memory:" else "empty"
        return out
    con = connect(location, read_only=True, wait=wait)
    try:
        v = schema_version(con)
        out["schema_version"] = v
        if v:
            out["applied"] = applied(con)
        tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        if "run_meta" in tables:
            out["n_runs"] = con.execute("SELECT count(*) FROM run_meta").fetchall()[0][0]
        if "qrels_meta" in tables:
            out["n_qrels"] = con.execute("SELECT count(*) FROM qrels_meta").fetchall()[0][0]
        tags = con.execute("SELECT tags FROM duckdb_databases() WHERE database_name = current_database()").fetchall()
        out["storage_version"] = (tags[0][0] or {}).get("storage_version") if tags else None
    finally:
        con.close()
    out["state"] = "current" if v == newest else ("newer" if v > newest else "older")
    return out
