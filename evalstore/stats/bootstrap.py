"""Paired bootstrap test and Sakai's bootstrap sensitivity method (Sakai IPSJ 2007 Sec. 4.3, Figs. 5-7).

For a system pair with per-topic scores x, y over the same n topics:

* ``z_i = x_i - y_i``; ``t(z) = zbar / (sigma / sqrt(n))``, sigma with n - 1;
* ``w_i = z_i - zbar`` (z shifted to obey H0: mu = 0);
* for b = 1..B, ``w*b`` = w at the topics of the b-th bootstrap sample ``Q*b`` (with
  replacement), ``t*b = t(w*b)``;
* ``ASL = #{b : |t*b| >= |t(z)|} / B`` (two-sided); H0 is rejected when ``ASL < alpha``
  (strictly: ASL = alpha is not significant).

Degenerate samples (sigma = 0: every value equal), decided exactly rather than by a tolerance:
``t = 0`` when the common value is 0 and ``t = sign(value) * inf`` otherwise. So two identical
systems (z = 0) have t(z) = 0 and ASL = 1; a constant shift c != 0 has t(z) = +-inf, w = 0 exactly
(zbar is set to c, not to the rounded mean) and every t*b = 0, so ASL = 0.

Sensitivity (discriminative power) = number of pairs with ASL < alpha among all
``n_runs (n_runs - 1) / 2`` pairs. Estimated difference required (Fig. 7): for each pair take the
bootstrap sample whose ``|t*b|`` is the ``B * alpha``-th largest (ties in |t*b| ordered by sample
number, earliest first) and record its ``|wbar*b|``; the estimate is the maximum over pairs,
rounded to two significant figures.

All pairs share the same B bootstrap samples (see :mod:`evalstore.stats.sampling`); the work is
a few products of the ``(B, n)`` sample-count matrix with the ``(n, pairs)`` matrix of w, summed
in topic order (:func:`evalstore.stats.sampling.weighted_sums`: the same bits in blocks and in one
piece), in blocks of pairs and of samples sized from the memory limit
(:mod:`evalstore.stats.budget`), never a Python loop over B.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import MetaError
from . import budget, sampling
from .sampling import check_trials, counts, weighted_sums


@dataclass
class BootstrapResult:
    """Per-pair output of :func:`paired_bootstrap` (arrays of length ``pairs``)."""

    t_obs: np.ndarray  # t(z)
    asl: np.ndarray  # achieved significance level
    diff_at_alpha: np.ndarray  # |wbar*b| of the (B*alpha)-th largest |t*b| (Fig. 7), per pair
    B: int
    alpha: float
    seed: int

    def significant(self) -> np.ndarray:
        return self.asl < self.alpha

    @property
    def n_significant(self) -> int:
        return int(np.count_nonzero(self.significant()))

    @property
    def estimated_diff(self) -> float:
        """Max over pairs of the Fig. 7 difference, rounded to two significant figures."""
        if self.diff_at_alpha.size == 0:
            return float("nan")
        return round_sig(float(np.max(self.diff_at_alpha)), 2)


def round_sig(x: float, digits: int = 2) -> float:
    """Round to ``digits`` significant figures (0.1049 -> 0.1, 0.0934 -> 0.093, 0 -> 0)."""
    if x == 0 or not math.isfinite(x):
        return x
    return float(f"{x:.{digits}g}")


def _degenerate_t(mean: np.ndarray) -> np.ndarray:
    """t of a sample with sigma = 0: 0 when its mean is 0, else +-inf."""
    out = np.zeros_like(mean, dtype=np.float64)
    nz = mean != 0
    out[nz] = np.sign(mean[nz]) * np.inf
    return out


def row_scale(A: np.ndarray) -> np.ndarray:
    """A power of two per row with ``max|row| / scale`` in [0.5, 1) (1 for all-zero rows).

    t statistics are scale-free; computing them on rows divided by a power of two (an exact
    operation) keeps squares of tiny differences from underflowing to 0."""
    m = np.abs(A).max(axis=1) if A.shape[1] else np.zeros(A.shape[0])
    _, e = np.frexp(m)
    return np.where(m > 0, np.ldexp(1.0, e), 1.0)


def t_statistic(Z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(t(z), zbar, constant)`` for each row of ``Z`` (pairs x topics).

    Rows whose values are all equal (sigma = 0) get zbar = that value exactly and the degenerate t."""
    Z = np.asarray(Z, dtype=np.float64)
    n = Z.shape[1]
    if n < 2:
        raise MetaError(f"a paired test needs at least 2 topics, got {n}")
    const = Z.min(axis=1) == Z.max(axis=1)
    scale = row_scale(Z)
    Zs = Z / scale[:, None]
    zbar_s = Zs.mean(axis=1)
    zbar = zbar_s * scale
    zbar[const] = Z[const, 0]
    sd_s = Zs.std(axis=1, ddof=1)
    t = np.empty(Z.shape[0])
    ok = ~const
    t[ok] = zbar_s[ok] / (sd_s[ok] / math.sqrt(n))
    t[const] = _degenerate_t(zbar[const])
    return t, zbar, const


def _max_group(W: np.ndarray) -> np.ndarray:
    """Largest number of equal values in each row."""
    s = np.sort(W, axis=1)
    n = s.shape[1]
    new = np.ones(s.shape, dtype=bool)
    new[:, 1:] = s[:, 1:] != s[:, :-1]
    idx = np.broadcast_to(np.arange(n), s.shape)
    start = np.maximum.accumulate(np.where(new, idx, 0), axis=1)
    return (idx - start + 1).max(axis=1)


def _fix_degenerate(
    C: np.ndarray, W: np.ndarray, wbar: np.ndarray, t: np.ndarray, u: np.ndarray, gmax: np.ndarray
) -> np.ndarray:
    """Exact sigma = 0 handling: a sample is degenerate iff all its sampled w are equal. Only
    samples with no more distinct topics than the pair's largest group of equal w can be."""
    degenerate = np.zeros(t.shape, dtype=bool)
    bs, ps = np.nonzero(u[:, None] <= gmax[None, :])
    step = max(1, (1 << 22) // max(1, C.shape[1]))
    for s in range(0, bs.size, step):
        b, p = bs[s : s + step], ps[s : s + step]
        present = C[b] > 0
        vals = W[p]
        hi = np.where(present, vals, -np.inf).max(axis=1)
        lo = np.where(present, vals, np.inf).min(axis=1)
        deg = hi == lo
        if deg.any():
            b, p, v = b[deg], p[deg], hi[deg]
            wbar[b, p] = v
            t[b, p] = _degenerate_t(v)
            degenerate[b, p] = True
    return degenerate


def _kth_largest_index(a: np.ndarray, k: int) -> np.ndarray:
    """Per column, the row of the k-th largest value when values are sorted decreasingly and
    ties are kept in row order (= ``argsort(-a, axis=0, kind='stable')[k - 1]``, without the sort),
    one column at a time (a copy of one column is the only temporary of any size)."""
    out = np.empty(a.shape[1], dtype=np.int64)
    for j in range(a.shape[1]):
        col = a[:, j]
        if np.isnan(col).any():  # NaN counts as the smallest value, as in the sort above
            col = np.where(np.isnan(col), -np.inf, col)
        kth = np.partition(col, col.size - k)[col.size - k]
        above = np.count_nonzero(col > kth)
        out[j] = np.flatnonzero(col == kth)[k - above - 1]
    return out


def _checked(Z: np.ndarray, B: int, alpha: float, indices: np.ndarray | None) -> tuple[np.ndarray, int, int]:
    """:func:`paired_bootstrap`'s inputs checked: ``Z`` as float64, ``B``, and ``k`` = round(B * alpha),
    the rank of the difference at ``alpha``."""
    Z = np.asarray(Z, dtype=np.float64)
    if Z.ndim != 2:
        raise MetaError("Z must be a (pairs x topics) matrix")
    B = check_trials(B, "bootstrap samples")
    if not (0 < alpha < 1):
        raise MetaError(f"alpha must be between 0 and 1, not {alpha}")
    k = int(round(B * alpha))
    if k < 1:
        raise MetaError(f"B * alpha = {B * alpha:g} < 1: use more bootstrap samples (B >= {math.ceil(1 / alpha)})")
    if not np.all(np.isfinite(Z)):
        raise MetaError("per-topic scores contain NaN or infinite values; choose a missing-topic policy")
    if indices is not None and indices.shape != (B, Z.shape[1]):
        raise MetaError(f"bootstrap indices must have shape ({B}, {Z.shape[1]}), not {indices.shape}")
    return Z, B, k


def paired_bootstrap(
    Z: np.ndarray,
    B: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
    *,
    indices: np.ndarray | None = None,
    progress=None,
    memory: int | None = None,
) -> BootstrapResult:
    """Paired bootstrap test for every row of ``Z`` (pairs x topics, z = x - y).

    ``indices``: the ``(B, n)`` bootstrap topic samples (default: drawn from ``seed`` block by
    block, see :func:`evalstore.stats.sampling.blocks`). ``progress``: an object with
    ``advance(k)`` (advanced by the number of pairs done). ``memory``: the memory limit in bytes
    the work is sized from (:mod:`evalstore.stats.budget`: |t*| and wbar* of every trial are kept
    for the estimated difference, 16 bytes per pair and trial; a B whose 16 B bytes do not fit is
    refused, naming the B that fits)."""
    Z, B, k = _checked(Z, B, alpha, indices)
    P, n = Z.shape
    t_obs, zbar, const = t_statistic(Z)
    W = Z - zbar[:, None]
    W[const] = 0.0
    scale = row_scale(W)
    W = W / scale[:, None]  # exact (powers of two); |wbar*| is scaled back below
    gmax = _max_group(W) if P else np.zeros(0, dtype=int)
    asl = np.empty(P)
    diff = np.empty(P)
    abs_t_obs = np.abs(t_obs)
    cut = budget.plan(
        B,
        P,
        per_trial=40 * n,
        per_row_trial=128,
        kept_per_row_trial=budget.BOOTSTRAP_KEPT,
        final_per_trial=budget.BOOTSTRAP_FINAL,
        memory=memory,
        what="the bootstrap test",
    )
    # all trials in one block: the samples are drawn (and counted) once for every group of pairs
    once = None if cut.trials < B else _counts_of(indices if indices is not None else _draw_all(n, B, seed), n)
    for s in range(0, P, cut.rows):
        Wb = W[s : s + cut.rows]
        abs_t = np.empty((B, Wb.shape[0]), order="F")  # a pair's B values side by side
        wbar = np.empty((B, Wb.shape[0]), order="F")
        parts = [(0, once)] if once is not None else _count_blocks(n, B, seed, indices, cut.trials)
        for b0, Cu in parts:
            bt, bw = _trial_block(Cu, Wb, gmax[s : s + cut.rows])
            b1 = b0 + bt.shape[0]
            abs_t[b0:b1], wbar[b0:b1] = np.abs(bt), bw
        asl[s : s + cut.rows] = np.count_nonzero(abs_t >= abs_t_obs[None, s : s + cut.rows], axis=0) / B
        pick = _kth_largest_index(abs_t, k)
        diff[s : s + cut.rows] = np.abs(wbar[pick, np.arange(Wb.shape[0])]) * scale[s : s + cut.rows]
        del abs_t, wbar  # before the next group's
        if progress is not None:
            progress.advance(Wb.shape[0])
    return BootstrapResult(t_obs=t_obs, asl=asl, diff_at_alpha=diff, B=B, alpha=float(alpha), seed=int(seed))


def _draw_all(n: int, B: int, seed: int) -> np.ndarray:
    return next(sampling.blocks("bootstrap", n, B, seed, B))[1]


def _counts_of(indices: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The sample-count matrix of a block of samples and its number of distinct topics per sample."""
    C = counts(indices, n)
    return C, np.count_nonzero(C, axis=1)


def _count_blocks(n: int, B: int, seed: int, indices: np.ndarray | None, rows: int):
    """``(start, (C, u))`` for the samples ``rows`` at a time (the caller's, or drawn from ``seed``)."""
    if indices is not None:
        draws = sampling.given_blocks(indices, rows)
    else:
        draws = sampling.blocks("bootstrap", n, B, seed, rows)
    for start, idx in draws:
        yield start, _counts_of(idx, n)


def _trial_block(Cu: tuple[np.ndarray, np.ndarray], Wb: np.ndarray, gmax: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(t*, wbar*)`` of a block of samples (rows) for a group of pairs (columns)."""
    C, u = Cu
    n = C.shape[1]
    sqrt_n = math.sqrt(n)
    wbar = weighted_sums(C, Wb) / n
    ss = weighted_sums(C, Wb * Wb)
    var = np.maximum((ss - n * wbar * wbar) / (n - 1), 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = wbar / (np.sqrt(var) / sqrt_n)
    degenerate = _fix_degenerate(C, Wb, wbar, t, u, gmax)
    lost = (var == 0) & ~degenerate
    if lost.any():
        # the one-pass variance cancelled to 0 in a sample whose values are not all equal
        # (possible only for nearly equal values): recompute those entries in two passes
        bs, ps = np.nonzero(lost)
        vals, mult = Wb[ps], C[bs]
        m = (mult * vals).sum(axis=1) / n
        v = (mult * (vals - m[:, None]) ** 2).sum(axis=1) / (n - 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            t[bs, ps] = np.where(v > 0, m / (np.sqrt(v) / sqrt_n), _degenerate_t(m))
        wbar[bs, ps] = m
    return t, wbar


def bootstrap_asl(x, y, B: int = 1000, seed: int = 0) -> float:
    """ASL of the paired bootstrap test for one pair of per-topic score lists (same topics,
    same order). Equal to the pair's ASL in :func:`paired_bootstrap` with the same seed."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise MetaError(f"bootstrap_asl needs two score lists of the same length (got {x.shape} and {y.shape})")
    return float(paired_bootstrap((x - y)[None, :], B=B, seed=seed).asl[0])
