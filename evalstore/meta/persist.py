"""Persisting meta-evaluation results in the ``meta_*`` relations (``migrations/0003_meta.sql``).

:func:`save_analysis` writes one ``meta_runs`` row (kind, params, seed, inputs, version) and the
analysis' result rows, all in one transaction, and sets ``analysis.analysis_id``.
:func:`load_table` reads a result table back for one analysis.
"""

from __future__ import annotations

import json
import math
from typing import Any

from ..version import __version__

# Result tables and their columns, in the order of the migration.
TABLES: dict[str, tuple[str, ...]] = {
    "meta_correlations": (
        "col_a",
        "col_b",
        "qrels_a",
        "metric_a",
        "qrels_b",
        "metric_b",
        "n_runs",
        "tau",
        "tau_a",
        "tau_b",
        "concordant",
        "discordant",
        "ties_a",
        "ties_b",
        "ties_both",
        "z",
        "p_value",
        "spearman",
    ),
    "meta_swap": (
        "qrels",
        "metric",
        "n_runs",
        "n_topics",
        "n_pairs",
        "trials",
        "max_rate",
        "abs_diff",
        "abs_diff_first",
        "max_diff",
        "rel_diff",
        "share",
    ),
    "meta_swap_bins": ("qrels", "metric", "bin", "lo", "hi", "comparisons", "swaps", "swap_rate"),
    "meta_pair_tests": (
        "qrels",
        "metric",
        "run_a",
        "run_b",
        "mean_a",
        "mean_b",
        "diff",
        "test",
        "statistic",
        "p_value",
        "p_adjusted",
        "significant",
    ),
    "meta_discpower": (
        "qrels",
        "metric",
        "test",
        "alpha",
        "adjust",
        "n_runs",
        "n_topics",
        "n_pairs",
        "n_significant",
        "disc_power",
        "est_diff",
    ),
    "meta_robustness_trials": (
        "metric",
        "parent",
        "qrels",
        "fraction",
        "trial",
        "n_runs",
        "n_topics",
        "tau",
        "n_pairs",
        "n_significant",
        "c11",
        "c12",
        "c21",
        "c22",
    ),
    "meta_knees": ("metric", "criterion", "threshold", "knee", "knee_first"),
}


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


def save_analysis(store, analysis) -> int:
    """Store ``analysis`` (an :class:`evalstore.meta.analyses.Analysis`); return its id."""
    con = store.con
    with store.transaction():
        aid = con.execute(
            "INSERT INTO meta_runs (kind, params, seed, inputs, evalstore_version) "
            "VALUES (?, ?::JSON, ?, ?::JSON, ?) RETURNING analysis_id",
            [analysis.kind, _json(analysis.params), analysis.seed, _json(analysis.inputs), __version__],
        ).fetchone()[0]
        for table, rows in analysis.tables.items():
            if table not in TABLES:
                raise KeyError(f"internal: unknown meta table {table}")
            if not rows:
                continue
            cols = TABLES[table]
            lists = [[r.get(c) for r in rows] for c in cols]
            select = ", ".join(f"unnest(${i + 2}) AS {c}" for i, c in enumerate(cols))
            con.execute(
                f"INSERT INTO {table} (analysis_id, {', '.join(cols)}) SELECT $1, * FROM (SELECT {select})",
                [aid, *lists],
            )
    analysis.analysis_id = int(aid)
    return analysis.analysis_id


def load_table(store, table: str, analysis_id: int, order_by: str | None = None) -> list[dict[str, Any]]:
    """The rows of a result table for one analysis (without the analysis_id column)."""
    if table not in TABLES:
        raise KeyError(f"unknown meta table {table!r}; tables: {', '.join(TABLES)}")
    cols = TABLES[table]
    q = f"SELECT {', '.join(cols)} FROM {table} WHERE analysis_id = ?"
    if order_by:
        q += f" ORDER BY {order_by}"
    res = store.con.execute(q, [analysis_id])
    return [dict(zip(cols, r)) for r in res.fetchall()]
