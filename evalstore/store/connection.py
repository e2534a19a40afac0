"""Opening the DuckDB database behind a store: where it is, the connection, its SQL functions.

:func:`resolve_location` turns what a user gives (a path, an SQLAlchemy URL, nothing) into a
DuckDB location; :func:`connect` opens it and turns DuckDB's lock error into a plain message;
:func:`register_functions` adds evalstore's SQL functions (the UDFs of :mod:`evalstore.udfs`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import duckdb

from ..errors import StoreError, StoreLockedError
from ..udfs import register_udfs

DEFAULT_PATH = "evalstore.duckdb"
ENV_VAR = "EVALSTORE_DB"

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
        from sqlalchemy.engine import make_url  # optional heavy import, only for URLs

        try:
            url = make_url(loc)
        except Exception as e:  # sqlalchemy.exc.ArgumentError and friends
            raise StoreError(f"{loc!r} is not a valid database URL ({e}); use duckdb:///path/to/store.duckdb") from None
        loc = url.database or ":memory:"
    if loc in ("", ":memory:"):
        return ":memory:"
    return os.path.expanduser(loc)


def register_functions(con: duckdb.DuckDBPyConnection) -> None:
    """Register evalstore's SQL functions on a connection. Connections to the same database in one
    process (a store opened twice, cursors) share one DuckDB instance, where the functions may
    already be registered: that is fine."""
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
