"""``exact_sums``: the sums a Python measure takes to agree with an SQL block to the last bit.

An SQL block writes a sum of per-document terms as ``exact_sum(term)``
(:mod:`evalstore.metrics.sqlfile`): each term cast to ``DECIMAL(38, 24)`` (DuckDB multiplies it by
10^24 in double precision and rounds half away from zero), the integers added exactly, the total
cast back to a double (correctly rounded). :func:`exact_sums` does the same with numpy for groups
of terms, so a Python measure's nDCG equals the SQL one's bit for bit.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_SCALE = 1e24
_SPLIT = float(2**42)  # a scaled term (< 2^84) splits into two exact int64 halves


def exact_sums(values: Any, groups: Any, n_groups: int | None = None) -> np.ndarray:
    """The sum of ``values`` (doubles) per group (``groups``: a group index 0..n-1 per value) as
    ``exact_sum`` takes it in SQL; a group without values sums to 0.0."""
    v = np.asarray(values, dtype=np.float64) * _SCALE
    g = np.asarray(groups, dtype=np.int64)
    n = int(n_groups if n_groups is not None else (g.max() + 1 if len(g) else 0))
    whole = np.trunc(v)
    rounded = whole + np.sign(v) * (np.abs(v - whole) >= 0.5)  # C's round(): half away from zero
    high = np.floor(rounded / _SPLIT)
    low = rounded - high * _SPLIT  # exact: both halves are integers below 2^42
    high_sums = np.zeros(n, dtype=np.int64)
    low_sums = np.zeros(n, dtype=np.int64)
    np.add.at(high_sums, g, high.astype(np.int64))
    np.add.at(low_sums, g, low.astype(np.int64))
    out = np.zeros(n, dtype=np.float64)
    # (the groups summing to zero stay 0.0; Python's integer division rounds the others correctly)
    some = np.flatnonzero((high_sums != 0) | (low_sums != 0))
    out[some] = [(h * 2**42 + lo) / 10**24 for h, lo in zip(high_sums[some].tolist(), low_sums[some].tolist())]
    return out
