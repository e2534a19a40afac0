"""Evaluation commands: eval, export leaderboard, demo."""

from __future__ import annotations

import os

import typer

from ..api import evaluate as evaluate_files
from ..demo import run_demo
from ..facade import Store
from ..intervals import IntervalSpec
from ..intervals import attach as attach_intervals
from ..meta import plots
from ..report import rows as report_rows
from ..report.formats import TABLES
from ..report.table import Report
from ..result import EvalResult
from ..subsample import derivations, evaluate_subsamples
from . import options as opt
from . import resources
from .app import app, group, only_qrels, open_store
from .choices import flag
from .inputs import spooled
from .output import OutputFile, check_writable, emit, format_option, output_format, say
from .spark_eval import spark_eval

EVAL_FORMATS = (*TABLES, "evaluation")

export_app = group("Export leaderboards and per-topic scores.")
app.add_typer(export_app, name="export")


@app.command("eval")
@opt.shared(ev=opt.EVALUATION, ci=opt.INTERVALS, store_opts=opt.STORE)
def eval_cmd(
    files: list[str] | None = typer.Argument(
        None,
        metavar="QRELS_FILE RUN_FILE...",
        help="Evaluate files without a store, like trec_eval QRELS RUN (- reads one of them from stdin). "
        "Without files: runs of the store against --qrels.",
    ),
    qrels: str | None = typer.Option(
        None, "--qrels", "-q", help="Qrels set of the store (default: the store's only qrels set)."
    ),
    run: list[str] | None = opt.Runs,
    metric: list[str] | None = typer.Option(
        None,
        "--metric",
        "-m",
        help="Metric, e.g. AP, nDCG@10, P(rel=2)@10, map, P_10; repeatable (default: trec_eval's official set).",
    ),
    per_topic: bool = flag("--per-topic", "-p", help="Print per-topic scores too (and the means)."),
    fmt: str | None = format_option(EVAL_FORMATS),
    output: str | None = OutputFile,
    transpose: bool = flag(
        "--transpose", help="One metric per row (automatic on a terminal when the table is too wide)."
    ),
    engine: str = opt.choice(
        "duckdb",
        "--engine",
        choices=("duckdb", "spark"),
        help="duckdb (the store), or spark: Spark SQL over a Parquet layout (--data DIR).",
    ),
    data: str | None = typer.Option(
        None, "--data", help="With --engine spark: the layout folder written by `evalstore export store DIR`."
    ),
    subsamples: str | None = typer.Option(
        None,
        "--subsamples",
        help="Also evaluate subsamples of the qrels set, in one bulk pass: 'all', "
        "names or fractions (comma-separated). Adds fraction/trial columns.",
    ),
    plot: str | None = typer.Option(
        None, "--plot", help="Also draw the per-topic scores as a box plot per run to this PNG file."
    ),
    recompute: bool = flag(
        "--recompute",
        help="Compute every score again (default: reuse stored scores of the same run and qrels content, "
        "metric, options and engine version).",
    ),
    *,
    ev: opt.EvaluationOptions,
    ci: opt.IntervalOptions,
    store_opts: opt.StoreOptions,
) -> None:
    """Compute metrics: for runs of the store against a qrels set (the per-topic scores are stored),
    or for files given as arguments (nothing is stored)."""
    fmt = output_format(fmt, output, EVAL_FORMATS)
    check_writable(plot, "--plot", ".png")
    _check_mode(files, qrels, run, engine, data, subsamples, plot, fmt, ci.ci)
    metrics = metric or ["official"]
    if engine == "spark":
        assert data is not None and qrels is not None
        result = spark_eval(data, qrels, run or None, metrics, ev.kwargs())
        report = _result_report(result, fmt, per_topic, transpose, plot, f"Spark: qrels {qrels}")
    elif files:
        result = _files_result(files, metrics, ev)
        report = _result_report(result, fmt, per_topic, transpose, plot, f"qrels {files[0]}", ci.spec)
    else:
        with open_store(store_opts.db) as store:
            qrels = qrels or only_qrels(store)
            if subsamples:
                report = _subsamples_report(store, qrels, run, metrics, subsamples, ev, ci.spec, fmt, per_topic)
            else:
                result = store.evaluate(qrels, run or None, metrics, recompute=recompute, **ev.kwargs(), **ci.kwargs())
                report = _result_report(result, fmt, per_topic, transpose, plot, f"qrels {qrels}")
    emit(report, fmt, output)


def _files_result(files: list[str], metrics: list[str], ev: opt.EvaluationOptions) -> EvalResult:
    """``eval QRELS RUN...``: the files evaluated without a store, with the command's resources."""
    r = resources.CURRENT
    with spooled(files) as paths:
        qrels_name = "stdin" if files[0] == "-" else os.path.basename(files[0])
        return evaluate_files(
            paths[0],
            paths[1:],
            metrics,
            qrels_name=qrels_name,
            memory_limit=r.memory_limit,
            threads=r.threads,
            temp_directory=r.temp_dir,
            **ev.kwargs(),
        )


def _check_mode(
    files: list[str] | None,
    qrels: str | None,
    run: list[str] | None,
    engine: str,
    data: str | None,
    subsamples: str | None,
    plot: str | None,
    fmt: str,
    ci: str | None = None,
) -> None:
    """The options of the four ways eval runs (files, Spark, subsamples, the store) go together."""
    if ci and engine == "spark":
        raise typer.BadParameter("--ci goes with the duckdb engine", param_hint="--ci")
    if engine == "spark" and (not data or not qrels or files or subsamples):
        raise typer.BadParameter("--engine spark needs --data DIR and --qrels NAME (no files, no --subsamples)")
    if engine != "spark" and data:
        raise typer.BadParameter("--data goes with --engine spark", param_hint="--data")
    if subsamples and (plot or fmt == "trec"):
        raise typer.BadParameter(
            "--plot and --format trec show one qrels set; leave out --subsamples", param_hint="--subsamples"
        )
    if files and (qrels or run or subsamples):
        raise typer.BadParameter("with files, leave out --qrels, --run and --subsamples", param_hint="FILES")
    if files and len(files) < 2:
        raise typer.BadParameter("give a qrels file and at least one run file", param_hint="FILES")


def _subsamples_report(
    store: Store,
    qrels: str,
    run: list[str] | None,
    metrics: list[str],
    subsamples: str,
    ev: opt.EvaluationOptions,
    intervals: IntervalSpec | None,
    fmt: str,
    per_topic: bool,
) -> Report:
    """A qrels set and its subsamples evaluated in one pass: one leaderboard (or the per-topic rows),
    with intervals (stored) when asked."""
    results = evaluate_subsamples(store, qrels, run or None, metrics, subsamples, **ev.kwargs())
    if intervals is not None:
        attach_intervals(store, list(results.values()), intervals)
    title = f"qrels {qrels} and {len(results) - 1} subsample(s)"
    table = (
        report_rows.per_topics(results, title, means=fmt == "table")
        if per_topic
        else report_rows.leaderboards(results, derivations(store), title)
    )
    return Report([table], notes=list(table.notes), legend=_interval_legend(intervals, per_topic))


def _result_report(
    result: EvalResult,
    fmt: str,
    per_topic: bool,
    transpose: bool,
    plot: str | None,
    title: str,
    intervals: IntervalSpec | None = None,
) -> Report:
    """An evaluation as a report (a leaderboard, or per-topic rows with the means as topic 'all' for a
    reader, as trec_eval -q); draws the box plot when asked; adds the intervals asked for when the
    evaluation has none yet (files: nothing is stored)."""
    if intervals is not None and result.interval_spec is None:
        attach_intervals(None, result, intervals)
    if plot:
        plots.plot_scores(result, plot, title)
        say(f"wrote {plot}")
    notes = list(result.notes)
    if result.reused:
        notes.append(
            f"reused {result.reused} stored evaluation(s), computed {result.computed} (--recompute computes all)"
        )
    table = (
        report_rows.per_topic(result, title, means=fmt == "table")
        if per_topic
        else report_rows.leaderboard(result, title)
    )
    table = table.transposed() if transpose and not per_topic else table
    legend = _interval_legend(result.interval_spec, per_topic or fmt == "trec")
    return Report([table], notes=notes, result=result, legend=legend)


def _interval_legend(how: IntervalSpec | None, hidden: bool) -> list[str]:
    """What the lo/hi columns are (or that this output has no place for them)."""
    if how is None:
        return []
    if hidden:
        return ["intervals are shown in the leaderboard (leave out --per-topic / --format trec); they are stored"]
    return [f"<metric> lo, <metric> hi: {how.describe()}"]


@export_app.command("leaderboard")
@opt.shared(ev=opt.EVALUATION, ci=opt.INTERVALS, store_opts=opt.STORE)
def export_leaderboard_cmd(
    qrels: str | None = typer.Option(
        None, "--qrels", "-q", help="Qrels set of the store (default: the store's only qrels set)."
    ),
    metric: list[str] | None = typer.Option(
        None, "--metric", "-m", help="Metric, e.g. AP, nDCG@10, map; repeatable (default: trec_eval's official set)."
    ),
    output: str = typer.Option(..., "--output", "-o", help="Output file (format from its extension), or - for stdout."),
    fmt: str | None = format_option(extra_help=" With -o -: csv unless given."),
    run: list[str] | None = opt.Runs,
    per_topic: bool = flag("--per-topic", "-p", help="Long format: one row per (run, topic, metric)."),
    *,
    ev: opt.EvaluationOptions,
    ci: opt.IntervalOptions,
    store_opts: opt.StoreOptions,
) -> None:
    """Write a leaderboard: one row per run, a column per metric, sorted by the first metric (csv, tsv,
    json, parquet, markdown or latex, chosen by --format or the file's extension)."""
    to_stdout = output == "-"
    chosen = output_format(fmt or "csv", None) if to_stdout else output_format(fmt, output)
    with open_store(store_opts.db) as store:
        result = store.evaluate(
            qrels or only_qrels(store), run or None, metric or ["official"], **ev.kwargs(), **ci.kwargs()
        )
    table = report_rows.per_topic(result, means=False) if per_topic else report_rows.leaderboard(result)
    report = Report([table], legend=_interval_legend(ci.spec, per_topic), notes=list(table.notes))
    emit(report, chosen, None if to_stdout else output)


@app.command("demo")
def demo(
    db: str | None = typer.Option(
        None, "--db", help="Store file for the demo (default: ./evalstore-demo.duckdb; ':memory:' keeps nothing)."
    ),
) -> None:
    """Build a store from the bundled sample collection, evaluate it, show a leaderboard and a query,
    and print three commands to try on the store it leaves behind."""
    run_demo(db)
