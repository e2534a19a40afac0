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

from .connection import DEFAULT_PATH, ENV_VAR, connect, resolve_location
from .handle import StoreHandle
from .migrations import Migration, available_migrations, inspect_store, schema_version
from .query import QueryResult

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
