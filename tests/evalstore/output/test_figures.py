"""The figure models (evalstore.output.figures): each built once from an analysis' result rows,
checked on small hand-made analyses with every series written out."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from evalstore.output.figures import analyses, runs
from evalstore.output.figures.model import (
    BarFigure,
    DifferenceLines,
    DifferenceMap,
    HeatMap,
    Intervals,
    LineFigure,
    Panels,
    Point,
    Scatter,
    Series,
)


def analysis(tables, params=None, columns=None, runs=("r1", "r2", "r3")):
    """An analysis as the figures read it (in memory and stored alike): rows, params, inputs."""
    cols = [{"qrels": q, "metric": m, "label": lab} for q, m, lab in columns or []]
    return SimpleNamespace(tables=tables, params=params or {}, inputs={"runs": list(runs), "columns": cols})


def corr(a, b, qa, ma, qb, mb, tau, spearman=0.5):
    return {"col_a": a, "col_b": b, "qrels_a": qa, "metric_a": ma, "qrels_b": qb, "metric_b": mb, "n_runs": 3,
            "tau": tau, "tau_b": tau, "spearman": spearman}  # fmt: skip


def test_kendall_is_a_symmetric_heat_map_with_the_columns_labels():
    a = analysis(
        {
            "meta_correlations": [
                corr(0, 1, "q", "AP", "q", "P@5", 0.6),
                corr(0, 2, "q", "AP", "q", "RR", -0.2),
                corr(1, 2, "q", "P@5", "q", "RR", None),
            ]
        },  # fmt: skip
        columns=[("q", "AP", "AP(rel=2)"), ("q", "P@5", "P@5"), ("q", "RR", "RR")],
    )
    fig = analyses.kendall(a)
    assert isinstance(fig, HeatMap)
    assert fig.labels == ["AP(rel=2)", "P@5", "RR"]  # the labels as asked
    assert fig.values == [[1.0, 0.6, -0.2], [0.6, 1.0, None], [-0.2, None, 1.0]]
    assert fig.vmin == -0.2 and fig.vmax == 1.0
    assert fig.title == "Kendall's tau between the system rankings (q; 3 runs)" and fig.scale_label == "Kendall's tau"
    rho = analyses.kendall(a, "spearman")
    assert rho.values[0][1] == 0.5 and rho.scale_label == "Spearman's rho" and rho.vmin == 0.0
    assert analyses.kendall(analysis({})) is None


def test_labels_name_the_qrels_set_when_there_are_several():
    a = analysis({"meta_correlations": [corr(0, 1, "q1", "AP", "q2", "AP", 0.9)]})
    assert analyses.kendall(a).labels == ["AP [q1]", "AP [q2]"]
    assert analyses.kendall(a).title.startswith("Kendall's tau between the system rankings (q1, q2; ")


def swap_analysis():
    summary = [
        {"qrels": "q", "metric": "AP", "trials": 50, "max_rate": 0.05, "share": 0.25, "abs_diff": 0.1},
        {"qrels": "q", "metric": "RR", "trials": 50, "max_rate": 0.05, "share": 0.5, "abs_diff": 0.05},
        {"qrels": "q", "metric": "P@5", "trials": 50, "max_rate": 0.05, "share": None, "abs_diff": None},
    ]
    bins = [
        {"qrels": "q", "metric": m, "bin": i, "lo": lo, "comparisons": n, "swap_rate": r}
        for m, rows in {
            "AP": [(0.0, 4, 0.5), (0.01, 0, None), (0.02, 2, 0.0)],
            "RR": [(0.0, 1, 0.25), (0.01, 3, 0.1), (0.02, 0, None)],
            "P@5": [(0.0, 2, 1.0), (0.01, 0, None), (0.02, 0, None)],
        }.items()
        for i, (lo, n, r) in enumerate(rows)
    ]
    return analysis({"meta_swap": summary, "meta_swap_bins": list(reversed(bins))})


def test_swap_rates_per_bin_and_the_share_bars_in_the_tables_order():
    fig = analyses.swap(swap_analysis())
    assert isinstance(fig, Panels) and fig.columns == 2
    rates, share = fig.panels
    assert isinstance(rates, LineFigure) and isinstance(share, BarFigure)
    # only the bins holding comparisons, in percent, in bin order (the rows came in reverse)
    assert rates.series == [
        Series("AP", [0.0, 0.02], [50.0, 0.0]),
        Series("RR", [0.0, 0.01], [25.0, 10.0]),
        Series("P@5", [0.0], [100.0]),
    ]
    assert rates.hline == 5.0 and rates.hline_label == "5 %"
    assert rates.title == "Swap rate per difference bin (q; B = 50; Sakai IPSJ 2007 Fig. 4)"
    assert share.labels == ["RR", "AP", "P@5"]  # by share, largest first (meta_tables.swap)
    assert share.values == [[50.0, 25.0, 0.0]]
    assert share.texts == [["50 % (diff 0.05)", "25 % (diff 0.10)", "no bin <= 5 %"]]


def test_swap_rates_of_plain_bins():
    model = analyses.swap_rates([("AP", [(0.0, 3, 0.5), (0.01, 0, None), (0.02, 2, 0.0)])], 0.05)
    assert model.series == [Series("AP", [0.0, 0.02], [50.0, 0.0])] and model.hline == 5.0


def test_discpower_asl_curves_sorted_and_bars_by_pairs_significant():
    disc = [
        {"qrels": "q", "metric": "AP", "test": "bootstrap", "alpha": 0.05, "n_runs": 3, "n_pairs": 3,
         "n_significant": 1, "disc_power": 1 / 3, "est_diff": 0.1234},
        {"qrels": "q", "metric": "RR", "test": "bootstrap", "alpha": 0.05, "n_runs": 3, "n_pairs": 3,
         "n_significant": 2, "disc_power": 2 / 3, "est_diff": None},
    ]  # fmt: skip
    pairs = [
        {"qrels": "q", "metric": m, "test": "bootstrap", "p_value": p}
        for m, ps in {"AP": [0.5, 0.01, 0.2], "RR": [0.03, 0.0, 0.9]}.items()
        for p in ps
    ]
    fig = analyses.discpower(analysis({"meta_discpower": disc, "meta_pair_tests": pairs}, {"trials": 200}))
    curves, bars = fig.panels
    assert curves.series == [Series("AP", [1, 2, 3], [0.01, 0.2, 0.5]), Series("RR", [1, 2, 3], [0.0, 0.03, 0.9])]
    assert curves.hline == 0.05 and curves.hline_label == "alpha = 0.05" and curves.markers
    assert "B = 200" in curves.title and "3 runs" in curves.title
    assert bars.labels == ["RR", "AP"] and bars.values == [[pytest.approx(200 / 3), pytest.approx(100 / 3)]]
    assert bars.texts == [["2/3 = 66.7 %", "1/3 = 33.3 %, diff 0.12"]]
    assert bars.xlabel == "% of run pairs with ASL < 0.05"


def test_tests_are_grouped_bars_a_bar_per_test():
    rows = [
        {"qrels": "q", "metric": m, "test": t, "alpha": 0.05, "adjust": "holm", "n_pairs": 10, "n_significant": k,
         "disc_power": k / 10}
        for m, t, k in [("AP", "t", 4), ("AP", "wilcoxon", 3), ("RR", "t", 2), ("RR", "wilcoxon", 5)]
    ]  # fmt: skip
    fig = analyses.tests(analysis({"meta_discpower": rows}))
    assert fig.labels == ["AP", "RR"] and fig.groups == ["t", "wilcoxon"]
    assert fig.values == [[40.0, 20.0], [30.0, 50.0]]
    assert fig.texts == [["4/10", "2/10"], ["3/10", "5/10"]]
    assert fig.xlabel == "% of run pairs significant (alpha = 0.05, adjust = holm)"
    assert fig.title == "Discriminative power per paired test (q)"


def test_robustness_four_panels_against_the_judgments_kept():
    def point(f, tau, dp, acc, g):
        return {"fraction": f, "tau_mean": tau, "disc_power": dp, "accuracy": acc, "g_mean": g}

    curves = {"AP": [point(1.0, 1.0, 0.5, 1.0, 1.0), point(0.5, 0.8, 0.25, 0.75, None)]}
    params = {"threshold": 0.9, "test": "t", "alpha": 0.05, "parent": "q"}
    fig = analyses.robustness(curves, params, 3)
    assert fig.title == "Robustness to incomplete judgments: q (3 runs)" and fig.columns == 2
    tau, dp, acc, g = fig.panels
    assert tau.series == [Series("AP", [100.0, 50.0], [1.0, 0.8])] and tau.hline == 0.9 and tau.reverse_x
    assert dp.series == [Series("AP", [100.0, 50.0], [50.0, 25.0])] and dp.hline is None  # in percent
    assert dp.ylabel == "discriminative power (t, alpha = 0.05) (%)"
    assert acc.hline == 0.9 and g.series[0].y == [1.0, None]
    # the stored rows (the meta_robustness view: a row per metric and fraction) give the same figure
    stored = analysis({"meta_robustness": [{"metric": "AP", **r} for r in reversed(curves["AP"])]}, params)
    assert analyses.robustness_of(stored) == fig


def test_compare_intervals_per_metric():
    pairs = [
        {"metric": "AP", "run_a": "b", "run_b": "a", "diff": 0.1},
        {"metric": "AP", "run_a": "c", "run_b": "a", "diff": -0.2},
    ]
    effects = [{"metric": "AP", "run": "b", "other": "a", "ci_t_lo": 0.0, "ci_t_hi": 0.2}]
    (fig,) = analyses.compare_intervals(analysis({"meta_pair_tests": pairs, "meta_effects": effects}), "90 %")
    assert fig == Intervals(
        "AP: mean differences",
        "mean difference in AP with its 90 % paired t interval",
        ["b − a", "c − a"],
        [0.1, -0.2],
        [0.0, None],
        [0.2, None],
        reference=0.0,
    )
    (plain,) = analyses.compare_intervals(analysis({"meta_pair_tests": pairs}))
    assert plain.xlabel == "mean difference in AP" and plain.lows == [None, None]


def _comparison(n_runs: int):
    """A comparison of a baseline and ``n_runs`` runs on three topics (what compare --plot reads)."""
    names = ["base"] + [f"r{i}" for i in range(n_runs)]
    values = np.array([[0.5, 0.5, 0.5]] + [[0.5 + 0.1 * i, 0.4, 0.9] for i in range(n_runs)])
    matrix = SimpleNamespace(values=values, topics=["t1", "t2", "t3"], runs=names)

    def pair(run, base, label):
        return {"significant": run == "r0", "diff": -0.1, "run": base} if run == "r0" else None

    return SimpleNamespace(
        matrices=[matrix], metrics=["AP"], runs=names, baseline="base", qrels="q", test="t", pair=pair
    )


def test_compare_lines_and_heat_map():
    fig = runs.compare(_comparison(2))
    (lines,) = fig.panels
    assert isinstance(lines, DifferenceLines)
    # topics by the mean difference over the runs, largest first: t3 (0.4), t1 (0.05), t2 (-0.1)
    assert lines.topics == ["t3", "t1", "t2"] and lines.runs == ["r0", "r1"]
    assert np.allclose(lines.values, [[0.4, 0.0, -0.1], [0.4, 0.1, -0.1]])
    assert lines.marks == ["better", ""]  # r0 significantly above the baseline
    assert lines.title == "q: AP of each run minus base (t test)"
    (heat,) = runs.compare(_comparison(11)).panels
    assert isinstance(heat, DifferenceMap)
    assert heat.runs[0] == "r10" and heat.runs[-1] == "r0"  # runs by their mean difference, largest first
    assert heat.title.endswith("; ▲ / ▼ significantly better / worse)")


def test_er_dri_scatter():
    r = SimpleNamespace(
        kind="reproducibility",
        runs={"baseline": "b", "advanced": "a", "rep_baseline": "rb", "rep_advanced": "ra"},
        metrics=["AP", "P@5"],
        er={"AP": 0.9, "P@5": None},
        dri={"AP": 0.01, "P@5": float("nan")},
    )
    fig = runs.er_dri(r)
    assert fig == Scatter(
        "reproducibility: rb/ra vs b/a", "Effect Ratio (ER)", "ΔRI", [Point("AP", 0.9, 0.01), Point("P@5", None, None)],
        vline=1.0, hline=0.0,
    )  # fmt: skip
