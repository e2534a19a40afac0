"""The database behind a store: one DuckDB file holding runs, qrels, subsamples and scores.

This package is the store's lower layer; the :class:`evalstore.Store` facade and
:func:`evalstore.open` sit on top of the whole library (:mod:`evalstore.store`). Its modules:

* :mod:`.connection`: where the database is (path, URL, ``$EVALSTORE_DB``), opening it with its
  resource settings, lock and damage messages;
* :mod:`.lockdown`: connections DuckDB keeps from changing anything (ad-hoc and untrusted SQL);
* :mod:`.migrations`: the schema (numbered SQL files in ``migrations/``), upgrades, ``db status``;
* :mod:`.query`: ad-hoc SQL, its result type, and query results as Arrow tables;
* :mod:`.sqlsafety`: the second layer: what a read-only or sandboxed statement may be, read with
  DuckDB's parser;
* :mod:`.check`: ``db check`` (every table and index read in full);
* :mod:`.handle`: :class:`StoreHandle`, the store as ingest, evaluation and analyses use it.
"""

from typing import TYPE_CHECKING

from ..base.lazy import exports

if TYPE_CHECKING:
    from .connection import DEFAULT_PATH, ENV_VAR, connect, resolve_location
    from .handle import StoreHandle
    from .migrations import Migration, available_migrations, inspect_store, schema_version
    from .query import QueryResult

#: each name to its module, imported on first use (:mod:`evalstore.base.lazy`): a command that
#: opens no store (``evalstore eval QRELS RUN``) loads the connection alone, not the handle, the
#: migrations or the ad-hoc SQL
__getattr__, __dir__ = exports(
    __name__,
    {
        "DEFAULT_PATH": ".connection",
        "ENV_VAR": ".connection",
        "connect": ".connection",
        "resolve_location": ".connection",
        "StoreHandle": ".handle",
        "Migration": ".migrations",
        "available_migrations": ".migrations",
        "inspect_store": ".migrations",
        "schema_version": ".migrations",
        "QueryResult": ".query",
    },
)

__all__ = [
    "DEFAULT_PATH",
    "ENV_VAR",
    "Migration",
    "QueryResult",
    "StoreHandle",
    "available_migrations",
    "connect",
    "inspect_store",
    "resolve_location",
    "schema_version",
]
