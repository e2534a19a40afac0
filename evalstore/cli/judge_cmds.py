"""`evalstore agree`: two qrels sets (two judges) compared on their labels and their leaderboards
(:func:`evalstore.judges.agree`, docs/judges.md)."""

from __future__ import annotations

import typer

from ..judges import render
from ..judges.ranking import TESTS
from ..metrics.options import EvalOptions
from . import options as opt
from . import ranges
from .app import app, open_store
from .choices import choice, flag
from .output import OutputFile, emit, format_option, output_format
from .ranges import number


@app.command(
    "agree",
    help=(
        "Compare two qrels sets (two judges, e.g. assessors and an LLM): on the (topic, doc) pairs judged in both, "
        "the confusion matrix of grades, Cohen's kappa (plain, linear, quadratic; and on relevance at --rel) and "
        "Krippendorff's alpha (nominal, ordinal), overall and per topic; for each metric, the two leaderboards of "
        "the stored runs (evaluated if needed): Kendall's tau-b, Spearman's rho, tau_AP, the largest rank change "
        "and the runs whose significance against the best run flips. Two sets of nugget assignments (support "
        "labels) compare the (run, topic, nugget) ((run, topic, sentence, citation)) items both judge, graded "
        "0 not / 1 partial / 2 support. Stored as an analysis (meta_runs kind 'agree')."
    ),
)
@opt.shared(ev=opt.EVALUATION, store=opt.STORE)
def agree_cmd(
    qrels: str = typer.Option(..., "--qrels", "-q", help="The reference qrels set (e.g. the assessors')."),
    candidate: str = typer.Option(..., "--with", "-w", help="The candidate qrels set compared with it (the judge)."),
    metric: list[str] | None = typer.Option(
        None,
        "--metric",
        "-m",
        help="Metric of the ranking agreement, e.g. nDCG@10, AP(rel=2); repeatable (default when the store has runs: "
        "nDCG@10; for nugget assignments strict_vital, strict_all, vital, all; for support labels "
        "support_precision, support_recall).",
    ),
    rel: int = number(1, "--rel", range=ranges.GRADE, help="Lowest relevant grade, for kappa on binary relevance."),
    run: list[str] | None = opt.Runs,
    test: str = choice(
        "t",
        "--test",
        "-t",
        choices=TESTS,
        help="Paired test of each run against the reference's best run, under each set (randomisation: --trials, "
        "--seed).",
    ),
    alpha: float = opt.Alpha,
    trials: int = number(10000, "--trials", "-B", range=ranges.TRIALS, help="Resamples B of the randomisation test."),
    seed: int = opt.Seed,
    missing: str = opt.Missing,
    per_topic: bool = flag("--per-topic", "-p", help="Print the label statistics of every topic instead."),
    per_run: bool = flag("--per-run", help="Print every run's means, ranks and p-values under both sets instead."),
    fmt: str | None = format_option(extra_help=" json: the whole comparison as one document."),
    output: str | None = OutputFile,
    no_save: bool = flag("--no-save", help="Do not store the analysis."),
    *,
    ev: EvalOptions,
    store: opt.StoreOptions,
) -> None:
    chosen = output_format(fmt, output)
    if per_topic and per_run:
        raise typer.BadParameter("choose one of --per-topic and --per-run", param_hint="--per-run")
    with open_store(store) as s:
        a = s.agree(
            qrels,
            candidate,
            metric or None,
            rel=rel,
            runs=run or None,
            test=test,
            alpha=alpha,
            trials=trials,
            seed=seed,
            missing=missing,
            save=not no_save,
            options=ev,
        )
    emit(render.report(a, per_topic=per_topic, per_run=per_run), chosen, output)
