"""The contrast page: where two runs' ranked lists differ, topic by topic (diffir's view), from
:func:`evalstore.comparison.contrast` (``compare --contrast``): the topics by RBO, most different
first, each with its relevant documents that moved most and both runs' scores on the page's
metric; a topic opens its ranked lists side by side."""

from __future__ import annotations

from typing import Any

from ...comparison.contrast import contrast
from ...errors import MetaError
from ..choices import choose, need_run
from ..context import BadRequest, Ctx, NotFound, ReportFile, ReportPlan
from ..frame import frame_model
from ..links import ReportLinks


def contrast_page(
    ctx: Ctx, baseline: str | None, run: str | None, qrels: str | None = None, metric: str | None = None
) -> dict[str, Any]:

    if not baseline or not run:
        raise BadRequest("the contrast needs two runs: /contrast?baseline=RUN_A&run=RUN_B")
    need_run(ctx, baseline)
    need_run(ctx, run)
    if baseline == run:
        raise BadRequest("contrast two different runs")
    qrels, metric, _ = choose(ctx, qrels, metric)
    try:
        found = contrast(ctx.store, qrels, baseline, run, metric=metric)
    except MetaError as e:
        raise NotFound(str(e)) from None
    links = ctx.links
    rows = [
        {
            **r,
            "href": links.to("topic", r["topic"], [baseline, run], qrels, metric),
            "moves": [{**m, "up": m["moved"] < 0, "rank_a": m["rank_a"], "rank_b": m["rank_b"]} for m in r["moves"]],
        }
        for r in found.rows
    ]
    model = frame_model(ctx, "contrast", f"Where {run} and {baseline} differ", qrels, metric)
    model.update(
        {
            "baseline": baseline,
            "run": run,
            "baseline_href": links.to("run", baseline, qrels, metric),
            "run_href": links.to("run", run, qrels, metric),
            "compare_href": links.to("compare", baseline, run, qrels, metric),
            "rows": rows,
            "depth": found.depth,
            "p": found.p,
            "method": found.describe(),
        }
    )
    return model


def report_files(plan: ReportPlan) -> list[ReportFile]:
    """The static site's contrasts: each run shown against the best run of the first metric."""
    m = plan.metrics[0]
    return [
        (plan.links.per_run_file("contrast", run, m), (plan.best[m], run, plan.qrels, m))
        for run in plan.shown.get(m, [])
        if run != plan.best[m]
    ]


def report_path(links: ReportLinks, baseline: str, run: str, qrels: str, metric: str) -> str | None:
    """The static site's contrast of ``run`` with the best run by the first metric."""
    ok = qrels == links.qrels and metric == links.metrics[0] and links.best.get(metric) == baseline != run
    return links.per_run_file("contrast", run, metric) if ok and links.has_run(run) else None
