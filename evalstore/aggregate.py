"""The one rule for summarising per-topic scores into a run's score.

* ``mean``: the arithmetic mean (most metrics);
* ``gmean``: the geometric mean with a floor of 1e-5 per topic, as trec_eval's ``gm_map`` and
  ``gm_bpref`` (``exp(mean(ln(max(v, 1e-5))))``);
* ``sum``: the sum (trec_eval's counts: ``num_ret``, ``num_rel``, ...).

Sums are computed with :func:`math.fsum` (correctly rounded), so a mean does not depend on the
order of the topics: the same per-topic values always give the same mean. Missing values (None,
NaN) are left out. The ``leaderboard`` view of the store computes the same rule in SQL
(:data:`SQL`); ``tests/test_aggregate.py`` checks that both agree.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

AGGREGATES = ("mean", "gmean", "sum")
GMEAN_FLOOR = 1e-5

#: The same rule as SQL over a column of per-topic values (as in the leaderboard view).
SQL = {
    "mean": "avg({v})",
    "gmean": f"exp(avg(ln(greatest({{v}}, {GMEAN_FLOOR}))))",
    "sum": "sum({v})",
}


def _present(values: Iterable[float | None]) -> list[float]:
    return [float(v) for v in values if v is not None and not math.isnan(v)]


def aggregate(values: Iterable[float | None], how: str = "mean") -> float:
    """Summarise one run's per-topic values (NaN when there is none)."""
    if how not in AGGREGATES:
        raise ValueError(f"unknown aggregate {how!r}; one of {', '.join(AGGREGATES)}")
    vals = _present(values)
    if not vals:
        return float("nan")
    if how == "sum":
        return math.fsum(vals)
    if how == "gmean":
        return math.exp(math.fsum(math.log(max(v, GMEAN_FLOOR)) for v in vals) / len(vals))
    return math.fsum(vals) / len(vals)


def aggregate_rows(matrix: np.ndarray, how: str = "mean") -> np.ndarray:
    """:func:`aggregate` of every row of a (runs x topics) matrix."""
    return np.array([aggregate(row.tolist(), how) for row in np.asarray(matrix, dtype=np.float64)])


def sql(how: str, value_column: str = "value") -> str:
    """The SQL aggregate expression of ``how`` over ``value_column``."""
    return SQL[how].format(v=value_column)
