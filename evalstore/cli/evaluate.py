"""Evaluation commands: eval, export leaderboard, demo."""

from __future__ import annotations

import typer

from . import DbOption, app, open_store
from .output import render

export_app = typer.Typer(help="Export leaderboards and per-topic scores.", no_args_is_help=True)
app.add_typer(export_app, name="export")

QrelsOpt = typer.Option(..., "--qrels", "-q", help="Name of the qrels set (see `evalstore list qrels`).")
RunOpt = typer.Option(None, "--run", "-r", help="Run name; repeat for several (default: all runs).")
MetricOpt = typer.Option(..., "--metric", "-m", help="Metric, e.g. AP, nDCG@10, P(rel=2)@10, map, P_10; repeatable.")
ConventionOpt = typer.Option(
    "trec_eval",
    "--convention",
    help="trec_eval (score order) or ntcireval (file order, R=0 topics dropped, depth 1000).",
)
CompleteOpt = typer.Option(
    False, "--complete", "-c", help="Topics of the qrels missing from a run score 0 (trec_eval -c)."
)
DepthOpt = typer.Option(None, "--depth", "-M", help="Evaluate only the top N documents per topic (trec_eval -M).")


def run_evaluation(store, qrels, runs, metrics, convention, complete, depth, subsamples=None):
    return store.evaluate(qrels, runs or None, metrics, convention=convention, complete=complete, depth=depth)


@app.command("eval")
def eval_cmd(
    qrels: str = QrelsOpt,
    run: list[str] | None = RunOpt,
    metric: list[str] = MetricOpt,
    per_topic: bool = typer.Option(False, "--per-topic", "-p", help="Print per-topic scores too."),
    fmt: str = typer.Option("table", "--format", "-f", help="table, csv, json or trec (trec_eval -q layout)."),
    convention: str = ConventionOpt,
    complete: bool = CompleteOpt,
    depth: int | None = DepthOpt,
    subsamples: str | None = typer.Option(
        None,
        "--subsamples",
        help="Also evaluate subsamples of the qrels set, in one bulk pass: 'all', "
        "names or fractions (comma-separated). Adds fraction/trial columns.",
    ),
    db: str | None = DbOption,
):
    """Compute metrics for runs against a qrels set; store the per-topic scores and print them."""
    from ..export import leaderboard_rows, per_topic_rows, trec_eval_text

    if subsamples:
        from .. import subsample as ss

        if fmt == "trec":
            raise typer.BadParameter("--format trec prints one qrels set; use table, csv or json with --subsamples")
        with open_store(db) as store:
            results = ss.evaluate_subsamples(
                store, qrels, run or None, metric, subsamples, convention=convention, complete=complete, depth=depth
            )
            columns, rows = ss.per_topic_rows(store, results) if per_topic else ss.leaderboard_rows(store, results)
        render(columns, rows, fmt, title=f"qrels {qrels} and {len(results) - 1} subsample(s)")
        return
    with open_store(db) as store:
        result = run_evaluation(store, qrels, run, metric, convention, complete, depth)
    if fmt == "trec":
        typer.echo(trec_eval_text(result, per_topic=per_topic), nl=False)
        return
    columns, rows = per_topic_rows(result) if per_topic else leaderboard_rows(result)
    render(columns, rows, fmt, title=f"qrels {qrels}")


@export_app.command("leaderboard")
def export_leaderboard_cmd(
    qrels: str = QrelsOpt,
    metric: list[str] = MetricOpt,
    output: str = typer.Option(..., "--output", "-o", help="CSV file, or - for stdout."),
    run: list[str] | None = RunOpt,
    per_topic: bool = typer.Option(False, "--per-topic", "-p", help="Long format: one row per (run, topic, metric)."),
    convention: str = ConventionOpt,
    complete: bool = CompleteOpt,
    depth: int | None = DepthOpt,
    db: str | None = DbOption,
):
    """Write a leaderboard CSV: one row per run, a column per metric, sorted by the first metric."""
    from ..export import export_leaderboard

    with open_store(db) as store:
        result = run_evaluation(store, qrels, run, metric, convention, complete, depth)
    export_leaderboard(result, output, per_topic=per_topic)
    if output != "-":
        typer.echo(f"wrote {output}", err=True)


@app.command("demo")
def demo(db: str | None = typer.Option(None, "--db", help="Store file for the demo (default: in memory).")):
    """Build a store from the bundled sample collection, evaluate it and show a leaderboard and a query."""
    from ..demo import run_demo

    run_demo(db)
