"""Measures of one's own kept in a store: measure add, list, drop (docs/measures.md)."""

from __future__ import annotations

import typer

from ..output.table import Table
from . import options as opt
from .app import app, group, open_for_reading, open_store
from .choices import flag
from .output import OutputFile, emit, format_option, output_format, say

measure_app = group("Measures of one's own: SQL definitions kept in the store, known to every later command.")
app.add_typer(measure_app, name="measure")


@measure_app.command("add")
@opt.shared(store_opts=opt.STORE)
def measure_add(
    name: str = typer.Argument(..., help="The measure's name (then NAME or NAME@k wherever a metric goes)."),
    sql: str = typer.Option(
        ...,
        "--sql",
        help="The SQL file: a SELECT over ranked(qrels, run, topic, doc, rank, score, grade) "
        "returning qrels, run, topic, value (docs/measures.md).",
    ),
    replace: bool = flag("--replace", help="Replace a stored definition of the same name (its scores are dropped)."),
    *,
    store_opts: opt.StoreOptions,
) -> None:
    """Check an SQL definition and keep it in the store under NAME."""
    with open_store(store_opts) as store:
        result = store.add_measure(name, sql, replace=replace)
    say([result.summary()])


@measure_app.command("list")
@opt.shared(store_opts=opt.STORE)
def measure_list(
    fmt: str | None = format_option(), output: str | None = OutputFile, *, store_opts: opt.StoreOptions
) -> None:
    """List the measures of one's own the store keeps."""
    fmt = output_format(fmt, output)
    with open_for_reading(store_opts) as store:
        res = store.list_measures()
    emit(Table(res.columns, res.rows, title="measures"), fmt, output)


@measure_app.command("drop")
@opt.shared(store_opts=opt.STORE)
def measure_drop(name: str = typer.Argument(..., help="The measure's name."), *, store_opts: opt.StoreOptions) -> None:
    """Remove a stored measure and its stored scores."""
    with open_store(store_opts) as store:
        result = store.drop_measure(name)
    say([result.summary()])
