"""The CLI's one output path: a table to stdout (or a file), notes and messages to stderr."""

from __future__ import annotations

import os
import sys

import typer

from ..report.table import Table
from ..report.writers import FormatMismatch, file_format, write, write_file


def output_format(fmt: str | None, output: str | None) -> str:
    """The format a command writes: ``fmt`` for stdout; for a file ``fmt`` or the file's extension
    (a mismatch is an error, raised before any work is done)."""
    if not output:
        if fmt == "parquet":
            raise typer.BadParameter("parquet is written to a file: give -o FILE.parquet", param_hint="--format")
        return fmt or "table"
    check_writable(output, "--output")
    try:
        return file_format(fmt, output)
    except FormatMismatch as e:
        raise typer.BadParameter(str(e), param_hint="--format") from None


def emit(table: Table, fmt: str = "table", output: str | None = None) -> None:
    """Write ``table`` to stdout in ``fmt``, or to the file ``output`` in ``fmt`` or the format of
    its extension (CSV for an unknown one); then its notes on stderr."""
    if output:
        write_file(table, file_format(fmt, output), output)
        say(f"wrote {output}")
    else:
        if fmt not in ("table", "markdown", "latex"):  # data formats: values as computed; tables for readers
            table.digits = None
        write(table, fmt)
        sys.stdout.flush()  # before notes on stderr, so that a shared log keeps the order
    if fmt == "table" and not output:
        for note in table.notes:
            say(note)


def say(message: str) -> None:
    """A message for the person at the terminal (stderr, so that stdout stays data)."""
    typer.echo(message, err=True)


def check_writable(path: str | None, option: str, suffix: str | None = None) -> None:
    """Refuse an output path that cannot be written (missing or read-only folder, wrong suffix)
    before any work is done."""
    if not path:
        return
    if suffix and not path.lower().endswith(suffix):
        raise typer.BadParameter(f"{path}: the file name must end in {suffix}", param_hint=option)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise typer.BadParameter(f"{path}: the folder {folder} does not exist", param_hint=option)
    if not os.access(folder, os.W_OK):
        raise typer.BadParameter(f"{path}: the folder {folder} is not writable", param_hint=option)
