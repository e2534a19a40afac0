"""Meta-evaluation results: the :class:`Analysis` record, and persisting it in the ``meta_*``
relations (``migrations/0003_meta.sql``).

:func:`save_analysis` writes one ``meta_runs`` row (kind, params, seed, inputs, version) and the
analysis' result rows, all in one transaction, and sets ``analysis.analysis_id``.
:func:`load_table` reads a result table back for one analysis.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..version import __version__

if TYPE_CHECKING:
    from ..db.handle import StoreHandle


@dataclass
class Analysis:
    """One analysis: its kind, parameters, seed, inputs (the score columns and runs it read),
    result rows per meta table, and results for printing; ``analysis_id`` once stored."""

    kind: str
    params: dict[str, Any]
    seed: int | None
    inputs: dict[str, Any]
    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    results: dict[str, Any] = field(default_factory=dict)
    analysis_id: int | None = None

    def rows(self, table: str) -> list[dict[str, Any]]:
        return self.tables.get(table, [])


#: The result tables of an analysis (migrations/0003_meta.sql, 0005_compare.sql, 0011_repro_design.sql,
#: 0015_judges_rank_intervals.sql and 0017_pools_reusability.sql define their columns).
TABLES = (
    "meta_correlations",
    "meta_swap",
    "meta_swap_bins",
    "meta_pair_tests",
    "meta_discpower",
    "meta_robustness_trials",
    "meta_knees",
    "meta_effects",
    "meta_repro",
    "meta_repro_topics",
    "meta_design",
    "meta_agree_labels",
    "meta_agree_confusion",
    "meta_agree_ranking",
    "meta_agree_runs",
    "meta_reusability",
    "meta_reusability_runs",
    "meta_reusability_groups",
)


def columns(store: StoreHandle, table: str) -> list[str]:
    """The result columns of a meta table as the schema defines them (analysis_id left out)."""
    if table not in TABLES:
        raise KeyError(f"unknown meta table {table!r}; tables: {', '.join(TABLES)}")
    rows = store.con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position",
        [table],
    ).fetchall()
    return [r[0] for r in rows if r[0] != "analysis_id"]


def _json(obj: Any) -> str:
    def clean(x):
        if isinstance(x, float) and not math.isfinite(x):
            return None if math.isnan(x) else ("inf" if x > 0 else "-inf")
        if isinstance(x, dict):
            return {str(k): clean(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [clean(v) for v in x]
        return x

    return json.dumps(clean(obj), sort_keys=True)


def save_analysis(store: StoreHandle, analysis: Analysis) -> int:
    """Store ``analysis``; return its id."""
    con = store.con
    with store.transaction():
        aid = con.execute(
            "INSERT INTO meta_runs (kind, params, seed, inputs, evalstore_version) "
            "VALUES (?, ?::JSON, ?, ?::JSON, ?) RETURNING analysis_id",
            [analysis.kind, _json(analysis.params), analysis.seed, _json(analysis.inputs), __version__],
        ).fetchall()[0][0]
        for table, rows in analysis.tables.items():
            cols = columns(store, table)
            if not rows:
                continue
            unknown = set().union(*rows) - set(cols)
            if unknown:
                raise KeyError(f"internal: {table} has no column(s) {', '.join(sorted(unknown))}")
            lists = [[r.get(c) for r in rows] for c in cols]
            select = ", ".join(f"unnest(${i + 2}) AS {c}" for i, c in enumerate(cols))
            con.execute(
                f"INSERT INTO {table} (analysis_id, {', '.join(cols)}) SELECT $1, * FROM (SELECT {select})",
                [aid, *lists],
            )
    analysis.analysis_id = int(aid)
    return analysis.analysis_id


def load_table(store: StoreHandle, table: str, analysis_id: int, order_by: str | None = None) -> list[dict[str, Any]]:
    """The rows of a result table for one analysis (without the analysis_id column)."""
    cols = columns(store, table)
    q = f"SELECT {', '.join(cols)} FROM {table} WHERE analysis_id = ?"
    if order_by:
        q += f" ORDER BY {order_by}"
    res = store.con.execute(q, [analysis_id])
    return [dict(zip(cols, r)) for r in res.fetchall()]
