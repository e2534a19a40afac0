"""Errors meant for people: each says what is wrong, where, and what to do."""

from __future__ import annotations

import duckdb


class EvalstoreError(Exception):
    """Any error evalstore reports to the user (the CLI prints it without a traceback)."""


class StoreError(EvalstoreError):
    """The store cannot be opened or is of an unknown version."""


class StoreLockedError(StoreError):
    """Another process holds the store file open for writing."""


class StoreIOError(StoreError):
    """The store's file cannot be written or read by the machine: a read-only file system, a full
    disk (the CLI exits with 5, as for other input/output errors)."""


class IngestError(EvalstoreError):
    """Bad input file. Carries the file, the 1-based line number and the offending text."""

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        text: str | None = None,
        expected: str | None = None,
    ):
        self.file, self.line, self.text, self.expected = file, line, text, expected
        parts = []
        where = file or ""
        if line is not None:
            where += f", line {line}" if where else f"line {line}"
        parts.append(f"{where}: {message}" if where else message)
        if text is not None:
            shown = text if len(text) <= 200 else text[:200] + "..."
            parts.append(f"  offending text: {shown!r}")
        if expected:
            parts.append(f"  expected: {expected}")
        super().__init__("\n".join(parts))


class MetricError(EvalstoreError):
    """Unknown metric name or bad parameter."""


class NotFoundError(EvalstoreError):
    """A named run, qrels set or subsample does not exist in the store."""


class SubsampleError(EvalstoreError):
    """Bad subsample request (fractions, parameters, name clash)."""


class MetaError(EvalstoreError):
    """A meta-evaluation cannot be run as asked (too few runs or topics, bad parameters)."""


class MemoryBudgetError(MetaError):
    """Resampling asked for more memory than its share of the memory limit (the message names the
    number of trials B that fits); the CLI exits with 4, as for out of memory."""


class FusionError(EvalstoreError):
    """A fusion of runs cannot be made as asked (unknown method, bad parameter, runs without scores)."""


class PoolError(EvalstoreError):
    """A pool cannot be built, exported or analysed as asked (unknown strategy, bad depth or p, a
    name that exists, runs without a group)."""


class ArgumentError(EvalstoreError, TypeError):
    """A public function was given an argument of the wrong kind (a number where a name goes, ...)."""


class MissingDependency(EvalstoreError, ImportError):
    """An optional library that a call needs is not installed (the message names the install command)."""


class StoreDamagedError(StoreError):
    """The store file is damaged (a block fails its checksum, the file is cut short)."""


_DAMAGE_MARKERS = (
    "corrupt",
    "checksum",
    "malformed",
    "not a valid duckdb",
    "unexpected end of file",
    "could not read enough bytes",
)


def is_damage(e: BaseException) -> bool:
    """True for DuckDB's reports of a damaged database file."""
    text = str(e).lower()
    return any(m in text for m in _DAMAGE_MARKERS)


def is_read_only_file_system(e: BaseException) -> bool:
    """True for an error of writing on a read-only file system (errno 30, EROFS)."""
    return getattr(e, "errno", None) == 30 or "read-only file system" in str(e).lower()


def is_disk_full(e: BaseException) -> bool:
    """True for an error of writing on a full disk (errno 28, ENOSPC)."""
    return getattr(e, "errno", None) == 28 or "no space left" in str(e).lower()


def is_resource_error(e: BaseException) -> bool:
    """Errors of the machine or the file rather than of a query: out of memory, I/O (disk full),
    interruption, damage. Library code lets them through unwrapped, so that the CLI can explain
    them (memory limit, free space, db check)."""
    return isinstance(e, (duckdb.OutOfMemoryException, duckdb.IOException, duckdb.InterruptException)) or is_damage(e)
