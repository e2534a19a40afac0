"""The meta page: the stored analyses (``evalstore meta``, ``compare``, ``agree``), newest first,
each with its tables and figures (:mod:`evalstore.web.meta_view`)."""

from __future__ import annotations

from typing import Any

from .. import meta_view
from .. import queries as q
from ..context import Ctx, ReportFile, ReportPlan
from ..frame import frame_model
from ..links import ReportLinks

#: analyses shown on the meta page (the most recent)
META_LIMIT = 50


def meta_page(ctx: Ctx) -> dict[str, Any]:

    store = ctx.store
    total = q.meta_count(store)
    items = [meta_view.describe(a, ctx.links) for a in q.analyses(store, META_LIMIT)]
    cat = ctx.cached("catalogue", lambda: q.catalogue(store))
    qrels = cat.default_qrels()
    metric = cat.default_metric(qrels) if qrels else None
    model = frame_model(ctx, "meta", "Stored analyses", qrels, metric)
    model.update({"analyses": items, "total": total, "limit": META_LIMIT})
    return model


def report_files(plan: ReportPlan) -> list[ReportFile]:
    return [("meta.html", ())]


def report_path(links: ReportLinks) -> str:
    """The static site's page of the stored analyses."""
    return "meta.html"
