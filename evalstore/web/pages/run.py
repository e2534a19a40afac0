"""The run page: a run's score on every topic beside the median, best and worst of all runs,
with its mean, interval and rank (long runs in pages of :data:`~evalstore.web.context.PAGE_TOPICS` topics)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...fusion.provenance import provenance
from .. import context, page_charts
from .. import queries as q
from ..choices import board, choose, need_run, no_scores_message, pickers, topic_stats
from ..context import BadRequest, Ctx, NotFound, ReportFile, ReportPlan
from ..frame import frame_model
from ..links import ReportLinks
from ..page_charts import AppendixChart


def _partner(rows: Sequence[q.BoardRow], run: str) -> str | None:
    """The run a run's topic links compare with: the best run, or the second best for the best."""
    names = [r.run for r in rows]
    others = [n for n in names if n != run]
    return others[0] if others else None


def run_page(
    ctx: Ctx, run: str, qrels: str | None = None, metric: str | None = None, page: str | int | None = None
) -> dict[str, Any]:
    """The page's model, in three steps: the query (the page's topics with their statistics, the
    board, the counts over every topic), the chart and table, the model."""
    need_run(ctx, run)
    qrels, metric, cat = choose(ctx, qrels, metric)
    total = q.run_topic_count(ctx.store, run, qrels, metric)
    if not total:
        raise NotFound(no_scores_message(ctx, run, qrels, metric))
    k, pages = _page(page, total)
    scores, topics, stats = _run_topics(ctx, run, qrels, metric, k, pages)
    ranked = board(ctx, qrels, metric)
    best = ranked[0].run if ranked else None
    links = ctx.links
    partner = _partner(ranked, run)
    pair = [run, partner] if partner else [run]
    topic_links = [links.to("topic", t, pair, qrels, metric) for t in topics]
    # the cards count every topic of the run, whatever the page shows (one count, in SQL)
    above, below, equal, at_best = q.run_against_topics(ctx.store, run, qrels, metric)
    me = next((r for r in ranked if r.run == run), None)
    model = frame_model(ctx, "run", f"Run {run}", qrels, metric)
    model.update(pickers(ctx, cat, qrels, metric))
    made = provenance(ctx.store, run)  # a fused run: "fused from A, B by RRF (k = 60)"
    model.update(
        {
            "run": run,
            "made": made.text() if made else None,
            "rows": _rows(topics, topic_links, scores, stats),
            "chart": _chart(topics, topic_links, scores, stats, run, metric),
            "mean": me.mean if me else None,
            "rank": me.rank if me else None,
            "n_runs": len(ranked),
            "ci_low": me.ci_low if me else None,
            "ci_high": me.ci_high if me else None,
            "ci_level": me.ci_level if me else None,
            "above": above,
            "below": below,
            "equal": equal,
            "best_count": at_best,
            "paging": _paging(ctx, links.to("run", run, qrels, metric), k, pages, total),
            "partner": partner,
            "compare": links.to("compare", best, run, qrels, metric) if best not in (None, run) else None,
            "compare_with": best,
            "run_links": [
                {"name": m, "href": links.to("run", run, qrels, m), "current": m == metric} for m in cat.metrics[qrels]
            ],
        }
    )
    return model


def _chart(
    topics: list[str],
    hrefs: list,
    scores: dict[str, float | None],
    stats: dict[str, q.TopicStats],
    run: str,
    metric: str,
) -> AppendixChart:
    """The run's score on each topic shown beside the median, best and worst of all runs."""
    return page_charts.appendix_chart(
        topics,
        [scores[t] for t in topics],
        [stats[t].median if t in stats else None for t in topics],
        [stats[t].best if t in stats else None for t in topics],
        [stats[t].worst if t in stats else None for t in topics],
        run=run,
        metric=metric,
        links=hrefs,
    )


def _rows(
    topics: list[str], hrefs: list, scores: dict[str, float | None], stats: dict[str, q.TopicStats]
) -> list[dict[str, Any]]:
    """The table: one row per topic shown, its score beside the topic's statistics over all runs."""
    table = []
    for t, href in zip(topics, hrefs):
        v, s = scores[t], stats.get(t)
        diff = None if v is None or s is None or s.median is None else v - s.median
        table.append(
            {
                "topic": t,
                "href": href,
                "value": v,
                "median": s.median if s else None,
                "best": s.best if s else None,
                "worst": s.worst if s else None,
                "diff": diff,
                "is_best": s is not None and v is not None and s.best is not None and v >= s.best,
                "n_runs": s.n_runs if s else 0,
            }
        )
    return table


def _run_topics(
    ctx: Ctx, run: str, qrels: str, metric: str, k: int, pages: int
) -> tuple[dict[str, float | None], list[str], dict[str, q.TopicStats]]:
    """The scores, topics (natural order) and topic statistics of page ``k`` of a run's page: all
    of them when there is one page, else that page's (the counts over all come from SQL)."""
    if pages > 1:
        size = context.PAGE_TOPICS
        scores = dict(q.run_scores_page(ctx.store, run, qrels, metric, size, (k - 1) * size))
        topics = list(scores)
        return scores, topics, q.topic_stats(ctx.store, qrels, metric, topics)
    scores = q.run_scores(ctx.store, run, qrels, metric)
    return scores, sorted(scores, key=q.topic_key), topic_stats(ctx, qrels, metric)


def _page(page: str | int | None, total: int) -> tuple[int, int]:
    """The page asked for (``?page=``, from 1) and the number of pages of ``total`` topics."""
    pages = max(1, -(-total // context.PAGE_TOPICS))
    try:
        k = 1 if page is None or page == "" else int(page)
    except (TypeError, ValueError):
        raise BadRequest(f"page must be a whole number, not {str(page)[:40]!r}") from None
    if not 1 <= k <= pages:
        raise BadRequest(f"page must be between 1 and {pages}, not {k}")
    return k, pages


def _paging(ctx: Ctx, href: str | None, k: int, pages: int, total: int) -> dict[str, Any] | None:
    """What a page of a long list says about the rest: which topics it shows, and links to the
    neighbouring pages (the static report has only the first page)."""
    if pages == 1:
        return None
    first, last = (k - 1) * context.PAGE_TOPICS + 1, min(total, k * context.PAGE_TOPICS)
    rest = (
        "the other pages: ?page=N"
        if ctx.links.live
        else "this report holds the first page; `evalstore serve` pages through all of them"
    )
    return {
        "note": f"topics {first:,}–{last:,} of {total:,} (natural order), page {k:,} of {pages:,}; {rest}",
        "prev": ctx.links.paged(href, k - 1) if k > 1 else None,
        "next": ctx.links.paged(href, k + 1) if k < pages else None,
    }


def report_files(plan: ReportPlan) -> list[ReportFile]:
    """The static site's run pages: each run shown, for each metric."""
    return [
        (plan.links.per_run_file("runs", run, m), (run, plan.qrels, m))
        for m in plan.metrics
        for run in plan.shown.get(m, [])
    ]


def report_path(links: ReportLinks, run: str, qrels: str, metric: str, page: int | None = None) -> str | None:
    """The static site's page of ``run`` by ``metric`` (one page: all its topics)."""
    ok = qrels == links.qrels and metric in links.metrics and links.has_run(run) and page in (None, 1)
    return links.per_run_file("runs", run, metric) if ok else None
