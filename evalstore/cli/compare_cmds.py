"""`evalstore compare`: runs against a baseline, as a table for a paper (see :mod:`evalstore.comparison`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from .. import comparison as cmp_lib
from ..evaluation.default_qrels import default_qrels
from ..intervals.ranks import RANK_METHODS
from ..metrics.options import EvalOptions
from ..stats.significance import ADJUSTMENTS, TEST_SPELLINGS
from . import figures, ranges
from . import options as opt
from .app import app, open_store
from .choices import flag
from .output import OutputFile, emit, format_option, output_format
from .ranges import number

if TYPE_CHECKING:
    from ..output.table import Table


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
        "--effects",
        help="Also effect sizes: in the table, Δ (run minus baseline) with its 95% CI beside each mean (the "
        "bootstrap interval with --test bootstrap, else the paired t interval); --format csv|json has every one: "
        "both intervals, d_z, Sakai's SMD.",
    ),
    dz: bool = flag("--dz", help="Also Cohen's d_z beside Δ in the table (implies --effects)."),
    per_topic: bool = flag(
        "--per-topic",
        "-p",
        help="Print the per-topic scores instead: topic, baseline, run and difference, the worst losses first.",
    ),
    contrast: bool = flag(
        "--contrast",
        help="Instead: where the baseline and one run (-r) differ, topic by topic: RBO of the ranked lists (top 100, "
        "p = 0.9) and the relevant documents that moved most, the most different topics first (as diffir).",
    ),
    missing: str = opt.Missing,
    fmt: str | None = format_option(),
    output: str | None = OutputFile,
    plot: str | None = figures.plot_option("the per-topic differences against the baseline"),
    plot_data: str | None = figures.PlotData,
    no_save: bool = flag("--no-save", help="Do not store the analysis."),
    rank_ci: str | None = opt.choice(
        None,
        "--rank-ci",
        choices=RANK_METHODS,
        help="Also each run's rank among the runs compared with its 1 - alpha interval: bootstrap (the paired "
        "bootstrap over the topics, --trials, --seed) or t (paired t intervals, Bonferroni over each run's "
        "comparisons).",
    ),
    *,
    ev: EvalOptions,
    store: opt.StoreOptions,
) -> None:
    """Compare runs with a baseline; stored as an analysis unless --no-save."""
    chosen = output_format(fmt, output)
    figures.check(plot, plot_data)
    if contrast:
        emit(_contrast(store, qrels, baseline, run, metric), chosen, output)
        return
    with open_store(store) as s:
        result = s.compare(
            qrels or default_qrels(s, metric), baseline, run or None, metric, test=test, adjust=adjust, alpha=alpha,
            trials=trials, seed=seed, all_pairs=all_pairs, effects=effects or dz, save=not no_save, missing=missing,
            rank_ci=rank_ci, options=ev,
        )  # fmt: skip
    emit(result.report(per_topic=per_topic, dz=dz), chosen, output)
    figures.write(plot, plot_data, "compare", result)


def _contrast(
    store: opt.StoreOptions, qrels: str | None, baseline: str, run: list[str] | None, metric: list[str]
) -> Table:
    """Where the baseline and one run differ (``compare --contrast``)."""
    if not run or len(run) != 1:
        raise typer.BadParameter("--contrast compares the baseline with one run: give one -r RUN", param_hint="--run")
    with open_store(store) as s:
        found = cmp_lib.contrast(s, qrels or default_qrels(s, metric[:1]), baseline, run[0], metric=metric[0])
    return found.table()
