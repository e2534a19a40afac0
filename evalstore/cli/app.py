"""The Typer application and what every command shares: opening the store, the entry point."""

from __future__ import annotations

import sys

import typer

from ..errors import EvalstoreError, StoreError
from ..store import Store, available_migrations, inspect_store
from ..store import open as open_store_at

app = typer.Typer(
    name="evalstore",
    help="A DuckDB store for IR evaluation: ingest runs and qrels, compute metrics in SQL, query and export.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def open_store(db: str | None, read_only: bool = False) -> Store:
    return open_store_at(db, read_only=read_only)


def open_for_reading(db: str | None) -> Store:
    """Open the store read-only (no write lock; several readers may share it). A store that needs
    a schema upgrade is opened for writing once, which upgrades it; a missing store is an error."""
    info = inspect_store(db)
    if info["state"] == "missing":
        raise StoreError(
            f"the store {info['location']} does not exist; ingest qrels or runs into it first "
            f"(evalstore ingest ... --db {info['location']}), or point --db / $EVALSTORE_DB at "
            f"an existing store"
        )
    if info["state"] == "older" or info["schema_version"] < len(available_migrations()):
        return open_store(db)
    return open_store(db, read_only=True)


def check_choice(value: str, choices: tuple[str, ...] | list[str], option: str) -> str:
    if value not in choices:
        raise typer.BadParameter(f"{value!r} is not one of {', '.join(choices)}", param_hint=option)
    return value


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
