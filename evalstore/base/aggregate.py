"""The one rule for summarising per-topic scores into a run's score.

* ``mean``: the arithmetic mean (most metrics);
* ``gmean``: the geometric mean with a floor of 1e-5 per topic, as trec_eval's ``gm_map`` and
  ``gm_bpref`` (``exp(mean(ln(max(v, 1e-5))))``);
* ``sum``: the sum (trec_eval's counts: ``num_ret``, ``num_rel``, ...).

Sums are computed with :func:`math.fsum` (correctly rounded), so a mean does not depend on the
order of the topics: the same per-topic values always give the same mean. Missing values (None,
NaN) are left out. The ``leaderboard`` view of the store computes the same rule in SQL
(:func:`sql`, with :func:`exact_sum_sql` for the correctly rounded sum), so a mean read from the
view and one computed here are the same double; ``tests/evalstore/base/test_aggregate.py`` checks that.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

AGGREGATES = ("mean", "gmean", "sum")
GMEAN_FLOOR = 1e-5

#: The scale of the two fixed-point parts of :func:`exact_sum_sql`: 2**60 and its inverse.
_SCALE = "1152921504606846976"
_INV_SCALE = "(CAST(2 AS DOUBLE) ** -60)"  # exact: a power of two
_INV_SCALE2 = "(CAST(2 AS DOUBLE) ** -120)"


def exact_sum_sql(term: str) -> str:
    """SQL for the correctly rounded sum of the DOUBLE ``term`` over a group, as :func:`math.fsum`,
    on fixed-width integers only (plain SQL: the duckdb CLI runs it too; no Python function).

    Each value v is split exactly into ``floor(v * 2**60)`` and ``floor(frac(v * 2**60) * 2**60)``,
    whole multiples of 2**-60 and 2**-120 (every bit of a value of magnitude 2**-67 or more; below
    that, bits under 2**-120 are dropped). The two HUGEINT sums are exact; the carry is moved into the
    high part, which is rounded to a double once, and the remainder is added in a second rounding
    step that gives the correctly rounded total (the remainder, below 2**81 units of 2**-120, is
    itself exact unless the sum exceeds 2**74). NULL when the group has no value, like ``sum``."""
    scaled = f"(CAST({term} AS DOUBLE) * {_SCALE}.0)"
    hi = f"sum(CAST(floor({scaled}) AS HUGEINT))"
    lo = f"sum(CAST(floor(({scaled} - floor({scaled})) * {_SCALE}.0) AS HUGEINT))"
    high = f"({hi} + {lo} // {_SCALE})"
    rounded = f"CAST({high} AS DOUBLE)"
    rest = f"(({high} - CAST({rounded} AS HUGEINT)) * {_SCALE} + {lo} % {_SCALE})"
    return f"({rounded} * {_INV_SCALE} + CAST({rest} AS DOUBLE) * {_INV_SCALE2})"


#: The same rule as SQL over a column ``{v}`` of per-topic values (the leaderboard view's).
SQL = {
    "mean": exact_sum_sql("{v}") + " / count({v})",
    # not greatest(): it skips NULL, which would count a missing value as the floor
    "gmean": "exp("
    + exact_sum_sql(f"ln(CASE WHEN {{v}} < {GMEAN_FLOOR} THEN {GMEAN_FLOOR} ELSE {{v}} END)")
    + " / count({v}))",
    "sum": exact_sum_sql("{v}"),
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


def summaries_sql(rows: str, by: str, how: str) -> str:
    """SQL of one row per group of ``by`` (columns) of the per-topic rows ``rows`` (a FROM item with
    a ``value`` column): ``by``, ``summary`` (the ``how`` aggregate of the values that are not NaN;
    NaN when there is none) and ``n_topics`` (``count(value)``: NaN counted, NULL not). The rule of
    an evaluation's means, wherever they are computed: a result's (``EvalResult.means``) and the
    ones stored with each evaluation (``evaluations.summary``)."""
    return (
        f"SELECT {by}, coalesce({sql(how, 'v')}, 'NaN'::DOUBLE) AS summary, count(value) AS n_topics "
        f"FROM (SELECT *, CASE WHEN isnan(value) THEN NULL ELSE value END AS v FROM {rows}) GROUP BY {by}"
    )
