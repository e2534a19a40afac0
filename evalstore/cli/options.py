"""Typer options shared by the commands, declared once (one spelling and one short flag each)."""

from __future__ import annotations

import typer

from ..report.writers import FORMATS

Db = typer.Option(
    None,
    "--db",
    envvar="EVALSTORE_DB",
    help="Store file or SQLAlchemy URL (default ./evalstore.duckdb, or $EVALSTORE_DB).",
)

# --------------------------------------------------------------------------- what to evaluate
Qrels = typer.Option(..., "--qrels", "-q", help="Name of the qrels set (see `evalstore list qrels`).")
QrelsColumns = typer.Option(..., "--qrels", "-q", help="Qrels set (or subsample); repeat for several columns.")
Runs = typer.Option(None, "--run", "-r", help="Run name; repeat for several (default: all runs).")
Metrics = typer.Option(..., "--metric", "-m", help="Metric, e.g. AP, nDCG@10, P(rel=2)@10, map, P_10; repeatable.")

# --------------------------------------------------------------------------- evaluation options
Convention = typer.Option(
    "trec_eval",
    "--convention",
    help="trec_eval (score order) or ntcireval (file order, R=0 topics dropped, depth 1000).",
)
Complete = typer.Option(
    False, "--complete", "-c", help="Topics of the qrels missing from a run score 0 (trec_eval -c)."
)
Depth = typer.Option(None, "--depth", "-M", help="Evaluate only the top N documents per topic (trec_eval -M).")

# --------------------------------------------------------------------------- resampling
Trials = typer.Option(1000, "--trials", "-B", help="Number of resamples B.")
Seed = typer.Option(0, "--seed", help="Random seed (the same seed reproduces the results exactly).")
Alpha = typer.Option(0.05, "--alpha", help="Significance level.")

# --------------------------------------------------------------------------- output
TableFormat = typer.Option("table", "--format", "-f", help=f"Output format: {', '.join(FORMATS)}.")
OutputFile = typer.Option(None, "--output", "-o", help="Write the table as CSV to this file.")
Plot = typer.Option(None, "--plot", help="Also draw a PNG figure to this file.")
PerTopic = typer.Option(False, "--per-topic", "-p", help="Per-topic scores (one row per run, topic and metric).")
