"""The Typer application and what every command shares: opening the store, the entry point."""

from __future__ import annotations

import os
import sys

import duckdb
import typer

from ..errors import EvalstoreError, StoreError
from ..store import Store, available_migrations, inspect_store
from ..store import open as open_store_at
from ..version import __version__

CONTEXT = {"help_option_names": ["-h", "--help"]}

app = typer.Typer(
    name="evalstore",
    help="A DuckDB store for IR evaluation: ingest runs and qrels, compute metrics in SQL, query and export.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings=CONTEXT,
)

_DB_HELP = "Store file or SQLAlchemy URL for the commands below (as --db on each; default ./evalstore.duckdb)."


def _use_db(ctx: typer.Context, db: str | None) -> None:
    """A --db given before the subcommand applies to it: it becomes the default of every command's
    --db (through $EVALSTORE_DB, which Click reads after this callback has run), for this
    invocation only."""
    if not db:
        return
    before = os.environ.get("EVALSTORE_DB")
    os.environ["EVALSTORE_DB"] = db

    def restore() -> None:
        if before is None:
            os.environ.pop("EVALSTORE_DB", None)
        else:
            os.environ["EVALSTORE_DB"] = before

    ctx.call_on_close(restore)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"evalstore {__version__} (duckdb {duckdb.__version__})")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    db: str | None = typer.Option(None, "--db", help=_DB_HELP),
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """A DuckDB store for IR evaluation: ingest runs and qrels, compute metrics in SQL, query and export."""
    _use_db(ctx, db)


def group(help: str) -> typer.Typer:
    """A command group that takes -h and a --db before its subcommand, like the root."""
    sub = typer.Typer(help=help, no_args_is_help=True, context_settings=CONTEXT)

    @sub.callback()
    def _group(ctx: typer.Context, db: str | None = typer.Option(None, "--db", help=_DB_HELP)) -> None:
        _use_db(ctx, db)

    return sub


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


def only_qrels(store: Store) -> str:
    """The store's qrels set when it holds exactly one (the default of --qrels)."""
    names = [r[0] for r in store.list_qrels().rows]
    if len(names) == 1:
        return names[0]
    if not names:
        raise StoreError("the store holds no qrels set; ingest one with `evalstore ingest qrels FILE`")
    shown = ", ".join(names[:10]) + (", ..." if len(names) > 10 else "")
    raise StoreError(f"the store holds {len(names)} qrels sets ({shown}); choose one with --qrels NAME")


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
