"""Python functions callable from SQL, registered in DuckDB on every connection the store opens.

A module declares a function with :func:`sql_function`; :func:`register_udfs` registers every
function declared so far on a connection, so metric SQL and ad-hoc SQL (``evalstore sql``) can
call them; :func:`names` lists them (the SQL blocks that call one declare it: ``-- udfs:``).
Which modules declare functions is :mod:`evalstore.metrics.sql_functions`' business: it imports them and
is what connections register through (this module, on the ground floor, imports none of them).

A function declared with ``arrow=True`` is vectorised: DuckDB calls it once per batch of rows
(up to 2,048) with one ``pyarrow.ChunkedArray`` per argument and it returns a ``pyarrow.Array``
of the batch's length (``create_function(..., type='arrow')``), instead of one Python call per row.

A function declared with ``bounded=True`` is a factory: called with ``budget``, the bytes of the
connection's memory limit, it returns the function to register. DuckDB's limit does not cover
what Python allocates, so such a function (the resampling tests, whose memory grows with
B x topics) refuses inputs that would need more than the connection allows, instead of using
gigabytes under ``--memory-limit 100MB``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import duckdb


@dataclass(frozen=True)
class SqlFunction:
    name: str
    fn: Callable[..., Any]
    params: tuple[str, ...]  # DuckDB type names, e.g. 'DOUBLE[]'
    returns: str
    null_handling: str = "default"  # 'special': the function sees NULLs (as None) and may return NULL
    side_effects: bool = False
    arrow: bool = False  # vectorised: called with Arrow arrays of a batch of rows
    bounded: bool = False  # a factory: fn(budget bytes of the connection's memory limit) -> the function


_DECLARED: dict[str, SqlFunction] = {}


def sql_function(
    name: str,
    params: Sequence[str],
    returns: str,
    *,
    null_handling: str = "default",
    arrow: bool = False,
    bounded: bool = False,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: declare ``fn`` as the SQL function ``name(params) -> returns``."""

    def declare(fn: Callable[..., Any]) -> Callable[..., Any]:
        if name in _DECLARED and _DECLARED[name].fn is not fn:
            raise ValueError(f"SQL function {name!r} declared twice")
        _DECLARED[name] = SqlFunction(name, fn, tuple(params), returns, null_handling, arrow=arrow, bounded=bounded)
        return fn

    return declare


def declared() -> list[SqlFunction]:
    """The SQL functions declared by the modules imported so far."""
    return list(_DECLARED.values())


def names() -> set[str]:
    """The names of every declared SQL function."""
    return {f.name for f in declared()}


def list_function_names() -> set[str]:
    """The declared functions that take a list (``DOUBLE[]``, ...): their work grows with the lists
    and (for the resampling tests) with B, within one call that DuckDB cannot interrupt (an
    interrupt waits for the Python function to return)."""
    return {f.name for f in declared() if any(p.endswith("[]") for p in f.params)}


_UNITS = {"B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}


def memory_budget(con: duckdb.DuckDBPyConnection) -> int:
    """The connection's memory limit in bytes (DuckDB prints it as ``95.3 MiB``)."""
    text = str(con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0])
    m = re.match(r"^\s*([0-9.]+)\s*([A-Za-z]+)\s*$", text)
    if not m or m.group(2).upper() not in _UNITS:
        return 1 << 30  # unknown spelling: a conservative 1 GiB
    return int(float(m.group(1)) * _UNITS[m.group(2).upper()])


#: the functions made for a memory budget, kept alive here: DuckDB's ``create_function`` does not
#: keep a reference to the Python function it calls, so a closure referenced by nothing else was
#: freed and its memory reused (a UDF call then reached another object, or crashed the process)
_BOUND: dict[tuple[str, int], Callable[..., Any]] = {}


def _bound(f: SqlFunction, budget: int) -> Callable[..., Any]:
    key = (f.name, budget)
    if key not in _BOUND:
        _BOUND[key] = f.fn(budget)
    return _BOUND[key]


def register_udfs(con: duckdb.DuckDBPyConnection, *, over_lists: bool = True) -> None:
    """Register every declared function on ``con`` (``over_lists=False``: not those of
    :func:`list_function_names`). Connections to the same database in one process (a store opened
    twice, cursors) share one DuckDB instance, where the functions may already be registered: that
    is fine."""
    budget = memory_budget(con)
    skip = set() if over_lists else list_function_names()
    for f in declared():
        if f.name in skip:
            continue
        try:
            con.create_function(  # type: ignore[call-overload]  # null_handling: 'default' | 'special'
                f.name,
                _bound(f, budget) if f.bounded else f.fn,
                # the connection's own parser: duckdb.sqltype() makes DuckDB's default in-memory
                # database first (~20 ms of CPU at every start-up)
                [con.sqltype(p) for p in f.params],
                con.sqltype(f.returns),
                null_handling=f.null_handling,
                side_effects=f.side_effects,
                type="arrow" if f.arrow else "native",
            )
        except duckdb.CatalogException as e:
            if "already exists" not in str(e):
                raise
