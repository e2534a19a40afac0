"""Pools as tables: the stored pools, a pool's size per topic, and its coverage per run
(:mod:`.coverage`), for every output format (JSON: the coverage's document)."""

from __future__ import annotations

from typing import Any

from ..output.table import Output, Table
from .coverage import Coverage

POOL_COLUMNS = ["name", "strategy", "depth", "description", "n_topics", "n_docs", "created_at"]


def pools_table(rows: list[dict[str, Any]]) -> Table:
    """The stored pools (the ``pool_sets`` view without the recipe's JSON)."""
    return Table(POOL_COLUMNS, [[r[c] for c in POOL_COLUMNS] for r in rows], title="pools", digits=None)


def _columns(records: list[dict[str, Any]], order: list[str]) -> list[str]:
    present = set().union(*records) if records else set(order)
    return [c for c in order if c in present]


def topics_report(cov: Coverage) -> Output:
    """A pool's size per topic (with a qrels set: the judged and relevant documents among them)."""
    cols = _columns(cov.topics, ["topic", "n_docs", "n_runs", "n_judged", "n_relevant"])
    rows = [[t[c] for c in cols] for t in cov.topics]
    sizes = [t["n_docs"] for t in cov.topics]
    legend = [
        f"{len(sizes)} topics, {sum(sizes)} documents: {min(sizes)} to {max(sizes)} a topic, mean "
        f"{sum(sizes) / len(sizes):.1f}"
    ] if sizes else []  # fmt: skip
    if cov.qrels is not None:
        legend.append(f"n_judged: judged in {cov.qrels} (grade >= 0); n_relevant: grade >= {cov.rel}")
    table = Table(cols, rows, title=f"pool {cov.pool}: documents per topic", digits=None)
    return Output([table], legend=legend, notes=list(cov.notes), document=cov.to_dict())


def coverage_report(cov: Coverage) -> Output:
    """Per run: the share of its top k in the pool (and judged), what it brought and what it alone
    brought (and how much of that is judged and relevant)."""
    order = ["run", "pooled_at_k", "judged_at_k", "n_contributed", "n_unique", "n_unique_judged",
             "n_unique_relevant", "n_topics"]  # fmt: skip
    cols = _columns(cov.runs, order)
    heads = [c.replace("_at_k", f"@{cov.k}") for c in cols]
    rows = [[r[c] for c in cols] for r in cov.runs]
    legend = [
        f"pooled@{cov.k}: share of the run's top {cov.k} in the pool (mean over the pool's topics it retrieved for)",
        "n_contributed: pooled documents the run brought; n_unique: those no other run brought",
    ]
    if cov.qrels is not None:
        legend.append(
            f"judged@{cov.k}: ir_measures' Judged@{cov.k} on {cov.qrels} (stored as a score); n_unique_judged, "
            f"n_unique_relevant: the unique documents judged, and relevant (grade >= {cov.rel})"
        )
    table = Table(heads, rows, title=f"coverage of pool {cov.pool}")
    return Output([table], legend=legend, notes=list(cov.notes), document=cov.to_dict())
