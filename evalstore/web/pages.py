"""The pages: each builder reads a store (:mod:`.queries`), computes what the page shows and returns
its view model (a dict the templates of ``templates/`` render). The server and the static report
call the same builders; only the :class:`~evalstore.web.links.Links` differ.

A name that the store does not hold raises :class:`NotFound` (the page answers 404); a bad
parameter raises :class:`BadRequest` (400).
"""

from __future__ import annotations

import math
import os
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import EvalstoreError
from ..fusion.provenance import provenance
from ..ingest.checks import MAX_NAME_LENGTH
from ..version import __version__
from . import queries as q
from . import svg
from .links import Links

if TYPE_CHECKING:
    from ..facade import Store

#: documents of each ranked list shown on a topic page unless ?depth= says otherwise
DEFAULT_DEPTH = 20
MAX_DEPTH = 1000
#: analyses shown on the meta page (the most recent)
META_LIMIT = 50
#: runs drawn in the leaderboard's interval chart (the table always has them all)
CHART_RUNS = 60
#: topics a run page lists at once (a store of more topics gets pages: ?page=2, ...), and the
#: comparison page at most (the largest wins and losses)
PAGE_TOPICS = 1000
#: the longest ``runs=`` of a topic page: two run names and the comma
MAX_RUNS_PARAM = 2 * MAX_NAME_LENGTH + 1


class PageError(EvalstoreError):
    status = 400


class NotFound(PageError):
    """A run, topic, qrels set or metric the store does not hold."""

    status = 404


class BadRequest(PageError):
    status = 400


@dataclass
class Ctx:
    """What every builder needs: the open store, the links, and (for the static report, which builds
    many pages from one store) a cache of what several pages read."""

    store: Store
    links: Links
    title: str = ""
    cache: dict[Any, Any] | None = None
    notes: list[str] = field(default_factory=list)
    default_metric: str | None = None  # serve --metric: the metric a page shows when none is asked for

    def cached(self, key: Any, make):
        if self.cache is None:
            return make()
        if key not in self.cache:
            self.cache[key] = make()
        return self.cache[key]


def site_title(location: str) -> str:
    return os.path.basename(location) or location


def base_model(
    ctx: Ctx, page: str, heading: str, qrels: str | None = None, metric: str | None = None
) -> dict[str, Any]:
    links = ctx.links
    return {
        "page": page,
        "heading": heading,
        "site": ctx.title,
        "live": links.live,
        "version": __version__,
        "css": links.static("evalstore.css"),
        "js": links.static("sort.js"),
        "home": links.home(),
        "meta_link": links.meta(),
        "sql_link": links.sql(),
        "qrels": qrels,
        "metric": metric,
    }


# --------------------------------------------------------------------------- choosing what to show
def choose(ctx: Ctx, qrels: str | None, metric: str | None) -> tuple[str, str, q.Catalogue]:
    """The qrels set and metric a page shows: the ones asked for (404 when the store has no scores
    of them), else the defaults of the store (:class:`~evalstore.web.queries.Catalogue`)."""
    cat = ctx.cached("catalogue", lambda: q.catalogue(ctx.store))
    if not cat.metrics:
        raise NotFound(
            "the store holds no scores yet: ingest qrels and runs and evaluate them "
            "(evalstore ingest qrels FILE; evalstore ingest run FILES; evalstore eval -m AP -m nDCG@10)"
        )
    if qrels is None or qrels == "":
        qrels = cat.default_qrels()
    if qrels not in cat.metrics:
        known = ", ".join(cat.qrels[:20])
        raise NotFound(f"no scores on a qrels set named {qrels!r} (qrels sets with scores: {known})")
    assert qrels is not None
    if metric is None or metric == "":
        metric = cat.default_metric(qrels, ctx.default_metric)
    assert metric is not None
    if metric not in cat.metrics[qrels]:
        metric = _stored_spelling(ctx, qrels, metric, cat)
    return qrels, metric, cat


def _stored_spelling(ctx: Ctx, qrels: str, metric: str, cat: q.Catalogue) -> str:
    """``metric`` as stored (``map`` -> ``AP``, ``ndcg_cut_10`` -> ``nDCG@10``), or NotFound."""
    from ..meta.matrix import canonical_metric

    known = ", ".join(list(cat.metrics[qrels])[:30])
    try:
        name = canonical_metric(ctx.store, qrels, metric)
    except EvalstoreError:
        name = None
    if name is None or name not in cat.metrics[qrels]:
        raise NotFound(
            f"no scores of the metric {metric!r} on the qrels set {qrels!r} (metrics with scores: {known}); "
            f"evaluate it with evalstore eval --qrels {qrels} -m {metric}"
        )
    return name


def board(ctx: Ctx, qrels: str, metric: str) -> list[q.BoardRow]:
    return ctx.cached(("board", qrels, metric), lambda: q.leaderboard(ctx.store, qrels, metric))


def _stats(ctx: Ctx, qrels: str, metric: str) -> dict[str, q.TopicStats]:
    return ctx.cached(("stats", qrels, metric), lambda: q.topic_stats(ctx.store, qrels, metric))


def _pickers(ctx: Ctx, cat: q.Catalogue, qrels: str, metric: str) -> dict[str, Any]:
    """The qrels set and metric choices: a form on the server, links in the report."""
    links = ctx.links
    metric_links = [
        {"name": m, "href": links.leaderboard(qrels, m), "current": m == metric, "runs": n}
        for m, n in cat.metrics[qrels].items()
    ]
    qrels_links = [
        {
            "name": name,
            "href": links.leaderboard(name, cat.default_metric(name, ctx.default_metric) or ""),
            "current": name == qrels,
        }
        for name in cat.qrels
    ]
    return {"metric_choices": metric_links, "qrels_choices": qrels_links}


# --------------------------------------------------------------------------- pages
def no_scores_message(ctx: Ctx, run: str, qrels: str, metric: str) -> str:
    """Why a run has no scores on a qrels set, and what would give it some: ``eval`` when the run
    shares topics with the set, else the qrels sets it is scored on (an eval command could not
    work: the run is of another collection)."""
    import shlex

    shared, scored = q.run_qrels_overlap(ctx.store, run, qrels)
    if shared:
        cmd = f"evalstore eval --qrels {shlex.quote(qrels)} -m {shlex.quote(metric)} -r {shlex.quote(run)}"
        return f"the run {run!r} has no {metric} scores on {qrels!r}; evaluate it with {cmd}"
    where = f"; it has scores on {', '.join(scored[:10])}" if scored else ""
    return (
        f"the run {run!r} shares no topic with the qrels set {qrels!r} (another collection), so it has no scores "
        f"on it{where}"
    )


def need_run(ctx: Ctx, run: str) -> None:
    if not q.run_exists(ctx.store, run):
        raise NotFound(f"no run named {run!r} in the store")


def _partner(rows: Sequence[q.BoardRow], run: str) -> str | None:
    """The run a run's topic links compare with: the best run, or the second best for the best."""
    names = [r.run for r in rows]
    others = [n for n in names if n != run]
    return others[0] if others else None


def run_page(
    ctx: Ctx, run: str, qrels: str | None = None, metric: str | None = None, page: str | int | None = None
) -> dict[str, Any]:
    need_run(ctx, run)
    qrels, metric, cat = choose(ctx, qrels, metric)
    total = q.run_topic_count(ctx.store, run, qrels, metric)
    if not total:
        raise NotFound(no_scores_message(ctx, run, qrels, metric))
    k, pages = _page(page, total)
    scores, topics, stats = _run_topics(ctx, run, qrels, metric, k, pages)
    ranked = board(ctx, qrels, metric)
    links = ctx.links
    partner = _partner(ranked, run)
    pair = [run, partner] if partner else [run]
    topic_links = [links.topic(t, pair, qrels, metric) for t in topics]
    chart = svg.appendix_chart(
        topics,
        [scores[t] for t in topics],
        [stats[t].median if t in stats else None for t in topics],
        [stats[t].best if t in stats else None for t in topics],
        [stats[t].worst if t in stats else None for t in topics],
        run=run,
        metric=metric,
        links=topic_links,
    )
    table = []
    above = below = equal = 0
    for t, href in zip(topics, topic_links):
        v, s = scores[t], stats.get(t)
        diff = None if v is None or s is None or s.median is None else v - s.median
        if diff is not None:
            above += diff > 0
            below += diff < 0
            equal += diff == 0
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
    if pages > 1:
        above, below, equal, _ = q.run_against_topics(ctx.store, run, qrels, metric)
    me = next((r for r in ranked if r.run == run), None)
    model = base_model(ctx, "run", f"Run {run}", qrels, metric)
    model.update(_pickers(ctx, cat, qrels, metric))
    made = provenance(ctx.store, run)  # a fused run: "fused from A, B by RRF (k = 60)"
    model.update(
        {
            "run": run,
            "made": made.text() if made else None,
            "rows": table,
            "chart": chart,
            "mean": me.mean if me else None,
            "rank": me.rank if me else None,
            "n_runs": len(ranked),
            "ci_low": me.ci_low if me else None,
            "ci_high": me.ci_high if me else None,
            "ci_level": me.ci_level if me else None,
            "above": above,
            "below": below,
            "equal": equal,
            "best_count": sum(1 for r in table if r["is_best"]),
            "paging": _paging(ctx, links.run(run, qrels, metric), k, pages, total),
            "partner": partner,
            "compare": links.compare(ranked[0].run, run, qrels, metric) if ranked and ranked[0].run != run else None,
            "compare_with": ranked[0].run if ranked else None,
            "run_links": [
                {"name": m, "href": links.run(run, qrels, m), "current": m == metric} for m in cat.metrics[qrels]
            ],
        }
    )
    return model


def _run_topics(
    ctx: Ctx, run: str, qrels: str, metric: str, k: int, pages: int
) -> tuple[dict[str, float | None], list[str], dict[str, q.TopicStats]]:
    """The scores, topics (natural order) and topic statistics of page ``k`` of a run's page: all
    of them when there is one page, else that page's (the counts over all come from SQL)."""
    if pages > 1:
        scores = dict(q.run_scores_page(ctx.store, run, qrels, metric, PAGE_TOPICS, (k - 1) * PAGE_TOPICS))
        topics = list(scores)
        return scores, topics, q.topic_stats(ctx.store, qrels, metric, topics)
    scores = q.run_scores(ctx.store, run, qrels, metric)
    return scores, sorted(scores, key=q.topic_key), _stats(ctx, qrels, metric)


def _page(page: str | int | None, total: int) -> tuple[int, int]:
    """The page asked for (``?page=``, from 1) and the number of pages of ``total`` topics."""
    pages = max(1, -(-total // PAGE_TOPICS))
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
    first, last = (k - 1) * PAGE_TOPICS + 1, min(total, k * PAGE_TOPICS)
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


def resolve_runs(spec: str, known: set[str]) -> list[str]:
    """Run names from ``runs=A,B``: split at commas, but a name that itself contains a comma is
    recognised whole (the split that yields known runs wins). Two names at most, so the text is at
    most :data:`MAX_RUNS_PARAM` characters: longer is a BadRequest before any work (each comma is
    a split point to try)."""
    if len(spec) > MAX_RUNS_PARAM:
        raise BadRequest(
            f"runs= names one or two runs ({MAX_NAME_LENGTH} characters each at most), not {len(spec):,} characters"
        )
    if spec in known:
        return [spec]
    for cut in (i for i, ch in enumerate(spec) if ch == ","):
        left, right = spec[:cut], spec[cut + 1 :]
        if left in known and right in known:
            return [left, right]
    pieces = spec.split(",")
    out = [p for p in pieces if p != ""]
    missing = [p for p in out if p not in known]
    if missing:
        raise NotFound(f"no run named {missing[0]!r} in the store")
    return out


def topic_page(
    ctx: Ctx,
    topic: str,
    runs: str | Sequence[str] | None = None,
    qrels: str | None = None,
    metric: str | None = None,
    depth: str | int | None = None,
) -> dict[str, Any]:
    qrels, metric, cat = choose(ctx, qrels, metric)
    store = ctx.store
    if not q.topic_known(store, qrels, topic):
        raise NotFound(f"no topic {topic!r} in the qrels set {qrels!r} or in the scores on it")
    k = _depth(depth)
    chosen = _topic_runs(ctx, runs, qrels, metric)
    links = ctx.links
    scores = q.scores_on_topic(store, qrels, topic)
    all_runs = sorted(
        ((rn, v) for (rn, mm), v in scores.items() if mm == metric),
        key=lambda x: (-(x[1] if x[1] is not None else -math.inf), x[0]),
    )
    judged = q.judgments(store, qrels, topic)
    rel_docs = [d for d, g in judged if g > 0]
    shown_rel = rel_docs[:200]
    rank_of = q.ranks_of(store, chosen, topic, shown_rel)
    texts = q.topic_texts(store, topic)
    columns = _ranked_columns(ctx, chosen, topic, qrels, metric, k)
    snippets = q.doc_snippets(store, sorted({x["doc"] for c in columns for x in c["docs"]} | set(shown_rel)))
    for c in columns:
        for x in c["docs"]:
            x["snippet"] = snippets.get(x["doc"])
    heading = f"Topic {topic}: {texts[0].query}" if texts else f"Topic {topic}"
    model = base_model(ctx, "topic", heading, qrels, metric)
    model.update(
        {
            "topic": topic,
            "texts": texts,
            "has_docs": bool(snippets),
            "runs": chosen,
            "columns": columns,
            "depth": k,
            "metric_rows": _topic_metric_rows(cat.metrics[qrels], scores, chosen, metric),
            "all_runs": [
                {"run": rn, "value": v, "href": links.run(rn, qrels, metric), "chosen": rn in chosen}
                for rn, v in all_runs
            ],
            "n_judged": len(judged),
            "n_relevant": len(rel_docs),
            "grades": sorted({g for _, g in judged}, reverse=True),
            "relevant_docs": [
                {"doc": d, "grade": g, "ranks": [rank_of.get((r, d)) for r in chosen], "snippet": snippets.get(d)}
                for d, g in judged
                if g > 0 and d in set(shown_rel)
            ],
            "relevant_cut": len(rel_docs) > len(shown_rel),
            "compare": links.compare(chosen[0], chosen[1], qrels, metric) if len(chosen) == 2 else None,
        }
    )
    return model


def _depth(depth: str | int | None) -> int:
    """The number of ranks a topic page lists (``?depth=``)."""
    try:
        k = DEFAULT_DEPTH if depth is None or depth == "" else int(depth)
    except (TypeError, ValueError):
        raise BadRequest(f"depth must be a whole number, not {depth!r}") from None
    if not 1 <= k <= MAX_DEPTH:
        raise BadRequest(f"depth must be between 1 and {MAX_DEPTH}, not {k}")
    return k


def _topic_runs(ctx: Ctx, runs: str | Sequence[str] | None, qrels: str, metric: str) -> list[str]:
    """The one or two runs a topic page shows (default: the two best on the metric)."""
    if runs is None or runs == "" or runs == []:
        chosen = [r.run for r in board(ctx, qrels, metric)[:2]]
    elif isinstance(runs, str):
        chosen = resolve_runs(runs, set(ctx.cached("runs", lambda: q.run_names(ctx.store))))
    else:
        chosen = list(runs)
        for r in chosen:
            need_run(ctx, r)
    chosen = list(dict.fromkeys(chosen))
    if len(chosen) > 2:
        raise BadRequest("a topic page shows one or two runs side by side: ?runs=A,B")
    return chosen


def _ranked_columns(ctx: Ctx, chosen: list[str], topic: str, qrels: str, metric: str, k: int) -> list[dict[str, Any]]:
    """The ranked lists side by side: each document with its grade, whether only this run has it
    in these ranks, and how far the other run ranks it."""
    lists = {r: q.ranked_list(ctx.store, r, topic, qrels, k) for r in chosen}
    docsets = {r: {x.doc for x in lists[r]} for r in chosen}
    rank_maps = {r: {x.doc: x.rank for x in lists[r]} for r in chosen}
    columns = []
    for i, r in enumerate(chosen):
        other = chosen[1 - i] if len(chosen) == 2 else None
        items = []
        for x in lists[r]:
            other_rank = rank_maps[other].get(x.doc) if other else None
            items.append(
                {
                    "rank": x.rank,
                    "doc": x.doc,
                    "score": x.score,
                    "grade": x.grade,
                    "judged": x.grade is not None and x.grade >= 0,
                    "relevant": x.grade is not None and x.grade > 0,
                    "only": other is not None and x.doc not in docsets[other],
                    "other_rank": other_rank,
                    "moved": (x.rank - other_rank) if other_rank is not None else None,
                }
            )
        columns.append(
            {
                "run": r,
                "href": ctx.links.run(r, qrels, metric),
                "docs": items,
                "length": q.run_length(ctx.store, r, topic),
                "unjudged": sum(1 for x in items if not x["judged"]),
                "relevant": sum(1 for x in items if x["relevant"]),
                "only": sum(1 for x in items if x["only"]),
            }
        )
    return columns


def _topic_metric_rows(
    metrics: Iterable[str], scores: dict[tuple[str, str], float | None], chosen: list[str], metric: str
) -> list[dict[str, Any]]:
    """Each metric's score of the shown runs on the topic, beside the median and best of all runs."""
    rows = []
    for m in metrics:
        vals = [v for (rn, mm), v in scores.items() if mm == m and v is not None]
        if not vals and not any((r, m) in scores for r in chosen):
            continue
        rows.append(
            {
                "metric": m,
                "vals": [scores.get((r, m)) for r in chosen],
                "median": statistics.median(vals) if vals else None,
                "best": max(vals) if vals else None,
                "current": m == metric,
            }
        )
    return rows


def meta_page(ctx: Ctx) -> dict[str, Any]:
    from . import meta_view

    store = ctx.store
    total = q.meta_count(store)
    items = [meta_view.describe(a, ctx.links) for a in q.analyses(store, META_LIMIT)]
    cat = ctx.cached("catalogue", lambda: q.catalogue(store))
    qrels = cat.default_qrels()
    metric = cat.default_metric(qrels) if qrels else None
    model = base_model(ctx, "meta", "Stored analyses", qrels, metric)
    model.update({"analyses": items, "total": total, "limit": META_LIMIT})
    return model


def error_page(ctx_links: Links, status: int, message: str, title: str = "") -> dict[str, Any]:
    heading = {404: "Not found", 400: "Bad request", 503: "The store is busy"}.get(status, "Error")
    return {
        "page": "error",
        "heading": heading,
        "site": title,
        "live": ctx_links.live,
        "version": __version__,
        "css": ctx_links.static("evalstore.css"),
        "js": ctx_links.static("sort.js"),
        "home": ctx_links.home(),
        "meta_link": ctx_links.meta(),
        "sql_link": ctx_links.sql(),
        "status": status,
        "message": message,
        "qrels": None,
        "metric": None,
    }
