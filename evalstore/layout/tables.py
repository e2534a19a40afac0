"""Which table of a store goes to which file of the layout, and how its ids become names.

Every table of the store is carried (:func:`carried_tables`: all but ``schema_migrations``), so a
table a migration adds travels too without a change here, as long as the ids it holds are
declared in :data:`ID_COLUMNS`. In the layout a store's integer ids never appear: a column of
:data:`ID_COLUMNS` is written as the name of what it points to (``run_id`` as ``run``, ...), and
read back as the id that name has in the importing store; an analysis's ``analysis_id`` is kept in
the layout and given a new id at import (:data:`ANALYSIS_ID`). The tables other tools read keep
the file names of layout version 1 (:data:`FILES`, :data:`PARTITIONED`); the others are
``tables/<table>.parquet``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import duckdb


@dataclass(frozen=True)
class IdColumn:
    """An id column: the table that owns the ids, its id column, and the layout's column name."""

    owner: str
    owner_id: str
    name: str


#: every column that holds an id of another table, by its name in any table
ID_COLUMNS = {
    "run_id": IdColumn("run_meta", "run_id", "run"),
    "qrels_id": IdColumn("qrels_meta", "qrels_id", "qrels"),
    "parent_id": IdColumn("qrels_meta", "qrels_id", "parent"),
    "input_id": IdColumn("run_meta", "run_id", "input_run"),
    "topics_id": IdColumn("topic_set_meta", "topics_id", "topics"),
    "docs_id": IdColumn("doc_set_meta", "docs_id", "docs"),
    "nuggets_id": IdColumn("nugget_set_meta", "nuggets_id", "nuggets"),
    "pool_id": IdColumn("pool_meta", "pool_id", "pool"),
}
#: the tables that own ids (named things: their names are unique in a store), in import order
OWNERS = {
    "nugget_set_meta": "nuggets_id",  # before qrels_meta: an assignment set names its nugget set
    "qrels_meta": "qrels_id",
    "run_meta": "run_id",
    "topic_set_meta": "topics_id",
    "doc_set_meta": "docs_id",
    "pool_meta": "pool_id",
}
#: the id of a stored analysis (owned by ``meta_runs``), renumbered at import
ANALYSIS_ID, ANALYSES = "analysis_id", "meta_runs"
#: tables with a file name of their own (layout version 1, read by the Spark backend and others)
FILES = {
    "run_meta": "run_meta.parquet",
    "qrels_meta": "qrels_meta.parquet",
    "subsample_meta": "subsamples.parquet",
    "evaluations": "evaluations.parquet",
    "score_data": "scores.parquet",
}
#: tables written as one folder per run or qrels set: (folder, the partition column)
PARTITIONED = {"run_row_data": ("runs", "run"), "qrels_data": ("qrels", "qrels")}
NOT_CARRIED = frozenset({"schema_migrations"})


def carried_tables(con: duckdb.DuckDBPyConnection) -> dict[str, list[str]]:
    """The store's tables and their columns, in import order: the owners of ids, the analyses,
    then the others by name."""
    rows = con.execute(
        "SELECT table_name, list(column_name ORDER BY column_index) FROM duckdb_columns() "
        "WHERE database_name = current_database() AND schema_name = 'main' "
        "AND table_name IN (SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() "
        "AND NOT temporary) GROUP BY table_name"
    ).fetchall()
    tables = {t: list(cols) for t, cols in rows if t not in NOT_CARRIED}
    first = [t for t in (*OWNERS, ANALYSES) if t in tables]
    return {t: tables[t] for t in first + sorted(set(tables) - set(first))}


def file_of(table: str) -> str:
    """The layout's file (or folder) of a table, relative to the layout's folder."""
    if table in PARTITIONED:
        return PARTITIONED[table][0]
    return FILES.get(table, f"tables/{table}.parquet")


def layout_columns(table: str, columns: list[str]) -> list[tuple[str, str | None]]:
    """``(layout column, store column)`` of a table: an id column under its layout name, an owner's
    own id left out (its name is the key), other columns as they are."""
    out: list[tuple[str, str | None]] = []
    for c in columns:
        if OWNERS.get(table) == c:
            continue
        out.append((ID_COLUMNS[c].name, c) if c in ID_COLUMNS else (c, c))
    return out


def export_query(table: str, columns: list[str]) -> str:
    """The SELECT of a table as the layout holds it (ids as names)."""
    parts, joins = [], []
    for k, (name, c) in enumerate(layout_columns(table, columns)):
        if c in ID_COLUMNS:
            ref = ID_COLUMNS[c]
            joins.append(f'LEFT JOIN "{ref.owner}" j{k} ON j{k}."{ref.owner_id}" = t."{c}"')
            parts.append(f'j{k}.name AS "{name}"')
        else:
            parts.append(f't."{c}"')
    return f'SELECT {", ".join(parts)} FROM "{table}" t {" ".join(joins)}'


def import_query(table: str, columns: list[str], present: set[str], source: str) -> tuple[str, str]:
    """``(column list, SELECT)`` that inserts a table's layout rows (``source``: a FROM item over
    its Parquet, with the columns ``present``) with the importing store's ids; a store column the
    layout lacks (written by an older evalstore) takes its default."""
    cols, parts, joins = [], [], []
    for k, (name, c) in enumerate(layout_columns(table, columns)):
        if name not in present:
            continue
        cols.append(f'"{c}"')
        if c in ID_COLUMNS:
            ref = ID_COLUMNS[c]
            joins.append(f'LEFT JOIN "{ref.owner}" j{k} ON j{k}.name = s."{name}"')
            parts.append(f'j{k}."{ref.owner_id}"')
        elif c == ANALYSIS_ID:
            joins.append(f"JOIN _layout_analyses a{k} ON a{k}.old = s.{ANALYSIS_ID}")
            parts.append(f"a{k}.new")
        else:
            parts.append(f's."{name}"')
    return ", ".join(cols), f"SELECT {', '.join(parts)} FROM {source} s {' '.join(joins)}"
