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
from .. import svg
from ..links import ReportLinks
from ..queries import topic_key
from .context import Ctx, NotFound, ReportFile, ReportPlan
from .frame import frame_model

if TYPE_CHECKING:
    from ...facade import Store

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
            "confusion": confusion_chart([c for c in cells if c["topic"] is None], ref, cand),
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
        "chart": slope_chart(runs, ref, cand, summary["metric"]),
        "runs": runs,
        "flipped": [r["run"] for r in runs if r["flip"]],
    }


def confusion_chart(cells: list[dict[str, Any]], ref: str, cand: str) -> svg.Svg:
    """The confusion matrix as a grid: a cell's shade is its share of its row (reference grade)."""
    grades = sorted({c["ref_grade"] for c in cells} | {c["cand_grade"] for c in cells})
    n = {(c["ref_grade"], c["cand_grade"]): int(c["n"]) for c in cells}
    rows = {g: sum(v for (a, _), v in n.items() if a == g) for g in grades}
    size, left, top = 56.0, 120.0, 54.0
    width, height = left + size * len(grades) + 20, top + size * len(grades) + 20
    label = f"grades: {ref} (rows) against {cand} (columns)"
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width:.0f} {height:.0f}" width="{width:.0f}" '
        f'height="{height:.0f}" role="img" aria-label="{svg.esc(label)}" {svg.FONT} font-size="12">',
        f"<title>{svg.esc(label)}</title>",
        f'<text x="{left + size * len(grades) / 2:.1f}" y="16" text-anchor="middle">{svg.esc(cand)}</text>',
        f'<text transform="translate(16,{top + size * len(grades) / 2:.1f}) rotate(-90)" text-anchor="middle">'
        f"{svg.esc(ref)}</text>",
    ]
    for j, g in enumerate(grades):
        parts.append(f'<text x="{left + size * (j + 0.5):.1f}" y="{top - 8:.1f}" text-anchor="middle">{g}</text>')
        parts.append(f'<text x="{left - 10:.1f}" y="{top + size * (j + 0.5) + 4:.1f}" text-anchor="end">{g}</text>')
    for i, a in enumerate(grades):
        for j, b in enumerate(grades):
            v = n.get((a, b), 0)
            share = v / rows[a] if rows[a] else 0.0
            fill = f"rgb({int(255 - 244 * share)},{int(255 - 160 * share)},{int(255 - 90 * share)})"
            ink = "#fff" if share > 0.55 else "#222"
            x, y = left + size * j, top + size * i
            parts.append(
                f"<g><title>{svg.esc(f'{ref} {a}, {cand} {b}: {v} pairs ({share:.0%} of row)')}</title>"
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{size:.1f}" height="{size:.1f}" fill="{fill}" stroke="#fff"/>'
                f'<text x="{x + size / 2:.1f}" y="{y + size / 2 + 4:.1f}" text-anchor="middle" '
                f'fill="{ink}">{v}</text></g>'
            )
    parts.append("</svg>")
    return svg.Svg("".join(parts))


def slope_chart(runs: list[dict[str, Any]], ref: str, cand: str, metric: str) -> svg.Svg:
    """Each run's rank under the reference (left) and the candidate (right), joined by a line;
    a run whose significance against the best run flips is drawn in orange."""
    n = max(len(runs), 1)
    # one row per run on each side (tied runs, which share a rank, one below the other by name)
    left_row = {r["run"]: i for i, r in enumerate(sorted(runs, key=lambda r: (r["rank_ref"], r["run"])))}
    right_row = {r["run"]: i for i, r in enumerate(sorted(runs, key=lambda r: (r["rank_cand"], r["run"])))}
    row, top, col = 17.0, 40.0, 300.0
    longest = max((min(len(r["run"]), 30) for r in runs), default=4) + len(str(n)) + 2  # "12. name"
    left = 20 + 7.2 * longest
    width, height = 2 * left + col, top + row * n + 16
    label = f"{metric}: rank under {ref} (left) and under {cand} (right)"
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width:.0f} {height:.0f}" width="{width:.0f}" '
        f'height="{height:.0f}" role="img" aria-label="{svg.esc(label)}" {svg.FONT} font-size="12">',
        f"<title>{svg.esc(label)}</title>",
        f'<text x="{left:.1f}" y="18" text-anchor="middle" font-weight="600">{svg.esc(ref)}</text>',
        f'<text x="{left + col:.1f}" y="18" text-anchor="middle" font-weight="600">{svg.esc(cand)}</text>',
    ]
    for r in runs:
        ya, yb = top + row * (left_row[r["run"]] + 0.5), top + row * (right_row[r["run"]] + 0.5)
        colour = svg.PALETTE[3] if r["flip"] else (svg.PALETTE[0] if r["rank_ref"] == r["rank_cand"] else "#7a8591")
        name = r["run"] if len(r["run"]) <= 30 else r["run"][:29] + "…"
        tip = f"{r['run']}: rank {r['rank_ref']} -> {r['rank_cand']}" + (" (significance flips)" if r["flip"] else "")
        parts.append(
            f"<g><title>{svg.esc(tip)}</title>"
            f'<line x1="{left + 6:.1f}" y1="{ya:.1f}" x2="{left + col - 6:.1f}" y2="{yb:.1f}" stroke="{colour}" '
            f'stroke-width="{2.2 if r["flip"] else 1.2}"/>'
            f'<circle cx="{left + 6:.1f}" cy="{ya:.1f}" r="3" fill="{colour}"/>'
            f'<circle cx="{left + col - 6:.1f}" cy="{yb:.1f}" r="3" fill="{colour}"/>'
            f'<text x="{left - 2:.1f}" y="{ya + 4:.1f}" text-anchor="end">{r["rank_ref"]}. {svg.esc(name)}</text>'
            f'<text x="{left + col + 2:.1f}" y="{yb + 4:.1f}">{r["rank_cand"]}. {svg.esc(name)}</text></g>'
        )
    parts.append("</svg>")
    return svg.Svg("".join(parts))


def report_files(plan: ReportPlan) -> list[ReportFile]:
    """The static site's pages of the stored judge comparisons."""
    return [(_report_file(i), (i,)) for i in plan.judged]


def report_path(links: ReportLinks, analysis_id: int) -> str | None:
    """The static site's page of a stored judge comparison."""
    return _report_file(analysis_id) if analysis_id in links.agreements else None


def _report_file(analysis_id: int) -> str:
    return f"agree-{int(analysis_id)}.html"
