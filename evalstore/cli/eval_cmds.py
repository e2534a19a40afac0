"""Evaluation commands: eval, export leaderboard.

``eval`` parses and checks its options, makes one :class:`~evalstore.evaluation.request.EvalRequest`
and one source (files, the store, or Spark), calls :func:`evalstore.api.evaluate_source` once and
hands the :class:`~evalstore.evaluation.request.Evaluation` to one writer (:func:`_output`)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import typer

from .. import subsample
from ..api import evaluate_source
from ..db.handle import StoreHandle
from ..evaluation.default_qrels import default_qrels, official_measures
from ..evaluation.request import OFFICIAL, EvalRequest, Evaluation, Given, OnSpark, OptionConflict, Source, Stored
from ..intervals.means import IntervalSpec
from ..intervals.ranks import legend as rank_legend
from ..metrics.options import EvalOptions
from ..opening import open_handle
from ..output.formats import TABLES
from ..output.table import Output
from ..results import tables as report_rows
from ..results.eval_result import EvalResult
from . import figures
from . import options as opt
from .app import app, group, resources
from .choices import flag
from .inputs import spooled
from .output import OutputFile, emit, format_option, output_format, say

EVAL_FORMATS = (*TABLES, "evaluation")

export_app = group("Export leaderboards and per-topic scores.")
app.add_typer(export_app, name="export")


@dataclass(frozen=True)
class View:
    """How the evaluation is shown: per topic or as a leaderboard, in ``fmt``, transposed."""

    per_topic: bool = False
    fmt: str = "table"
    transpose: bool = False
    plot: bool = False


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
    kind: list[str] | None = opt.Kinds,
    metric: list[str] | None = typer.Option(
        None,
        "--metric",
        "-m",
        help="Metric, e.g. AP, nDCG@10, P(rel=2)@10, map, P_10; repeatable (default: the official measures of a "
        "dataset's qrels set (ingest dataset), else trec_eval's official set).",
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
    ev: EvalOptions,
    ci: opt.IntervalOptions,
    store_opts: opt.StoreOptions,
) -> None:
    """Compute metrics: for runs of the store against a qrels set (the per-topic scores are stored),
    or for files given as arguments (nothing is stored)."""
    view = View(per_topic, output_format(fmt, output, EVAL_FORMATS), transpose, bool(plot or plot_data))
    figures.check(plot, plot_data)
    _check_view(view, files, engine, data, subsamples, agg)
    with _source(files, qrels_sets, run, kind, agg, subsamples, recompute, engine, data, store_opts) as source:
        request = EvalRequest(metric or default_metrics(source), ev, ci.request)
        evaluation = evaluated(source, request)
        shown = _output(evaluation, view, source)
    if isinstance(source, OnSpark):
        say(f"wrote {data}/spark_scores/{source.qrels}; store them with `evalstore import scores {data}`")
    if view.plot:
        result, title = evaluation.result, shown.tables[0].title or ""
        figures.write(plot, plot_data, "scores", result, drawn=(title,))
    emit(shown, view.fmt, output)


def default_metrics(source: Source) -> tuple[str, ...] | list[str]:
    """What is evaluated when no -m is given: the official measures of a dataset's qrels set
    (`ingest dataset`), else trec_eval's official set."""
    if isinstance(source, Stored) and source.agg is None:
        qrels = (source.qrels_sets() or [default_qrels(source.store, OFFICIAL)])[0]
        return official_measures(source.store, qrels) or OFFICIAL
    return OFFICIAL


def evaluated(source: Source, request: EvalRequest) -> Evaluation:
    """:func:`evalstore.api.evaluate_source`, its conflicting options said as usage errors."""
    try:
        return evaluate_source(source, request)
    except OptionConflict as e:
        raise typer.BadParameter(e.said(_flag), param_hint=_flag(e.option)) from None


#: the library keywords the command line spells otherwise
_FLAGS = {"kinds": "--kind", "runs": "--run"}


def _flag(keyword: str) -> str:
    """The command line's spelling of a library keyword (``rank_ci`` -> ``--rank-ci``)."""
    return _FLAGS.get(keyword) or "--" + keyword.replace("_", "-")


def _check_view(
    view: View, files: list[str] | None, engine: str, data: str | None, subsamples: str | None, agg: str | None
) -> None:
    """What the writer can show of each kind of evaluation, and the options each source needs."""
    if engine == "spark" and not data:
        raise typer.BadParameter("--engine spark needs --data DIR and --qrels NAME", param_hint="--engine")
    if engine != "spark" and data:
        raise typer.BadParameter("--data goes with --engine spark", param_hint="--data")
    if files and len(files) < 2:
        raise typer.BadParameter("give a qrels file and at least one run file", param_hint="FILES")
    if subsamples and (view.plot or view.fmt == "trec"):
        raise typer.BadParameter(
            "--plot, --plot-data and --format trec show one qrels set; leave out --subsamples",
            param_hint="--subsamples",
        )
    if agg is not None and (files or engine == "spark" or view.plot or view.per_topic or view.fmt == "trec"):
        raise typer.BadParameter(
            "--agg makes one leaderboard of stored runs over qrels sets: leave out files, --engine spark, "
            "--plot, --per-topic and --format trec",
            param_hint="--agg",
        )


def _open(r: opt.StoreOptions) -> StoreHandle:
    """The store of ``--db`` as its handle (:func:`evalstore.opening.open_handle`), not the
    :class:`~evalstore.Store` facade: evaluating its runs is all these commands do, and the facade
    imports every operation of the library (about 50 modules more at start-up)."""
    return open_handle(r.db, create=False, **resources(r))


@contextmanager
def _source(
    files: list[str] | None,
    qrels_sets: list[str] | None,
    run: list[str] | None,
    kind: list[str] | None,
    agg: str | None,
    subsamples: str | None,
    recompute: bool,
    engine: str,
    data: str | None,
    r: opt.StoreOptions,
) -> Iterator[Source]:
    """The evaluation's source: the files given (``-`` spooled from standard input; the command's
    resources), the Parquet layout on Spark, or the store (open while the block runs)."""
    if files:
        if qrels_sets or run or kind or subsamples:
            raise typer.BadParameter(
                "with files, leave out --qrels, --run, --kind and --subsamples", param_hint="FILES"
            )
        with spooled(files) as paths:
            name = "stdin" if files[0] == "-" else os.path.basename(files[0])
            yield Given(
                paths[0], paths[1:], name, memory_limit=r.memory_limit, threads=r.threads, temp_directory=r.temp_dir
            )
    elif engine == "spark":
        if not qrels_sets or subsamples or kind:
            raise typer.BadParameter("--engine spark needs --data DIR and --qrels NAME (no --subsamples, --kind)")
        assert data is not None
        yield OnSpark(data, qrels_sets[0], run or None)
    else:
        with _open(r) as store:
            yield Stored(
                store, qrels_sets or None, run or None, subsamples, agg=agg, recompute=recompute, kinds=kind or None
            )


def _output(evaluation: Evaluation, view: View, source: Source) -> Output:
    """The one writer of an evaluation: a leaderboard over qrels sets, a qrels set with its
    subsamples, or one result (a leaderboard, or per-topic rows with the means as topic 'all' for a
    reader, as trec_eval -q), with the intervals the evaluation attached."""
    board = evaluation.board
    if board is not None:
        title = f"{len(board.qrels)} qrels sets ({', '.join(board.qrels)}), runs ranked by {board.agg}"
        return Output([board.table(title)], notes=list(board.notes), legend=board.legend())
    if len(evaluation.results) > 1:
        assert isinstance(source, Stored)
        return _subsamples_output(evaluation.results, view, subsample.derivations(source.store))
    result = evaluation.result
    title = f"Spark: qrels {result.qrels}" if isinstance(source, OnSpark) else f"qrels {result.qrels}"
    if isinstance(source, Given):
        title = f"qrels {source.qrels_name}"
    notes = list(result.notes)
    if result.reused:
        notes.append(
            f"reused {result.reused} stored evaluation(s), computed {result.computed} (--recompute computes all)"
        )
    per_topic, fmt = view.per_topic, view.fmt
    if per_topic:
        table = report_rows.per_topic(result, title, means=fmt == "table")
    else:
        table = report_rows.leaderboard(result, title)
    table = table.transposed() if view.transpose and not per_topic else table
    legend = _interval_legend(result.interval_spec, per_topic or fmt == "trec")
    legend += _rank_legend(result.rank_spec, result.metrics, per_topic or fmt == "trec", len(result.rank_widened))
    return Output([table], notes=notes, result=result, legend=legend)


def _subsamples_output(
    results: list[EvalResult], view: View, fractions: dict[str, tuple[float | None, int | None]]
) -> Output:
    """A qrels set and its subsamples: one leaderboard (or the per-topic rows), with the intervals."""
    title = f"qrels {results[0].qrels} and {len(results) - 1} subsample(s)"
    by_set = {r.qrels: r for r in results}
    table = (
        report_rows.per_topics(by_set, title, means=view.fmt == "table")
        if view.per_topic
        else report_rows.leaderboards(by_set, fractions, title)
    )
    first = results[0]
    legend = _interval_legend(first.interval_spec, view.per_topic)
    legend += _rank_legend(first.rank_spec, first.metrics, view.per_topic)
    return Output([table], notes=list(table.notes), legend=legend)


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
        None,
        "--metric",
        "-m",
        help="Metric, e.g. AP, nDCG@10, map; repeatable (default: the official measures of a dataset's qrels set, "
        "else trec_eval's official set).",
    ),
    output: str = typer.Option(..., "--output", "-o", help="Output file (format from its extension), or - for stdout."),
    fmt: str | None = format_option(extra_help=" With -o -: csv unless given."),
    run: list[str] | None = opt.Runs,
    kind: list[str] | None = opt.Kinds,
    per_topic: bool = flag("--per-topic", "-p", help="Long format: one row per (run, topic, metric)."),
    agg: str | None = opt.Agg,
    *,
    ev: EvalOptions,
    ci: opt.IntervalOptions,
    store_opts: opt.StoreOptions,
) -> None:
    """Write a leaderboard: one row per run, a column per metric, sorted by the first metric (csv, tsv,
    json, parquet, markdown or latex, chosen by --format or the file's extension)."""
    to_stdout = output == "-"
    chosen = output_format(fmt or "csv", None) if to_stdout else output_format(fmt, output)
    _check_view(View(per_topic, chosen), None, "duckdb", None, None, agg)
    with _open(store_opts) as store:
        source = Stored(store, qrels_sets or None, run or None, agg=agg, kinds=kind or None)
        evaluation = evaluated(source, EvalRequest(metric or default_metrics(source), ev, ci.request))
    board = evaluation.board
    if board is not None:
        title = f"{len(board.qrels)} qrels sets ({', '.join(board.qrels)}), runs ranked by {board.agg}"
        shown = Output([board.table(title)], notes=list(board.notes), legend=board.legend())
    else:
        result = evaluation.result
        table = report_rows.per_topic(result, means=False) if per_topic else report_rows.leaderboard(result)
        legend = _interval_legend(result.interval_spec, per_topic)
        legend += _rank_legend(result.rank_spec, result.metrics, per_topic, len(result.rank_widened))
        shown = Output([table], legend=legend, notes=list(result.notes))
    emit(shown, chosen, None if to_stdout else output)
