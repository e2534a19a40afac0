"""Opening a store: its location, the DuckDB connection with its resources, lock and lockdown, and
what makes that connection a store's (evalstore's SQL functions, the schema checked or upgraded,
the measures of one's own the store keeps).

:func:`open_handle` returns the :class:`~evalstore.db.handle.StoreHandle`, which is all the
evaluation of stored runs needs; :func:`evalstore.open` wraps the same opening in the
:class:`~evalstore.Store` facade, whose methods import every operation of the library (pools,
meta-evaluation, fusion, the layout, ...). ``evalstore eval`` on a store takes the handle, so its
start loads the evaluation alone.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from .db.connection import Settings, check_metadata, connect, resolve_location
from .db.handle import StoreHandle
from .db.lockdown import Lockdown
from .db.lockdown import verify as verify_lockdown
from .db.migrations import check_current, migrate
from .errors import StoreError
from .metrics import sql_functions
from .metrics.user.stored import load as load_measures

if TYPE_CHECKING:
    import duckdb


def open_handle(
    url_or_path: str | os.PathLike | None = None,
    *,
    read_only: bool = False,
    memory_limit: str | None = None,
    threads: int | None = None,
    temp_directory: str | None = None,
    sandbox: bool = False,
    query_only: bool = False,
    wait: float | None = None,
    create: bool = True,
    yield_to_writers: bool = False,
) -> StoreHandle:
    """Open (creating or upgrading if needed) an evaluation store, as :func:`evalstore.open` (which
    says what each argument does), and return its :class:`~evalstore.db.handle.StoreHandle`."""
    location = _location(url_or_path, create)
    lockdown = Lockdown.SANDBOX if sandbox else Lockdown.QUERY if query_only else None
    if lockdown is not None:
        if location == ":memory:":
            raise StoreError(f"a {lockdown.value} store must be a store file (an in-memory store is empty)")
        read_only = True
    settings = Settings.resolve(memory_limit, threads, temp_directory)
    con = connect(
        location,
        read_only=read_only,
        settings=settings,
        lockdown=lockdown,
        wait=wait,
        yield_to_writers=yield_to_writers,
    )
    read_only = read_only and location != ":memory:"
    try:
        _prepare(con, location, read_only, lockdown)
    except BaseException:
        con.close()
        raise
    return StoreHandle(con, location, read_only=read_only, lockdown=lockdown)


def _location(url_or_path: str | os.PathLike | None, create: bool) -> str:
    """The store's location (see :func:`evalstore.open`), refused when it is not a path or URL, or when it
    does not exist and ``create`` is False."""
    if url_or_path is not None and not isinstance(url_or_path, (str, os.PathLike)):
        raise StoreError(f"a store is a path or a duckdb:/// URL, not {type(url_or_path).__name__} {url_or_path!r}")
    location = resolve_location(url_or_path)
    if not create and location != ":memory:" and not os.path.exists(location):
        raise StoreError(
            f"the store {location} does not exist; create it by ingesting qrels or runs "
            f"(evalstore ingest ... --db {location}), or point --db / $EVALSTORE_DB at an existing store"
        )
    return location


def _prepare(con: duckdb.DuckDBPyConnection, location: str, read_only: bool, lockdown: Lockdown | None) -> None:
    """Make a freshly opened connection a store's: its SQL functions, the lockdown verified, the
    schema checked (read-only) or upgraded, the store's own measures loaded."""
    # the SQL functions first: migrations may call them (0004 converts metric names); a sandbox
    # gets none of those over lists (their one call cannot be interrupted at a time limit)
    sql_functions.register(con, over_lists=lockdown is not Lockdown.SANDBOX)
    if lockdown is not None:
        verify_lockdown(con, lockdown, sql_functions.list_function_names())
    if read_only:
        check_current(con, location)
    else:
        check_metadata(con, location)
        migrate(con, location)
    load_measures(con)  # the measures of one's own the store keeps, known from now on
