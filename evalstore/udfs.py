"""Python UDFs registered in DuckDB on every connection the store opens.

Modules declare a registrar with :func:`udf_registrar`; :func:`register_udfs` imports the metric
families (and the meta-evaluation package) so every registrar is known, then calls them all. The
functions are then callable from ad-hoc SQL (``evalstore sql``) as well as from metric SQL.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

_REGISTRARS: list[Callable] = []
# Packages whose import declares UDF registrars.
_UDF_PACKAGES = ("evalstore.metrics.families", "evalstore.meta")


def udf_registrar(fn: Callable) -> Callable:
    """Decorator: ``fn(con)`` registers one or more DuckDB functions on a connection."""
    if fn not in _REGISTRARS:
        _REGISTRARS.append(fn)
    return fn


def register_udfs(con) -> None:
    for pkg in _UDF_PACKAGES:
        try:
            importlib.import_module(pkg)
        except ModuleNotFoundError as e:
            if e.name != pkg:
                raise
    for fn in _REGISTRARS:
        fn(con)


def registered() -> list[str]:
    return [f"{fn.__module__}.{fn.__name__}" for fn in _REGISTRARS]
