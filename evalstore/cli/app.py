"""The Typer application and what every command shares: opening the store, the entry point."""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import duckdb
import typer

from ..db.migrations import available_migrations, inspect_store
from ..errors import StoreError
from ..version import __version__
from . import commands, failures, ranges, resource_options
from .choices import flag
from .help_format import HelpGroup
from .ranges import number

if TYPE_CHECKING:
    from ..store import Store

CONTEXT = {"help_option_names": ["-h", "--help"]}


class RootGroup(HelpGroup):
    """The root command: a closed standard output (``evalstore demo | head``) ends a command quietly.
    Click turns an ``EPIPE`` into exit 1 before :func:`main` sees it, so it is caught here first."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError as e:
            raise failures.OutputClosed() from e


app = typer.Typer(
    name="evalstore",
    cls=RootGroup,
    help="A DuckDB store for IR evaluation: ingest runs and qrels, compute metrics in SQL, query and export.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings=CONTEXT,
)

_DB_HELP = "Store file or SQLAlchemy URL for the commands below (as --db on each; default ./evalstore.duckdb)."


def _use_env(ctx: typer.Context, **values: object) -> None:
    """Options given before the subcommand apply to it, through the environment variables that the
    subcommand's options read (Click reads them after this callback has run), for this invocation
    only."""
    names = {"db": "EVALSTORE_DB", "memory_limit": "EVALSTORE_MEMORY_LIMIT", "threads": "EVALSTORE_THREADS",
             "temp_dir": "EVALSTORE_TEMP_DIR", "wait": "EVALSTORE_WAIT"}  # fmt: skip
    for key, value in values.items():
        if value is not None and value is not False:
            _use_db(ctx, str(value), names[key])


def _use_db(ctx: typer.Context, db: str | None, var: str = "EVALSTORE_DB") -> None:
    """A --db given before the subcommand applies to it: it becomes the default of every command's
    --db (through $EVALSTORE_DB, which Click reads after this callback has run), for this
    invocation only."""
    if db:
        ctx.call_on_close(_set_env(var, db))


def _set_env(var: str, value: str) -> Callable[[], None]:
    """Set ``$var`` to ``value``; returns what puts back the value it had (or removes it)."""
    before = os.environ.get(var)
    os.environ[var] = value

    def restore() -> None:
        if before is None:
            os.environ.pop(var, None)
        else:
            os.environ[var] = before

    return restore


def _version(value: bool) -> None:
    if value:
        typer.echo(f"evalstore {__version__} (duckdb {duckdb.__version__})")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    db: str | None = typer.Option(None, "--db", help=_DB_HELP),
    memory_limit: str | None = typer.Option(
        None, "--memory-limit", parser=resource_options.memory_limit, help="DuckDB memory limit, e.g. 1.5GB or 50%."
    ),
    threads: int | None = number(None, "--threads", range=ranges.THREADS, help="DuckDB worker threads."),
    temp_dir: str | None = typer.Option(None, "--temp-dir", help="Where DuckDB spills what does not fit in memory."),
    wait: float | None = number(None, "--wait", range=ranges.WAIT, help="Seconds to retry while the store is busy."),
    debug: bool = flag("--debug", help="Show the Python traceback of an error."),
    version: bool = flag("--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """A DuckDB store for IR evaluation: ingest runs and qrels, compute metrics in SQL, query and export."""
    _use_env(ctx, db=db, memory_limit=memory_limit, threads=threads, temp_dir=temp_dir, wait=wait)
    if debug:  # for this invocation only, as the options above
        ctx.call_on_close(_set_env("EVALSTORE_DEBUG", "1"))


def _debug_option() -> Any:
    """The root's ``--debug`` as an option of every command (:attr:`HelpGroup.common_params`): made
    by Typer from a declaration, as every other option is."""

    def use(value: bool) -> None:
        if value:
            os.environ["EVALSTORE_DEBUG"] = "1"

    made = typer.Typer()

    @made.command()
    def declared(
        debug: bool = flag("--debug", expose_value=False, callback=use, help="Show the Python traceback of an error."),
    ) -> None: ...

    return typer.main.get_command(made).params[0]


HelpGroup.common_params = [_debug_option()]


def group(help: str) -> typer.Typer:
    """A command group that takes -h and a --db before its subcommand, like the root."""
    sub = typer.Typer(cls=HelpGroup, help=help, no_args_is_help=True, context_settings=CONTEXT)

    @sub.callback()
    def _group(ctx: typer.Context, db: str | None = typer.Option(None, "--db", help=_DB_HELP)) -> None:
        _use_db(ctx, db)

    return sub


def open_store(
    r: resource_options.StoreResources,
    read_only: bool = False,
    sandbox: bool = False,
    create: bool = False,
    query_only: bool = False,
) -> Store:
    """Open the store of a command (``r.db``) with the command's resource options. Only the
    commands that make a store (``ingest``, ``demo``, ``import store``) pass ``create=True``:
    elsewhere a mistyped --db is an error, not a new empty store."""
    from ..store import open as open_store_at  # (the store and all it offers: not for `eval QRELS RUN`)

    return open_store_at(
        r.db, read_only=read_only, sandbox=sandbox, query_only=query_only, create=create, **resources(r)
    )


def resources(r: resource_options.StoreResources) -> dict[str, Any]:
    """The resource options of a command (``--memory-limit``, ``--threads``, ``--temp-dir``,
    ``--wait``) as the keywords of :func:`evalstore.open`."""
    return {"memory_limit": r.memory_limit, "threads": r.threads, "temp_directory": r.temp_dir, "wait": r.wait}


def open_for_reading(r: resource_options.StoreResources) -> Store:
    """Open the store read-only (no write lock; several readers may share it). A store that needs
    a schema upgrade is opened for writing once, which upgrades it; a missing store is an error."""
    if _needs_upgrade(r):
        return open_store(r)
    return open_store(r, read_only=True)


def open_for_queries(r: resource_options.StoreResources, sandbox: bool = False) -> Store:
    """Open the store for ad-hoc SQL that changes nothing: a connection DuckDB locks down
    (``evalstore.open(..., query_only=True)``; ``sandbox``: ``sandbox=True``). A store that needs a
    schema upgrade is upgraded first (opened for writing once); a missing store is an error."""
    if _needs_upgrade(r):
        open_store(r).close()
    return open_store(r, sandbox=sandbox, query_only=not sandbox)


def _needs_upgrade(r: resource_options.StoreResources) -> bool:
    """Whether the store needs a schema upgrade (a missing store is an error)."""
    info = inspect_store(r.db, wait=r.wait or 0.0)
    if info["state"] == "missing":
        raise StoreError(
            f"the store {info['location']} does not exist; ingest qrels or runs into it first "
            f"(evalstore ingest ... --db {info['location']}), or point --db / $EVALSTORE_DB at "
            f"an existing store"
        )
    return info["state"] == "older" or info["schema_version"] < len(available_migrations())


def main() -> None:
    """Console-script entry point: every failure is a message and an exit code
    (:mod:`evalstore.cli.failures`); ``--debug`` / ``EVALSTORE_DEBUG=1`` shows the traceback."""
    restore = _set_env("EVALSTORE_DEBUG", "1") if "--debug" in sys.argv[1:] else None
    try:
        commands.load(app, command_words(sys.argv[1:]))
        with only_the_command(sys.argv[1:]):
            rv = app(standalone_mode=False)
    except BaseException as e:  # noqa: BLE001  (the one place that turns failures into messages)
        if isinstance(e, SystemExit):
            raise
        code = getattr(e, "exit_code", None)
        if code is not None and hasattr(e, "show"):  # the parser's usage errors: already worded
            e.show()
            sys.exit(code)
        if type(e).__name__ == "Abort":
            sys.exit(failures.report(KeyboardInterrupt()))
        if isinstance(e, (failures.OutputClosed, BrokenPipeError)):
            failures.closed_output()
        elif failures.debugging():
            raise
        sys.exit(failures.report(e))
    finally:
        if restore is not None:
            restore()
    sys.exit(rv if isinstance(rv, int) else 0)


@contextmanager
def only_the_command(args: list[str]) -> Iterator[None]:
    """While the command line runs, the application holds only the command (or group) that ``args``
    name: Typer builds the Click object of every registered command each time it runs (their
    parameters from their signatures), about 0.06-0.1 CPU-s of every invocation for the one that
    runs. A command line that names no known command (none, a typo, ``--help``) sees them all, so
    that help and "No such command" list them as before."""
    name = command_name(args)
    named = [c for c in app.registered_commands if commands.registered_name(c) == name]
    groups = [g for g in app.registered_groups if g.name == name]
    if name is None or len(named) + len(groups) != 1:
        yield
        return
    saved = app.registered_commands, app.registered_groups
    app.registered_commands, app.registered_groups = named, groups
    try:
        yield
    finally:
        app.registered_commands, app.registered_groups = saved


def command_name(args: list[str]) -> str | None:
    """The command a command line names: its first word that is neither a root option nor the value
    of one (``evalstore --db s.duckdb eval ...`` -> ``eval``)."""
    return next(iter(command_words(args)), None)


def command_words(args: list[str]) -> list[str]:
    """The command line from the command's name on, past the root's options and their values
    (``evalstore --db s.duckdb ingest run x`` -> ``["ingest", "run", "x"]``)."""
    takes_value = _root_value_options()
    i = 0
    while i < len(args):
        word = args[i]
        if word == "--":
            return args[i + 1 :]
        if not word.startswith("-"):
            return args[i:]
        i += 2 if word in takes_value else 1  # (``--db=PATH`` carries its value)
    return []


def _root_value_options() -> set[str]:
    """The root's options that take a value (``--db``, ``--threads``, ...), from its signature."""
    out: set[str] = set()
    for p in inspect.signature(root).parameters.values():
        info = p.default
        if isinstance(info, typer.models.OptionInfo) and p.annotation not in ("bool", bool):
            out.update(d for d in info.param_decls or () if d.startswith("-"))
    return out
