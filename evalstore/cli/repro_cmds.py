"""`evalstore repro` (Breuer et al.'s reproducibility measures, as repro_eval 0.5.0) and
`evalstore design` (Sakai's topic set size design). Each checks every option before it opens the
store, makes one library call (:func:`evalstore.repro.reproducibility`,
:func:`evalstore.meta.design.design`) and hands the result to one writer; docs/reproducibility.md."""

from __future__ import annotations

import typer

from ..evaluation.default_qrels import default_qrels
from ..metrics.options import EvalOptions
from ..output.table import Output, Table
from ..repro import orderings
from ..repro import render as repro_render
from ..stats.topic_set_size import TESTS as DESIGN_TESTS
from . import figures, ranges
from . import options as opt
from .app import app, open_store
from .choices import choice, flag
from .output import OutputFile, emit, format_option, output_format, say
from .ranges import number


def _report(table: Table, document: object = None) -> Output:
    return Output([table], legend=list(table.legend), notes=list(table.notes), document=document)


@app.command(
    "repro",
    help=(
        "How well a reproduction (--rep-baseline/--rep-advanced) reproduces an original baseline/advanced pair "
        "(Breuer et al., SIGIR 2020, as repro_eval 0.5.0): KTU and RBO of the rankings (cut at --cut, per topic, "
        "averaged), RMSE and nRMSE of per-topic scores, Effect Ratio and ΔRI, and paired t-tests. With --rep-qrels "
        "(another collection: replicability) only ER, ΔRI and unpaired t-tests. --format json has repro_eval's "
        "shape. Stored as an analysis (meta_runs kind 'repro')."
    ),
)
@opt.shared(ev=opt.EVALUATION, store=opt.STORE)
def repro_cmd(
    qrels: str | None = opt.QrelsDefault,
    baseline: str = typer.Option(..., "--baseline", "-b", help="The original baseline run."),
    advanced: str = typer.Option(..., "--advanced", "-a", help="The original advanced run."),
    rep_baseline: str = typer.Option(..., "--rep-baseline", help="The reproduced (or replicated) baseline run."),
    rep_advanced: str = typer.Option(..., "--rep-advanced", help="The reproduced (or replicated) advanced run."),
    rep_qrels: str | None = typer.Option(
        None, "--rep-qrels", help="Qrels of another collection the reproduction ran on (replicability)."
    ),
    metric: list[str] = opt.Metrics,
    rbo_p: float = number(
        0.8, "--rbo-p", range=ranges.PROBABILITY, help="RBO's persistence p (repro_eval's own default is 0.95)."
    ),
    cut: int = number(
        1000,
        "--cut",
        range=ranges.CUT,
        help="Rank cut of KTU and RBO (repro_eval: 1000); the work stops at the longest ranking.",
    ),
    order: str = choice(
        "trec_eval",
        "--order",
        choices=orderings.ORDERS,
        help="Document order of the rankings for KTU and RBO: trec_eval (score desc, docno desc) or repro_eval "
        "(file order, consecutive equal scores by docno desc: its break_ties).",
    ),
    missing: str = choice(
        "error",
        "--missing",
        choices=("error", "zero", "drop-topics"),
        help="A topic one side lacks: error, drop-topics (compare the topics both sides have) or zero "
        "(scores 0, KTU and RBO 0).",
    ),
    per_topic: bool = flag("--per-topic", "-p", help="Print KTU and RBO of every topic instead."),
    fmt: str | None = format_option(extra_help=" json: repro_eval's shape."),
    output: str | None = OutputFile,
    plot: str | None = figures.plot_option("ER against ΔRI (one point per metric)"),
    plot_data: str | None = figures.PlotData,
    no_save: bool = flag("--no-save", help="Do not store the analysis."),
    *,
    ev: EvalOptions,
    store: opt.StoreOptions,
) -> None:
    chosen = output_format(fmt, output)
    figures.check(plot, plot_data)
    if per_topic and rep_qrels:
        raise typer.BadParameter("replicability compares no rankings (no per-topic KTU/RBO)", param_hint="--per-topic")
    with open_store(store) as s:
        r = s.repro(
            qrels or default_qrels(s, metric),
            baseline,
            advanced,
            rep_baseline,
            rep_advanced,
            metric,
            rep_qrels=rep_qrels,
            rbo_p=rbo_p,
            cut=cut,
            order=order,
            missing=missing,
            save=not no_save,
            options=ev,
        )
    if per_topic:
        emit(_report(repro_render.per_topic_table(r)), chosen, output)
    else:
        emit(_report(repro_render.table(r), r.to_dict()), chosen, output)
    figures.write(plot, plot_data, "er_dri", r)
    if r.analysis_id is not None:
        say(f"stored as analysis {r.analysis_id} (meta_runs kind 'repro'; rows in meta_repro, meta_repro_topics)")


@app.command(
    "design",
    help=(
        "Topic set size design (Sakai, IRJ 2016): topics needed for a paired t-test (--test t), one-way ANOVA "
        "over --systems m systems (anova) or a cap on the CI width (ci) at --alpha, --beta and --min-diff, with "
        "the within-system variance V_E estimated from the stored runs x topics scores; also the minimum "
        "detectable difference with the set's current topics. Stored as an analysis (meta_runs kind 'design')."
    ),
)
@opt.shared(ev=opt.EVALUATION, store=opt.STORE)
def design_cmd(
    qrels: str | None = opt.QrelsDefault,
    metric: str = typer.Option(..., "--metric", "-m", help="Metric whose variance is estimated, e.g. AP, nDCG@10."),
    run: list[str] | None = opt.Runs,
    kind: list[str] | None = opt.Kinds,
    test: str = choice(
        "t",
        "--test",
        "-t",
        choices=DESIGN_TESTS,
        help="t (paired t-test), anova (one-way ANOVA), ci (cap on the CI width).",
    ),
    alpha: float = opt.Alpha,
    beta: float = number(
        0.2, "--beta", range=ranges.BETA, help="Type II error rate (power 1 - beta); unused by --test ci."
    ),
    min_diff: float = number(
        ...,
        "--min-diff",
        range=ranges.MIN_DIFF,
        help="Minimum detectable difference (t), range between best and worst system (anova), or the cap on the "
        "width of the 1 - alpha CI of a mean difference (ci).",
    ),
    systems: int | None = number(
        None, "--systems", range=ranges.SYSTEMS, help="m, systems compared by ANOVA (default: the runs)."
    ),
    missing: str = opt.Missing,
    fmt: str | None = format_option(),
    output: str | None = OutputFile,
    no_save: bool = flag("--no-save", help="Do not store the analysis."),
    *,
    ev: EvalOptions,
    store: opt.StoreOptions,
) -> None:
    chosen = output_format(fmt, output)
    if test != "ci" and 1 - beta <= alpha:
        raise typer.BadParameter(f"the power 1 - beta must exceed --alpha {alpha}", param_hint="--beta")
    if systems is not None and test != "anova":
        raise typer.BadParameter("only --test anova takes a number of systems", param_hint="--systems")
    opt.check_kinds(run, kind)
    with open_store(store) as s:
        d = s.design(
            qrels or default_qrels(s, [metric]),
            metric,
            test=test,
            alpha=alpha,
            beta=beta,
            min_diff=min_diff,
            systems=systems,
            runs=run or None,
            missing=missing,
            save=not no_save,
            kinds=kind or None,
            options=ev,
        )
    emit(_report(repro_render.design_table(d), d.to_dict()), chosen, output)
    if d.analysis_id is not None:
        say(f"stored as analysis {d.analysis_id} (meta_runs kind 'design'; a row in meta_design)")
