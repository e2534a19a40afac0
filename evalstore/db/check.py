"""``evalstore db check``: read every table of a store file and report damage plainly.

The store is opened read-only; every column of every table is read in full (a hash aggregate per
column, so that every block of the file is loaded and its checksum verified by DuckDB). Opening
alone checks the file header and the catalogue.

Indexes (the primary keys and unique names) are stored in blocks of their own, which a scan never
reads but every write does. They are read by a probe that cannot change the file: in a transaction
that is rolled back, each indexed column is set to itself (``UPDATE t SET k = k``), which looks
every key up in its index. The probe needs the store for writing for a moment; while another
process has the store open, or when a write-ahead log is waiting to be applied, the indexes are
reported as not checked. The result lists each table with its rows, and each index, with the error
that reading it raised.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import duckdb

from ..errors import StoreDamagedError, StoreError, StoreIOError, StoreLockedError
from .connection import Settings, connect, damaged_message, resolve_location


@dataclass
class CheckReport:
    location: str
    tables: list[tuple[str, int | None, str | None]] = field(default_factory=list)  # name, rows, error
    error: str | None = None  # the store could not be opened at all
    indexes: list[tuple[str, str | None]] = field(default_factory=list)  # "table (columns)", error
    indexes_skipped: str | None = None  # why the indexes were not checked

    @property
    def ok(self) -> bool:
        return (
            self.error is None
            and all(err is None for _, _, err in self.tables)
            and all(err is None for _, err in self.indexes)
        )


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
        keys = con.execute(
            "SELECT table_name, constraint_column_names FROM duckdb_constraints() "
            "WHERE constraint_type IN ('PRIMARY KEY', 'UNIQUE') AND database_name = current_database() "
            "ORDER BY table_name, constraint_index"
        ).fetchall()
    except duckdb.Error as e:
        report.error = damaged_message(location, str(e))
        return report
    finally:
        con.close()
    if report.error is None and all(err is None for _, _, err in report.tables):
        _probe_indexes(report, location, [(t, list(cols)) for t, cols in keys], settings)
    return report


def _probe_indexes(report: CheckReport, location: str, keys: list[tuple[str, list[str]]], settings) -> None:
    """Look every key up in its index, in a transaction that is rolled back (see the module docstring)."""
    if os.path.exists(location + ".wal"):
        report.indexes_skipped = "a write-ahead log is waiting to be applied (open the store for writing once)"
        return
    if not os.access(location, os.W_OK) or not os.access(os.path.dirname(os.path.abspath(location)), os.W_OK):
        report.indexes_skipped = "the store file or its folder cannot be written (a read-only file system?)"
        return
    try:
        con = connect(location, read_only=False, settings=settings)
    except StoreLockedError:
        report.indexes_skipped = "the store is open in another process"
        return
    except StoreIOError as e:
        report.indexes_skipped = f"the store cannot be opened for writing ({str(e).splitlines()[0]})"
        return
    except StoreError as e:
        report.indexes.append(("(all indexes)", str(e).splitlines()[0]))
        return
    try:
        for table, cols in keys:
            label = f"{table} ({', '.join(cols)})"
            con.execute("BEGIN TRANSACTION")
            try:
                con.execute(f'UPDATE "{table}" SET "{cols[0]}" = "{cols[0]}"')
                report.indexes.append((label, None))
            except duckdb.Error as e:
                report.indexes.append((label, str(e).strip().splitlines()[0]))
            finally:
                con.execute("ROLLBACK")
    finally:
        con.close()
