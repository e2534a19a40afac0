"""Store commands: ingest, list, sql, db status/upgrade, metrics."""

from __future__ import annotations

import datetime as _dt
import decimal
import json
import sys
import uuid
from typing import Any

import typer

from ..errors import StoreError
from . import DbOption, app, open_store
from .output import render

ingest_app = typer.Typer(
    help="Ingest runs and qrels (TREC or NTCIR formats, .gz read transparently).", no_args_is_help=True
)
db_app = typer.Typer(help="Store administration: schema version and upgrades.", no_args_is_help=True)
list_app = typer.Typer(help="Summarise what is stored.", no_args_is_help=True)
app.add_typer(ingest_app, name="ingest")
app.add_typer(db_app, name="db")
app.add_typer(list_app, name="list")

FormatOpt = typer.Option("trec", "--format", "-f", help="Input format: trec or ntcir.")
OUTPUT_FORMATS = ("table", "csv", "tsv", "json")


def _check_choice(value: str, choices, option: str) -> str:
    if value not in choices:
        raise typer.BadParameter(f"{value!r} is not one of {', '.join(choices)}", param_hint=option)
    return value


def open_for_reading(db: str | None):
    """Open the store read-only (no write lock; several readers may share it). A store that needs
    a schema upgrade is opened for writing once, which upgrades it; a missing store is an error."""
    import evalstore

    from ..store import available_migrations, inspect_store

    info = inspect_store(db)
    if info["state"] == "missing":
        raise StoreError(
            f"the store {info['location']} does not exist; ingest qrels or runs into it first "
            f"(evalstore ingest ... --db {info['location']}), or point --db / $EVALSTORE_DB at "
            f"an existing store"
        )
    if info["state"] == "older" or info["schema_version"] < len(available_migrations()):
        return open_store(db)
    return evalstore.open(db, read_only=True)


def _echo_results(results) -> None:
    for r in results:
        typer.echo(r.summary(), err=True)


@ingest_app.command("run")
def ingest_run(
    files: list[str] = typer.Argument(
        ..., help="Run files or globs (quote globs to pass them through); .gz files are read transparently."
    ),
    name: str | None = typer.Option(None, "--name", "-n", help="Run name (default: the run tag)."),
    fmt: str = FormatOpt,
    name_from: str = typer.Option("tag", "--name-from", help="Name runs by their 'tag' or by 'file' name."),
    replace: bool = typer.Option(
        False, "--replace", help="Replace a stored run of the same name (atomically; its stored scores are dropped)."
    ),
    dedupe: bool = typer.Option(
        False, "--dedupe", help="Keep the first of duplicate docs in a topic (default: a duplicate is an error)."
    ),
    db: str | None = DbOption,
):
    """Ingest TREC runs (topic Q0 doc rank score tag) or NTCIR res files (one docno per line).

    All files of the call are stored in one transaction: on any error nothing is stored."""
    _check_choice(fmt, ("trec", "ntcir"), "--format")
    _check_choice(name_from, ("tag", "file"), "--name-from")
    with open_store(db) as store:
        _echo_results(
            store.ingest_run(files, name=name, format=fmt, replace=replace, dedupe=dedupe, name_from=name_from)
        )


@ingest_app.command("qrels")
def ingest_qrels(
    files: list[str] = typer.Argument(..., help="Qrels files or globs; .gz read transparently."),
    name: str | None = typer.Option(
        None, "--name", "-n", help="Set name (default: file name); several files form one set."
    ),
    fmt: str = FormatOpt,
    gains: str | None = typer.Option(None, "--gains", help="Declared default gains of levels 1..n, e.g. 1:2:3."),
    replace: bool = typer.Option(
        False, "--replace", help="Replace a stored set of the same name (atomically; its stored scores are dropped)."
    ),
    db: str | None = DbOption,
):
    """Ingest TREC qrels (topic iter doc grade) or NTCIR qrels (topic doc L<n>, or per-topic doc L<n>).

    All files of the call are stored in one transaction: on any error nothing is stored."""
    _check_choice(fmt, ("trec", "ntcir"), "--format")
    with open_store(db) as store:
        _echo_results(store.ingest_qrels(files, name=name, format=fmt, replace=replace, gains=gains))


@list_app.command("runs")
def list_runs(
    fmt: str = typer.Option("table", "--format", "-f", help="table, csv, tsv or json."), db: str | None = DbOption
):
    """List stored runs."""
    _check_choice(fmt, OUTPUT_FORMATS, "--format")
    with open_for_reading(db) as store:
        res = store.list_runs()
    _print_rows(res.columns, res.rows, fmt, title="runs")


@list_app.command("qrels")
def list_qrels(
    fmt: str = typer.Option("table", "--format", "-f", help="table, csv, tsv or json."), db: str | None = DbOption
):
    """List stored qrels sets."""
    _check_choice(fmt, OUTPUT_FORMATS, "--format")
    with open_for_reading(db) as store:
        res = store.list_qrels()
    _print_rows(res.columns, res.rows, fmt, title="qrels sets")


@app.command("sql")
def sql(
    query: str = typer.Argument(
        ..., help="SQL query (DuckDB dialect) over runs, qrels_sets, run_rows, qrels, scores, leaderboard, ..."
    ),
    fmt: str = typer.Option("table", "--format", "-f", help="table, csv, tsv or json."),
    write: bool = typer.Option(False, "--write", help="Allow statements that change the store."),
    db: str | None = DbOption,
):
    """Run ad-hoc SQL against the store (read-only unless --write); results go to stdout.

    csv/tsv/json are exact (floats printed to full precision) and a table is plain text when
    stdout is not a terminal, so the output pipes cleanly."""
    _check_choice(fmt, OUTPUT_FORMATS, "--format")
    with open_store(db) if write else open_for_reading(db) as store:
        res = store.sql(query, write=write)
    if res.columns:
        _print_rows(res.columns, res.rows, fmt)
    else:
        typer.echo("ok (the statement returned no rows)", err=True)


def _plain(v: Any) -> Any:
    """A JSON-native value: lists and structs kept as arrays/objects, decimals as numbers."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return v if v == v and v not in (float("inf"), float("-inf")) else None
    if isinstance(v, decimal.Decimal):
        return int(v) if v == v.to_integral_value() else float(v)
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (_dt.datetime, _dt.date, _dt.time)):
        return v.isoformat()
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v).hex()
    if isinstance(v, (uuid.UUID, _dt.timedelta)):
        return str(v)
    return str(v)


def _print_rows(columns, rows, fmt: str, title: str | None = None) -> None:
    if fmt == "json":
        records = [dict(zip(columns, (_plain(v) for v in r))) for r in rows]
        sys.stdout.write(json.dumps(records, indent=1, ensure_ascii=False) + "\n")
        return
    render(columns, rows, fmt, title=title if fmt == "table" else None, digits=6 if fmt == "table" else None)


@db_app.command("status")
def db_status(fmt: str = typer.Option("table", "--format", "-f", help="table or json."), db: str | None = DbOption):
    """Show the store's schema version and the migrations applied (does not upgrade the store)."""
    from ..store import inspect_store

    _check_choice(fmt, ("table", "json"), "--format")
    st = inspect_store(db)
    if fmt == "json":
        typer.echo(json.dumps(st, indent=1))
        return
    typer.echo(f"store:           {st['location']}")
    if st["state"] == "missing":
        typer.echo("state:           does not exist (it is created by the first ingest)")
        return
    typer.echo(f"schema version:  {st['schema_version']} (this evalstore knows up to {st['code_schema_version']})")
    if st["state"] == "older":
        typer.echo(
            "state:           needs an upgrade: run `evalstore db upgrade` (any command that writes upgrades it too)"
        )
    elif st["state"] == "newer":
        typer.echo("state:           written by a newer evalstore; upgrade evalstore to use it")
    else:
        typer.echo("state:           up to date")
    if st["n_runs"] is not None:
        typer.echo(f"runs: {st['n_runs']}   qrels sets: {st['n_qrels']}")
    render(
        ["version", "name", "applied_at"], [(a["version"], a["name"], a["applied_at"]) for a in st["applied"]], "table"
    )


@db_app.command("upgrade")
def db_upgrade(db: str | None = DbOption):
    """Apply the pending schema migrations (each in its own transaction)."""
    from ..store import inspect_store

    before = inspect_store(db)
    if before["state"] == "missing":
        raise StoreError(f"the store {before['location']} does not exist; nothing to upgrade")
    with open_store(db) as store:
        after = store.schema_version()
    if after == before["schema_version"]:
        typer.echo(f"schema version {after}: already up to date", err=True)
    else:
        typer.echo(f"upgraded {before['location']} from schema version {before['schema_version']} to {after}", err=True)


@app.command("metrics")
def metrics(
    name: str | None = typer.Argument(None, help="Show one metric in full."),
    fmt: str = typer.Option("table", "--format", "-f", help="table or json."),
):
    """List the metrics: names, aliases, parameters, SQL location, citation and tests."""
    from ..metrics import describe

    entries = describe(name)
    if fmt == "json" or name:
        typer.echo(json.dumps(entries if not name else entries[0], indent=1))
        return
    rows = [
        (
            e["name"],
            ", ".join(e["aliases"]) or "",
            ", ".join(f"{p['name']}={p['default']}" for p in e["params"]),
            e["cutoff"],
            e["sql"],
        )
        for e in entries
    ]
    render(["metric", "aliases", "parameters", "@k", "sql"], rows, "table")
