"""Effect sizes and confidence intervals of a paired difference between two runs.

For per-topic differences ``z = x - y`` over n topics (mean ``zbar``, standard deviation ``s``
with n - 1):

* ``ci_t``: ``zbar -+ t_{n-1, 1 - (1 - level)/2} s / sqrt(n)`` (the paired t interval);
* ``ci_boot``: the percentile interval of the mean difference over B bootstrap samples of the
  topics (the same topic sample for every pair, as :func:`evalstore.stats.sampling.bootstrap_indices`
  draws it);
* ``d_z``: ``zbar / s``, the paired standardised difference (Cohen's d_z);
* ``smd``: Sakai's standardised mean difference ``zbar / sqrt(V_E)``, where V_E is the residual
  variance of the two-way ANOVA without replication over all the runs compared (runs x topics):
  ``V_E = sum_ij (x_ij - xbar_i. - xbar_.j + xbar_..)^2 / ((m - 1)(n - 1))`` (Sakai, Statistical
  Significance Testing in Information Retrieval, 2014 and 2018).
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import MetaError
from . import budget, sampling
from .sampling import check_trials

#: a residual variance below this share of the mean square of the scores is rounding, not variance:
#: runs that score alike on every topic (or differ by a constant) leave residuals of about 1e-16 of
#: the scores, whose squares are about 1e-32 of their mean square
ROUNDING = 1e-20


def residual_variance(X: np.ndarray) -> float:
    """V_E of the two-way ANOVA without replication over the runs x topics matrix X; exactly 0 when
    it is within rounding of 0 (:data:`ROUNDING`: identical runs give 0, not 1e-33)."""
    X = np.asarray(X, dtype=np.float64)
    m, n = X.shape
    if m < 2 or n < 2:
        raise MetaError("the residual variance needs at least 2 runs and 2 topics")
    resid = X - X.mean(axis=1, keepdims=True) - X.mean(axis=0, keepdims=True) + X.mean()
    ve = float((resid**2).sum() / ((m - 1) * (n - 1)))
    return 0.0 if ve <= ROUNDING * float(np.mean(X * X)) else ve


def t_interval(Z: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Per row of Z (pairs x topics): the paired t confidence interval of the mean difference."""
    from scipy.stats import t as t_dist

    Z = np.asarray(Z, dtype=np.float64)
    n = Z.shape[1]
    mean = Z.mean(axis=1)
    half = t_dist.ppf(1 - (1 - level) / 2, n - 1) * Z.std(axis=1, ddof=1) / math.sqrt(n)
    return mean - half, mean + half


def bootstrap_interval(
    Z: np.ndarray, B: int, seed: int, level: float = 0.95, *, memory: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Per row of Z: the bootstrap percentile interval of the mean difference (B topic samples).
    ``memory``: the memory limit in bytes the work is sized from (:mod:`evalstore.stats.budget`:
    the B resampled means of a row are kept for its percentiles, 8 bytes each; a B whose means do
    not fit is refused, naming the B that fits)."""
    Z = np.asarray(Z, dtype=np.float64)
    R, n = Z.shape
    B = check_trials(B, "bootstrap samples")
    cut = budget.plan(
        B,
        R,
        per_trial=24 * n,
        per_row_trial=24 * n,
        kept_per_row_trial=budget.INTERVAL_KEPT,
        final_per_trial=budget.INTERVAL_FINAL,
        memory=memory,
        what="the bootstrap interval",
    )
    lo, hi = np.empty(R), np.empty(R)
    once = None if cut.trials < B else next(sampling.blocks("bootstrap", n, B, seed, B))
    for s in range(0, R, cut.rows):
        rows = Z[s : s + cut.rows]
        means = np.empty((rows.shape[0], B))  # rows x B
        for b0, idx in [once] if once is not None else sampling.blocks("bootstrap", n, B, seed, cut.trials):
            means[:, b0 : b0 + idx.shape[0]] = rows[:, idx].mean(axis=2)
        lo[s : s + cut.rows], hi[s : s + cut.rows] = _percentiles(means, level)
        del means  # before the next group's
    return lo, hi


def _percentiles(means: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """The two percentiles of each row, one row at a time (the only copy is of one row)."""
    q = [(1 - level) / 2, 1 - (1 - level) / 2]
    out = np.array([np.quantile(row, q) for row in means])
    return out[:, 0], out[:, 1]


def d_z(Z: np.ndarray) -> np.ndarray:
    """Per row of Z: mean difference / standard deviation of the differences (NaN when it is 0)."""
    Z = np.asarray(Z, dtype=np.float64)
    sd = Z.std(axis=1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(sd > 0, Z.mean(axis=1) / sd, np.nan)


def smd(Z: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Per row of Z: Sakai's standardised mean difference with V_E from the runs x topics matrix X."""
    ve = residual_variance(X)
    mean = np.asarray(Z, dtype=np.float64).mean(axis=1)
    return mean / math.sqrt(ve) if ve > 0 else np.full(mean.shape, np.nan)
