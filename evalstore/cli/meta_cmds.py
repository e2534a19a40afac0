"""Meta-evaluation commands: `evalstore meta kendall|swap|discpower|tests|robustness`.

Each runs one analysis of :mod:`evalstore.meta` as a method of the store (stored in the ``meta_*``
relations unless ``--no-save``), prints its table (:mod:`evalstore.output.meta_tables`: paper style on a terminal,
plain values with ``--format csv|tsv|json|markdown|latex`` and in files: ``-o FILE`` writes
``--format`` or the format of its extension) and can draw a PNG
(``--plot FILE.png|.svg``, :mod:`evalstore.output.plots`) and write its data (``--plot-data
FILE.csv|.json``, :mod:`evalstore.output.figure_data`). docs/meta.md has the definitions."""

from __future__ import annotations

from typing import Any

import typer

from ..evaluation.default_qrels import HELP as default_qrels_help
from ..evaluation.default_qrels import default_qrels
from ..meta.common import Analysis
from ..metrics.options import EvalOptions
from ..output import meta_tables, reuse_tables
from ..output.table import Table
from ..pool.groups import LEAVE_OUT
from ..stats.significance import ADJUSTMENTS, TEST_SPELLINGS, TESTS
from . import figures, ranges
from . import options as opt
from .app import app, group, open_store
from .choices import choice, flag
from .output import OutputFile, emit, format_option, say
from .ranges import number

meta_app = group(
    "Meta-evaluation of metrics (Sakai 2007; Bompada et al. 2007): rank correlation, swap method, bootstrap "
    "sensitivity, paired tests, robustness to incomplete judgments. Results are stored in meta_* relations."
)
app.add_typer(meta_app, name="meta")

MetricOpt = typer.Option(..., "--metric", "-m", help="Metric, e.g. AP(rel=2), Q-measure(gains=1:2:3); repeatable.")


def _emit(table: Table, a: opt.AnalysisOptions) -> None:
    """The table in the chosen format (its notes on stderr, whatever the format and destination)."""
    emit(table, a.fmt or "table", a.output)


def _done(an: Analysis, a: opt.AnalysisOptions, figure: str, *args: Any) -> None:
    """The analysis' notes, its figure ``figure`` (:func:`evalstore.cli.figures.write`, with the
    figure's own ``args``) where asked, and where it is stored."""
    for note in meta_tables.input_notes(an.inputs.get("columns", [])):
        say(note)
    figures.write(a.plot, a.plot_data, figure, an, drawn=args, data=args)
    if an.analysis_id is not None:
        say(
            f'stored as analysis {an.analysis_id} (meta_runs; e.g. evalstore sql "SELECT * FROM '
            f'meta_runs WHERE analysis_id = {an.analysis_id}")'
        )


@meta_app.command(
    "kendall",
    help=(
        "Kendall's tau (Sakai IPSJ 2007 Eq. 8, tau-b with ties; Z test of Eq. 9) and Spearman's rho between the "
        "system rankings of every two columns (metrics x qrels sets), as Sakai IPSJ 2007 Table 2 / "
        "Sakai SIGIR 2007 Table 2."
    ),
)
@opt.shared(a=opt.ANALYSIS)
def kendall_cmd(
    qrels: list[str] | None = opt.QrelsColumns,
    metric: list[str] = MetricOpt,
    stat: str = opt.choice(
        "tau",
        "--stat",
        choices=meta_tables.KENDALL_STATS,
        help="Cell value: tau, tau_a, tau_b, spearman, p_value or z.",
    ),
    long: bool = flag("--long", help="One row per column pair with every statistic."),
    *,
    a: opt.AnalysisOptions,
) -> None:
    with open_store(a) as store:
        qrels = qrels or [default_qrels(store, metric)]
        an = store.kendall(qrels, metric, save=not a.no_save, **a.inputs())
    _emit(meta_tables.kendall(an, stat=stat, long=long, paper=a.paper), a)
    plot_stat = stat if stat.startswith("tau") or stat == "spearman" else "tau"
    _done(an, a, "kendall", plot_stat)


@meta_app.command(
    "swap",
    help=(
        "Swap method with bootstrap topic sets (Sakai IPSJ 2007 Sec. 4.2, Fig. 4): Sakai IPSJ 2007 Table 3's "
        "columns, or the swap rate per difference bin (--bins). Columns: abs. diff. (ii), the smallest "
        "difference in means that keeps the swap rate within --max-rate; max. (iii), the largest difference "
        "over all pairs and trials; (ii)/(iii), their ratio; %pairs satisfying (ii), the share of comparisons "
        "at least (ii) apart."
    ),
)
@opt.shared(a=opt.ANALYSIS)
def swap_cmd(
    qrels: list[str] | None = opt.QrelsColumns,
    metric: list[str] = MetricOpt,
    trials: int = opt.Trials,
    seed: int = opt.Seed,
    max_rate: float = number(0.05, "--max-rate", range=ranges.RATE, help="Swap rate to guarantee (5 %)."),
    bins: bool = flag("--bins", help="Print the swap rate of every difference bin instead."),
    *,
    a: opt.AnalysisOptions,
) -> None:
    with open_store(a) as store:
        qrels = qrels or [default_qrels(store, metric)]
        an = store.swap(
            qrels,
            metric,
            trials=trials,
            seed=seed,
            max_rate=max_rate,
            save=not a.no_save,
            **a.inputs(),
        )
    _emit(meta_tables.swap(an, bins=bins, paper=a.paper), a)
    _done(an, a, "swap")


@meta_app.command(
    "discpower",
    help=(
        "Bootstrap sensitivity (Sakai IPSJ 2007 Sec. 4.3, Figs. 5-7): paired bootstrap test for every run pair, "
        "discriminative power (pairs with ASL < alpha) and the estimated difference required, as Sakai IPSJ 2007 "
        "Table 4 / Sakai SIGIR 2007 Table 3."
    ),
)
@opt.shared(a=opt.ANALYSIS)
def discpower_cmd(
    qrels: list[str] | None = opt.QrelsColumns,
    metric: list[str] = MetricOpt,
    trials: int = opt.Trials,
    seed: int = opt.Seed,
    alpha: float = opt.Alpha,
    pairs: bool = flag("--pairs", help="Print the ASL of every run pair instead."),
    *,
    a: opt.AnalysisOptions,
) -> None:
    with open_store(a) as store:
        qrels = qrels or [default_qrels(store, metric)]
        an = store.discpower(
            qrels,
            metric,
            trials=trials,
            seed=seed,
            alpha=alpha,
            save=not a.no_save,
            **a.inputs(),
        )
    _emit(meta_tables.discpower(an, pairs=pairs, paper=a.paper), a)
    _done(an, a, "discpower")


@meta_app.command(
    "tests",
    help=(
        "Paired significance tests for every run pair (t-test, Wilcoxon signed-rank, randomisation, "
        "bootstrap) with optional Holm/Bonferroni adjustment; prints each test's discriminative power, or"
        " every pair's p-values with --pairs."
    ),
)
@opt.shared(a=opt.ANALYSIS)
def tests_cmd(
    qrels: list[str] | None = opt.QrelsColumns,
    metric: list[str] = MetricOpt,
    test: list[str] | None = opt.choice(
        None,
        "--test",
        "-t",
        choices=TESTS,
        aliases=TEST_SPELLINGS,
        help="t, wilcoxon, randomisation (also spelled randomization) or bootstrap; repeatable (default: all four).",
    ),
    trials: int = number(
        1000, "--trials", "-B", range=ranges.TRIALS, help="Resamples for the bootstrap and randomisation tests."
    ),
    seed: int = opt.Seed,
    alpha: float = opt.Alpha,
    adjust: str = opt.choice(
        "none",
        "--adjust",
        choices=ADJUSTMENTS,
        help="Adjust p-values over the run pairs: none, holm, bonferroni (family-wise error), bh or by "
        "(false discovery rate).",
    ),
    pairs: bool = flag("--pairs", help="Print every run pair's p-values instead."),
    *,
    a: opt.AnalysisOptions,
) -> None:
    names = test or ["t", "wilcoxon", "randomisation", "bootstrap"]
    with open_store(a) as store:
        qrels = qrels or [default_qrels(store, metric)]
        an = store.significance_tests(
            qrels,
            metric,
            tests=names,
            trials=trials,
            seed=seed,
            alpha=alpha,
            adjust=adjust,
            save=not a.no_save,
            **a.inputs(),
        )
    _emit(meta_tables.tests(an, pairs=pairs, paper=a.paper), a)
    _done(an, a, "tests")


@meta_app.command(
    "robustness",
    help=(
        "Robustness to incomplete judgments over subsamples of a qrels set: Kendall's tau with the full "
        "ranking and discriminative power per fraction (Sakai SIGIR 2007 Figs. 2-3), Bompada et al. 2007's "
        "confusion matrix of test outcomes (accuracy, g-mean, false positives/negatives) and the knees "
        "(Bompada et al. 2007 Tables 3, 5)."
    ),
)
@opt.shared(a=opt.ANALYSIS)
def robustness_cmd(
    qrels: str | None = typer.Option(None, "--qrels", "-q", help=f"The full qrels set ({default_qrels_help})."),
    metric: list[str] = MetricOpt,
    subsamples: str = typer.Option(
        "all", "--subsamples", help="Which subsamples: all, names or fractions (comma-separated)."
    ),
    fractions: str | None = typer.Option(
        None,
        "--fractions",
        help="Create (if missing) and use subsamples at these fractions, e.g. 0.9,0.7,0.5,0.3,0.1, "
        "or a preset: sakai, bompada.",
    ),
    subsample_trials: int = opt.SubsampleTrials,
    subsample_seed: int = opt.SubsampleSeed,
    test: str = opt.choice(
        "bootstrap",
        "--test",
        "-t",
        choices=TESTS,
        aliases=TEST_SPELLINGS,
        help="Test for discriminative power and the confusion matrix: bootstrap (Sakai SIGIR 2007), "
        "wilcoxon (Bompada et al. 2007), t, randomisation.",
    ),
    trials: int = opt.Trials,
    seed: int = opt.Seed,
    alpha: float = opt.Alpha,
    threshold: float = number(0.9, "--threshold", range=ranges.RATE, help="Knee threshold for tau and accuracy."),
    show: str = typer.Option(
        "all", "--show", help="Tables to print: all, tau, discpower, confusion, knee (comma-separated)."
    ),
    *,
    a: opt.AnalysisOptions,
) -> None:
    shows = {s.strip() for s in show.split(",") if s.strip()}
    allowed = {"all", *meta_tables.ROBUSTNESS_TABLES}
    if not shows <= allowed:
        raise typer.BadParameter(f"--show takes {', '.join(sorted(allowed))}")
    if "all" in shows:
        shows = set(meta_tables.ROBUSTNESS_TABLES)
    with open_store(a) as store:
        qrels = qrels or default_qrels(store, metric)
        spec: Any = subsamples
        if fractions:
            spec = store.create_subsamples(qrels, fractions, trials=subsample_trials, seed=subsample_seed)
        an = store.robustness(
            qrels,
            metric,
            subsamples=spec,
            test=test,
            trials=trials,
            seed=seed,
            alpha=alpha,
            threshold=threshold,
            save=not a.no_save,
            **a.inputs(),
        )
    for table in meta_tables.robustness(an, show=shows, paper=a.paper):
        _emit(table, a)
    _done(an, a, "robustness")


@meta_app.command(
    "reusability",
    help=(
        "Would a system that did not contribute to the pool be scored fairly? Leave one group of runs (a "
        "participant's: --group-by FIELD) or one run (--leave-one-out runs) out at a time: remove from the qrels "
        "every judged document that only its runs brought into the depth-K pool, score its runs on what is left, "
        "and compare the leaderboards per metric: each run's change of mean and rank, Kendall's tau, tau_AP and "
        "the largest drops (Zobel, SIGIR 1998; Buckley et al., IRJ 2007). The reduced qrels sets are stored as "
        "subsamples (<qrels>@logo<K>:<group>, <qrels>@loro<K>:<run>); the analysis as meta_runs kind 'reusability'."
    ),
)
@opt.shared(store=opt.STORE)
def reusability_cmd(
    qrels: str | None = typer.Option(None, "--qrels", "-q", help=f"The qrels set ({default_qrels_help})."),
    metric: list[str] = MetricOpt,
    run: list[str] | None = opt.Runs,
    depth: int = number(10, "--depth", "-M", range=ranges.DEPTH, help="The pool depth K: each run's top K documents."),
    group_by: str | None = typer.Option(
        None,
        "--group-by",
        help="The field that groups runs: a column of --groups FILE (default: its second column), else a field of "
        "the runs' ir_metadata headers (actor.team).",
    ),
    groups: str | None = typer.Option(
        None,
        "--groups",
        help="A file mapping runs to groups: a header line, then a run per line (tab- or comma-separated), such "
        "as TREC's runs_metadata.tsv (run_tag, participant, ...).",
    ),
    leave_one_out: str | None = choice(
        None,
        "--leave-one-out",
        choices=LEAVE_OUT,
        help="Leave one group out at a time (groups: by --group-by) or one run (runs).",
    ),
    prefix: str | None = typer.Option(
        None, "--prefix", help="Name prefix of the leave-out subsamples (default: the qrels name)."
    ),
    replace: bool = flag("--replace", help="Recreate same-named leave-out subsamples made from other runs or groups."),
    missing: str = opt.Missing,
    convention: str = opt.Convention,
    complete: bool = flag("--complete", "-c", help="Topics of the qrels missing from a run score 0 (trec_eval -c)."),
    fmt: str | None = format_option(extra_help=" json: the whole analysis as one document."),
    output: str | None = OutputFile,
    plot: str | None = opt.Plot,
    plot_data: str | None = figures.PlotData,
    no_save: bool = flag("--no-save", help="Do not store the analysis (the leave-out subsamples are stored)."),
    *,
    store: opt.StoreOptions,
) -> None:
    how = leave_one_out or ("groups" if group_by or groups else None)
    if how is None:
        raise typer.BadParameter("say how runs are left out: --group-by FIELD [--groups FILE], or --leave-one-out runs")
    if how == "runs" and (group_by or groups):
        raise typer.BadParameter("--leave-one-out runs takes no grouping: drop --group-by and --groups")
    a = opt.AnalysisOptions(
        run=run, kind=None, top=None, top_by=None, missing=missing, convention=convention, complete=complete,
        depth=None, fmt=fmt, output=output, plot=plot, plot_data=plot_data, no_save=no_save, db=store.db,
    )  # fmt: skip
    with open_store(store) as s:
        qrels = qrels or default_qrels(s, metric)
        result = s.reusability(
            qrels, metric, run or None, pool_depth=depth, leave_one_out=how, group_by=group_by, groups=groups,
            prefix=prefix, replace=replace, missing=missing, options=EvalOptions(convention, complete),
            save=not no_save,
        )  # fmt: skip
    assert result.analysis is not None
    emit(reuse_tables.report(result.analysis, result.to_dict(), result.notes), a.fmt or "table", a.output)
    _done(result.analysis, a, "reusability")
