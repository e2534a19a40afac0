"""The stored analyses (``meta_runs`` and the ``meta_*`` tables) as the meta page shows them: for
each, what was analysed, its result tables and its figures. The figures are the models
``evalstore meta ... --plot`` draws (:mod:`evalstore.output.figures.analyses`, built from the same
result rows), laid out by :mod:`.figure_charts`: Kendall's tau as a heat map, swap rates per
difference bin and the share of comparisons, ASL curves and discriminative power, paired tests,
the four robustness curves, the differences of a comparison with their intervals, and each run's
rank with and without its group's judgments."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..intervals.means import DEFAULT_LEVEL
from ..output.figures import analyses as figures
from . import figure_charts
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
    "reusability": "Reusability of the judgments (leave-out pools)",
}


def _table(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> dict[str, Any]:
    return {"columns": list(columns), "rows": [[r.get(c) for c in columns] for r in rows]}


def _figures(item: dict[str, Any], figure: Any, links: Any = None) -> None:
    if figure is not None:
        item["figures"].extend(figure_charts.layout(figure, links))


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
        "reusability": _reusability,
    }.get(a.kind)
    if fill is not None:
        fill(a, item, links)
    return item


def _kendall(a: StoredAnalysis, item: dict[str, Any], links: Links) -> None:
    rows = a.tables.get("meta_correlations", [])
    if not rows:
        return
    _figures(item, figures.kendall(a))
    item["tables"].append(
        _table(
            rows, ["qrels_a", "metric_a", "qrels_b", "metric_b", "n_runs", "tau", "tau_b", "z", "p_value", "spearman"]
        )
    )


def _swap(a: StoredAnalysis, item: dict[str, Any], links: Links) -> None:
    summary = a.tables.get("meta_swap", [])
    _figures(item, figures.swap(a))
    item["tables"].append(
        _table(
            summary, ["qrels", "metric", "n_runs", "n_topics", "trials", "abs_diff", "rel_diff", "share", "max_diff"]
        )
    )


def _discpower(a: StoredAnalysis, item: dict[str, Any], links: Links) -> None:
    rows = a.tables.get("meta_discpower", [])
    _figures(item, figures.discpower(a))
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


def _tests(a: StoredAnalysis, item: dict[str, Any], links: Links) -> None:
    rows = a.tables.get("meta_discpower", [])
    _figures(item, figures.tests(a))
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
    _figures(item, figures.robustness_of(a))
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
    level = f"{100 * DEFAULT_LEVEL:g} %"
    # a chart per metric, in the order of the pairs, a row per pair (linked to its compare page)
    metrics = dict.fromkeys(r["metric"] for r in rows)
    for metric, chart in zip(metrics, figures.compare_intervals(a, level)):
        mine = [r for r in rows if r["metric"] == metric]
        _figures(item, chart, [links.to("compare", r["other"], r["run"], r["qrels"], r["metric"]) for r in mine])
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


def _reusability(a: StoredAnalysis, item: dict[str, Any], links: Links) -> None:
    """Per metric: tau and the largest drops; the groups left out; every run's means and ranks with
    and without its group's unique documents, and the slope charts of the ranks."""
    how = "run" if a.params.get("leave_one_out") == "runs" else "group"
    item["columns"] = [
        f"{', '.join(item['columns'])} on {a.params.get('qrels')} (depth-{a.params.get('depth')} pool, leave one "
        f"{how} out)"
    ]
    _figures(item, figures.reusability(a))
    cols = ["metric", "n_runs", "tau", "tau_ap", "mean_change", "max_drop", "max_drop_run", "max_rank_drop"]
    item["tables"].append(_table(a.tables.get("meta_reusability", []), [*cols, "max_rank_drop_run", "n_rank_changes"]))
    groups = [{**g, how: g["left_out"]} for g in a.tables.get("meta_reusability_groups", [])]
    item["tables"].append(_table(groups, [how, "qrels", "n_runs", "n_unique", "n_removed", "n_removed_relevant"]))
    metrics = {m: i for i, m in enumerate(a.params.get("metrics") or [])}
    runs = [
        {**r, how: r["left_out"], "change": _difference(r["mean_reduced"], r["mean_full"])}
        for r in sorted(
            a.tables.get("meta_reusability_runs", []),
            key=lambda r: (metrics.get(r["metric"], len(metrics)), r["rank_full"], r["run"]),
        )
    ]
    cols = ["metric", "run", how, "mean_full", "mean_reduced", "change", "rank_full", "rank_reduced", "rank_alone"]
    item["tables"].append(_table(runs, cols))


def _difference(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b
