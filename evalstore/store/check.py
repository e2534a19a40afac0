"""``evalstore db check``: read every table of a store file and report damage plainly.

The store is opened read-only; every column of every table is read in full (a hash aggregate per
column, so that every block of the file is loaded and its checksum verified by DuckDB). Opening
alone checks the file header and the catalogue. The result lists each table with its rows, or the
error that reading it raised.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import duckdb

from ..errors import StoreDamagedError, StoreError
from .connection import Settings, connect, damaged_message, resolve_location


@dataclass
class CheckReport:
    location: str
    tables: list[tuple[str, int | None, str | None]] = field(default_factory=list)  # name, rows, error
    error: str | None = None  # the store could not be opened at all

    @property
    def ok(self) -> bool:
        return self.error is None and all(err is None for _, _, err in self.tables)


def check_store(url_or_path=None, settings: Settings | None = None) -> CheckReport:
    """Read the whole store at ``url_or_path``; see the module docstring."""
    location = resolve_location(url_or_path)
    if location == ":memory:":
        raise StoreError("db check reads a store file; an in-memory store has none")
    report = CheckReport(location)
    try:
        con = connect(location, read_only=True, settings=settings)
    except (StoreDamagedError, StoreError) as e:
        report.error = str(e)
        return report
    try:
        names = [r[0] for r in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE NOT temporary AND database_name = current_database() "
            "ORDER BY table_name"
        ).fetchall()]  # fmt: skip
        for name in names:
            try:
                n = con.execute(f'SELECT count(*), bit_xor(hash(COLUMNS(*))) FROM "{name}"').fetchall()[0][0]
                report.tables.append((name, int(n), None))
            except duckdb.Error as e:
                report.tables.append((name, None, str(e).strip().splitlines()[0]))
    except duckdb.Error as e:
        report.error = damaged_message(location, str(e))
    finally:
        con.close()
    return report
