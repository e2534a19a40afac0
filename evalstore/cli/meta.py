"""Meta-evaluation commands: `evalstore meta kendall|swap|discpower|tests|robustness`.

Each prints a paper-style table (rich on a terminal, plain text in a pipe, CSV with
``--format csv``, or CSV written to ``-o FILE``), can draw a PNG (``--plot FILE.png``) and stores
its results in the ``meta_*`` relations (``--no-save`` to skip). The library functions are in
:mod:`evalstore.meta`; docs/meta.md has the definitions."""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from typing import Any

import typer

from . import DbOption, app, open_store
from .output import render

meta_app = typer.Typer(
    help="Meta-evaluation of metrics (Sakai 2007; Bompada et al. 2007): rank correlation, swap method, bootstrap "
    "sensitivity, paired tests, robustness to incomplete judgments. Results are stored in meta_* relations.",
    no_args_is_help=True,
)
app.add_typer(meta_app, name="meta")

QrelsOpt = typer.Option(..., "--qrels", "-q", help="Qrels set (or subsample); repeat for several columns.")
MetricOpt = typer.Option(..., "--metric", "-m", help="Metric, e.g. AP(rel=2), Q-measure(gains=1:2:3); repeatable.")
RunOpt = typer.Option(None, "--run", "-r", help="Run name; repeat for several (default: all runs).")
TopOpt = typer.Option(
    None, "--top", help="Keep the N best runs by --top-by (default: the first metric) on the first qrels set."
)
TopByOpt = typer.Option(None, "--top-by", help="Metric that selects the --top runs, e.g. AP.")
MissingOpt = typer.Option(
    "error", "--missing", help="Runs missing topics: error, zero (trec_eval -c), drop-topics or drop-runs."
)
ConventionOpt = typer.Option("trec_eval", "--convention", help="Evaluation convention: trec_eval or ntcireval.")
CompleteOpt = typer.Option(False, "--complete", "-c", help="Evaluate with trec_eval -c (unscored topics score 0).")
DepthOpt = typer.Option(None, "--depth", "-M", help="Evaluate only the top N documents per topic.")
TrialsOpt = typer.Option(1000, "--trials", "-B", help="Number of resamples B.")
SeedOpt = typer.Option(0, "--seed", help="Random seed (the same seed reproduces the results exactly).")
AlphaOpt = typer.Option(0.05, "--alpha", help="Significance level.")
FmtOpt = typer.Option("table", "--format", "-f", help="table, csv, tsv or json.")
OutOpt = typer.Option(None, "--output", "-o", help="Write the table as CSV to this file.")
PlotOpt = typer.Option(None, "--plot", help="Also draw a PNG figure to this file.")
NoSaveOpt = typer.Option(False, "--no-save", help="Do not store the results in the meta_* relations.")


def _common(runs, top, top_by, missing, convention, complete, depth) -> dict[str, Any]:
    return dict(
        runs=runs or None,
        top=top,
        top_by=top_by,
        missing=missing,
        convention=convention,
        complete=complete,
        depth=depth,
    )


def _emit(
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    fmt: str,
    output: str | None,
    title: str,
    digits: int | None = 4,
) -> None:
    if output:
        with open(output, "w", newline="", encoding="utf-8") as fh:
            render(columns, rows, "csv", out=fh)
        typer.echo(f"wrote {output}", err=True)
        return
    render(columns, rows, fmt, title=title, digits=None if fmt != "table" else digits)
    sys.stdout.flush()  # before notes on stderr, so that a shared log keeps the order


def _done(an, plot: str | None, plotter) -> None:
    if plot:
        plotter(an, plot)
        typer.echo(f"wrote {plot}", err=True)
    if an.analysis_id is not None:
        typer.echo(
            f'saved as analysis {an.analysis_id} (meta_runs; e.g. evalstore sql "SELECT * FROM '
            f'meta_runs WHERE analysis_id = {an.analysis_id}")',
            err=True,
        )


def _pct(x: float | None, digits: int = 1) -> str:
    return "" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.{digits}f}%"


def _share(x: float | None) -> str:
    """Percent as 000 Table 3 prints it: 43%, 5.6%, and two significant figures below 1 %."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    p = 100 * x
    if p == 0 or p >= 10:
        return f"{p:.0f}%"
    return f"{p:.1f}%" if p >= 1 else f"{p:.2g}%"


def _fix(x: float | None, digits: int = 4) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    s = f"{x:.{digits}f}"
    return s[1:] if s.startswith("0.") else ("-" + s[2:] if s.startswith("-0.") else s)


def _letters(k: int) -> list[str]:
    out = []
    for i in range(k):
        s, n = "", i
        while True:
            s = chr(ord("a") + n % 26) + s
            n = n // 26 - 1
            if n < 0:
                break
        out.append(f"({s})")
    return out


# --------------------------------------------------------------------------- kendall
@meta_app.command(
    "kendall",
    help=(
        "Kendall's tau (000 Eq. 8, tau-b with ties; Z test of Eq. 9) and Spearman's rho between the "
        "system rankings of every two columns (metrics x qrels sets), as 000 Table 2 / 002 Table 2."
    ),
)
def kendall_cmd(
    qrels: list[str] = QrelsOpt,
    metric: list[str] = MetricOpt,
    run: list[str] | None = RunOpt,
    top: int | None = TopOpt,
    top_by: str | None = TopByOpt,
    stat: str = typer.Option("tau", "--stat", help="Cell value: tau, tau_a, tau_b, spearman, p_value or z."),
    long: bool = typer.Option(False, "--long", help="One row per column pair with every statistic."),
    missing: str = MissingOpt,
    convention: str = ConventionOpt,
    complete: bool = CompleteOpt,
    depth: int | None = DepthOpt,
    fmt: str = FmtOpt,
    output: str | None = OutOpt,
    plot: str | None = PlotOpt,
    no_save: bool = NoSaveOpt,
    db: str | None = DbOption,
):
    from ..meta import kendall
    from ..meta.plots import plot_kendall

    stats = ("tau", "tau_a", "tau_b", "spearman", "p_value", "z")
    if stat not in stats:
        raise typer.BadParameter(f"--stat must be one of {', '.join(stats)}")
    with open_store(db) as store:
        an = kendall(
            store, qrels, metric, save=not no_save, **_common(run, top, top_by, missing, convention, complete, depth)
        )
    labels = _labels(an)
    rows = an.rows("meta_correlations")
    n_runs = len(an.inputs["runs"])
    if long:
        cols = [
            "column_a",
            "column_b",
            "n_runs",
            "tau",
            "tau_a",
            "tau_b",
            "concordant",
            "discordant",
            "ties",
            "z",
            "p_value",
            "spearman",
        ]
        out = [
            (
                labels[r["col_a"]],
                labels[r["col_b"]],
                r["n_runs"],
                r["tau"],
                r["tau_a"],
                r["tau_b"],
                r["concordant"],
                r["discordant"],
                r["ties_a"] + r["ties_b"] + r["ties_both"],
                r["z"],
                r["p_value"],
                r["spearman"],
            )
            for r in rows
        ]
        _emit(cols, out, fmt, output, f"Rank correlations ({n_runs} runs)")
    else:
        k = len(labels)
        cell = {(r["col_a"], r["col_b"]): r[stat] for r in rows}
        table_mode = fmt == "table" and not output
        letters = _letters(k)
        head = ["metric"] + (letters[1:] if table_mode else labels[1:])
        out = []
        for i in range(k - 1):
            line: list[Any] = [f"{letters[i]} {labels[i]}" if table_mode else labels[i]]
            for j in range(1, k):
                v = cell.get((i, j))
                if table_mode:
                    line.append("-" if j <= i else (_fix(v, 4) if stat != "z" else ("" if v is None else f"{v:.2f}")))
                else:
                    line.append(v if j > i else None)
            out.append(line)
        note = "tau-b where a ranking has ties" if stat == "tau" else stat
        _emit(
            head,
            out,
            fmt,
            output,
            f"Kendall's rank correlation ({note}), {n_runs} runs"
            if stat.startswith("tau")
            else f"{stat} between system rankings, {n_runs} runs",
        )
        if table_mode:
            crit = _tau_threshold(n_runs)
            typer.echo(
                f"{letters[-1]} = {labels[-1]}; with {n_runs} runs |tau| > {crit:.3f} is significant at "
                f"0.01 (000 Eq. 9, two-sided)",
                err=True,
            )
    _done(an, plot, lambda a, p: plot_kendall(a, p, stat if stat.startswith("tau") or stat == "spearman" else "tau"))


def _tau_threshold(n: int, alpha: float = 0.01) -> float:
    from statistics import NormalDist

    z = NormalDist().inv_cdf(1 - alpha / 2)
    return z * math.sqrt((4 * n + 10) / (9 * n * (n - 1))) if n > 1 else float("nan")


def _labels(an) -> list[str]:
    qrels = [c["qrels"] for c in an.inputs["columns"]]
    labels = [c["label"] for c in an.inputs["columns"]]
    if len(set(qrels)) > 1:
        return [f"{lab} [{q}]" for lab, q in zip(labels, qrels)]
    return labels


# --------------------------------------------------------------------------- swap
@meta_app.command(
    "swap",
    help=(
        "Swap method with bootstrap topic sets (000 Sec. 4.2, Fig. 4): 000 Table 3's columns, or the swap"
        " rate per difference bin (--bins)."
    ),
)
def swap_cmd(
    qrels: list[str] = QrelsOpt,
    metric: list[str] = MetricOpt,
    run: list[str] | None = RunOpt,
    top: int | None = TopOpt,
    top_by: str | None = TopByOpt,
    trials: int = TrialsOpt,
    seed: int = SeedOpt,
    max_rate: float = typer.Option(0.05, "--max-rate", help="Swap rate to guarantee (5 %)."),
    bins: bool = typer.Option(False, "--bins", help="Print the swap rate of every difference bin instead."),
    missing: str = MissingOpt,
    convention: str = ConventionOpt,
    complete: bool = CompleteOpt,
    depth: int | None = DepthOpt,
    fmt: str = FmtOpt,
    output: str | None = OutOpt,
    plot: str | None = PlotOpt,
    no_save: bool = NoSaveOpt,
    db: str | None = DbOption,
):
    from ..meta import swap
    from ..meta.plots import plot_swap

    with open_store(db) as store:
        an = swap(
            store,
            qrels,
            metric,
            trials=trials,
            seed=seed,
            max_rate=max_rate,
            save=not no_save,
            **_common(run, top, top_by, missing, convention, complete, depth),
        )
    labels = _labels(an)
    table_mode = fmt == "table" and not output
    if bins:
        per = {}
        for r in an.rows("meta_swap_bins"):
            per.setdefault((r["qrels"], r["metric"]), []).append(r)
        keys = list(per)
        head = ["bin"] + [f"{lab} rate" for lab in labels] + [f"{lab} n" for lab in labels]
        out = []
        for b in range(len(per[keys[0]])):
            first = per[keys[0]][b]
            name = f"[{first['lo']:.2f}, {first['hi']:.2f})" if math.isfinite(first["hi"]) else f">= {first['lo']:.2f}"
            rates = [per[k][b]["swap_rate"] for k in keys]
            ns = [per[k][b]["comparisons"] for k in keys]
            out.append([name] + ([_pct(x) for x in rates] if table_mode else rates) + ns)
        _emit(head, out, fmt, output, f"Swap rate per difference bin (B = {trials}, seed {seed})")
    else:
        rows = list(zip(labels, an.rows("meta_swap")))
        rows.sort(key=lambda lr: -(lr[1]["share"] or -1))
        if table_mode:
            head = ["metric", "abs. diff.", "max.", "(ii)/(iii)", "%pairs satisfying (ii)"]
            out = [
                (
                    lab,
                    "n/a" if r["abs_diff"] is None else f"{r['abs_diff']:.2f}",
                    _fix(r["max_diff"]),
                    _pct(r["rel_diff"], 0),
                    _share(r["share"]),
                )
                for lab, r in rows
            ]
        else:
            head = [
                "metric",
                "qrels",
                "canonical",
                "n_runs",
                "n_topics",
                "n_pairs",
                "trials",
                "abs_diff",
                "abs_diff_first",
                "max_diff",
                "rel_diff",
                "share",
            ]
            out = [
                (
                    lab,
                    r["qrels"],
                    r["metric"],
                    r["n_runs"],
                    r["n_topics"],
                    r["n_pairs"],
                    r["trials"],
                    r["abs_diff"],
                    r["abs_diff_first"],
                    r["max_diff"],
                    r["rel_diff"],
                    r["share"],
                )
                for lab, r in rows
            ]
        first = an.rows("meta_swap")[0]
        _emit(
            head,
            out,
            fmt,
            output,
            f"Swap method (swap rate <= {100 * max_rate:g}%; {first['n_runs']} runs, "
            f"{first['n_topics']} topics, B = {trials}, seed {seed})",
        )
    _done(an, plot, lambda a, p: plot_swap(a, p))


# --------------------------------------------------------------------------- discpower
@meta_app.command(
    "discpower",
    help=(
        "Bootstrap sensitivity (000 Sec. 4.3, Figs. 5-7): paired bootstrap test for every run pair, "
        "discriminative power (pairs with ASL < alpha) and the estimated difference required, as 000 "
        "Table 4 / 002 Table 3."
    ),
)
def discpower_cmd(
    qrels: list[str] = QrelsOpt,
    metric: list[str] = MetricOpt,
    run: list[str] | None = RunOpt,
    top: int | None = TopOpt,
    top_by: str | None = TopByOpt,
    trials: int = TrialsOpt,
    seed: int = SeedOpt,
    alpha: float = AlphaOpt,
    pairs: bool = typer.Option(False, "--pairs", help="Print the ASL of every run pair instead."),
    missing: str = MissingOpt,
    convention: str = ConventionOpt,
    complete: bool = CompleteOpt,
    depth: int | None = DepthOpt,
    fmt: str = FmtOpt,
    output: str | None = OutOpt,
    plot: str | None = PlotOpt,
    no_save: bool = NoSaveOpt,
    db: str | None = DbOption,
):
    from ..meta import discpower
    from ..meta.plots import plot_discpower

    with open_store(db) as store:
        an = discpower(
            store,
            qrels,
            metric,
            trials=trials,
            seed=seed,
            alpha=alpha,
            save=not no_save,
            **_common(run, top, top_by, missing, convention, complete, depth),
        )
    labels = _labels(an)
    table_mode = fmt == "table" and not output
    if pairs:
        lab = {(c["qrels"], c["metric"]): labels[i] for i, c in enumerate(an.inputs["columns"])}
        head = ["metric", "run_a", "run_b", "mean_a", "mean_b", "diff", "t", "ASL", "significant"]
        out = [
            (
                lab[(r["qrels"], r["metric"])],
                r["run_a"],
                r["run_b"],
                r["mean_a"],
                r["mean_b"],
                r["diff"],
                r["statistic"],
                r["p_value"],
                r["significant"],
            )
            for r in an.rows("meta_pair_tests")
        ]
        _emit(head, out, fmt, output, f"Paired bootstrap tests (B = {trials}, seed {seed})")
    else:
        rows = sorted(zip(labels, an.rows("meta_discpower")), key=lambda lr: -lr[1]["n_significant"])
        if table_mode:
            head = ["metric", f"sensitivity (ASL < {alpha:g})", "estimated diff."]
            out = [
                (
                    lab,
                    f"{r['n_significant']}/{r['n_pairs']} = {_pct(r['disc_power'])}",
                    "" if r["est_diff"] is None else f"{r['est_diff']:#.2g}",
                )
                for lab, r in rows
            ]
        else:
            head = [
                "metric",
                "qrels",
                "canonical",
                "n_runs",
                "n_topics",
                "n_pairs",
                "n_significant",
                "disc_power",
                "est_diff",
                "alpha",
                "trials",
            ]
            out = [
                (
                    lab,
                    r["qrels"],
                    r["metric"],
                    r["n_runs"],
                    r["n_topics"],
                    r["n_pairs"],
                    r["n_significant"],
                    r["disc_power"],
                    r["est_diff"],
                    r["alpha"],
                    trials,
                )
                for lab, r in rows
            ]
        first = an.rows("meta_discpower")[0]
        _emit(
            head,
            out,
            fmt,
            output,
            f"Bootstrap sensitivity (alpha = {alpha:g}; {first['n_runs']} runs, "
            f"{first['n_topics']} topics, B = {trials}, seed {seed})",
        )
    _done(an, plot, plot_discpower)


# --------------------------------------------------------------------------- tests
@meta_app.command(
    "tests",
    help=(
        "Paired significance tests for every run pair (t-test, Wilcoxon signed-rank, randomisation, "
        "bootstrap) with optional Holm/Bonferroni adjustment; prints each test's discriminative power, or"
        " every pair's p-values with --pairs."
    ),
)
def tests_cmd(
    qrels: list[str] = QrelsOpt,
    metric: list[str] = MetricOpt,
    run: list[str] | None = RunOpt,
    top: int | None = TopOpt,
    top_by: str | None = TopByOpt,
    test: list[str] | None = typer.Option(
        None, "--test", "-t", help="t, wilcoxon, randomisation or bootstrap; repeatable (default: all four)."
    ),
    trials: int = typer.Option(1000, "--trials", "-B", help="Resamples for the bootstrap and randomisation tests."),
    seed: int = SeedOpt,
    alpha: float = AlphaOpt,
    adjust: str = typer.Option(
        "none", "--adjust", help="Adjust p-values over the run pairs: none, holm or bonferroni."
    ),
    pairs: bool = typer.Option(False, "--pairs", help="Print every run pair's p-values instead."),
    missing: str = MissingOpt,
    convention: str = ConventionOpt,
    complete: bool = CompleteOpt,
    depth: int | None = DepthOpt,
    fmt: str = FmtOpt,
    output: str | None = OutOpt,
    plot: str | None = PlotOpt,
    no_save: bool = NoSaveOpt,
    db: str | None = DbOption,
):
    from ..meta import tests as run_tests_fn
    from ..meta.plots import plot_tests
    from ..meta.significance import TESTS

    names = test or ["t", "wilcoxon", "randomisation", "bootstrap"]
    for t in names:
        if t not in TESTS:
            raise typer.BadParameter(f"--test must be one of {', '.join(TESTS)}, not {t!r}")
    with open_store(db) as store:
        an = run_tests_fn(
            store,
            qrels,
            metric,
            tests=names,
            trials=trials,
            seed=seed,
            alpha=alpha,
            adjust=adjust,
            save=not no_save,
            **_common(run, top, top_by, missing, convention, complete, depth),
        )
    labels = _labels(an)
    lab = {(c["qrels"], c["metric"]): labels[i] for i, c in enumerate(an.inputs["columns"])}
    table_mode = fmt == "table" and not output
    if pairs:
        wide: dict[tuple, dict[str, Any]] = {}
        for r in an.rows("meta_pair_tests"):
            key = (lab[(r["qrels"], r["metric"])], r["run_a"], r["run_b"])
            d = wide.setdefault(key, {"mean_a": r["mean_a"], "mean_b": r["mean_b"], "diff": r["diff"]})
            d[r["test"]] = r["p_adjusted"]
        head = ["metric", "run_a", "run_b", "mean_a", "mean_b", "diff"] + [f"p_{t}" for t in names]
        out = [(*k, v["mean_a"], v["mean_b"], v["diff"], *[v[t] for t in names]) for k, v in wide.items()]
        _emit(
            head,
            out,
            fmt,
            output,
            f"Paired tests ({'p adjusted: ' + adjust if adjust != 'none' else 'p'}; B = {trials}, seed {seed})",
        )
    else:
        rows = an.rows("meta_discpower")
        if table_mode:
            head = ["metric"] + [f"{t} (p < {alpha:g})" for t in names]
            per: dict[str, dict[str, str]] = {}
            for r in rows:
                per.setdefault(lab[(r["qrels"], r["metric"])], {})[r["test"]] = (
                    f"{r['n_significant']}/{r['n_pairs']} = {_pct(r['disc_power'])}"
                )
            out = [(k, *[v[t] for t in names]) for k, v in per.items()]
        else:
            head = [
                "metric",
                "qrels",
                "canonical",
                "test",
                "alpha",
                "adjust",
                "n_pairs",
                "n_significant",
                "disc_power",
                "est_diff",
            ]
            out = [
                (
                    lab[(r["qrels"], r["metric"])],
                    r["qrels"],
                    r["metric"],
                    r["test"],
                    r["alpha"],
                    r["adjust"],
                    r["n_pairs"],
                    r["n_significant"],
                    r["disc_power"],
                    r["est_diff"],
                )
                for r in rows
            ]
        _emit(
            head,
            out,
            fmt,
            output,
            f"Discriminative power per test (adjust = {adjust}; {rows[0]['n_runs']} runs, "
            f"{rows[0]['n_topics']} topics)",
        )
    _done(an, plot, plot_tests)


# --------------------------------------------------------------------------- robustness
@meta_app.command(
    "robustness",
    help=(
        "Robustness to incomplete judgments over subsamples of a qrels set: Kendall's tau with the full "
        "ranking and discriminative power per fraction (002 Figs. 2-3), 004's confusion matrix of test "
        "outcomes (accuracy, g-mean, false positives/negatives) and the knees (004 Tables 3, 5)."
    ),
)
def robustness_cmd(
    qrels: str = typer.Option(..., "--qrels", "-q", help="The full qrels set."),
    metric: list[str] = MetricOpt,
    run: list[str] | None = RunOpt,
    top: int | None = TopOpt,
    top_by: str | None = TopByOpt,
    subsamples: str = typer.Option(
        "all", "--subsamples", help="Which subsamples: all, names or fractions (comma-separated)."
    ),
    fractions: str | None = typer.Option(
        None,
        "--fractions",
        help="Create (if missing) and use "
        "subsamples at these fractions, e.g. 0.9,0.7,0.5,0.3,0.1, "
        "or a preset: sakai, bompada.",
    ),
    subsample_trials: int = typer.Option(
        1, "--subsample-trials", help="With --fractions: trials (independent shuffles) per fraction."
    ),
    subsample_seed: int = typer.Option(0, "--subsample-seed", help="With --fractions: the subsampling seed."),
    test: str = typer.Option(
        "bootstrap",
        "--test",
        "-t",
        help="Test for discriminative power and "
        "the confusion matrix: bootstrap (002), wilcoxon (004), t, randomisation.",
    ),
    trials: int = TrialsOpt,
    seed: int = SeedOpt,
    alpha: float = AlphaOpt,
    threshold: float = typer.Option(0.9, "--threshold", help="Knee threshold for tau and accuracy."),
    show: str = typer.Option(
        "all", "--show", help="Tables to print: all, tau, discpower, confusion, knee (comma-separated)."
    ),
    missing: str = MissingOpt,
    convention: str = ConventionOpt,
    complete: bool = CompleteOpt,
    depth: int | None = DepthOpt,
    fmt: str = FmtOpt,
    output: str | None = OutOpt,
    plot: str | None = PlotOpt,
    no_save: bool = NoSaveOpt,
    db: str | None = DbOption,
):
    from ..meta import robustness
    from ..meta.plots import plot_robustness

    shows = {s.strip() for s in show.split(",") if s.strip()}
    allowed = {"all", "tau", "discpower", "confusion", "knee"}
    if not shows <= allowed:
        raise typer.BadParameter(f"--show takes {', '.join(sorted(allowed))}")
    if "all" in shows:
        shows = allowed - {"all"}
    with open_store(db) as store:
        spec: Any = subsamples
        if fractions:
            from ..subsample import create_subsamples

            spec = create_subsamples(store, qrels, fractions, trials=subsample_trials, seed=subsample_seed)
        an = robustness(
            store,
            qrels,
            metric,
            subsamples=spec,
            test=test,
            trials=trials,
            seed=seed,
            alpha=alpha,
            threshold=threshold,
            save=not no_save,
            **_common(run, top, top_by, missing, convention, complete, depth),
        )
    curves = an.results["curves"]
    metrics = list(curves)
    table_mode = fmt == "table" and not output
    n_runs = len(an.inputs["runs"])
    if not table_mode:
        head = [
            "metric",
            "fraction",
            "n_trials",
            "tau_mean",
            "tau_min",
            "tau_max",
            "disc_power",
            "c11",
            "c12",
            "c21",
            "c22",
            "accuracy",
            "g_mean",
            "false_pos",
            "false_neg",
        ]
        out = [
            (
                m,
                c["fraction"],
                c["n_trials"],
                c["tau_mean"],
                c["tau_min"],
                c["tau_max"],
                c["disc_power"],
                c["c11"],
                c["c12"],
                c["c21"],
                c["c22"],
                c["accuracy"],
                c["g_mean"],
                c["false_pos"],
                c["false_neg"],
            )
            for m in metrics
            for c in curves[m]
        ]
        _emit(head, out, fmt, output, "robustness")
    else:
        fracs = [c["fraction"] for c in curves[metrics[0]]]
        fhead = [f"{100 * f:g}%" for f in fracs]
        ntr = max(c["n_trials"] for c in curves[metrics[0]])
        if "tau" in shows:
            out = [(m, *[_fix(c["tau_mean"], 3) for c in curves[m]]) for m in metrics]
            render(
                ["metric"] + fhead,
                out,
                "table",
                title=f"Kendall's tau with the full-qrels ranking ({n_runs} runs"
                f"{f', mean of {ntr} trials' if ntr > 1 else ''}) - 002 Fig. 2, 004 Fig. 1",
            )
        if "discpower" in shows:
            out = [(m, *[_pct(c["disc_power"]) for c in curves[m]]) for m in metrics]
            render(
                ["metric"] + fhead, out, "table", title=f"Discriminative power ({test}, alpha = {alpha:g}) - 002 Fig. 3"
            )
        if "confusion" in shows:
            out = [
                (
                    m,
                    f"{100 * c['fraction']:g}%",
                    c["c11"],
                    c["c12"],
                    c["c21"],
                    c["c22"],
                    _fix(c["accuracy"], 3),
                    _fix(c["g_mean"], 3),
                    c["false_pos"],
                    c["false_neg"],
                )
                for m in metrics
                for c in curves[m]
                if c["fraction"] < 1.0
            ]
            render(
                [
                    "metric",
                    "fraction",
                    "C11",
                    "C12",
                    "C21",
                    "C22",
                    "accuracy",
                    "g-mean",
                    "false pos (C21)",
                    "false neg (C12)",
                ],
                out,
                "table",
                title=f"Test outcomes full vs reduced qrels ({test}; 1 = H0 accepted, 2 = rejected) - 004 Table 2",
            )
        if "knee" in shows:
            kn = {(r["metric"], r["criterion"]): r for r in an.rows("meta_knees")}
            out = [(m, *[_knee(kn[(m, c)]) for c in ("tau", "accuracy")]) for m in metrics]
            render(
                ["metric", f"knee: tau > {threshold:g}", f"knee: accuracy > {threshold:g}"],
                out,
                "table",
                title="Knees (lowest fraction from which the curve stays above the threshold; "
                "first crossing in brackets if lower) - 004 Tables 3, 5",
            )
    _done(an, plot, plot_robustness)


def _knee(r) -> str:
    k, first = r["knee"], r["knee_first"]
    if k is None:
        return "none"
    s = f"{100 * k:g}%"
    if first is not None and first < k:
        s += f" ({100 * first:g}%)"
    return s
