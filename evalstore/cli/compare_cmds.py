"""`evalstore compare`: runs against a baseline, as a table for a paper (see :mod:`evalstore.comparison`)."""

from __future__ import annotations

import typer

from .. import comparison as cmp_lib
from ..meta import plots
from ..meta.significance import ADJUSTMENTS, TEST_SPELLINGS
from . import options as opt
from . import ranges
from .app import app, only_qrels, open_store
from .choices import flag
from .output import OutputFile, check_writable, emit, format_option, output_format, say
from .ranges import number


@app.command(
    "compare",
    help=(
        "Compare runs with a baseline on one or more metrics: means with markers for significant "
        "differences (better / worse), p-values adjusted for multiple comparisons, effect sizes, "
        "and the table for a paper (Markdown, LaTeX). Stored as an analysis (meta_runs kind 'compare')."
    ),
)
@opt.shared(ev=opt.EVALUATION, store=opt.STORE)
def compare_cmd(
    qrels: str | None = opt.QrelsDefault,
    baseline: str = typer.Option(..., "--baseline", "-b", help="The run the others are compared with."),
    run: list[str] | None = typer.Option(
        None, "--run", "-r", help="Run to compare with the baseline; repeat (default: every other run)."
    ),
    metric: list[str] = opt.Metrics,
    test: str = opt.choice(
        "t",
        "--test",
        "-t",
        choices=cmp_lib.TESTS,
        aliases=TEST_SPELLINGS,
        help="Paired t-test, Wilcoxon signed-rank, randomisation (also spelled randomization), bootstrap, or the "
        "randomised Tukey HSD over all runs (Carterette 2012; recommended by Sakai for many systems).",
    ),
    adjust: str = opt.choice(
        "none",
        "--adjust",
        choices=ADJUSTMENTS,
        help="Adjust the p-values of each metric's comparisons: Holm or Bonferroni (family-wise error), "
        "Benjamini-Hochberg (bh) or Benjamini-Yekutieli (by) (false discovery rate).",
    ),
    alpha: float = opt.Alpha,
    trials: int = number(10000, "--trials", "-B", range=ranges.TRIALS, help="Resamples B of the Monte-Carlo tests."),
    seed: int = opt.Seed,
    all_pairs: bool = flag("--all-pairs", help="Test every pair of runs (letters, as ranx)."),
    effects: bool = flag(
        "--effects", help="Also effect sizes: mean difference with 95% CIs (t, bootstrap), d_z, Sakai's SMD."
    ),
    per_topic: bool = flag(
        "--per-topic",
        help="Print the per-topic scores instead: topic, baseline, run and difference, the worst losses first.",
    ),
    missing: str = opt.Missing,
    fmt: str | None = format_option(),
    output: str | None = OutputFile,
    plot: str | None = typer.Option(None, "--plot", help="Draw the per-topic differences to this PNG file."),
    no_save: bool = flag("--no-save", help="Do not store the analysis."),
    *,
    ev: opt.EvaluationOptions,
    store: opt.StoreOptions,
) -> None:
    """Compare runs with a baseline; stored as an analysis unless --no-save."""
    chosen = output_format(fmt, output)
    check_writable(plot, "--plot", ".png")
    with open_store(store.db) as s:
        result = cmp_lib.compare(
            s, qrels or only_qrels(s), baseline, run or None, metric, test=test, adjust=adjust, alpha=alpha,
            trials=trials, seed=seed, all_pairs=all_pairs, effects=effects, save=not no_save, missing=missing,
            **ev.kwargs(),
        )  # fmt: skip
    emit(result.report(per_topic=per_topic), chosen, output)
    if plot:
        plots.plot_compare(result, plot)
        say(f"wrote {plot}")
