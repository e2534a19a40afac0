"""The evaluation store: one DuckDB database holding runs, qrels, subsamples and scores.

``evalstore.open()`` returns a :class:`Store` (:mod:`.facade`). The modules of this package:

* :mod:`.connection`: where the database is (path, URL, ``$EVALSTORE_DB``), opening it, its SQL functions;
* :mod:`.migrations`: the schema (numbered SQL files in ``migrations/``), upgrades, ``db status``;
* :mod:`.query`: ad-hoc SQL and the read-only rule;
* :mod:`.facade`: the :class:`Store` object and :func:`open`.

SQLAlchemy: ``store.sqlalchemy_engine()`` gives an engine on the open store (duckdb-engine);
without an open store in the same process, ``sqlalchemy.create_engine("duckdb:///path.duckdb")``
works too.
"""

from .connection import DEFAULT_PATH, ENV_VAR, connect, resolve_location
from .facade import Store, open
from .migrations import Migration, available_migrations, inspect_store, schema_version
from .query import QueryResult

__all__ = [
    "DEFAULT_PATH",
    "ENV_VAR",
    "Migration",
    "QueryResult",
    "Store",
    "available_migrations",
    "connect",
    "inspect_store",
    "open",
    "resolve_location",
    "schema_version",
]
