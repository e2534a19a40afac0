"""Connections that DuckDB itself keeps from changing anything: for ad-hoc and untrusted SQL.

Read-only SQL rests on what DuckDB guarantees for a whole connection, not on reading the SQL text:

* ``read_only``: DuckDB opens the store file read-only and refuses every change to it (``INSERT``,
  ``CREATE``, ``nextval()``, ``ATTACH ':memory:'``, a checkpoint that would write);
* ``enable_external_access = false``: DuckDB refuses every file and network access but the store's
  own files (which it refuses to ``COPY`` onto) and its temp directory: no ``COPY ... TO``, ``EXPORT
  DATABASE``, ``ATTACH`` of another file, ``read_csv`` or ``glob`` of the user's files, no
  ``INSTALL``/``LOAD`` of an extension;
* ``autoinstall_known_extensions`` and ``autoload_known_extensions`` off: no extension is fetched
  or loaded behind the scenes;
* ``lock_configuration = true``, set last: no ``SET``, ``RESET``, ``PRAGMA x = y``, and none of the
  table functions that change settings (``enable_logging()``, ``enable_profiling()``) works.

Two levels (:class:`Lockdown`):

* ``QUERY`` (``evalstore sql`` without ``--write``; ``evalstore.open(path, query_only=True)``): the
  above, with a **private spill folder**: DuckDB allows SQL into its temp directory, so the temp
  directory is a folder made for this process (``tempfile.mkdtemp``, mode 0700, removed when the
  process ends) inside ``--temp-dir`` (or the system's temp folder), never the folder itself:
  nothing is in it but DuckDB's own spill files;
* ``SANDBOX`` (the web's pages and ``/sql``, ``evalstore sql --sandbox``; ``evalstore.open(path,
  sandbox=True)``): ``QUERY`` plus ``disabled_filesystems = 'LocalFileSystem'``: DuckDB reaches no
  local file at all, not the store file's raw bytes and not a temp folder (a sandboxed query never
  spills: beyond the memory limit it fails), and without evalstore's Python functions over lists,
  whose one call DuckDB cannot interrupt at a page's time limit (they are never registered on a
  sandboxed database instance, and :func:`verify` refuses an instance where they are).

DuckDB shares one database instance per file and process, with one configuration: a second
connection to a locked instance finds it locked (and the same), a connection with another
configuration is refused by DuckDB. :func:`verify` reads the guarantees back from DuckDB after every
open. The text check of :mod:`.sqlsafety` is a second layer on top (for clearer messages, and for
stores opened for writing in a notebook, where only the first of these guarantees can hold).
"""

from __future__ import annotations

import atexit
import enum
import os
import shutil
import tempfile
import threading
from collections.abc import Collection

import duckdb

from ..errors import StoreError


class Lockdown(enum.Enum):
    """How far a connection is locked down (see the module docstring)."""

    QUERY = "query"
    SANDBOX = "sandbox"


def config(base: dict, level: Lockdown) -> dict:
    """The DuckDB configuration of a locked-down connection, from a store's ``base`` configuration
    (:meth:`~evalstore.db.connection.Settings.config`). The order matters: DuckDB accepts a
    temp directory only once external access is off (and then allows SQL into it)."""
    out: dict = {"enable_external_access": False}
    out.update({k: v for k, v in base.items() if k != "temp_directory"})
    out["autoinstall_known_extensions"] = False
    out["autoload_known_extensions"] = False
    out["allow_community_extensions"] = False
    out["python_enable_replacements"] = False  # no Python variable is read as a table
    if level is Lockdown.SANDBOX:
        out["temp_directory"] = ""  # no file system at all: no spilling either
    else:
        out["temp_directory"] = private_spill_folder(base.get("temp_directory"))
    return out


def lock(con: duckdb.DuckDBPyConnection, level: Lockdown) -> None:
    """Lock a connection's database instance once its own settings are made (a later connection to
    the same instance finds it locked and changes nothing)."""
    if _setting(con, "lock_configuration"):
        return
    if level is Lockdown.SANDBOX:
        con.execute("SET disabled_filesystems = 'LocalFileSystem'")
    con.execute("SET lock_configuration = true")


def verify(con: duckdb.DuckDBPyConnection, level: Lockdown, python_list_functions: Collection[str] = ()) -> None:
    """Read the guarantees back from DuckDB; a StoreError if one does not hold (the connection is
    then not handed out). ``python_list_functions``: names that must not exist on a sandboxed
    instance."""
    problems = []
    if _setting(con, "enable_external_access"):
        problems.append("external access is on")
    if not _setting(con, "lock_configuration"):
        problems.append("the configuration is not locked")
    if _setting(con, "autoload_known_extensions") or _setting(con, "autoinstall_known_extensions"):
        problems.append("extensions load automatically")
    if not _read_only(con):
        problems.append("the store is not read-only")
    if level is Lockdown.SANDBOX:
        if _reaches_files(con):
            problems.append("the local file system is reachable")
        if python_list_functions:
            present = _functions_present(con, python_list_functions)
            if present:
                problems.append(
                    f"evalstore's Python functions over lists ({', '.join(sorted(present))}) are registered on this "
                    f"database instance (the store is open in this process for ad-hoc SQL with them)"
                )
    if problems:
        raise StoreError(f"the {level.value} connection could not be set up safely: {'; '.join(problems)}")


def _setting(con: duckdb.DuckDBPyConnection, name: str) -> object:
    return con.execute("SELECT current_setting(?)", [name]).fetchone()[0]  # type: ignore[index]


def _read_only(con: duckdb.DuckDBPyConnection) -> bool:
    rows = con.execute("SELECT readonly FROM duckdb_databases() WHERE database_name = current_database()").fetchall()
    return bool(rows and rows[0][0])


def _reaches_files(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether SQL reads the store file's bytes (a path DuckDB allows without external access): a
    sandboxed instance must refuse."""
    rows = con.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchall()
    try:
        con.execute("SELECT count(*) FROM read_blob(?)", [rows[0][0]]).fetchall()
    except duckdb.PermissionException:
        return False
    return True


def _functions_present(con: duckdb.DuckDBPyConnection, names: Collection[str]) -> set[str]:
    rows = con.execute(
        "SELECT DISTINCT function_name FROM duckdb_functions() WHERE list_contains(?, function_name)", [sorted(names)]
    ).fetchall()
    return {r[0] for r in rows}


# ---------------------------------------------------------------------- the private spill folder
_FOLDERS: dict[str, str] = {}
_FOLDERS_LOCK = threading.Lock()


def private_spill_folder(base: str | None) -> str:
    """A folder for DuckDB's spill files of this process's locked connections: made once per
    process and base folder (``base``: ``--temp-dir``; None: the system's temp folder; ``''``: no
    spilling, returned as is) by ``tempfile.mkdtemp`` (mode 0700, a fresh name), removed when the
    process ends. The same string for every open in the process, as DuckDB's shared instance needs."""
    if base == "":
        return ""
    root = os.path.realpath(os.path.expanduser(base)) if base else tempfile.gettempdir()
    with _FOLDERS_LOCK:
        folder = _FOLDERS.get(root)
        if folder is None or not os.path.isdir(folder):
            try:
                folder = tempfile.mkdtemp(prefix="evalstore-sql-", dir=root)
            except OSError as e:
                raise StoreError(f"cannot make a spill folder in {root}: {e.strerror or e}") from None
            if not _FOLDERS:
                atexit.register(_remove_folders)
            _FOLDERS[root] = folder
    return folder


def _remove_folders() -> None:
    for folder in list(_FOLDERS.values()):
        shutil.rmtree(folder, ignore_errors=True)
    _FOLDERS.clear()
