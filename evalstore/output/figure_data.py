"""The data of every figure, as a table (``--plot-data FILE.csv|.tsv|.json|.parquet``): what is
drawn, value for value and in the order drawn, so that a figure can be restyled or redrawn with
any tool (ggplot, pgfplots, Vega, a spreadsheet). A table follows its figure's model
(:mod:`.figures`): the same order (one ordering function each, shared), the heat map's cells read
from the model; beside the values drawn it keeps what a redraw needs (a bin's upper edge and
comparisons, a column's pairs and estimated difference, the significance word).

One table per figure, long ("tidy"): a row per drawn value, a ``panel`` column when the figure
has several panels of different kinds (swap, discpower: curves and bars), numbers as computed:

* ``eval --plot`` (:func:`scores`): ``metric, run, position, topic, value``: the box of ``run``
  in panel ``metric`` at x = ``position`` (runs by their mean of the first metric), one row per
  topic score;
* ``compare --plot`` (:func:`compare`): ``metric, run, position, topic, baseline, run_value,
  diff, significant``: each run's per-topic difference to the baseline, the topics in the drawn
  order (``position``, the mean difference over the runs, largest first); ``significant`` is
  ``better`` / ``worse`` / empty;
* ``meta kendall --plot`` (:func:`kendall`): ``column_a, column_b, stat, value``: every cell of
  the heat map (the diagonal 1);
* ``meta swap --plot`` (:func:`swap`): panel ``rate`` (``column, bin_lo, bin_hi, comparisons,
  swap_rate``: the lines), panel ``share`` (``column, rank, share, abs_diff``: the bars, in the
  table's order);
* ``meta discpower --plot`` (:func:`discpower`): panel ``asl`` (``column, rank, asl``: each
  column's run pairs sorted by ASL), panel ``power`` (``column, rank, n_significant, n_pairs,
  disc_power, est_diff``: the bars);
* ``meta tests --plot`` (:func:`tests`): ``column, test, n_significant, n_pairs, disc_power``;
* ``meta robustness --plot`` (:func:`robustness`): ``metric, fraction, tau_mean, disc_power,
  accuracy, g_mean``: one row per point of the four panels;
* ``meta reusability --plot`` (:func:`reusability`): ``metric, run, rank_full, rank_reduced,
  marked``: each line of a slope chart (marked: the run falls without its group's documents);
* ``repro --plot`` (:func:`er_dri`): ``metric, er, dri``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .figures.analyses import kendall as heat_map
from .figures.analyses import power_order, share_order
from .table import Table


def _num(v: Any) -> float | None:
    """A drawn number: None where nothing is drawn (NaN, missing)."""
    if v is None:
        return None
    f = float(v)
    return f if math.isfinite(f) else None


def _labels(labels: Sequence[str], qrels: Sequence[str] | None = None) -> list[str]:
    """Column labels as the figures name them (with the qrels set when there are several)."""
    if qrels is not None and len(set(qrels)) > 1:
        return [f"{lab} [{q}]" for lab, q in zip(labels, qrels)]
    return list(labels)


# --------------------------------------------------------------------------- eval
def score_runs(result: Any) -> tuple[list[str], list[str]]:
    """(metrics, runs) of an evaluation as ``eval --plot`` draws them: runs by their mean of the
    first metric, best first."""
    metrics = list(dict.fromkeys(m for _, m, _, _ in result.means))
    means = {(r, m): v for r, m, v, _ in result.means}
    runs = sorted(
        dict.fromkeys(r for r, _, _, _ in result.means),
        key=lambda r: -(means.get((r, metrics[0])) or float("-inf")),
    )
    return metrics, runs


def scores(result: Any) -> Table:
    """The box plots of ``eval --plot``: every per-topic score that is drawn."""
    metrics, runs = score_runs(result)
    position = {r: i + 1 for i, r in enumerate(runs)}
    by: dict[tuple[str, str], list[tuple[str, float]]] = {}  # one pass over the rows
    for run, t, metric, v in result.per_topic:
        if _num(v) is not None:
            by.setdefault((metric, run), []).append((t, float(v)))
    rows = [(m, r, position[r], t, v) for m in metrics for r in runs for t, v in by.get((m, r), [])]
    return Table(["metric", "run", "position", "topic", "value"], rows, title="eval --plot: per-topic scores")


# --------------------------------------------------------------------------- compare
def topic_order(d: np.ndarray) -> np.ndarray:
    """The drawn order of the topics of differences ``d`` (runs x topics): the mean difference
    over the runs, largest first (stable)."""
    return np.argsort(-d.mean(axis=0), kind="stable")


def significance(cmp: Any, run: str, label: str) -> str:
    """``better`` / ``worse`` when ``run`` differs significantly from the baseline on ``label``."""
    p = cmp.pair(run, cmp.baseline, label)
    if p is None or not p["significant"]:
        return ""
    better = (p["diff"] > 0) == (p["run"] == run)
    return "better" if better else "worse"


def compare(cmp: Any) -> Table:
    """The per-topic differences of ``compare --plot``, in the drawn order of the topics."""
    rows: list[tuple[Any, ...]] = []
    for m, label in zip(cmp.matrices, cmp.metrics):
        d = m.values[1:] - m.values[0]
        order = topic_order(d)
        for i, run in enumerate(m.runs[1:]):
            sig = significance(cmp, run, label)
            for pos, j in enumerate(order.tolist(), start=1):
                rows.append(
                    (
                        label,
                        run,
                        pos,
                        m.topics[j],
                        float(m.values[0, j]),
                        float(m.values[i + 1, j]),
                        float(d[i, j]),
                        sig,
                    )
                )
    cols = ["metric", "run", "position", "topic", "baseline", "run_value", "diff", "significant"]
    return Table(cols, rows, title=f"compare --plot: per-topic differences against {cmp.baseline}")


# --------------------------------------------------------------------------- meta
def kendall(analysis: Any, stat: str = "tau") -> Table:
    """Every cell of the heat map of ``meta kendall --plot`` (its model's), row by row."""
    model = heat_map(analysis, stat)
    labels, M = (model.labels, model.values) if model else ([], [])
    rows = [(a, b, stat, _num(M[i][j])) for i, a in enumerate(labels) for j, b in enumerate(labels)]
    return Table(["column_a", "column_b", "stat", "value"], rows, title="meta kendall --plot: the heat map's cells")


def swap_bars(analysis: Any) -> list[int]:
    """The columns in the order of the swap figure's bars (the table's: by share, largest first)."""
    return share_order(analysis.rows("meta_swap"))


def swap(analysis: Any) -> Table:
    results = analysis.results["swap"]
    labels = _labels(analysis.results["labels"], [r["qrels"] for r in analysis.rows("meta_swap")])
    rows: list[tuple[Any, ...]] = []
    for lab, r in zip(labels, results):
        for (lo, hi), n, rate in zip(r.edges(), r.counts.tolist(), r.rates.tolist()):
            if n > 0:
                rows.append(("rate", lab, None, float(lo), _num(hi), int(n), float(rate), None, None))
    for rank, i in enumerate(swap_bars(analysis), start=1):
        r = results[i]
        share = float(r.share) if np.isfinite(r.share) else 0.0
        rows.append(("share", labels[i], rank, None, None, None, None, share, _num(r.abs_diff)))
    cols = ["panel", "column", "rank", "bin_lo", "bin_hi", "comparisons", "swap_rate", "share", "abs_diff"]
    return Table(cols, rows, title="meta swap --plot: swap rate per bin and the share of comparisons")


def discpower_bars(analysis: Any) -> list[int]:
    """The columns in the order of the discpower figure's bars (the table's: most pairs significant first)."""
    return power_order(analysis.rows("meta_discpower"))


def discpower(analysis: Any) -> Table:
    meta_rows = analysis.rows("meta_discpower")
    labels = _labels(analysis.results["labels"], [r["qrels"] for r in meta_rows])
    rows: list[tuple[Any, ...]] = []
    for lab, res in zip(labels, analysis.results.get("bootstrap", [])):
        for rank, asl in enumerate(np.sort(np.asarray(res.asl)).tolist(), start=1):
            rows.append(("asl", lab, rank, float(asl), None, None, None, None))
    for rank, i in enumerate(discpower_bars(analysis), start=1):
        r = meta_rows[i]
        rows.append(
            ("power", labels[i], rank, None, r["n_significant"], r["n_pairs"], r["disc_power"] or 0.0, r["est_diff"])
        )
    cols = ["panel", "column", "rank", "asl", "n_significant", "n_pairs", "disc_power", "est_diff"]
    return Table(cols, rows, title="meta discpower --plot: ASL curves and discriminative power")


def tests(analysis: Any) -> Table:
    meta_rows = analysis.rows("meta_discpower")
    cols_of = list(dict.fromkeys((r["qrels"], r["metric"]) for r in meta_rows))
    labels = dict(zip(cols_of, _labels(analysis.results["labels"], [q for q, _ in cols_of])))
    tests_ = list(dict.fromkeys(r["test"] for r in meta_rows))
    rows = [
        (labels[(r["qrels"], r["metric"])], r["test"], r["n_significant"], r["n_pairs"], r["disc_power"] or 0.0)
        for t in tests_
        for c in cols_of
        for r in meta_rows
        if r["test"] == t and (r["qrels"], r["metric"]) == c
    ]
    cols = ["column", "test", "n_significant", "n_pairs", "disc_power"]
    return Table(cols, rows, title="meta tests --plot: discriminative power per test")


ROBUSTNESS_PANELS = ("tau_mean", "disc_power", "accuracy", "g_mean")


def robustness(analysis: Any) -> Table:
    rows = [
        (metric, c["fraction"], *[_num(c[k]) for k in ROBUSTNESS_PANELS])
        for metric, curve in analysis.results["curves"].items()
        for c in curve
    ]
    return Table(["metric", "fraction", *ROBUSTNESS_PANELS], rows, title="meta robustness --plot: the curves")


def reusability(analysis: Any) -> Table:
    rows = [
        (r["metric"], r["run"], r["rank_full"], r["rank_reduced"], r["rank_reduced"] > r["rank_full"])
        for r in analysis.rows("meta_reusability_runs")
    ]
    cols = ["metric", "run", "rank_full", "rank_reduced", "marked"]
    return Table(cols, rows, title="meta reusability --plot: the slope charts")


# --------------------------------------------------------------------------- repro
def er_dri(r: Any) -> Table:
    rows = [(m, _num(r.er[m]), _num(r.dri[m])) for m in r.metrics]
    return Table(["metric", "er", "dri"], rows, title="repro --plot: Effect Ratio and ΔRI per metric")
