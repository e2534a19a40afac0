"""The ``evalstore`` command line: a thin Typer layer over the library.

Each command is a few lines over a function of ``evalstore`` that a notebook can call too.
Sub-command groups live in their own modules of this package and are mounted here.
"""

from __future__ import annotations

import sys

import typer

from ..errors import EvalstoreError

app = typer.Typer(
    name="evalstore",
    help="A DuckDB store for IR evaluation: ingest runs and qrels, compute metrics in SQL, query and export.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

DbOption = typer.Option(
    None,
    "--db",
    envvar="EVALSTORE_DB",
    help="Store file or SQLAlchemy URL (default ./evalstore.duckdb, or $EVALSTORE_DB).",
)


def open_store(db: str | None, read_only: bool = False):
    import evalstore

    return evalstore.open(db, read_only=read_only)


def fail(message: str, code: int = 1) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def main() -> None:
    """Console-script entry point: runs the app, printing evalstore errors without a traceback."""
    try:
        app()
    except EvalstoreError as e:
        typer.echo(f"error: {e}", err=True)
        sys.exit(1)
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        sys.exit(130)


# Mount the command modules (each defines its commands on `app` or a sub-Typer).
from . import commands  # noqa: E402,F401
from . import evaluate as _evaluate  # noqa: E402,F401

for _optional in ("subsample", "meta"):
    try:
        __import__(f"{__name__}.{_optional}")
    except ModuleNotFoundError as _e:
        if _e.name != f"{__name__}.{_optional}":
            raise
