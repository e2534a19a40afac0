"""Opening the DuckDB database behind a store: where it is, the connection, its SQL functions.

:func:`resolve_location` turns what a user gives (a path, an SQLAlchemy URL, nothing) into a
DuckDB location; :func:`connect` opens it and turns DuckDB's lock error into a plain message;
evalstore's SQL functions are registered by the caller (:mod:`evalstore.metrics.sql_functions`).
"""

from __future__ import annotations

import os
import re
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import duckdb

from ..base.memory_limit import default_memory_limit, memory_limit_setting, threads_setting
from ..errors import (
    StoreDamagedError,
    StoreError,
    StoreIOError,
    StoreLockedError,
    is_damage,
    is_disk_full,
    is_read_only_file_system,
)
from . import waiting
from .lockdown import Lockdown
from .lockdown import config as lockdown_config
from .lockdown import lock as lock_down

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


@dataclass(frozen=True)
class Settings:
    """DuckDB resource settings of a connection: ``memory_limit`` (e.g. ``'1.5GB'``; default
    :func:`default_memory_limit`; ``'80%'`` is DuckDB's own default), ``threads`` and
    ``temp_directory`` (where DuckDB spills when a query needs more than the memory limit; default
    ``<store>.tmp``, for an in-memory store a folder of the system's temp directory; ``''``: never
    spill, a query that needs more than the limit fails). Each defaults
    to ``$EVALSTORE_MEMORY_LIMIT``, ``$EVALSTORE_THREADS``, ``$EVALSTORE_TEMP_DIR``."""

    memory_limit: str | None = None
    threads: int | None = None
    temp_directory: str | None = None

    @classmethod
    def resolve(
        cls, memory_limit: str | None = None, threads: int | None = None, temp_directory: str | None = None
    ) -> Settings:
        t = threads_setting(threads)
        temp = temp_directory if temp_directory is not None else (os.environ.get("EVALSTORE_TEMP_DIR") or None)
        if temp is not None and not isinstance(temp, (str, os.PathLike)):
            raise StoreError(f"temp_directory is a folder path, not {temp!r}")
        if temp is not None and temp != "" and not Path(temp).expanduser().is_dir():
            raise StoreError(f"the temp directory {temp} does not exist; create it or choose another (--temp-dir)")
        return cls(memory_limit_setting(memory_limit), t, temp and os.fspath(temp))

    def config(self) -> dict[str, str | bool | int | float | list[str]]:
        out: dict[str, str | bool | int | float | list[str]] = {
            # the store never reaches the network: no extension is downloaded or loaded behind the scenes
            "autoinstall_known_extensions": False,
            "autoload_known_extensions": False,
            # new store files are written in the oldest storage format that has what evalstore uses,
            # so that the duckdb CLI and Python packages users have (1.1 and later) can open them
            "storage_compatibility_version": STORAGE_VERSION,
        }
        out["memory_limit"] = self.memory_limit or default_memory_limit(self.threads)
        if self.threads:
            out["threads"] = self.threads
        if self.temp_directory is not None:  # '' : no spilling (a query beyond the limit fails)
            out["temp_directory"] = str(Path(self.temp_directory).expanduser()) if self.temp_directory else ""
        return out


#: the storage format of new store files: DuckDB 1.1.0's (file format 64), readable by DuckDB 1.1 and later
STORAGE_VERSION = "v1.1.0"


def spill_directory() -> str:
    """Where an in-memory store spills: a folder of this process in the system's temp directory
    (DuckDB's default, ``.tmp`` in the working directory, would be shared by every process there)."""
    return os.path.join(tempfile.gettempdir(), f"evalstore-spill-{os.getpid()}")


#: one open at a time in this process: DuckDB hands every connection to a store file the same
#: database instance, whose configuration the first locked-down connection locks; opening and
#: setting up a connection is one step, so two threads never race on that instance's settings
_OPEN_LOCK = threading.Lock()


def connect(
    location: str,
    read_only: bool = False,
    settings: Settings | None = None,
    *,
    lockdown: Lockdown | None = None,
    wait: float | None = None,
    yield_to_writers: bool = False,
) -> duckdb.DuckDBPyConnection:
    """Open the DuckDB database with ``settings``, translating DuckDB's errors into plain messages;
    ``lockdown``: a read-only connection that DuckDB keeps from changing anything (:mod:`.lockdown`);
    ``wait``: seconds to keep retrying (with backoff) while another process holds the store (a
    writer that waits announces itself, :mod:`.waiting`); None: no retry, except that a writer
    finding the store held by ``evalstore serve`` waits :data:`.waiting.SERVER_WAIT` seconds for it
    to let the writer in; ``yield_to_writers``: a reader that treats a waiting writer as a busy
    store, so that the writer gets in between its connections (``evalstore serve``)."""
    settings = settings or Settings.resolve()
    read_only = _checked_location(location, read_only, lockdown)
    config: dict = settings.config()
    if location == ":memory:" and "temp_directory" not in config:
        config["temp_directory"] = spill_directory()
    if lockdown is not None:
        config = lockdown_config(config, lockdown)
    start, delay = time.monotonic(), 0.05
    deadline = None if wait is None else start + max(0.0, wait)
    announced = False
    try:
        while True:
            try:
                if yield_to_writers and location != ":memory:" and waiting.writer_waiting(location):
                    raise _WriterWaiting()
                return _open(location, read_only, config, lockdown)
            except (duckdb.IOException, _WriterWaiting) as e:
                msg = str(e)
                if not isinstance(e, _WriterWaiting) and "lock" not in msg.lower():
                    if is_damage(e):
                        raise StoreDamagedError(damaged_message(location, msg)) from None
                    if is_read_only_file_system(e) or is_disk_full(e):
                        raise StoreIOError(io_message(location, msg, read_only)) from None
                    raise StoreError(f"cannot open the store {location}: {msg}") from None
                server = not read_only and waiting.held_by_server(location, msg)
                if deadline is None:  # no wait given: none, unless the holder is the server
                    wait = waiting.SERVER_WAIT if server else 0.0
                    deadline = start + wait
                if time.monotonic() < deadline:
                    if not read_only and location != ":memory:":
                        waiting.announce(location)  # refreshed at every retry
                        announced = True
                    time.sleep(delay)
                    delay = min(delay * 2, 1.0)
                    continue
                if isinstance(e, _WriterWaiting):
                    raise StoreLockedError(f"{msg}; try again in a moment") from None
                raise StoreLockedError(_lock_message(location, msg, read_only, wait or 0.0, server)) from None
            except duckdb.OutOfMemoryException:
                raise  # a memory limit too small to open the store: the CLI explains it (exit 4)
            except duckdb.ConnectionException as e:
                if "different configuration" in str(e):
                    raise StoreError(_other_settings_message(location, read_only, lockdown)) from None
                raise StoreError(f"cannot open the store {location}: {e}") from None
            except duckdb.Error as e:
                if is_damage(e):
                    raise StoreDamagedError(damaged_message(location, str(e))) from None
                raise StoreError(f"cannot open the store {location}: {e}") from None
    finally:
        if announced:
            waiting.withdraw(location)


def _checked_location(location: str, read_only: bool, lockdown: Lockdown | None) -> bool:
    """Whether the store is opened read-only (a locked-down one always, an in-memory one never);
    a StoreError for a location that cannot be opened so."""
    if lockdown is not None:
        if location == ":memory:":
            raise StoreError("ad-hoc queries that change nothing need a store file (an in-memory store is empty)")
        read_only = True
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
    return read_only


class _WriterWaiting(Exception):
    def __str__(self) -> str:
        return "a writer of another process is waiting for the store (it goes first)"


def _open(location: str, read_only: bool, config: dict, lockdown: Lockdown | None) -> duckdb.DuckDBPyConnection:
    """One connection with its settings made; closed again if they cannot be made (a failed open
    never leaves a connection, and with it the store's lock, behind)."""
    with _OPEN_LOCK:
        con = duckdb.connect(location, read_only=read_only, config=config)
        try:
            _prepare(con, lockdown)
        except BaseException:
            con.close()
            raise
    return con


def _prepare(con: duckdb.DuckDBPyConnection, lockdown: Lockdown | None) -> None:
    """The connection's own settings. DuckDB's progress bar would print into the output of long
    queries (pipes, CSV). A locked-down database instance is locked by its first connection
    (:func:`.lockdown.lock`): a later connection to it (a second request of ``evalstore serve``, a
    second ``evalstore.open(p, sandbox=True)``) finds its configuration locked and changes nothing;
    every one is checked (:func:`.lockdown.verify`, once evalstore's SQL functions are registered)."""
    locked = bool(con.execute("SELECT current_setting('lock_configuration')").fetchone()[0])  # type: ignore[index]
    if not locked:
        con.execute("SET enable_progress_bar = false")
    if lockdown is not None:
        lock_down(con, lockdown)


def _other_settings_message(location: str, read_only: bool, lockdown: Lockdown | None) -> str:
    how = f"locked down ({lockdown.value})" if lockdown else "read-only" if read_only else "for writing"
    return (
        f"the store {location} is already open in this process with other settings (DuckDB shares one database "
        f"per file and process), so it cannot also be opened {how} (or with another memory limit or thread "
        f"count); close the other store object first, or open this one the same way"
    )


def _lock_message(location: str, msg: str, read_only: bool, wait: float, server: bool = False) -> str:
    pid = re.search(r"PID (\d+)", msg)
    who = f" (PID {pid.group(1)})" if pid else ""
    if server:
        what = f"the store {location} is being read by `evalstore serve`{who}, which lets a waiting writer in once "
        if not wait:
            return (
                f"{what}its requests in progress finish, but --wait 0 asked not to wait; leave --wait out (a writer "
                f"waits {waiting.SERVER_WAIT:g} s for the server) or pass --wait SECONDS"
            )
        return (
            f"{what}its requests in progress finish, but they did not finish within {wait:g} s; try again, pass "
            f"--wait SECONDS to wait longer, or stop the server"
        )
    if read_only:
        what = f"the store {location} is open for writing in another process{who}, so it cannot be read now"
    else:
        what = (
            f"the store {location} is open in another process{who} (for writing, or for reading: readers "
            f"share a store, a writer needs it alone), so it cannot be opened for writing now"
        )
    waited = f" (waited {wait:g} s)" if wait else ""
    return (
        f"{what}{waited}; close that program or wait for it to finish, or pass --wait SECONDS to retry "
        f"(a notebook that only reads can share the store: evalstore.open(path, read_only=True))"
    )


def io_message(location: str, detail: str, read_only: bool) -> str:
    """What to do when the machine refuses the store's file: a read-only file system or a full disk."""
    first = detail.strip().splitlines()[0] if detail.strip() else "input/output error"
    if is_read_only_file_system(Exception(detail)):
        return (
            f"the store {location} is on a read-only file system ({first}): it cannot be opened for writing; commands "
            f"that only read it work (evalstore sql, export, serve), or copy it to a writable disk"
        )
    return f"the disk of the store {location} is full ({first}); free space there, or point --temp-dir elsewhere" + (
        "" if read_only else " (a store opened for writing needs room for its write-ahead log)"
    )


def damaged_message(location: str, detail: str) -> str:
    first = detail.strip().splitlines()[0] if detail.strip() else "unknown damage"
    return (
        f"the store file {location} is damaged ({first}); run `evalstore db check --db {location}` to see what "
        f"can be read, and restore it from a copy (or export what is readable)"
    )


def check_metadata(con: duckdb.DuckDBPyConnection, location: str) -> None:
    """A cheap check before writing: the catalogue and the store's small tables read back."""
    try:
        names = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() WHERE NOT temporary").fetchall()]
        for t in ("schema_migrations", "run_meta", "qrels_meta"):
            if t in names:
                con.execute(f"SELECT count(*) FROM {t}").fetchall()
    except duckdb.Error as e:
        if is_damage(e):
            raise StoreDamagedError(damaged_message(location, str(e))) from None
        raise
