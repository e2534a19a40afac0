"""The compare page: one run against a baseline on one metric, per topic, with the statistics of
``evalstore compare``, computed by the same library function (:func:`evalstore.comparison.compare`,
``save=False``): the paired t-test with Δ, its t interval (:data:`EFFECT_LEVEL`) and d_z (``--effects``), and the
Wilcoxon signed-rank test, under compare's missing-topic rule (``missing='error'`` unless the page
is asked for ``?missing=zero`` or ``drop-topics``, as ``compare --missing``). When the rule
refuses (a run is not scored on every topic), the page says so and offers the other rules.
"""

from __future__ import annotations

from typing import Any

from ...comparison import compare
from ...errors import MetaError
from ...intervals.means import DEFAULT_LEVEL
from .. import context, page_charts
from .. import queries as q
from ..choices import choose, need_run
from ..context import BadRequest, Ctx, NotFound, ReportFile, ReportPlan
from ..frame import frame_model
from ..links import ReportLinks

#: the level of compare --effects' t interval of Δ (:func:`evalstore.stats.effects.t_interval`'s)
EFFECT_LEVEL = DEFAULT_LEVEL
#: the missing-topic rules the page offers (compare --missing), as spelled in URLs
MISSING = ("error", "zero", "drop-topics")
MISSING_TEXT = {
    "error": "compare's default rule: both runs must be scored on every topic",
    "zero": "a topic a run is not scored on counts 0 for it (--missing zero, as trec_eval -c)",
    "drop-topics": "only the topics both runs are scored on (--missing drop-topics)",
}


def library_statistics(ctx: Ctx, baseline: str, run: str, qrels: str, metric: str, missing: str) -> dict[str, Any]:
    """Means, Δ, its interval, d_z, the t and Wilcoxon tests of ``run`` against ``baseline``, as
    :func:`evalstore.comparison.compare` computes them (nothing stored); per-topic values of the
    matrix the tests read."""

    kw: dict[str, Any] = {"save": False, "missing": missing.replace("-", "_"), "progress": False}
    t = compare(ctx.store, qrels, baseline, [run], [metric], test="t", effects=True, **kw)
    w = compare(ctx.store, qrels, baseline, [run], [metric], test="wilcoxon", **kw)
    pair, fx, mat = t.pairs[0], t.effects[0], t.matrices[0]
    n = int(fx["n_topics"])
    return {
        "n": n,
        "mean_a": pair["mean_other"],
        "mean_b": pair["mean_run"],
        "diff": pair["diff"],
        "t": pair["statistic"],
        "p_t": pair["p_value"],
        "w": w.pairs[0]["statistic"],
        "p_w": w.pairs[0]["p_value"],
        "ci_low": fx["ci_t_lo"],
        "ci_high": fx["ci_t_hi"],
        "d_z": fx["d_z"],
        "df": n - 1,
        "level": EFFECT_LEVEL,
        "filled": mat.filled,
        "dropped": list(mat.dropped_topics),
        "values": {tp: (float(mat.values[0, j]), float(mat.values[1, j])) for j, tp in enumerate(mat.topics)},
    }


def compare_page(
    ctx: Ctx,
    baseline: str | None,
    run: str | None,
    qrels: str | None = None,
    metric: str | None = None,
    missing: str | None = None,
) -> dict[str, Any]:
    """The page's model, in three steps: the query (both runs' scores), the statistics (the
    library's, or the refusal of the missing-topic rule), the model (table, chart, links)."""
    baseline, run, policy = _checked(ctx, baseline, run, missing)
    qrels, metric, cat = choose(ctx, qrels, metric)
    a = q.run_scores(ctx.store, baseline, qrels, metric)
    b = q.run_scores(ctx.store, run, qrels, metric)
    for name, sc in ((baseline, a), (run, b)):
        if not sc:
            raise NotFound(f"the run {name!r} has no {metric} scores on {qrels!r}")
    stats, values, refused = _statistics(ctx, baseline, run, qrels, metric, policy, a, b)
    diffs = {t: vb - va for t, (va, vb) in values.items()}
    everything = sorted(diffs, key=lambda t: (-diffs[t], q.topic_key(t)))
    wins = sum(1 for t in everything if diffs[t] > 0)
    losses = sum(1 for t in everything if diffs[t] < 0)
    order, cut_note = largest(everything)
    links = ctx.links
    topic_links = [links.to("topic", t, [baseline, run], qrels, metric) for t in order]
    model = frame_model(ctx, "compare", f"{run} against {baseline}", qrels, metric)
    model.update(
        {
            "baseline": baseline,
            "run": run,
            "baseline_href": links.to("run", baseline, qrels, metric),
            "run_href": links.to("run", run, qrels, metric),
            "swap_href": links.to("compare", run, baseline, qrels, metric),
            "contrast_href": links.to("contrast", baseline, run, qrels, metric),
            "rows": _rows(order, topic_links, values, diffs),
            "chart": page_charts.difference_bars(
                order, [diffs[t] for t in order], label=f"{metric}: {run} − {baseline}", links=topic_links
            ),
            "wins": wins,
            "losses": losses,
            "ties": len(everything) - wins - losses,
            "cut_note": cut_note,
            "stats": stats,
            "refused": refused,
            "missing": policy,
            "missing_text": MISSING_TEXT[policy],
            "missing_links": _missing_links(ctx, baseline, run, qrels, metric, policy),
            "only": sorted(set(a) ^ set(b), key=q.topic_key),
            "metric_links": [
                {"name": m, "href": links.to("compare", baseline, run, qrels, m), "current": m == metric}
                for m in cat.metrics[qrels]
            ],
        }
    )
    return model


def _checked(ctx: Ctx, baseline: str | None, run: str | None, missing: str | None) -> tuple[str, str, str]:
    """The two runs and the missing-topic rule, once the runs are known and different (else a 400 or 404)."""
    if not baseline or not run:
        raise BadRequest("the comparison needs two runs: /compare?baseline=RUN_A&run=RUN_B&metric=METRIC")
    policy = missing or "error"
    if policy not in MISSING:
        raise BadRequest(f"missing= is one of {', '.join(MISSING)}, not {policy!r}")
    need_run(ctx, baseline)
    need_run(ctx, run)
    if baseline == run:
        raise BadRequest("compare two different runs")
    return baseline, run, policy


def _statistics(
    ctx: Ctx, baseline: str, run: str, qrels: str, metric: str, policy: str, a: dict, b: dict
) -> tuple[dict[str, Any], dict[str, tuple[float, float]], str | None]:
    """``(statistics, per-topic values, refusal)``: the library's statistics and the values its
    matrix read; when the missing-topic rule refuses, its message and the topics both runs have."""
    try:
        stats = library_statistics(ctx, baseline, run, qrels, metric, policy)
        return stats, stats.pop("values"), None
    except MetaError as e:
        values = {t: (a[t], b[t]) for t in a if t in b and a[t] is not None and b[t] is not None}
        return {"n": 0, "level": EFFECT_LEVEL}, values, str(e)


def _rows(order: list[str], hrefs: list, values: dict, diffs: dict[str, float]) -> list[dict[str, Any]]:
    """The table: one row per topic shown, with both values, the difference and its outcome."""
    return [
        {
            "topic": t,
            "href": href,
            "a": values[t][0],
            "b": values[t][1],
            "diff": diffs[t],
            "outcome": "win" if diffs[t] > 0 else "loss" if diffs[t] < 0 else "tie",
        }
        for t, href in zip(order, hrefs)
    ]


def _missing_links(ctx: Ctx, baseline: str, run: str, qrels: str, metric: str, policy: str) -> list[dict[str, Any]]:
    """The other missing-topic rules, as links (the live server only: the report has one page per pair)."""
    base = ctx.links.to("compare", baseline, run, qrels, metric)
    if not ctx.links.live or base is None:
        return []
    sep = "&" if "?" in base else "?"
    return [
        {"name": m, "href": base + (f"{sep}missing={m}" if m != "error" else ""), "text": MISSING_TEXT[m]}
        for m in MISSING
        if m != policy
    ]


def largest(order: list[str]) -> tuple[list[str], str | None]:
    """Topics ordered from the largest win to the largest loss, cut to the :data:`~evalstore.web.context.PAGE_TOPICS`
    largest wins and losses (with the note that says so; the statistics use every topic)."""
    if len(order) <= context.PAGE_TOPICS:
        return order, None
    half = context.PAGE_TOPICS // 2
    note = (
        f"the table and the chart show the {half:,} largest wins and the {half:,} largest losses of "
        f"{len(order):,} topics; the statistics use all of them"
    )
    return order[:half] + order[-half:], note


def report_files(plan: ReportPlan) -> list[ReportFile]:
    """The static site's comparisons: each run shown against the best run, for each metric."""
    return [
        (plan.links.per_run_file("compare", run, m), (plan.best[m], run, plan.qrels, m))
        for m in plan.metrics
        for run in plan.shown.get(m, [])
        if run != plan.best[m]
    ]


def report_path(links: ReportLinks, baseline: str, run: str, qrels: str, metric: str) -> str | None:
    """The static site's comparison of ``run`` with the best run by ``metric``."""
    ok = qrels == links.qrels and metric in links.metrics and links.best.get(metric) == baseline != run
    return links.per_run_file("compare", run, metric) if ok and links.has_run(run) else None
