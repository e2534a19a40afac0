"""Store commands: ingest, list, sql, db status, metrics."""
from __future__ import annotations

import json
from typing import List, Optional

import typer

from . import DbOption, app, open_store
from .output import render

ingest_app = typer.Typer(help="Ingest runs and qrels (TREC or NTCIR formats, .gz read transparently).",
                         no_args_is_help=True)
db_app = typer.Typer(help="Store administration.", no_args_is_help=True)
list_app = typer.Typer(help="Summarise what is stored.", no_args_is_help=True)
app.add_typer(ingest_app, name="ingest")
app.add_typer(db_app, name="db")
app.add_typer(list_app, name="list")

FormatOpt = typer.Option("trec", "--format", "-f", help="Input format: trec or ntcir.")


@ingest_app.command("run")
def ingest_run(files: List[str] = typer.Argument(..., help="Run files or globs (quote globs to pass them through)."),
               name: Optional[str] = typer.Option(None, "--name", "-n", help="Run name (default: the run tag)."),
               fmt: str = FormatOpt,
               name_from: str = typer.Option("tag", "--name-from", help="Name runs by their 'tag' or by 'file' name."),
               replace: bool = typer.Option(False, "--replace", help="Replace a stored run of the same name."),
               dedupe: bool = typer.Option(False, "--dedupe", help="Keep the first of duplicate docs in a topic."),
               db: Optional[str] = DbOption):
    """Ingest TREC runs (topic Q0 doc rank score tag) or NTCIR res files."""
    with open_store(db) as store:
        for r in store.ingest_run(files, name=name, format=fmt, replace=replace, dedupe=dedupe, name_from=name_from):
            typer.echo(r.summary(), err=True)


@ingest_app.command("qrels")
def ingest_qrels(files: List[str] = typer.Argument(..., help="Qrels files or globs."),
                 name: Optional[str] = typer.Option(None, "--name", "-n",
                                                    help="Set name (default: file name); several files form one set."),
                 fmt: str = FormatOpt,
                 gains: Optional[str] = typer.Option(None, "--gains", help="Declared default gains of levels 1..n, e.g. 1:2:3."),
                 replace: bool = typer.Option(False, "--replace", help="Replace a stored set of the same name."),
                 db: Optional[str] = DbOption):
    """Ingest TREC qrels (topic iter doc grade) or NTCIR qrels (topic doc L<n>)."""
    with open_store(db) as store:
        for r in store.ingest_qrels(files, name=name, format=fmt, replace=replace, gains=gains):
            typer.echo(r.summary(), err=True)


@list_app.command("runs")
def list_runs(fmt: str = typer.Option("table", "--format", "-f", help="table, csv or json."), db: Optional[str] = DbOption):
    """List stored runs."""
    with open_store(db) as store:
        res = store.list_runs()
        render(res.columns, res.rows, fmt, title="runs")


@list_app.command("qrels")
def list_qrels(fmt: str = typer.Option("table", "--format", "-f", help="table, csv or json."), db: Optional[str] = DbOption):
    """List stored qrels sets."""
    with open_store(db) as store:
        res = store.list_qrels()
        render(res.columns, res.rows, fmt, title="qrels sets")


@app.command("sql")
def sql(query: str = typer.Argument(..., help="SQL query (DuckDB dialect) over runs, qrels, scores, leaderboard, ..."),
        fmt: str = typer.Option("table", "--format", "-f", help="table, csv, tsv or json."),
        write: bool = typer.Option(False, "--write", help="Allow statements that change the store."),
        db: Optional[str] = DbOption):
    """Run ad-hoc SQL against the store (read-only unless --write)."""
    with open_store(db) as store:
        res = store.sql(query, write=write)
        if res.columns:
            render(res.columns, res.rows, fmt, digits=None if fmt != "table" else 6)


@db_app.command("status")
def db_status(fmt: str = typer.Option("table", "--format", "-f", help="table or json."), db: Optional[str] = DbOption):
    """Show the store's schema version and the migrations applied."""
    with open_store(db) as store:
        st = store.status()
    if fmt == "json":
        typer.echo(json.dumps(st, indent=1))
        return
    typer.echo(f"store:           {st['location']}")
    typer.echo(f"schema version:  {st['schema_version']} (this evalstore knows up to {st['code_schema_version']})")
    typer.echo(f"runs: {st['n_runs']}   qrels sets: {st['n_qrels']}")
    render(["version", "name", "applied_at"], [(a["version"], a["name"], a["applied_at"]) for a in st["applied"]], "table")


@app.command("metrics")
def metrics(name: Optional[str] = typer.Argument(None, help="Show one metric in full."),
            fmt: str = typer.Option("table", "--format", "-f", help="table or json.")):
    """List the metrics: names, aliases, parameters, SQL location, citation and tests."""
    from ..metrics import describe

    entries = describe(name)
    if fmt == "json" or name:
        typer.echo(json.dumps(entries if not name else entries[0], indent=1))
        return
    rows = [(e["name"], ", ".join(e["aliases"]) or "", ", ".join(f"{p['name']}={p['default']}" for p in e["params"]),
             e["cutoff"], e["sql"]) for e in entries]
    render(["metric", "aliases", "parameters", "@k", "sql"], rows, "table")
