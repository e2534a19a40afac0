"""The figures of the meta analyses, each built once from the analysis' result rows (the rows of the
``meta_*`` tables): an analysis in memory (``evalstore meta ... --plot``) and an analysis read back
from the store (the web's meta page) hold the same rows, so the CLI and the web draw the same
figure. ``source`` is anything with ``tables`` (table name -> rows), ``params`` and ``inputs``:
:class:`evalstore.meta.persist.Analysis` or the web's stored analysis.

* :func:`kendall`: heat map of Kendall's tau (or tau-b, Spearman's rho) between the columns'
  system rankings (Sakai IPSJ 2007 Table 2 as a picture);
* :func:`swap`: swap rate per difference bin, a line per column (Sakai IPSJ 2007 Fig. 4), and the
  share of comparisons meeting the required difference (Sakai IPSJ 2007 Fig. 9);
* :func:`discpower`: ASL curves (Sakai IPSJ 2007 Fig. 6) and discriminative power (Sakai IPSJ 2007
  Fig. 10, Sakai SIGIR 2007 Table 3);
* :func:`tests`: discriminative power per paired test and column;
* :func:`robustness`: Kendall's tau, discriminative power, accuracy and g-mean against the share of
  judgments kept (Sakai SIGIR 2007 Figs. 2-3, Bompada et al. 2007 Figs. 1-2);
* :func:`compare_intervals`: the mean differences of a stored comparison with their intervals;
* :func:`reusability`: each run's rank under the full qrels and under the qrels without its
  group's unique documents, a slope chart per metric (the runs that fall marked).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from .model import BarFigure, Figure, HeatMap, Intervals, LineFigure, Panels, RankSlopes, Series

Row = Mapping[str, Any]

#: The names of the statistics a Kendall figure can show.
STAT_NAMES = {"tau": "Kendall's tau", "tau_b": "Kendall's tau-b", "spearman": "Spearman's rho"}


class Source(Protocol):
    """An analysis: its result rows by table, its parameters and its inputs."""

    @property
    def tables(self) -> Mapping[str, Sequence[Row]]: ...

    @property
    def params(self) -> Mapping[str, Any]: ...

    @property
    def inputs(self) -> Mapping[str, Any]: ...


def _rows(source: Source, table: str) -> list[Row]:
    return list(source.tables.get(table) or [])


def _labeller(source: Source, qrels: Sequence[str]):
    """The columns' labels as requested (``AP(rel=2)``), with the qrels set when there are several."""
    asked = {
        (c.get("qrels"), c.get("metric")): c.get("label") or c.get("metric")
        for c in source.inputs.get("columns") or []
        if isinstance(c, dict)
    }
    several = len(set(qrels)) > 1

    def label(q: str, metric: str) -> str:
        name = asked.get((q, metric)) or metric
        return f"{name} [{q}]" if several else name

    return label


def _qrels_text(qrels: Sequence[str]) -> str:
    return ", ".join(dict.fromkeys(qrels))


def _pct(v: float | None) -> float:
    return 100 * (v or 0.0)


def kendall(source: Source, stat: str = "tau") -> HeatMap | None:
    rows = _rows(source, "meta_correlations")
    if not rows:
        return None
    qrels = [q for r in rows for q in (r["qrels_a"], r["qrels_b"])]
    label = _labeller(source, qrels)
    k = 1 + max(max(r["col_a"], r["col_b"]) for r in rows)
    labels = [""] * k
    M: list[list[float | None]] = [[1.0 if i == j else None for j in range(k)] for i in range(k)]
    for r in rows:
        labels[r["col_a"]] = label(r["qrels_a"], r["metric_a"])
        labels[r["col_b"]] = label(r["qrels_b"], r["metric_b"])
        M[r["col_a"]][r["col_b"]] = M[r["col_b"]][r["col_a"]] = r[stat]
    name = STAT_NAMES.get(stat, stat)
    finite = [v for row in M for v in row if v is not None and math.isfinite(v)]
    n_runs = len(source.inputs.get("runs") or []) or rows[0]["n_runs"]
    return HeatMap(
        title=f"{name} between the system rankings ({_qrels_text(qrels)}; {n_runs} runs)",
        scale_label=name,
        labels=labels,
        values=M,
        vmin=min([0.0, *finite]),
    )


def share_order(summary: Sequence[Row]) -> list[int]:
    """The columns in the order of the swap figure's bars (the table's, report.meta_tables.swap:
    by the share of comparisons, largest first)."""
    return sorted(range(len(summary)), key=lambda i: -(summary[i]["share"] or -1))


def power_order(rows: Sequence[Row]) -> list[int]:
    """The columns in the order of the discriminative power bars (the table's,
    report.meta_tables.discpower: most pairs significant first)."""
    return sorted(range(len(rows)), key=lambda i: -(rows[i]["n_significant"] or 0))


def swap(source: Source) -> Panels | None:
    summary = _rows(source, "meta_swap")
    if not summary:
        return None
    bins = _rows(source, "meta_swap_bins")
    qrels = [r["qrels"] for r in summary]
    label = _labeller(source, qrels)
    columns = []
    for r in summary:
        key = (r["qrels"], r["metric"])
        mine = sorted((b for b in bins if (b["qrels"], b["metric"]) == key), key=lambda b: b["bin"])
        columns.append((label(r["qrels"], r["metric"]), [(b["lo"], b["comparisons"], b["swap_rate"]) for b in mine]))
    first = summary[0]
    rates = swap_rates(columns, first["max_rate"], f"{_qrels_text(qrels)}; B = {first['trials']}")
    order = share_order(summary)
    texts = [
        f"{_pct(summary[i]['share']):.2g} % (diff {summary[i]['abs_diff']:.2f})"
        if summary[i]["abs_diff"] is not None
        else f"no bin <= {100 * first['max_rate']:g} %"
        for i in order
    ]
    share = BarFigure(
        title="Discriminative power (swap method, Sakai IPSJ 2007)",
        xlabel="% of comparisons satisfying the required difference",
        labels=[label(summary[i]["qrels"], summary[i]["metric"]) for i in order],
        groups=[""],
        values=[[_pct(summary[i]["share"]) for i in order]],
        texts=[texts],
    )
    return Panels(title="", panels=[rates, share], columns=2, widths=[3, 2])


#: one swap figure's bins: (lower edge of the bin, comparisons in it, swap rate as a fraction or None)
SwapBins = Sequence[tuple[float, int, "float | None"]]


def swap_rates(columns: Sequence[tuple[str, SwapBins]], max_rate: float, about: str = "") -> LineFigure:
    """The swap rate per difference bin of each column (Sakai IPSJ 2007, Fig. 4), in percent; only
    the bins that hold comparisons; the reference line at ``max_rate``."""
    series = [
        Series(label, [lo for lo, n, _ in bins if n], [None if r is None else 100 * r for _, n, r in bins if n])
        for label, bins in columns
    ]
    return LineFigure(
        title=f"Swap rate per difference bin ({about + '; ' if about else ''}Sakai IPSJ 2007 Fig. 4)",
        xlabel="absolute difference between the two means (lower edge of the bin; the last bin holds all above)",
        ylabel="swap rate (%)",
        series=series,
        hline=100 * max_rate,
        hline_label=f"{100 * max_rate:g} %",
    )


def _power_bars(rows: Sequence[Row], label, alpha: float) -> BarFigure:
    """Discriminative power per column, most pairs significant first (the table's order)."""
    order = power_order(rows)
    texts = [
        f"{rows[i]['n_significant']}/{rows[i]['n_pairs']} = {_pct(rows[i]['disc_power']):.1f} %"
        + (f", diff {rows[i]['est_diff']:#.2g}" if rows[i].get("est_diff") is not None else "")
        for i in order
    ]
    return BarFigure(
        title="Discriminative power",
        xlabel=f"% of run pairs with ASL < {alpha:g}",
        labels=[label(rows[i]["qrels"], rows[i]["metric"]) for i in order],
        groups=[""],
        values=[[_pct(rows[i]["disc_power"]) for i in order]],
        texts=[texts],
    )


def discpower(source: Source) -> Panels | None:
    rows = _rows(source, "meta_discpower")
    if not rows:
        return None
    pairs = _rows(source, "meta_pair_tests")
    qrels = [r["qrels"] for r in rows]
    label = _labeller(source, qrels)
    first = rows[0]
    series = []
    for r in rows:
        asl = sorted(
            p["p_value"] for p in pairs if (p["qrels"], p["metric"], p["test"]) == (r["qrels"], r["metric"], r["test"])
        )
        series.append(Series(label(r["qrels"], r["metric"]), list(range(1, len(asl) + 1)), asl))
    trials = source.params.get("trials")
    curves = LineFigure(
        title=f"ASL curves, paired bootstrap test ({_qrels_text(qrels)}; {first['n_runs']} runs; B = {trials}; "
        "Sakai IPSJ 2007 Fig. 6)",
        xlabel="run pairs, sorted by ASL",
        ylabel="achieved significance level (ASL)",
        series=series,
        hline=first["alpha"],
        hline_label=f"alpha = {first['alpha']:g}",
        markers=max((len(s.x) for s in series), default=0) <= 60,
    )
    return Panels(title="", panels=[curves, _power_bars(rows, label, first["alpha"])], columns=2, widths=[3, 2])


def tests(source: Source) -> BarFigure | None:
    """Discriminative power per test (a bar each) and column (a row each), in the columns' order."""
    rows = _rows(source, "meta_discpower")
    if not rows:
        return None
    cols = list(dict.fromkeys((r["qrels"], r["metric"]) for r in rows))
    label = _labeller(source, [q for q, _ in cols])
    names = list(dict.fromkeys(r["test"] for r in rows))
    by = {(r["test"], r["qrels"], r["metric"]): r for r in rows}
    values, texts = [], []
    for t in names:
        mine = [by.get((t, *c)) for c in cols]
        values.append([_pct(r["disc_power"]) if r else 0.0 for r in mine])
        texts.append([f"{r['n_significant']}/{r['n_pairs']}" if r else "" for r in mine])
    first = rows[0]
    trials = source.params.get("trials")
    return BarFigure(
        title=f"Discriminative power per paired test ({_qrels_text([q for q, _ in cols])}"
        + (f"; B = {trials})" if trials is not None else ")"),
        xlabel=f"% of run pairs significant (alpha = {first['alpha']:g}, adjust = {first['adjust']})",
        labels=[label(*c) for c in cols],
        groups=names,
        values=values,
        texts=texts,
    )


#: The panels of the robustness figure: (column of the curve, y label, source of the figure).
ROBUSTNESS_PANELS = (
    ("tau_mean", "Kendall's tau with the full qrels", "Sakai SIGIR 2007 Fig. 2 / Bompada et al. 2007 Fig. 1"),
    ("disc_power", "discriminative power (%)", "Sakai SIGIR 2007 Fig. 3"),
    ("accuracy", "accuracy of test outcomes vs full qrels", "Bompada et al. 2007 Fig. 2"),
    ("g_mean", "g-mean of test outcomes vs full qrels", "Bompada et al. 2007 Fig. 2"),
)


def robustness(curves: Mapping[str, Sequence[Row]], params: Mapping[str, Any], n_runs: int) -> Panels | None:
    """The four curves against the share of judgments kept; ``curves``: metric -> per-fraction
    summary rows (the ``meta_robustness`` view's columns)."""
    if not curves:
        return None
    threshold = params.get("threshold")
    panels: list[Figure] = []
    for key, ylabel, ref in ROBUSTNESS_PANELS:
        series = []
        for metric, rows in curves.items():
            mine = sorted(rows, key=lambda r: -r["fraction"])
            scale = 100 if key == "disc_power" else 1
            ys = [None if r[key] is None else scale * r[key] for r in mine]
            series.append(Series(metric, [100 * r["fraction"] for r in mine], ys))
        if key == "disc_power":
            ylabel = f"discriminative power ({params.get('test')}, alpha = {params.get('alpha'):g}) (%)"
        line = isinstance(threshold, (int, float)) and key in ("tau_mean", "accuracy")
        panels.append(
            LineFigure(
                title=ref,
                xlabel="judgments kept (% of the full qrels set)",
                ylabel=ylabel,
                series=series,
                hline=float(threshold) if line else None,  # type: ignore[arg-type]
                hline_label=f"{threshold:g}" if line else None,
                reverse_x=True,
            )
        )
    return Panels(
        title=f"Robustness to incomplete judgments: {params.get('parent')} ({n_runs} runs)", panels=panels, columns=2
    )


def robustness_of(source: Source) -> Panels | None:
    """:func:`robustness` of stored rows (the ``meta_robustness`` view: a row per metric and fraction)."""
    curves: dict[str, list[Row]] = {}
    for r in _rows(source, "meta_robustness"):
        curves.setdefault(r["metric"], []).append(r)
    return robustness(curves, source.params, len(source.inputs.get("runs") or []))


def compare_intervals(source: Source, level_text: str = "95 %") -> list[Intervals]:
    """Per metric of a stored comparison: each run's mean difference to the other run, with its
    paired t interval when the comparison stored effects."""
    effects = {(e["metric"], e["run"], e["other"]): e for e in _rows(source, "meta_effects")}
    pairs = _rows(source, "meta_pair_tests")
    out = []
    for metric in dict.fromkeys(p["metric"] for p in pairs):
        mine = [p for p in pairs if p["metric"] == metric]
        fx = [effects.get((metric, p["run_a"], p["run_b"]), {}) for p in mine]
        lows, highs = [e.get("ci_t_lo") for e in fx], [e.get("ci_t_hi") for e in fx]
        have_ci = any(v is not None and math.isfinite(v) for v in lows)
        out.append(
            Intervals(
                title=f"{metric}: mean differences",
                xlabel=f"mean difference in {metric}"
                + (f" with its {level_text} paired t interval" if have_ci else ""),
                labels=[f"{p['run_a']} − {p['run_b']}" for p in mine],
                estimates=[p["diff"] for p in mine],
                lows=lows if have_ci else [None] * len(mine),
                highs=highs if have_ci else [None] * len(mine),
                reference=0.0,
            )
        )
    return out


def reusability(source: Source) -> Panels | None:
    """A slope chart per metric: each run's rank on the full qrels (left) and with every run scored
    without its own group's unique documents (right); the runs whose rank falls are marked."""
    rows = _rows(source, "meta_reusability_runs")
    if not rows:
        return None
    qrels = source.params.get("qrels")
    how = "run" if source.params.get("leave_one_out") == "runs" else "group"
    panels: list[Figure] = []
    for metric in dict.fromkeys(r["metric"] for r in rows):
        mine = [r for r in rows if r["metric"] == metric]
        panels.append(
            RankSlopes(
                title=f"{metric}: rank on {qrels} (left) and without each run's {how} (right)",
                left=f"{qrels}",
                right=f"leave one {how} out",
                labels=[r["run"] for r in mine],
                left_ranks=[r["rank_full"] for r in mine],
                right_ranks=[r["rank_reduced"] for r in mine],
                marks=[r["rank_reduced"] > r["rank_full"] for r in mine],
                mark_label=f"falls without its {how}'s documents",
            )
        )
    depth = source.params.get("depth")
    return Panels(title=f"Reusability: depth-{depth} pool, leave one {how} out", panels=panels, columns=len(panels))
