"""The memory limit: how it is written, its default, and the bytes it means.

One limit bounds both what DuckDB allocates (a store's ``memory_limit``: ``--memory-limit``,
``evalstore.open(memory_limit=...)``, ``$EVALSTORE_MEMORY_LIMIT``) and the numpy arrays of the
resampling analyses (:mod:`evalstore.stats.budget` sizes their work from a share of it). This module
reads nothing above :mod:`evalstore.errors`: the store's connection settings
(:class:`evalstore.db.connection.Settings`) and the statistics both build on it.
"""

from __future__ import annotations

import os
import re
from typing import Any

from ..errors import StoreError

_MEMORY = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(B|KB|MB|GB|TB|KIB|MIB|GIB|TIB)\s*$", re.I)
_PERCENT = re.compile(r"^\s*(\d+(?:\.\d*)?)\s*%\s*$")

_UNITS = {
    "B": 1, "BYTES": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
    "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40,
}  # fmt: skip


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


def threads_setting(threads: int | None = None) -> int | None:
    """``threads``, else ``$EVALSTORE_THREADS``, checked (None: neither is set)."""
    env_threads = os.environ.get("EVALSTORE_THREADS")
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int)):
        raise StoreError(f"threads is a whole number of at least 1, not {threads!r}")
    try:
        t = threads if threads is not None else (int(env_threads) if env_threads else None)
    except ValueError:
        raise StoreError(f"$EVALSTORE_THREADS={env_threads!r} is not a whole number") from None
    if t is not None and t < 1:
        raise StoreError(f"threads must be at least 1, not {t}")
    return t


def memory_limit_setting(memory_limit: str | None = None) -> str | None:
    """``memory_limit``, else ``$EVALSTORE_MEMORY_LIMIT``, checked (None: neither is set)."""
    limit = memory_limit or os.environ.get("EVALSTORE_MEMORY_LIMIT") or None
    return check_memory_limit(limit) if limit is not None else None


def limit_bytes(text: str) -> int:
    """A memory limit as DuckDB or a user writes it (``300MB``, ``488.2 MiB``, ``50%``) in bytes."""
    t = str(text).strip()
    m = re.fullmatch(r"([0-9.]+)\s*%", t)
    if m:
        return int(float(m.group(1)) / 100 * _ram())
    m = re.fullmatch(r"([0-9.]+)\s*([A-Za-z]+)", t)
    if not m or m.group(2).upper() not in _UNITS:
        raise ValueError(f"not a memory limit: {text!r}")
    return int(float(m.group(1)) * _UNITS[m.group(2).upper()])


def _ram() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 << 30


def default() -> int:
    """The memory limit a store would get now (``$EVALSTORE_MEMORY_LIMIT`` or evalstore's default for
    ``$EVALSTORE_THREADS``), in bytes: the budget of resampling without a store."""
    return limit_bytes(memory_limit_setting() or default_memory_limit(threads_setting()))


def of_connection(con: Any) -> int:
    """The memory limit of a DuckDB connection, in bytes (1 GiB when it cannot be read)."""
    try:
        return limit_bytes(con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0])
    except Exception:  # noqa: BLE001  (an unknown spelling: a conservative default)
        return 1 << 30


def of_store(store: Any) -> int:
    """The memory limit of an open store (its connection), in bytes."""
    return of_connection(store.con)


def of_limit(text: str | None) -> int | None:
    """``--memory-limit`` in bytes (None: not given)."""
    return limit_bytes(text) if text else None
