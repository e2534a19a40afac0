"""Evaluation commands: eval, export leaderboard, demo."""

from __future__ import annotations

import sys

import typer

from ..demo import run_demo
from ..meta import plots
from ..report import rows as report_rows
from ..report.writers import FILE_FORMATS, write, write_trec_eval
from ..subsample import derivations, evaluate_subsamples
from . import options as opt
from .app import app, open_store
from .output import check_writable, emit, output_format, say

export_app = typer.Typer(help="Export leaderboards and per-topic scores.", no_args_is_help=True)
app.add_typer(export_app, name="export")


@app.command("eval")
@opt.shared(ev=opt.EVALUATION, store_opts=opt.STORE)
def eval_cmd(
    qrels: str = opt.Qrels,
    run: list[str] | None = opt.Runs,
    metric: list[str] = opt.Metrics,
    per_topic: bool = typer.Option(False, "--per-topic", "-p", help="Print per-topic scores too."),
    fmt: str = typer.Option("table", "--format", "-f", help="table, csv, json or trec (trec_eval -q layout)."),
    subsamples: str | None = typer.Option(
        None,
        "--subsamples",
        help="Also evaluate subsamples of the qrels set, in one bulk pass: 'all', "
        "names or fractions (comma-separated). Adds fraction/trial columns.",
    ),
    plot: str | None = typer.Option(
        None, "--plot", help="Also draw the per-topic scores as a box plot per run to this PNG file."
    ),
    *,
    ev: opt.EvaluationOptions,
    store_opts: opt.StoreOptions,
) -> None:
    """Compute metrics for runs against a qrels set; store the per-topic scores and print them."""
    check_writable(plot, "--plot", ".png")
    if plot and subsamples:
        raise typer.BadParameter("--plot draws one qrels set's scores; leave out --subsamples", param_hint="--plot")
    if subsamples:
        if fmt == "trec":
            raise typer.BadParameter("--format trec prints one qrels set; use table, csv or json with --subsamples")
        with open_store(store_opts.db) as store:
            results = evaluate_subsamples(store, qrels, run or None, metric, subsamples, **ev.kwargs())
            title = f"qrels {qrels} and {len(results) - 1} subsample(s)"
            table = (
                report_rows.per_topics(results, title)
                if per_topic
                else report_rows.leaderboards(results, derivations(store), title)
            )
        emit(table, fmt)
        return
    with open_store(store_opts.db) as store:
        result = store.evaluate(qrels, run or None, metric, **ev.kwargs())
    if plot:
        plots.plot_scores(result, plot, f"qrels {qrels}")
        say(f"wrote {plot}")
    if fmt == "trec":
        write_trec_eval(result, per_topic=per_topic)
        return
    title = f"qrels {qrels}"
    emit(report_rows.per_topic(result, title) if per_topic else report_rows.leaderboard(result, title), fmt)


@export_app.command("leaderboard")
@opt.shared(ev=opt.EVALUATION, store_opts=opt.STORE)
def export_leaderboard_cmd(
    qrels: str = opt.Qrels,
    metric: list[str] = opt.Metrics,
    output: str = typer.Option(..., "--output", "-o", help="Output file (format from its extension), or - for stdout."),
    fmt: str | None = typer.Option(
        None, "--format", "-f", help=f"{', '.join(FILE_FORMATS)} (default: from the extension of -o; csv for -)."
    ),
    run: list[str] | None = opt.Runs,
    per_topic: bool = typer.Option(False, "--per-topic", "-p", help="Long format: one row per (run, topic, metric)."),
    *,
    ev: opt.EvaluationOptions,
    store_opts: opt.StoreOptions,
) -> None:
    """Write a leaderboard: one row per run, a column per metric, sorted by the first metric (csv, tsv,
    json, parquet, markdown or latex, chosen by --format or the file's extension)."""
    chosen = output_format(fmt or "csv", None) if output == "-" else output_format(fmt, output)
    with open_store(store_opts.db) as store:
        result = store.evaluate(qrels, run or None, metric, **ev.kwargs())
    table = report_rows.per_topic(result) if per_topic else report_rows.leaderboard(result)
    if output == "-":
        table.digits = None
        write(table, chosen, sys.stdout)
        return
    emit(table, chosen, output)


@app.command("demo")
def demo(db: str | None = typer.Option(None, "--db", help="Store file for the demo (default: in memory).")) -> None:
    """Build a store from the bundled sample collection, evaluate it and show a leaderboard and a query."""
    run_demo(db)
