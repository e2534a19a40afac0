"""Opening the DuckDB database behind a store: where it is, the connection, its SQL functions.

:func:`resolve_location` turns what a user gives (a path, an SQLAlchemy URL, nothing) into a
DuckDB location; :func:`connect` opens it and turns DuckDB's lock error into a plain message;
evalstore's SQL functions are registered by the caller (:mod:`evalstore.sql_functions`).
"""

from __future__ import annotations

import os
import re
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import duckdb

from ..errors import StoreDamagedError, StoreError, StoreLockedError, is_damage

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
        env_threads = os.environ.get("EVALSTORE_THREADS")
        if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int)):
            raise StoreError(f"threads is a whole number of at least 1, not {threads!r}")
        try:
            t = threads if threads is not None else (int(env_threads) if env_threads else None)
        except ValueError:
            raise StoreError(f"$EVALSTORE_THREADS={env_threads!r} is not a whole number") from None
        if t is not None and t < 1:
            raise StoreError(f"threads must be at least 1, not {t}")
        temp = temp_directory if temp_directory is not None else (os.environ.get("EVALSTORE_TEMP_DIR") or None)
        if temp is not None and not isinstance(temp, (str, os.PathLike)):
            raise StoreError(f"temp_directory is a folder path, not {temp!r}")
        if temp is not None and temp != "" and not Path(temp).expanduser().is_dir():
            raise StoreError(f"the temp directory {temp} does not exist; create it or choose another (--temp-dir)")
        limit = memory_limit or os.environ.get("EVALSTORE_MEMORY_LIMIT") or None
        return cls(check_memory_limit(limit) if limit is not None else None, t, temp and os.fspath(temp))

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


_MEMORY = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(B|KB|MB|GB|TB|KIB|MIB|GIB|TIB)\s*$", re.I)
_PERCENT = re.compile(r"^\s*(\d+(?:\.\d*)?)\s*%\s*$")


def check_memory_limit(value: object) -> str:
    """A memory limit as DuckDB reads it: a positive size with a unit (``1.5GB``, ``512MiB``) or a
    share of the RAM (``80%``, at most 100 %); anything else is a StoreError saying so. (A limit too
    small for the work is not refused here: the work then fails as out of memory.)"""
    text = str(value) if isinstance(value, (str, int, float)) and not isinstance(value, bool) else None
    m = _MEMORY.match(text or "")
    if m and float(m.group(1)) > 0:
        return text.strip()  # type: ignore[union-attr]
    p = _PERCENT.match(text or "")
    if p and 0 < float(p.group(1)) <= 100:
        return text.strip()  # type: ignore[union-attr]
    raise StoreError(
        f"memory limit {value!r}: give a positive size with a unit (e.g. 2GB, 512MB, 1.5GiB) or a share of the "
        f"RAM (e.g. 50%)"
    )


#: the storage format of new store files: DuckDB 1.1.0's (file format 64), readable by DuckDB 1.1 and later
STORAGE_VERSION = "v1.1.0"


def default_memory_limit(threads: int | None = None) -> str:
    """The memory budget of a connection unless one is given: 128 MB per thread and at least 512 MB,
    at most min(25 % of RAM, 4 GB). Ingest and evaluation work in chunks that fit it (DuckDB spills
    to the temp directory beyond it), so a store's peak memory does not grow with its size; a
    larger budget (--memory-limit, evalstore.open(memory_limit=...)) buys little speed (docs/benchmark.md,
    "Memory"). Below ~384 MB the SQL of a large metric set (trec_eval's ~100 measures in one
    statement) runs out of memory: DuckDB cannot spill every operator."""
    t = threads or os.cpu_count() or 1
    mb = max(512, 128 * t)
    try:
        ram_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1 << 20)
        mb = min(mb, max(64, min(ram_mb // 4, 4096)))
    except (ValueError, OSError, AttributeError):  # no sysconf (Windows): the per-thread rule alone
        pass
    return f"{mb}MB"


def spill_directory() -> str:
    """Where an in-memory store spills: a folder of this process in the system's temp directory
    (DuckDB's default, ``.tmp`` in the working directory, would be shared by every process there)."""
    return os.path.join(tempfile.gettempdir(), f"evalstore-spill-{os.getpid()}")


def sandbox_config(config: dict) -> dict:
    """The configuration of a sandboxed connection: no file system or network access, no Python
    variables read as tables, settings locked. The order matters: DuckDB accepts a temp directory
    only after external access is off (it then allows that one directory, which the sandbox rule of
    :mod:`.sqlsafety` still keeps queries from reading or writing), and nothing after the lock.
    Without a temp directory given, a sandboxed connection does not spill (a query beyond the
    memory limit fails)."""
    out: dict = {"enable_external_access": False}
    out.update({k: v for k, v in config.items() if k != "temp_directory"})
    out["temp_directory"] = config.get("temp_directory", "")
    out["python_enable_replacements"] = False
    return out  # locked by connect() once the connection's own settings are made


def connect(
    location: str,
    read_only: bool = False,
    settings: Settings | None = None,
    *,
    sandbox: bool = False,
    wait: float = 0.0,
) -> duckdb.DuckDBPyConnection:
    """Open the DuckDB database with ``settings``, translating DuckDB's errors into plain messages;
    ``wait``: seconds to keep retrying (with backoff) while another process holds the store."""
    settings = settings or Settings.resolve()
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
    config: dict = settings.config()
    if location == ":memory:" and "temp_directory" not in config:
        config["temp_directory"] = spill_directory()
    if sandbox:
        config = sandbox_config(config)
    deadline, delay = time.monotonic() + max(0.0, wait), 0.05
    while True:
        try:
            con = duckdb.connect(location, read_only=read_only, config=config)
            break
        except duckdb.IOException as e:
            msg = str(e)
            if "lock" not in msg.lower():
                if is_damage(e):
                    raise StoreDamagedError(damaged_message(location, msg)) from None
                raise StoreError(f"cannot open the store {location}: {msg}") from None
            if time.monotonic() < deadline:
                time.sleep(delay)
                delay = min(delay * 2, 1.0)
                continue
            raise StoreLockedError(_lock_message(location, msg, read_only, wait)) from None
        except duckdb.OutOfMemoryException:
            raise  # a memory limit too small to open the store: the CLI explains it (exit 4)
        except duckdb.Error as e:
            if is_damage(e):
                raise StoreDamagedError(damaged_message(location, str(e))) from None
            raise StoreError(f"cannot open the store {location}: {e}") from None
    # DuckDB's own progress bar would print into the output of long queries (pipes, CSV)
    con.execute("SET enable_progress_bar = false")
    if sandbox:
        con.execute("SET lock_configuration = true")
    return con


def _lock_message(location: str, msg: str, read_only: bool, wait: float) -> str:
    pid = re.search(r"PID (\d+)", msg)
    who = f" (PID {pid.group(1)})" if pid else ""
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
