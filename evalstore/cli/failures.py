"""The CLI's one error-handling layer: every failure becomes a one-line cause and what to do, with
a distinct exit code (docs/safety.md); ``--debug`` or ``EVALSTORE_DEBUG=1`` shows
the Python traceback instead.

=====  =======================================================================================
code   meaning
=====  =======================================================================================
0      success (also when the reader of the output went away: ``evalstore demo | head``)
1      a user error: bad input file, unknown metric or name, bad SQL, ... (the message says which)
2      a usage error: unknown option, bad option value (nothing was done)
3      the store is busy: another process holds it, or a concurrent change conflicted
4      out of memory (in DuckDB, or resampling beyond its share of --memory-limit)
5      disk full or another input/output error (store, temp directory or output file)
6      the store file is damaged
70     an internal error of evalstore (a bug: please report it with --debug's traceback)
130    interrupted (Ctrl-C)
=====  =======================================================================================
"""

from __future__ import annotations

import os

import duckdb
import typer

from ..errors import (
    EvalstoreError,
    MemoryBudgetError,
    StoreDamagedError,
    StoreIOError,
    StoreLockedError,
    is_damage,
    is_disk_full,
    is_read_only_file_system,
)

USER, USAGE, BUSY, MEMORY, IO, DAMAGED, INTERNAL, INTERRUPTED = 1, 2, 3, 4, 5, 6, 70, 130


class OutputClosed(Exception):
    """The reader of standard output went away (``| head``): not an error, the command stops."""


def closed_output() -> None:
    """Point standard output at the null device, so that nothing more is written to the closed
    pipe (the interpreter's flush at exit would report it)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    except OSError:
        pass


def debugging() -> bool:
    return os.environ.get("EVALSTORE_DEBUG", "") not in ("", "0")


def explain(e: BaseException) -> tuple[int, str | None]:
    """The exit code and message for a failure (message None: print nothing more)."""
    if isinstance(e, KeyboardInterrupt) or _interrupted(e):
        return INTERRUPTED, "interrupted"
    if isinstance(e, (OutputClosed, BrokenPipeError)):
        return 0, None  # the reader of our output went away (| head): nothing to say
    if isinstance(e, StoreLockedError):
        return BUSY, f"error: {e}"
    if isinstance(e, StoreDamagedError):
        return DAMAGED, f"error: {e}"
    if isinstance(e, MemoryBudgetError):
        return MEMORY, f"error: {e}"
    if isinstance(e, StoreIOError):
        return IO, f"error: {e}"
    if isinstance(e, EvalstoreError):
        return USER, f"error: {e}"
    disk = _disk_problem(e)
    if disk:
        return IO, disk
    if isinstance(e, duckdb.OutOfMemoryException):
        return MEMORY, (
            f"error: out of memory ({_first_line(e)}). If --memory-limit (or $EVALSTORE_MEMORY_LIMIT) is set, it "
            f"may be too small for this work: raise it, but keep it below the free memory (e.g. --memory-limit "
            f"2GB); set --temp-dir to a disk with free space so that DuckDB can spill there, or use fewer --threads."
        )
    if is_damage(e):
        return DAMAGED, (
            f"error: the store file is damaged ({_first_line(e)}). Run `evalstore db check` to see what can be read, "
            f"and restore the store from a copy."
        )
    if isinstance(e, duckdb.IOException) or isinstance(e, OSError):
        return IO, f"error: input/output failed: {_first_line(e)}"
    if isinstance(e, duckdb.TransactionException):
        return BUSY, f"error: another connection changed the store at the same time ({_first_line(e)}); try again."
    if isinstance(e, duckdb.Error):
        return USER, f"error: DuckDB: {_first_line(e)}"
    return INTERNAL, (
        f"internal error: {type(e).__name__}: {_first_line(e)}. This is a bug in evalstore; run the command again "
        f"with --debug and report the traceback."
    )


def _disk_problem(e: BaseException) -> str | None:
    """The message for a full disk or a read-only file system, whatever raised it: DuckDB reports a
    full disk at commit as a transaction error, so this is checked before the other kinds."""
    if not isinstance(e, (duckdb.Error, OSError)):
        return None
    text = _first_line(e)
    if is_disk_full(e):
        return (
            f"error: the disk is full ({text}). Free space where the store, its temp directory (--temp-dir) or "
            f"the output file lives, or point --temp-dir / -o elsewhere."
        )
    if is_read_only_file_system(e):
        return (
            f"error: the file system is read-only ({text}). Open the store with a read-only command, or copy it "
            f"to a writable disk (and point --temp-dir / -o there)."
        )
    return None


def _interrupted(e: BaseException) -> bool:
    return isinstance(e, duckdb.InterruptException) or (isinstance(e, RuntimeError) and "interrupted" in str(e).lower())


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def report(e: BaseException) -> int:
    """Print the message of a failure on stderr; return the exit code."""
    code, message = explain(e)
    if message:
        typer.echo(message, err=True)
    return code
