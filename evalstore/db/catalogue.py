"""What a store has evaluated, read cheaply: per qrels set, the metrics evaluated on it (in the order
they were first evaluated) and the number of runs of each. It reads the internal ``evaluations``
table (one row per run, qrels set and metric) so that nothing scans the scores; the front ends read
this function and the documented views, never the internal tables.
"""

from __future__ import annotations

from typing import Any


def evaluated(con: Any) -> dict[str, dict[str, int]]:
    """``{qrels: {metric: runs}}``: qrels sets by name, their metrics in stored order (the earliest
    evaluation first, then the order the metrics were asked for)."""
    rows = con.execute(
        "SELECT q.name, e.metric, count(*) FROM evaluations e JOIN qrels_meta q USING (qrels_id) "
        "GROUP BY q.name, e.metric ORDER BY q.name, min(e.computed_at), min(e.rowid), e.metric"
    ).fetchall()
    out: dict[str, dict[str, int]] = {}
    for qrels, metric, n in rows:
        out.setdefault(qrels, {})[metric] = int(n)
    return out


def subsample_names(con: Any) -> set[str]:
    """The qrels sets that are subsamples of another set (the ``subsamples`` view)."""
    return {str(r[0]) for r in con.execute("SELECT name FROM subsamples").fetchall()}
