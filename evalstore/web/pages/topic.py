"""The topic page: one or two runs' ranked lists side by side with the judgments, the topic's
texts, document snippets, and every run's score on the topic."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from typing import Any

from ...ingest.checks import MAX_NAME_LENGTH
from .. import answer_queries as aq
from .. import queries as q
from ..choices import board, choose, need_run
from ..context import BadRequest, Ctx, NotFound, ReportFile, ReportPlan
from ..frame import frame_model
from ..links import ReportLinks
from .topic_answers import answers_model

#: documents of each ranked list shown on a topic page unless ?depth= says otherwise
DEFAULT_DEPTH = 20

MAX_DEPTH = 1000

#: the longest ``runs=`` of a topic page: two run names and the comma
MAX_RUNS_PARAM = 2 * MAX_NAME_LENGTH + 1


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
    kind = aq.kind_of(store, qrels)[0]
    answers = answers_model(ctx, chosen, topic, qrels, metric, kind)
    texts = q.topic_texts(store, topic) or _answer_query(store, topic, answers)
    columns = _ranked_columns(ctx, chosen, topic, qrels, metric, k) if kind == "judgments" else []
    snippets = q.doc_snippets(store, sorted({x["doc"] for c in columns for x in c["docs"]} | set(shown_rel)))
    for c in columns:
        for x in c["docs"]:
            x["snippet"] = snippets.get(x["doc"])
    heading = f"Topic {topic}: {texts[0].query}" if texts else f"Topic {topic}"
    model = frame_model(ctx, "topic", heading, qrels, metric)
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
                {"run": rn, "value": v, "href": links.to("run", rn, qrels, metric), "chosen": rn in chosen}
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
            "compare": links.to("compare", chosen[0], chosen[1], qrels, metric) if len(chosen) == 2 else None,
            "kind": kind,
            "answers": answers,
        }
    )
    return model


def _answer_query(store: Any, topic: str, answers: dict[str, Any] | None) -> list[q.TopicText]:
    """The topic's query where no topic set has it: as a nugget set, else an answer, gives it."""
    query, source = aq.nugget_query(store, topic), "nugget set"
    if query is None and answers:
        query, source = answers["query"], "answer"
    return [q.TopicText(source, query, None, None, None)] if query else []


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
                "href": ctx.links.to("run", r, qrels, metric),
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


def report_files(plan: ReportPlan) -> list[ReportFile]:
    """The static site's topic pages: the best run beside the second best (by the first metric)."""
    return [(_report_file(plan.links, t), (t, plan.pair, plan.qrels, plan.metrics[0])) for t in plan.topics]


def report_path(links: ReportLinks, topic: str, runs: Any = None, qrels: str | None = None, *_: Any) -> str | None:
    """The static site's page of ``topic``: every topic page of the report shows the best run beside
    the second best (by the first metric), whichever runs the link names."""
    return _report_file(links, topic) if qrels == links.qrels and topic in links.topics else None


def _report_file(links: ReportLinks, topic: str) -> str:
    return f"topics/{links.stem('topic', topic)}.html"
