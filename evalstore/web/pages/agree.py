"""The page of a stored judge comparison (``evalstore agree``; ``/agree?id=N``, ``agree-N.html`` in
the report): the label statistics with what each means, the confusion matrix of grades drawn as a
grid, the statistics of every topic, and for each metric the two leaderboards side by side (a
slope chart: each run's rank under the reference on the left, under the candidate on the right;
runs whose significance against the best run flips in orange) with every run's means, ranks and
p-values. Everything is read from the stored rows (``meta_agree_*``), by bound SQL.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ...judges.render import LABEL_COLUMNS, MEANINGS
from ...output.figures.model import RankSlopes
from .. import figure_charts, page_charts
from ..context import Ctx, NotFound, ReportFile, ReportPlan
from ..frame import frame_model
from ..links import ReportLinks
from ..queries import topic_key

if TYPE_CHECKING:
    from ...store import Store

#: the stored agreements listed on a page (the most recent)
LIST_LIMIT = 50
TOPIC_STATS = ["n_common", "n_ref_only", "n_cand_only", "agreement", "kappa", "kappa_linear", "kappa_quadratic"]
TOPIC_STATS += ["kappa_binary", "alpha_nominal", "alpha_ordinal"]


def agreements(store: Store, limit: int = LIST_LIMIT) -> list[dict[str, Any]]:
    """The stored agreements, most recent first: id, reference, candidate, created."""
    rows = store.con.execute(
        "SELECT analysis_id, params, created_at FROM meta_runs WHERE kind = 'agree' ORDER BY analysis_id DESC LIMIT ?",
        [limit],
    ).fetchall()
    out = []
    for aid, params, created in rows:
        p = json.loads(params) if isinstance(params, str) else (params or {})
        out.append(
            {
                "id": int(aid),
                "reference": p.get("reference"),
                "candidate": p.get("candidate"),
                "params": p,
                "created": str(created)[:19],
            }
        )
    return out


def _records(store: Store, table: str, aid: int, order: str) -> list[dict[str, Any]]:
    cur = store.con.execute(
        f"SELECT * EXCLUDE (analysis_id) FROM {table} WHERE analysis_id = ? ORDER BY {order}", [aid]
    )
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]  # table, order: fixed names of this module


def agree_page(ctx: Ctx, analysis_id: str | int | None = None) -> dict[str, Any]:
    """The view model of one stored agreement (default: the most recent)."""
    store, links = ctx.store, ctx.links
    known = agreements(store)
    if not known:
        raise NotFound("no stored comparison of judges: run evalstore agree --qrels REF --with CAND on this store")
    chosen = _choose(known, analysis_id)
    aid = chosen["id"]
    labels = _records(store, "meta_agree_labels", aid, "topic NULLS FIRST")
    overall = next((r for r in labels if r["topic"] is None), {})
    topics = sorted((r for r in labels if r["topic"] is not None), key=lambda r: topic_key(r["topic"]))
    cells = _records(store, "meta_agree_confusion", aid, "ref_grade, cand_grade")
    ranking = _records(store, "meta_agree_ranking", aid, "rowid")  # the metrics in the order asked for
    runs = _records(store, "meta_agree_runs", aid, "rank_ref, run")
    p = chosen["params"]
    ref, cand = chosen["reference"], chosen["candidate"]
    model = frame_model(ctx, "agree", f"Judges: {cand} against {ref}")
    model.update(
        {
            "analysis_id": aid,
            "reference": ref,
            "candidate": cand,
            "rel": p.get("rel"),
            "test": p.get("test"),
            "alpha": p.get("alpha"),
            "created": chosen["created"],
            "label_rows": [(k, overall.get(k), _meaning(k, p.get("rel"))) for k in LABEL_COLUMNS],
            "confusion": page_charts.confusion_chart([c for c in cells if c["topic"] is None], ref, cand),
            "topic_columns": TOPIC_STATS,
            "topics": [[r["topic"], *(r[c] for c in TOPIC_STATS)] for r in topics],
            "metrics": [_metric(m, [r for r in runs if r["metric"] == m["metric"]], ref, cand) for m in ranking],
            "others": [
                {
                    "id": a["id"],
                    "title": f"{a['candidate']} against {a['reference']}",
                    "href": links.to("agree", a["id"]),
                    "current": a["id"] == aid,
                    "created": a["created"],
                }
                for a in known
            ],
        }
    )
    return model


def _choose(known: list[dict[str, Any]], analysis_id: str | int | None) -> dict[str, Any]:
    if analysis_id is None or analysis_id == "":
        return known[0]
    try:
        wanted = int(analysis_id)
    except (TypeError, ValueError):
        raise NotFound(f"no stored comparison of judges with id {analysis_id!r}") from None
    for a in known:
        if a["id"] == wanted:
            return a
    raise NotFound(f"no stored comparison of judges with id {wanted} (ids: {', '.join(str(a['id']) for a in known)})")


def _meaning(key: str, rel: Any) -> str:
    return f"kappa of relevant (grade >= {rel}) vs not" if key == "kappa_binary" else MEANINGS[key]


def _metric(summary: dict[str, Any], runs: list[dict[str, Any]], ref: str, cand: str) -> dict[str, Any]:
    return {
        "summary": summary,
        "chart": figure_charts.slope_chart(
            RankSlopes(
                f"{summary['metric']}: rank under {ref} (left) and under {cand} (right)",
                ref,
                cand,
                [r["run"] for r in runs],
                [r["rank_ref"] for r in runs],
                [r["rank_cand"] for r in runs],
                [bool(r["flip"]) for r in runs],
                "significance flips",
            )
        ),
        "runs": runs,
        "flipped": [r["run"] for r in runs if r["flip"]],
    }


def report_files(plan: ReportPlan) -> list[ReportFile]:
    """The static site's pages of the stored judge comparisons."""
    return [(_report_file(i), (i,)) for i in plan.judged]


def report_path(links: ReportLinks, analysis_id: int) -> str | None:
    """The static site's page of a stored judge comparison."""
    return _report_file(analysis_id) if analysis_id in links.agreements else None


def _report_file(analysis_id: int) -> str:
    return f"agree-{int(analysis_id)}.html"
