"""The stored analyses (``meta_runs`` and the ``meta_*`` tables) as the meta page shows them: for
each, what was analysed, its result table and its figure, drawn from the stored rows (the same
figures as ``evalstore meta ... --plot``, as SVG: Kendall's tau as a heat map, swap rates per
difference bin, ASL curves and discriminative power, paired tests, robustness curves, and the
differences of a comparison with their 95 % intervals)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..report.figures import analyses as figures
from . import svg
from .links import Links
from .queries import StoredAnalysis

KIND_NAMES = {
    "kendall": "Rank correlation (Kendall's tau)",
    "swap": "Swap method",
    "discpower": "Discriminative power (paired bootstrap)",
    "tests": "Paired significance tests",
    "robustness": "Robustness to incomplete judgments",
    "compare": "Comparison with a baseline",
    "agree": "Comparison of judges (labels and leaderboards)",
}


def _table(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> dict[str, Any]:
    return {"columns": list(columns), "rows": [[r.get(c) for c in columns] for r in rows]}


def _label(metric: str, qrels: str, several: bool) -> str:
    return f"{metric} [{qrels}]" if several else metric


def describe(a: StoredAnalysis, links: Links) -> dict[str, Any]:
    """The view model of one analysis: heading, inputs, parameters, tables and figures."""
    inputs = a.inputs
    runs = inputs.get("runs") or []
    cols = inputs.get("columns") or []
    labels = [c.get("label") or c.get("metric") for c in cols if isinstance(c, dict)]
    n_topics = sorted({len(c.get("topics") or []) for c in cols if isinstance(c, dict)})
    params = {k: v for k, v in sorted(a.params.items()) if v is not None and k not in ("sampling", "statistic")}
    item: dict[str, Any] = {
        "id": a.analysis_id,
        "anchor": f"analysis-{a.analysis_id}",
        "kind": a.kind,
        "title": KIND_NAMES.get(a.kind, a.kind),
        "created": str(a.created_at)[:19],
        "version": a.version,
        "seed": a.seed,
        "runs": len(runs),
        "run_names": runs,
        "columns": labels,
        "topics": ", ".join(str(n) for n in n_topics),
        "params": [(k, v) for k, v in params.items()],
        "tables": [],
        "figures": [],
        "link": None,
    }
    fill = {
        "kendall": _kendall,
        "swap": _swap,
        "discpower": _discpower,
        "tests": _tests,
        "robustness": _robustness,
        "compare": _compare,
        "agree": _agree,
    }.get(a.kind)
    if fill is not None:
        fill(a, item, links)
    return item


def _kendall(a: StoredAnalysis, item: dict[str, Any], links: Links) -> None:
    rows = a.tables.get("meta_correlations", [])
    if not rows:
        return
    several = len({r["qrels_a"] for r in rows} | {r["qrels_b"] for r in rows}) > 1
    k = 1 + max(max(r["col_a"], r["col_b"]) for r in rows)
    labels = [""] * k
    for r in rows:
        labels[r["col_a"]] = _label(r["metric_a"], r["qrels_a"], several)
        labels[r["col_b"]] = _label(r["metric_b"], r["qrels_b"], several)
    M: list[list[float | None]] = [[1.0 if i == j else None for j in range(k)] for i in range(k)]
    for r in rows:
        M[r["col_a"]][r["col_b"]] = M[r["col_b"]][r["col_a"]] = r["tau"]
    item["figures"].append(
        svg.heatmap(labels, M, label=f"Kendall's tau between the system rankings ({item['runs']} runs)")
    )
    item["tables"].append(
        _table(
            rows, ["qrels_a", "metric_a", "qrels_b", "metric_b", "n_runs", "tau", "tau_b", "z", "p_value", "spearman"]
        )
    )


def _swap(a: StoredAnalysis, item: dict[str, Any], links: Links) -> None:
    summary = a.tables.get("meta_swap", [])
    bins = a.tables.get("meta_swap_bins", [])
    several = len({r["qrels"] for r in summary}) > 1
    columns = []
    for r in summary:
        mine = sorted(
            (b for b in bins if b["metric"] == r["metric"] and b["qrels"] == r["qrels"]), key=lambda b: b["bin"]
        )
        columns.append(
            (_label(r["metric"], r["qrels"], several), [(b["lo"], b["comparisons"], b["swap_rate"]) for b in mine])
        )
    if columns:
        item["figures"].append(svg.line_figure(figures.swap_rates(columns, summary[0]["max_rate"])))
    item["tables"].append(
        _table(
            summary, ["qrels", "metric", "n_runs", "n_topics", "trials", "abs_diff", "rel_diff", "share", "max_diff"]
        )
    )


def _discpower(a: StoredAnalysis, item: dict[str, Any], links: Links) -> None:
    rows = a.tables.get("meta_discpower", [])
    pairs = a.tables.get("meta_pair_tests", [])
    several = len({r["qrels"] for r in rows}) > 1
    series = []
    for r in rows:
        ps = sorted(
            p["p_value"]
            for p in pairs
            if p["metric"] == r["metric"] and p["qrels"] == r["qrels"] and p["test"] == r["test"]
        )
        if ps:
            series.append((_label(r["metric"], r["qrels"], several), list(range(1, len(ps) + 1)), ps))
    alpha = rows[0]["alpha"] if rows else 0.05
    if series:
        item["figures"].append(
            svg.line_chart(
                series,
                xlabel="run pairs, sorted by achieved significance level",
                ylabel="ASL (p-value)",
                label="ASL curves",
                hline=alpha,
                hline_label=f"alpha = {alpha:g}",
                markers=len(series[0][1]) <= 60,
            )
        )
    _power_bars(rows, item, several)
    item["tables"].append(
        _table(
            rows,
            [
                "qrels",
                "metric",
                "test",
                "alpha",
                "n_runs",
                "n_topics",
                "n_pairs",
                "n_significant",
                "disc_power",
                "est_diff",
            ],
        )
    )


def _power_bars(rows: Sequence[dict[str, Any]], item: dict[str, Any], several: bool, with_test: bool = False) -> None:
    if not rows:
        return
    ordered = sorted(rows, key=lambda r: -(r["n_significant"] or 0))
    labels = [_label(r["metric"], r["qrels"], several) + (f" ({r['test']})" if with_test else "") for r in ordered]
    values = [100 * (r["disc_power"] or 0.0) for r in ordered]
    texts = [f"{r['n_significant']}/{r['n_pairs']} = {100 * (r['disc_power'] or 0):.1f} %" for r in ordered]
    item["figures"].append(
        svg.bar_chart(labels, values, texts, xlabel=f"% of run pairs significant at alpha = {rows[0]['alpha']:g}")
    )


def _tests(a: StoredAnalysis, item: dict[str, Any], links: Links) -> None:
    rows = a.tables.get("meta_discpower", [])
    several = len({r["qrels"] for r in rows}) > 1
    _power_bars(rows, item, several, with_test=True)
    item["tables"].append(
        _table(
            rows,
            [
                "qrels",
                "metric",
                "test",
                "alpha",
                "adjust",
                "n_runs",
                "n_topics",
                "n_pairs",
                "n_significant",
                "disc_power",
            ],
        )
    )


def _robustness(a: StoredAnalysis, item: dict[str, Any], links: Links) -> None:
    rows = a.tables.get("meta_robustness", [])
    metrics = list(dict.fromkeys(r["metric"] for r in rows))
    series = []
    for m in metrics:
        mine = sorted((r for r in rows if r["metric"] == m), key=lambda r: r["fraction"])
        series.append((m, [100 * r["fraction"] for r in mine], [r["tau_mean"] for r in mine]))
    if series:
        item["figures"].append(
            svg.line_chart(
                series,
                xlabel="judgments kept (% of the full qrels set)",
                ylabel="Kendall's tau with the full qrels",
                label="Robustness to incomplete judgments",
                hline=a.params.get("threshold") if isinstance(a.params.get("threshold"), (int, float)) else None,
                reverse_x=True,
            )
        )
    item["tables"].append(
        _table(
            sorted(rows, key=lambda r: (r["metric"], -r["fraction"])),
            ["metric", "parent", "fraction", "n_trials", "tau_mean", "tau_min", "disc_power", "accuracy", "g_mean"],
        )
    )


def _compare(a: StoredAnalysis, item: dict[str, Any], links: Links) -> None:
    pairs = a.tables.get("meta_pair_tests", [])
    fx = {(e["metric"], e["run"], e["other"]): e for e in a.tables.get("meta_effects", [])}
    rows = []
    for p in pairs:
        e = fx.get((p["metric"], p["run_a"], p["run_b"]), {})
        rows.append(
            {
                "qrels": p["qrels"],
                "metric": p["metric"],
                "run": p["run_a"],
                "other": p["run_b"],
                "mean_run": p["mean_a"],
                "mean_other": p["mean_b"],
                "diff": p["diff"],
                "test": p["test"],
                "p_value": p["p_value"],
                "p_adjusted": p["p_adjusted"],
                "significant": p["significant"],
                "ci_t_lo": e.get("ci_t_lo"),
                "ci_t_hi": e.get("ci_t_hi"),
                "d_z": e.get("d_z"),
                "smd": e.get("smd"),
            }
        )
    for metric in dict.fromkeys(r["metric"] for r in rows):
        mine = [r for r in rows if r["metric"] == metric]
        labels = [f"{r['run']} − {r['other']}" for r in mine]
        lows = [r["ci_t_lo"] for r in mine]
        highs = [r["ci_t_hi"] for r in mine]
        have_ci = any(v is not None and math.isfinite(v) for v in lows)
        item["figures"].append(
            svg.interval_chart(
                labels,
                [r["diff"] for r in mine],
                lows if have_ci else [None] * len(mine),
                highs if have_ci else [None] * len(mine),
                xlabel=f"mean difference in {metric}" + (" with its 95 % paired t interval" if have_ci else ""),
                links=[links.to("compare", r["other"], r["run"], r["qrels"], r["metric"]) for r in mine],
                reference=0.0,
            )
        )
    item["tables"].append(
        _table(
            rows,
            [
                "metric",
                "run",
                "other",
                "mean_run",
                "mean_other",
                "diff",
                "test",
                "p_value",
                "p_adjusted",
                "significant",
                "ci_t_lo",
                "ci_t_hi",
                "d_z",
                "smd",
            ],
        )
    )


def _agree(a: StoredAnalysis, item: dict[str, Any], links: Links) -> None:
    """The label statistics of all topics and the ranking agreement per metric; the full page is
    :mod:`.pages.agree`'s."""
    item["columns"] = [f"{a.params.get('candidate')} against {a.params.get('reference')}"]
    item["link"] = links.to("agree", a.analysis_id)
    overall = [r for r in a.tables.get("meta_agree_labels", []) if r.get("topic") is None]
    cols = ["n_common", "n_ref_only", "n_cand_only", "kappa", "kappa_linear", "kappa_quadratic", "kappa_binary"]
    item["tables"].append(_table(overall, [*cols, "alpha_nominal", "alpha_ordinal"]))
    ranking = a.tables.get("meta_agree_ranking", [])
    if ranking:
        cols = ["metric", "n_runs", "tau_b", "spearman", "tau_ap", "tau_ap_sym", "max_rank_change", "n_flips"]
        item["tables"].append(_table(ranking, cols))
