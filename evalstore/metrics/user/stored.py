"""Measures of one's own kept in a store (``measure_defs``, migration 17; view ``measures``).

``evalstore measure add NAME --sql FILE`` (:func:`add_measure`) checks a definition and keeps its
text; every store that is opened registers its measures for the process (:func:`load`), so every
later command, and whoever opens the store, knows them. A store keeps SQL definitions only (a
Python function is code of the process that registers it).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...db.query import QueryResult
from ...errors import MetricError, NotFoundError
from ..registry import get, register_user, unregister_user, user_metrics
from . import define, spec_of

if TYPE_CHECKING:
    import duckdb

    from ...db.handle import StoreHandle


@dataclass(frozen=True)
class MeasureResult:
    name: str
    status: str  # added, replaced, unchanged
    dropped_scores: int = 0

    def summary(self) -> str:
        if self.status == "unchanged":
            return f"measure {self.name!r}: the same definition is already stored, nothing to do"
        dropped = (
            f"; {self.dropped_scores} stored evaluation(s) of the old definition dropped" if self.dropped_scores else ""
        )
        return f"measure {self.name!r} {self.status}{dropped}"


def add_measure(
    store: StoreHandle,
    name: str,
    sql: str | os.PathLike,
    *,
    replace: bool = False,
    source: str | None = None,
) -> MeasureResult:
    """Keep the SQL definition ``sql`` (its text, or a path to a ``.sql`` file) in the store as the
    measure ``name`` (checked first; see :mod:`evalstore.metrics.user.definition`). Another
    definition under a stored name needs ``replace`` (the scores of the old one are dropped)."""
    text, source = _text(sql, source)
    measure = define(name, sql=text, source="store")
    con = store.con
    row = con.execute("SELECT sha256 FROM measure_defs WHERE lower(name) = lower(?)", [name]).fetchall()
    if row and row[0][0] == measure.sha256:
        register_user(spec_of(measure))
        return MeasureResult(name, "unchanged")
    if row and not replace:
        raise MetricError(
            f"the store already has a measure named {name!r} with another definition; replace it with "
            "--replace (its stored scores are dropped)"
        )
    with store.transaction():
        dropped = _drop_scores(con, name) if row else 0
        con.execute("DELETE FROM measure_defs WHERE lower(name) = lower(?)", [name])
        con.execute(
            "INSERT INTO measure_defs (name, language, definition, sha256, source) VALUES (?, 'sql', ?, ?, ?)",
            [name, text, measure.sha256, source],
        )
    register_user(spec_of(measure))
    return MeasureResult(name, "replaced" if row else "added", dropped)


def drop_measure(store: StoreHandle, name: str) -> MeasureResult:
    """Remove a stored measure and its stored scores."""
    con = store.con
    if not con.execute("SELECT 1 FROM measure_defs WHERE lower(name) = lower(?)", [name]).fetchall():
        raise NotFoundError(f"the store has no measure named {name!r} (`evalstore measure list` lists them)")
    with store.transaction():
        dropped = _drop_scores(con, name)
        con.execute("DELETE FROM measure_defs WHERE lower(name) = lower(?)", [name])
    try:
        if get(name).user is not None:
            unregister_user(name)
    except MetricError:
        pass
    return MeasureResult(name, "dropped", dropped)


def list_measures(store: StoreHandle) -> QueryResult:
    """The measures of one's own the store keeps: name, cutoff, aggregate, reads, description,
    source (the file it was read from), sha256 (12 digits), added_at; and those this process
    registered itself (source ``python``)."""
    rows: list[tuple] = []
    stored = store.con.execute(
        "SELECT name, definition, source, sha256, added_at::TIMESTAMP(0) FROM measure_defs ORDER BY lower(name)"
    ).fetchall()
    names = set()
    for name, text, source, sha, added in stored:
        try:
            m = define(name, sql=text, source="store")
        except MetricError as e:
            rows.append((name, None, None, None, f"refused by this build: {e}", source, sha[:12], added))
            continue
        names.add(name.lower())
        rows.append((name, m.cutoff, m.aggregate, ", ".join(sorted(m.reads)), m.doc, source, sha[:12], added))
    for spec in user_metrics():
        own = spec.user
        if own is not None and spec.name.lower() not in names and own.source != "store":
            rows.append((own.name, own.cutoff, own.aggregate, ", ".join(sorted(own.reads)), own.doc,
                         f"{own.language} ({own.source}, this process)", own.sha256[:12], None))  # fmt: skip
    columns = ["name", "cutoff", "aggregate", "reads", "description", "source", "sha256", "added_at"]
    return QueryResult(columns, rows)


def load(con: duckdb.DuckDBPyConnection) -> None:
    """Register the measures the store keeps (a store without the table, not yet migrated, has none).
    A definition this build refuses is left unregistered: using it names the problem."""
    if not con.execute("SELECT 1 FROM duckdb_tables() WHERE table_name = 'measure_defs' AND NOT temporary").fetchall():
        return
    for name, text in con.execute("SELECT name, definition FROM measure_defs ORDER BY name").fetchall():
        try:
            register_user(spec_of(define(name, sql=text, source="store")))
        except MetricError:
            continue


def _text(sql: str | os.PathLike, source: str | None) -> tuple[str, str | None]:
    """The SQL of a definition given as text or as a path (then its source)."""
    if isinstance(sql, os.PathLike) or (isinstance(sql, str) and sql.endswith(".sql") and "\n" not in sql):
        path = os.fspath(sql)
        try:
            with open(path, encoding="utf-8") as f:
                return f.read(), source or os.path.basename(path)
        except (OSError, UnicodeDecodeError) as e:
            raise MetricError(f"cannot read the measure's SQL from {path}: {e}") from None
    if not isinstance(sql, str):
        raise MetricError(f"a measure's SQL is text or a .sql file, not {type(sql).__name__}")
    return sql, source


def _drop_scores(con: duckdb.DuckDBPyConnection, name: str) -> int:
    """Drop the stored evaluations (scores, intervals, rank intervals) of a measure, any cutoff."""
    where = (
        "(lower(metric) = lower($1) OR lower(metric) LIKE lower($1) || '@%' OR lower(metric) LIKE lower($1) || '(%')"
    )
    n = con.execute(f"SELECT count(*) FROM evaluations WHERE {where}", [name]).fetchall()[0][0]
    tables = [
        t
        for (t,) in con.execute(
            "SELECT table_name FROM duckdb_columns() WHERE column_name = 'metric' AND NOT internal "
            "AND table_name IN ('score_data', 'evaluations', 'interval_data', 'rank_interval_data')"
        ).fetchall()
    ]
    for table in tables:
        con.execute(f"DELETE FROM {table} WHERE {where}", [name])
    return int(n)
