"""Evaluation commands: eval, export leaderboard, demo."""

from __future__ import annotations

import os

import typer

from .. import result_tables as report_rows
from ..api import evaluate as evaluate_files
from ..default_qrels import default_qrels
from ..demo import run_demo, run_rag_demo
from ..facade import Store
from ..intervals import IntervalSpec
from ..memory_limit import of_limit
from ..ranking.intervals import legend as rank_legend
from ..report import figure_data, plots
from ..report.formats import TABLES
from ..report.table import Report
from ..result import EvalResult
from ..stats.budget import check_bootstrap
from ..subsample import derivations
from . import figures
from . import options as opt
from .app import app, group, open_store
from .choices import flag
from .inputs import spooled
from .output import OutputFile, emit, format_option, output_format
from .resource_options import StoreResources
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
    qrels_sets: list[str] | None = opt.QrelsAcross,
    run: list[str] | None = opt.Runs,
    metric: list[str] | None = typer.Option(
        None,
        "--metric",
        "-m",
        help="Metric, e.g. AP, nDCG@10, P(rel=2)@10, map, P_10; repeatable (default: trec_eval's official set).",
    ),
    agg: str | None = opt.Agg,
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
    plot: str | None = figures.plot_option("the per-topic scores as a box plot per run"),
    plot_data: str | None = figures.PlotData,
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
    figures.check(plot, plot_data)
    qrels = _one_qrels(qrels_sets, agg)
    _check_mode(files, qrels, run, engine, data, subsamples, plot or plot_data, fmt, ci.ci or ci.rank_ci)
    if ci.ci == "bootstrap":  # a B whose resampled means cannot fit is refused before any work
        check_bootstrap(ci.trials, of_limit(store_opts.memory_limit), interval=True)
    metrics = metric or ["official"]
    result: EvalResult | None = None
    if agg is not None:
        _check_across(files, engine, subsamples, plot or plot_data, per_topic, fmt, ci)
        report = _across_report(store_opts, qrels_sets, run, metrics, agg, ev, ci)
    elif engine == "spark":
        assert data is not None and qrels is not None
        result = spark_eval(data, qrels, run or None, metrics, ev.kwargs())
        title = f"Spark: qrels {qrels}"
        report = _result_report(result, fmt, per_topic, transpose, title)
    elif files:
        result, title = _files_result(files, metrics, ev, ci, store_opts), f"qrels {files[0]}"
        report = _result_report(result, fmt, per_topic, transpose, title)
    else:
        asked = (qrels, run, metrics, subsamples, recompute)
        report, result, title = _store_report(store_opts, *asked, ev, ci, fmt, per_topic, transpose)
    if result is not None:
        shown = result
        figures.write(plot, plot_data, lambda p: plots.plot_scores(shown, p, title), lambda: figure_data.scores(shown))
    emit(report, fmt, output)


def _files_result(
    files: list[str], metrics: list[str], ev: opt.EvaluationOptions, ci: opt.IntervalOptions, r: StoreResources
) -> EvalResult:
    """The evaluation of a qrels file and run files (``-`` as standard input), with its intervals,
    under the command's resources; nothing is stored."""
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
            **ci.kwargs(),
        )


def _store_report(
    store_opts: opt.StoreOptions,
    qrels: str | None,
    run: list[str] | None,
    metrics: list[str],
    subsamples: str | None,
    recompute: bool,
    ev: opt.EvaluationOptions,
    ci: opt.IntervalOptions,
    fmt: str,
    per_topic: bool,
    transpose: bool,
) -> tuple[Report, EvalResult | None, str]:
    """The evaluation of stored runs (with their subsamples when asked): the report, the result
    (None for subsamples) and its title."""
    with open_store(store_opts) as store:
        qrels = qrels or default_qrels(store, metrics)
        title = f"qrels {qrels}"
        if subsamples:
            report = _subsamples_report(store, qrels, run, metrics, subsamples, ev, ci, fmt, per_topic)
            return report, None, title
        result = store.evaluate(qrels, run or None, metrics, recompute=recompute, **ev.kwargs(), **ci.kwargs())
        return _result_report(result, fmt, per_topic, transpose, title), result, title


def _one_qrels(qrels_sets: list[str] | None, agg: str | None) -> str | None:
    """The one qrels set of an evaluation (several only with --agg)."""
    if not qrels_sets:
        return None
    if len(dict.fromkeys(qrels_sets)) > 1 and agg is None:
        raise typer.BadParameter(
            "several qrels sets make one leaderboard with --agg mean|borda (each set counted once)",
            param_hint="--qrels",
        )
    return qrels_sets[0]


def _check_across(
    files: list[str] | None,
    engine: str,
    subsamples: str | None,
    plot: str | None,
    per_topic: bool,
    fmt: str,
    ci: opt.IntervalOptions,
) -> None:
    """--agg ranks stored runs over qrels sets: one leaderboard, bootstrap rank intervals only."""
    if files or engine == "spark" or subsamples or plot or per_topic or fmt == "trec":
        raise typer.BadParameter(
            "--agg makes one leaderboard of stored runs over qrels sets: leave out files, --engine spark, "
            "--subsamples, --plot, --per-topic and --format trec",
            param_hint="--agg",
        )
    if ci.ci is not None:
        raise typer.BadParameter("--agg ranks runs over sets; --ci goes with one qrels set", param_hint="--ci")
    if ci.rank_ci == "t":
        raise typer.BadParameter(
            "rank intervals over qrels sets are bootstrap intervals (no t interval of a Borda count or of a mean "
            "over different topic sets): --rank-ci bootstrap",
            param_hint="--rank-ci",
        )


def _across_report(
    store_opts: opt.StoreOptions,
    qrels_sets: list[str] | None,
    run: list[str] | None,
    metrics: list[str],
    agg: str,
    ev: opt.EvaluationOptions,
    ci: opt.IntervalOptions,
) -> Report:
    """One leaderboard over the qrels sets (checked first: see :func:`_check_across`)."""
    with open_store(store_opts) as store:
        board = store.leaderboard(
            qrels_sets or [default_qrels(store, metrics)], run or None, metrics, agg=agg, rank_ci=ci.rank_ci,
            level=ci.level, trials=ci.trials, seed=ci.seed, **ev.kwargs(),
        )  # fmt: skip
    title = f"{len(board.qrels)} qrels sets ({', '.join(board.qrels)}), runs ranked by {agg}"
    return Report([board.table(title)], notes=list(board.notes), legend=board.legend())


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
        raise typer.BadParameter("--ci and --rank-ci go with the duckdb engine", param_hint="--ci")
    if engine == "spark" and (not data or not qrels or files or subsamples):
        raise typer.BadParameter("--engine spark needs --data DIR and --qrels NAME (no files, no --subsamples)")
    if engine != "spark" and data:
        raise typer.BadParameter("--data goes with --engine spark", param_hint="--data")
    if subsamples and (plot or fmt == "trec"):
        raise typer.BadParameter(
            "--plot, --plot-data and --format trec show one qrels set; leave out --subsamples",
            param_hint="--subsamples",
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
    ci: opt.IntervalOptions,
    fmt: str,
    per_topic: bool,
) -> Report:
    """A qrels set and its subsamples evaluated in one pass: one leaderboard (or the per-topic rows),
    with intervals (stored) when asked."""
    results = store.evaluate_subsamples(qrels, run or None, metrics, subsamples, **ev.kwargs(), **ci.kwargs())
    intervals, ranks = ci.spec, ci.rank_spec
    title = f"qrels {qrels} and {len(results) - 1} subsample(s)"
    table = (
        report_rows.per_topics(results, title, means=fmt == "table")
        if per_topic
        else report_rows.leaderboards(results, derivations(store), title)
    )
    legend = _interval_legend(intervals, per_topic) + _rank_legend(ranks, metrics, per_topic)
    return Report([table], notes=list(table.notes), legend=legend)


def _result_report(
    result: EvalResult,
    fmt: str,
    per_topic: bool,
    transpose: bool,
    title: str,
) -> Report:
    """An evaluation as a report (a leaderboard, or per-topic rows with the means as topic 'all' for a
    reader, as trec_eval -q), with the intervals the evaluation attached."""
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
    legend += _rank_legend(result.rank_spec, result.metrics, per_topic or fmt == "trec", len(result.rank_widened))
    return Report([table], notes=notes, result=result, legend=legend)


def _rank_legend(how: IntervalSpec | None, metrics: list[str], hidden: bool, widened: int = 0) -> list[str]:
    """What the rank columns are (or that this output has no place for them)."""
    if how is None:
        return []
    if hidden:
        return ["rank intervals are shown in the leaderboard (leave out --per-topic / --format trec); they are stored"]
    return rank_legend(how, metrics[0] if metrics else None, widened)


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
    qrels_sets: list[str] | None = opt.QrelsAcross,
    metric: list[str] | None = typer.Option(
        None, "--metric", "-m", help="Metric, e.g. AP, nDCG@10, map; repeatable (default: trec_eval's official set)."
    ),
    output: str = typer.Option(..., "--output", "-o", help="Output file (format from its extension), or - for stdout."),
    fmt: str | None = format_option(extra_help=" With -o -: csv unless given."),
    run: list[str] | None = opt.Runs,
    per_topic: bool = flag("--per-topic", "-p", help="Long format: one row per (run, topic, metric)."),
    agg: str | None = opt.Agg,
    *,
    ev: opt.EvaluationOptions,
    ci: opt.IntervalOptions,
    store_opts: opt.StoreOptions,
) -> None:
    """Write a leaderboard: one row per run, a column per metric, sorted by the first metric (csv, tsv,
    json, parquet, markdown or latex, chosen by --format or the file's extension)."""
    to_stdout = output == "-"
    chosen = output_format(fmt or "csv", None) if to_stdout else output_format(fmt, output)
    qrels = _one_qrels(qrels_sets, agg)
    metrics = metric or ["official"]
    if agg is not None:
        _check_across(None, "duckdb", None, None, per_topic, chosen, ci)
        emit(_across_report(store_opts, qrels_sets, run, metrics, agg, ev, ci), chosen, None if to_stdout else output)
        return
    with open_store(store_opts) as store:
        result = store.evaluate(
            qrels or default_qrels(store, metrics), run or None, metrics, **ev.kwargs(), **ci.kwargs()
        )
    table = report_rows.per_topic(result, means=False) if per_topic else report_rows.leaderboard(result)
    legend = _interval_legend(ci.spec, per_topic)
    legend += _rank_legend(ci.rank_spec, result.metrics, per_topic, len(result.rank_widened))
    report = Report([table], legend=legend, notes=list(table.notes))
    emit(report, chosen, None if to_stdout else output)


@app.command("demo")
def demo(
    db: str | None = typer.Option(
        None,
        "--db",
        help="Store file for the demo (default: ./evalstore-demo.duckdb, with --answers ./evalstore-rag-demo.duckdb; "
        "':memory:' keeps nothing).",
    ),
    answers: bool = flag(
        "--answers",
        help="The RAG sample instead: generated answers evaluated by their nuggets, their citations' support and "
        "what they cite, and the automatic nugget assignments against the manual ones.",
    ),
) -> None:
    """Build a store from the bundled sample collection, evaluate it, show a leaderboard and a query,
    and print three commands to try on the store it leaves behind."""
    if answers:
        run_rag_demo(db)
    else:
        run_demo(db)
