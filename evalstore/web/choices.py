"""What a page shows when the request does not say: the qrels set and metric (asked for, as
stored, else the store's defaults), the board of a metric, and the checks that a run exists."""

from __future__ import annotations

from typing import Any

from ..errors import EvalstoreError
from ..meta.matrix import canonical_metric
from . import queries as q
from .context import Ctx, NotFound


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


def topic_stats(ctx: Ctx, qrels: str, metric: str) -> dict[str, q.TopicStats]:
    return ctx.cached(("stats", qrels, metric), lambda: q.topic_stats(ctx.store, qrels, metric))


def pickers(ctx: Ctx, cat: q.Catalogue, qrels: str, metric: str) -> dict[str, Any]:
    """The qrels set and metric choices: a form on the server, links in the report."""
    links = ctx.links
    metric_links = [
        {"name": m, "href": links.to("leaderboard", qrels, m), "current": m == metric, "runs": n}
        for m, n in cat.metrics[qrels].items()
    ]
    qrels_links = [
        {
            "name": name,
            "href": links.to("leaderboard", name, cat.default_metric(name, ctx.default_metric) or ""),
            "current": name == qrels,
        }
        for name in cat.qrels
    ]
    return {"metric_choices": metric_links, "qrels_choices": qrels_links}


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
