"""`evalstore compare`: runs against a baseline, as a table for a paper (see :mod:`evalstore.compare`)."""

from __future__ import annotations

import io
from enum import Enum

import typer

from .. import comparison as cmp_lib
from ..comparison import render
from ..meta import plots
from ..meta.significance import ADJUSTMENTS
from ..report.writers import write
from . import options as opt
from .app import app, open_store
from .output import check_writable, emit, output_format, say

Test = Enum("Test", {t.replace("-", "_"): t for t in cmp_lib.TESTS}, type=str)  # type: ignore[misc]
Adjust = Enum("Adjust", {a: a for a in ADJUSTMENTS}, type=str)  # type: ignore[misc]
DATA_FORMATS = ("csv", "tsv", "json", "parquet")
Format = Enum("Format", {f: f for f in (*render.FORMATS, "parquet")}, type=str)  # type: ignore[misc]


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
    qrels: str = opt.Qrels,
    baseline: str = typer.Option(..., "--baseline", "-b", help="The run the others are compared with."),
    run: list[str] | None = typer.Option(
        None, "--run", "-r", help="Run to compare with the baseline; repeat (default: every other run)."
    ),
    metric: list[str] = opt.Metrics,
    test: Test = typer.Option(
        "t",
        "--test",
        "-t",
        help="Paired t-test, Wilcoxon signed-rank, randomisation, bootstrap, or the randomised Tukey HSD "
        "over all runs (Carterette 2012; recommended by Sakai for many systems).",
    ),
    adjust: Adjust = typer.Option(
        "none",
        "--adjust",
        help="Adjust the p-values of each metric's comparisons: Holm or Bonferroni (family-wise error), "
        "Benjamini-Hochberg (bh) or Benjamini-Yekutieli (by) (false discovery rate).",
    ),
    alpha: float = opt.Alpha,
    trials: int = typer.Option(10000, "--trials", "-B", help="Resamples B of the Monte-Carlo tests."),
    seed: int = opt.Seed,
    all_pairs: bool = typer.Option(False, "--all-pairs", help="Test every pair of runs (letters, as ranx)."),
    effects: bool = typer.Option(
        False, "--effects", help="Also effect sizes: mean difference with 95% CIs (t, bootstrap), d_z, Sakai's SMD."
    ),
    missing: str = typer.Option(
        "error", "--missing", help="Runs missing topics: error, zero (trec_eval -c), drop-topics or drop-runs."
    ),
    fmt: Format | None = typer.Option(
        None, "--format", "-f", help="Output format (default: table, or from the extension of -o)."
    ),
    output: str | None = typer.Option(None, "--output", "-o", help="Write the table to this file."),
    plot: str | None = typer.Option(None, "--plot", help="Draw the per-topic differences to this PNG file."),
    no_save: bool = typer.Option(False, "--no-save", help="Do not store the analysis."),
    *,
    ev: opt.EvaluationOptions,
    store: opt.StoreOptions,
) -> None:
    chosen = output_format(fmt.value if fmt else None, output)
    check_writable(plot, "--plot", ".png")
    with open_store(store.db) as s:
        result = cmp_lib.compare(
            s, qrels, baseline, run or None, metric, test=test.value, adjust=adjust.value, alpha=alpha,
            trials=trials, seed=seed, all_pairs=all_pairs, effects=effects, save=not no_save, missing=missing,
            **ev.kwargs(),
        )  # fmt: skip
    legend = render.legend_lines(result)  # [test line, marker line, stored as ..., notes ...]
    if output and chosen in DATA_FORMATS:
        emit(render.long_table(result), chosen, output)
    elif output:
        text = _render(result, chosen)
        if chosen == "table":
            text += "\n" + "\n".join(legend[:2]) + "\n"  # a text file keeps its legend
        with open(output, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        say(f"wrote {output}")
    else:
        typer.echo(_render(result, chosen), nl=False)
    # what the output itself does not carry goes to stderr, whatever the format and destination: the
    # legend of a terminal table, the test line of a data table, always the stored-as line and the
    # notes (such as a B too small for the adjusted threshold)
    if chosen == "table" and not output:
        shown = legend
    elif chosen in DATA_FORMATS:
        shown = legend[:1] + legend[2:]
    else:
        shown = legend[2:]
    for line in shown:
        say(line)
    if plot:
        plots.plot_compare(result, plot)
        say(f"wrote {plot}")


def _render(result: cmp_lib.Comparison, fmt: str) -> str:
    if fmt == "markdown":
        return render.markdown(result)
    if fmt == "latex":
        return render.latex(result)
    buf = io.StringIO()
    if fmt == "table":
        write(render.paper_table(result), "table", buf)
        if result.effects or result.all_pairs:
            buf.write("\n")
            pt = render.pairs_table(result)
            pt.rows = [[render.format_p(v) if c in ("p_value", "p_adjusted") else v for c, v in zip(pt.columns, r)]
                       for r in pt.rows]  # fmt: skip
            write(pt, "table", buf)
    else:
        write(render.long_table(result), fmt, buf)
    return buf.getvalue()
