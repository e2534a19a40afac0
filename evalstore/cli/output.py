"""The CLI's one output path: a table to stdout (or a file), notes and messages to stderr."""

from __future__ import annotations

import sys

import typer

from ..report.table import Table
from ..report.writers import write


def emit(table: Table, fmt: str = "table", output: str | None = None) -> None:
    """Write ``table`` to stdout in ``fmt``, or as CSV to the file ``output``; then its notes on stderr."""
    if output:
        with open(output, "w", newline="", encoding="utf-8") as fh:
            write(table, "csv", fh)
        say(f"wrote {output}")
    else:
        if fmt != "table":
            table.digits = None
        write(table, fmt)
        sys.stdout.flush()  # before notes on stderr, so that a shared log keeps the order
    if fmt == "table" and not output:
        for note in table.notes:
            say(note)


def say(message: str) -> None:
    """A message for the person at the terminal (stderr, so that stdout stays data)."""
    typer.echo(message, err=True)
