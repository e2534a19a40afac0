"""evalstore's Python SQL functions: the modules that declare them, and registering them.

Every connection evalstore opens (a store, the in-memory evaluator, an SQLAlchemy engine's
cursors) registers them through :func:`register`, so metric SQL and ad-hoc SQL can call
``ndpm``, ``bootstrap_asl``, ``metric_name``, ... . The mechanism (the ``@sql_function``
declaration) is :mod:`evalstore.base.python_udf`; the declaring modules are imported here, explicitly.
"""

from __future__ import annotations

import duckdb

from ..base import python_udf
from . import name_functions, udf_diversity, udf_graded  # noqa: F401  (declare metric functions)
from . import udf_tests as meta_functions  # noqa: F401  (declares the significance-test functions)


def register(con: duckdb.DuckDBPyConnection, *, over_lists: bool = True) -> None:
    """Register every SQL function of evalstore on ``con`` (once per DuckDB instance: DuckDB keeps
    them in the instance's catalogue, every connection to it sees them); ``over_lists=False``: not
    those over lists (:func:`list_function_names`), for a sandboxed instance."""
    python_udf.register_udfs(con, over_lists=over_lists)


def names() -> set[str]:
    """The names of every SQL function of evalstore."""
    return python_udf.names()


def list_function_names() -> set[str]:
    """evalstore's SQL functions over lists, whose one call DuckDB cannot interrupt
    (:func:`evalstore.base.python_udf.list_function_names`)."""
    return python_udf.list_function_names()
