"""The leaderboard page: the runs of a qrels set by one metric, or by several side by side (a
paper's table: nDCG@10, AP(rel=2), RR(rel=2)), each metric's mean with its interval, every column
sortable. Runs are ordered by the first metric. The interval is the one stored with the evaluation
(``eval --ci``), else the t interval (at :data:`~evalstore.web.queries.CI_LEVEL`) of
:func:`evalstore.intervals.means.of_scores` (the function ``eval --ci t`` uses;
:func:`evalstore.web.queries.leaderboard`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...output.figures.model import Intervals
from .. import figure_charts
from .. import queries as q
from .. import rank_intervals as rank_view
from ..choices import board, choose
from ..context import BadRequest, Ctx, ReportFile, ReportPlan
from ..figure_charts import IntervalChart
from ..frame import frame_model
from ..links import ReportLinks, metric_list
from ..render import percent

#: runs drawn in the leaderboard's interval chart (the table always has them all)
CHART_RUNS = 60
#: metrics a leaderboard shows side by side at most
MAX_METRICS = 8


def chosen_metrics(ctx: Ctx, qrels: str | None, metrics: str | Sequence[str] | None) -> tuple[str, list[str], Any]:
    """The qrels set and the metrics asked for, as stored (404 for a metric without scores); the
    default metric when none is asked for."""
    asked = [metrics] if isinstance(metrics, str) else [m for m in (metrics or []) if m]
    qrels_name, first, cat = choose(ctx, qrels, asked[0] if asked else None)
    names = [first]
    for m in asked[1:]:
        stored = choose(ctx, qrels_name, m)[1]
        if stored not in names:
            names.append(stored)
    return qrels_name, names[:MAX_METRICS], cat


def leaderboard_page(
    ctx: Ctx,
    qrels: str | None = None,
    metrics: str | Sequence[str] | None = None,
    rank_ci: str | None = None,
    trials: str | None = None,
    seed: str | None = None,
) -> dict[str, Any]:
    """The page's model; the ranks (with ``rank_ci``: computed on request, else the stored rank
    intervals, :mod:`evalstore.web.rank_intervals`) are those of the first metric, which orders the runs.
    In three steps: the query (each metric's board), the rank intervals, the model (table, chart, links)."""
    qrels, names, cat = chosen_metrics(ctx, qrels, metrics)
    first = names[0]
    boards = {m: board(ctx, qrels, m) for m in names}
    rows = boards[first]
    links = ctx.links
    ranks = rank_intervals(ctx, rows, qrels, first, rank_ci, trials, seed, links)
    best = rows[0].run if rows else None
    every_row = [r for m in names for r in boards[m]]
    level = level_text(every_row)
    order = [r.run for r in rows] + sorted({r.run for m in names[1:] for r in boards[m]} - {r.run for r in rows})
    heading = f"{first} on {qrels}" if len(names) == 1 else f"{', '.join(names)} on {qrels}"
    table = _table(ctx, qrels, names, boards, order, ranks["ranks"])
    model = frame_model(ctx, "leaderboard", f"Leaderboard: {heading}", qrels, first)
    model.update(_pickers(ctx, cat, qrels, names))
    model.update(
        {
            "title": heading,
            "metrics": names,
            "columns": _columns(names, level),
            "rows": table,
            "n_runs": len(order),
            "kinds": kinds_text([row["kind"] for row in table]),
            "best": best,
            "aggregate": rows[0].aggregate if rows else "mean",
            "chart": _chart(ctx, rows[:CHART_RUNS], qrels, first, level),
            "chart_note": f"the best {CHART_RUNS} of {len(rows)} runs" if len(rows) > CHART_RUNS else None,
            "method": interval_method(every_row),
            "csv": links.download("leaderboard", "csv", qrels, first),
            "parquet": links.download("leaderboard", "parquet", qrels, first),
            "rank_links": [
                {"name": name, "href": links.to("leaderboard", qrels, first, key), "current": key == ranks["rank_ci"]}
                for name, key in (("stored", ""), ("bootstrap", "bootstrap"), ("t", "t"))
            ],
        }
    )
    model.update(ranks)
    return model


def _table(
    ctx: Ctx, qrels: str, names: list[str], boards: dict[str, list[q.BoardRow]], order: list[str], ranks: dict
) -> list[dict[str, Any]]:
    """One row per run in ``order``: its rank and rank interval by the first metric, its cells for
    every metric, the link comparing it with the best run."""
    first, links = names[0], ctx.links
    by_metric = {m: {r.run: r for r in boards[m]} for m in names}
    best = boards[first][0].run if boards[first] else None
    table = []
    for i, run in enumerate(order, start=1):
        cells: list[dict[str, Any]] = []
        for m in names:
            cells += _cells(by_metric[m].get(run), single=len(names) == 1)
        mine = by_metric[first].get(run)
        rank_lo, rank_hi = ranks.get(run, (None, None, None))[1:]
        table.append(
            {
                "rank": i if mine else None,
                "rank_lo": rank_lo,
                "rank_hi": rank_hi,
                "run": run,
                "href": links.to("run", run, qrels, first),
                "cells": cells,
                "n_topics": mine.n_topics if mine else None,
                "compare": links.to("compare", best, run, qrels, first) if best and run != best and mine else None,
                "kind": _kind(by_metric, run),
            }
        )
    return table


def _chart(ctx: Ctx, shown: Sequence[q.BoardRow], qrels: str, metric: str, level: str) -> IntervalChart:
    """The interval chart of the runs shown (the best :data:`CHART_RUNS`)."""
    what = f"mean {metric} on {qrels} with its {level} interval".replace("  ", " ")
    runs = [r.run for r in shown]
    lows, highs = [r.ci_low for r in shown], [r.ci_high for r in shown]
    intervals = Intervals(what, what, runs, [r.mean for r in shown], lows, highs)
    return figure_charts.interval_chart(intervals, links=[ctx.links.to("run", run, qrels, metric) for run in runs])


def rank_intervals(ctx: Ctx, rows: Sequence[q.BoardRow], qrels: str, metric: str, rank_ci, trials, seed, links=None):
    """The rank intervals of the board (:mod:`evalstore.web.rank_intervals`); a bad request is a 400."""

    run_link = (lambda run: links.to("run", run, qrels, metric)) if links is not None else None
    try:
        return rank_view.rank_model(ctx.store, rows, qrels, metric, rank_ci, trials, seed, run_link)
    except rank_view.RankRequestError as e:
        raise BadRequest(str(e)) from None


def _kind(by_metric: dict[str, dict[str, q.BoardRow]], run: str) -> str:
    """The kind of a run of the board (submitted, fused, scratch)."""
    return next((rows[run].kind for rows in by_metric.values() if run in rows), "submitted")


def kinds_text(kinds: Sequence[str]) -> str | None:
    """What the board includes when not only submitted runs (``6 submitted, 1 fused``): the page
    then shows each run's kind."""
    if set(kinds) <= {"submitted"}:
        return None
    return ", ".join(f"{kinds.count(k)} {k}" for k in ("submitted", "fused", "scratch") if k in kinds)


def level_text(rows: Sequence[q.BoardRow]) -> str:
    """The level the column headers name (``95 %``): the one level of the intervals shown, else
    nothing (intervals of several levels: each cell's title says its own)."""
    levels = {r.ci_level for r in rows if r.ci_level is not None}
    return percent(levels.pop()) if len(levels) == 1 else percent(q.CI_LEVEL) if not levels else ""


def _columns(names: list[str], level: str) -> list[dict[str, str]]:
    ci = f"{level} CI" if level else "CI"
    if len(names) == 1:
        return [
            {"label": "mean", "title": f"mean {names[0]}"},
            {"label": f"{ci} low", "title": "lower end of the interval"},
            {"label": f"{ci} high", "title": "upper end of the interval"},
            {"label": "± half-width", "title": "half the width of the interval"},
            {"label": "sd", "title": "standard deviation of the per-topic scores"},
        ]
    out = []
    for m in names:
        out.append({"label": m, "title": f"mean {m}"})
        out.append({"label": f"{m} {ci}", "title": f"the interval of the mean {m} (sorts by its half-width)"})
    return out


def _cells(r: q.BoardRow | None, single: bool) -> list[dict[str, Any]]:
    """The cells of one run and metric: mean and interval (and, alone, the interval's ends, half
    width and sd as numbers)."""
    mean = r.mean if r else None
    lo, hi = (r.ci_low, r.ci_high) if r else (None, None)
    half = (hi - mean) if hi is not None and mean is not None else None
    method = r.ci_method if r else None
    if single:
        return [_cell(mean), _cell(lo), _cell(hi), _cell(half), _cell(r.sd if r else None)]
    return [_cell(mean, strong=True), _cell(half, interval=(lo, hi), method=method)]


def _cell(v: Any, strong: bool = False, interval: tuple[Any, Any] | None = None, method: str | None = None):
    return {"v": v, "strong": strong, "interval": interval, "method": method}


def _pickers(ctx: Ctx, cat: q.Catalogue, qrels: str, names: list[str]) -> dict[str, Any]:
    """The qrels set and metric choices: a form on the server (the first metric and the columns
    added beside it), links in the report."""
    links = ctx.links
    metrics = list(cat.metrics[qrels])
    first = names[0]
    extra = names[1:]
    metric_links = [
        {"name": m, "href": links.to("leaderboard", qrels, m), "current": names == [m], "runs": n}
        for m, n in cat.metrics[qrels].items()
    ]
    columns = [
        {
            "name": m,
            "shown": m in names,
            "href": links.to("leaderboard", qrels, [x for x in names if x != m] if m in names else [*names, m]),
        }
        for m in metrics
        if m != first
    ]
    every = links.to("leaderboard", qrels, metrics) if len(metrics) > 1 else None
    qrels_links = [
        {
            "name": name,
            "href": links.to("leaderboard", name, cat.default_metric(name, ctx.default_metric) or ""),
            "current": name == qrels,
        }
        for name in cat.qrels
    ]
    return {
        "metric_choices": metric_links,
        "qrels_choices": qrels_links,
        "column_choices": columns,
        "extra_metrics": extra,
        "all_metrics": {"href": every, "current": names == metrics} if every else None,
    }


def interval_method(rows: Sequence[q.BoardRow]) -> str:
    """What the intervals are, said once for the page."""
    methods = {r.ci_method for r in rows}
    parts = []
    if any(m and m.startswith("stored") for m in methods):
        parts.append(
            "Intervals stored with the evaluation (evalstore eval --ci) are shown as stored (method and level "
            "in each cell's title)."
        )
    if any(m and not m.startswith("stored") for m in methods):
        when = " otherwise" if parts else ""
        parts.append(
            f"{percent(q.CI_LEVEL)} interval{when}: mean ± t({1 - (1 - q.CI_LEVEL) / 2:g}, n−1) · sd / √n over "
            "the run's n "
            "per-topic scores (Student's t; the topics taken as a sample of topics), as evalstore eval --ci t "
            "computes it (evalstore.intervals.means); for a geometric mean on the log scale."
        )
    if {r.aggregate for r in rows} & {"sum"}:
        parts.append("No interval for a metric summarised by a sum.")
    return " ".join(parts)


def leaderboard_table(ctx: Ctx, qrels: str | None, metric: str | None) -> tuple[list[str], list[list[Any]], str, str]:
    """The leaderboard as data (the CSV and Parquet downloads), with the stored rank intervals."""
    qrels, metric, _ = choose(ctx, qrels, metric)
    rows_of = board(ctx, qrels, metric)
    ranks = rank_intervals(ctx, rows_of, qrels, metric, None, None, None)["ranks"]
    cols = ["rank", "rank_lo", "rank_hi", "run", "qrels", "metric", "mean", "ci_low", "ci_high", "ci_method", "sd"]
    cols += ["n_topics", "aggregate"]
    rows = [
        [r.rank, *ranks.get(r.run, (None, None, None))[1:], r.run, qrels, metric, r.mean, r.ci_low, r.ci_high]
        + [r.ci_method, r.sd, r.n_topics, r.aggregate]
        for r in rows_of
    ]
    return cols, rows, qrels, metric


def report_files(plan: ReportPlan) -> list[ReportFile]:
    """The static site's leaderboards: the metrics side by side (``index.html``), and each alone
    when there are several."""
    alone = [(_report_file(plan.links, [m]), (plan.qrels, m)) for m in plan.metrics] if len(plan.metrics) > 1 else []
    return [("index.html", (plan.qrels, plan.metrics)), *alone]


def report_path(
    links: ReportLinks, qrels: str | None = None, metrics: str | Sequence[str] | None = None, rank_ci: str | None = None
) -> str | None:
    """The static site's leaderboard of ``metrics`` (its metrics side by side, or one of them); not
    the rank intervals computed on request."""
    ms = metric_list(metrics)
    ok = not rank_ci and qrels == links.qrels and (ms == links.metrics or (len(ms) == 1 and ms[0] in links.metrics))
    return _report_file(links, ms) if ok else None


def _report_file(links: ReportLinks, metrics: list[str]) -> str:
    if metrics == links.metrics:
        return "index.html"
    return f"leaderboard-{links.stem('metric', metrics[0])}.html"
