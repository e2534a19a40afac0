"""Rank correlation between system rankings (Sakai IPSJ 2007 Sec. 4.1, Eqs. 8-9; Sakai SIGIR 2007
Table 2; Zhou & Yao 2010 Sec. 2).

Two score columns over the same runs (e.g. mean AP and mean Q-measure, or mean AP on the full
qrels and on a subsample) each rank the runs. Over all ``n_s (n_s - 1) / 2`` run pairs:

* ``pos`` (concordant): both columns order the pair the same way; ``neg`` (discordant): opposite;
* ``tau_a = 2 (pos - neg) / (n_s (n_s - 1))`` (Sakai IPSJ 2007 Eq. 8): a pair tied in either column counts
  as neither;
* ``tau_b = (pos - neg) / sqrt((pos + neg + T_a)(pos + neg + T_b))`` with ``T_a`` (``T_b``) = pairs
  tied only in the first (second) column: scipy's default; equal to tau_a when there are no ties;
* ``tau``: the value reported, tau_b when either ranking has ties, else tau_a (the same number);
* Z test (Sakai IPSJ 2007 Eq. 9): ``Z0 = |tau| / sqrt((4 n_s + 10) / (9 n_s (n_s - 1)))``, two-sided normal,
  ``p = erfc(Z0 / sqrt 2)``. With 30 runs tau = .34 gives p = .0083 (significant at 0.01) and
  tau = .21 gives p = .10. The variance formula assumes no ties;
* Spearman's rho: Pearson's correlation of the average ranks (ties share their mean rank).

Ties are exact equality of the values compared (the means of the runs, computed the same way for
every run).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import MetaError
from . import rank_correlation
from .rank_correlation import pair_counts


@dataclass(frozen=True)
class Correlation:
    n: int
    concordant: int
    discordant: int
    ties_a: int  # pairs tied only in the first column
    ties_b: int  # pairs tied only in the second column
    ties_both: int
    tau_a: float
    tau_b: float
    spearman: float

    @property
    def has_ties(self) -> bool:
        return (self.ties_a + self.ties_b + self.ties_both) > 0

    @property
    def tau(self) -> float:
        return self.tau_b if self.has_ties else self.tau_a

    @property
    def z(self) -> float:
        return kendall_z(self.tau, self.n)

    @property
    def p_value(self) -> float:
        return kendall_p(self.tau, self.n)


def kendall_z(tau: float, n: int) -> float:
    """Sakai IPSJ 2007 Eq. 9: ``Z0 = |tau| / sqrt((4n + 10) / (9 n (n - 1)))``."""
    if n < 2 or not math.isfinite(tau):
        return float("nan")
    return abs(tau) / math.sqrt((4 * n + 10) / (9 * n * (n - 1)))


def kendall_p(tau: float, n: int) -> float:
    """Two-sided p-value of the normal test on Eq. 9's Z0."""
    z = kendall_z(tau, n)
    return math.erfc(z / math.sqrt(2)) if math.isfinite(z) else float("nan")


def correlate(a, b) -> Correlation:
    """Kendall's tau (a and b variants, Sakai IPSJ 2007 Eq. 8) and Spearman's rho between two score vectors
    over the same systems (a[i] and b[i] belong to system i)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise MetaError(f"rank correlation needs two vectors of the same length (got {a.shape} and {b.shape})")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise MetaError("rank correlation over NaN or infinite scores is undefined")
    n = a.size
    if n < 2:
        raise MetaError(f"rank correlation needs at least 2 systems, got {n}")
    c = pair_counts(a, b)
    pos, neg = c["concordant"], c["discordant"]
    tau_b = rank_correlation.tau_b_of(c)
    rho = rank_correlation.spearman_rho(a, b)
    return Correlation(
        n=n,
        concordant=pos,
        discordant=neg,
        ties_a=c["ties_s"] - c["ties_both"],
        ties_b=c["ties_u"] - c["ties_both"],
        ties_both=c["ties_both"],
        tau_a=(pos - neg) / c["n0"],
        tau_b=float("nan") if tau_b is None else tau_b,
        spearman=float("nan") if rho is None else rho,
    )


def kendall_tau(a, b) -> float:
    """The reported tau (tau_b when there are ties, else tau_a = Sakai IPSJ 2007 Eq. 8)."""
    return correlate(a, b).tau


def spearman_rho(a, b) -> float:
    return correlate(a, b).spearman
