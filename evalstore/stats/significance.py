"""Paired significance tests for many system pairs at once (rows of Z = per-topic differences).

* ``paired_t``: Student's paired t-test, ``t = zbar / (sigma / sqrt n)`` (sigma with n - 1),
  two-sided p from the t distribution with n - 1 degrees of freedom. sigma = 0: t = 0 and p = 1
  when all differences are 0, else t = +-inf and p = 0 (the bootstrap's rule).
* ``wilcoxon``: two-sided Wilcoxon signed-rank test (Bompada et al. 2007 Sec. 4.3). Zero differences are dropped
  (Wilcoxon's original rule; n_r = non-zero differences); ties among |d| get average ranks.
  Statistic ``T = min(R+, R-)``. The p-value is exact (the distribution of R+ over the 2^n_r sign
  patterns, ``p = min(1, 2 min(P(R+ <= r), P(R+ >= r)))``) when n_r <= 50 and there are no ties
  among the non-zero |d|; otherwise the normal approximation with tie correction
  ``sigma^2 = n_r(n_r+1)(2n_r+1)/24 - sum(t^3 - t)/48`` and no continuity correction. No non-zero
  difference at all: T = 0, p = 1. This equals ``scipy.stats.wilcoxon(d, method='exact')`` when
  there are no ties and ``method='asymptotic', correction=False`` otherwise (scipy's default
  ``'auto'`` switches to a permutation test when there are zeros or ties and n <= 13).
* ``randomisation``: two-sided paired randomisation (sign-flip permutation) test on the mean
  difference: B random sign patterns (shared by all pairs, see :mod:`evalstore.stats.sampling`),
  ``p = (#{b : |mean(s_b z)| >= |mean(z)|} + 1) / (B + 1)``: the observed sign pattern counts as
  one of the equally likely ones, so p is never 0 and the test keeps its level (as
  ``scipy.stats.permutation_test`` with random resamples; Phipson & Smyth 2010). A resampled
  statistic within the rounding bound ``eps * sum|z| / n`` of the observed one counts as at least
  as extreme (the all-plus pattern reproduces the observed mean, up to summation order).
* ``tukey_hsd``: the randomised Tukey HSD test over all runs at once (Carterette 2012; Sakai 2014
  recommends it for comparing many systems): each trial permutes every topic's scores across the
  runs, and ``p_ij = (#{b : max_k mean_b(k) - min_k mean_b(k) >= |mean_i - mean_j|} + 1) / (B + 1)``;
  when all (m!)^n arrangements number at most B they are enumerated and p is exact.
* ``adjust``: Bonferroni, Holm (step-down), Benjamini-Hochberg or Benjamini-Yekutieli adjusted
  p-values over a family (BH and BY by ``scipy.stats.false_discovery_control``).
* ``monte_carlo_p``: (count + 1) / (B + 1) from an exceedance count.
"""

from __future__ import annotations

import itertools
import math
from functools import cache

import numpy as np

from ..errors import MetaError
from . import budget, sampling
from .bootstrap import row_scale, t_statistic
from .sampling import check_trials

TESTS = ("bootstrap", "t", "wilcoxon", "randomisation")
#: Other spellings of the tests (here and in ``compare``), accepted and printed as the name they stand for.
TEST_SPELLINGS = {"randomization": "randomisation", "tukey": "tukey-hsd", "tukey_hsd": "tukey-hsd", "hsd": "tukey-hsd"}
ADJUSTMENTS = ("none", "holm", "bonferroni", "bh", "by")
EXACT_MAX_N = 50


def test_name(test: str, tests: tuple[str, ...] = TESTS) -> str:
    """The name of ``test`` among ``tests`` (another spelling, such as ``randomization``, gives the
    name it stands for); an unknown test is a MetaError."""
    t = TEST_SPELLINGS.get(str(test).lower(), str(test).lower())
    if t not in tests:
        raise MetaError(f"unknown test {test!r}; use one of {', '.join(tests)}")
    return t


def check_alpha(alpha: float) -> float:
    """A significance level: a number strictly between 0 and 1."""
    if not (0 < alpha < 1):
        raise MetaError(f"alpha must be between 0 and 1, not {alpha}")
    return float(alpha)


def _check(Z) -> np.ndarray:
    Z = np.asarray(Z, dtype=np.float64)
    if Z.ndim != 2:
        raise MetaError("Z must be a (pairs x topics) matrix")
    if Z.shape[1] < 2:
        raise MetaError(f"a paired test needs at least 2 topics, got {Z.shape[1]}")
    if not np.all(np.isfinite(Z)):
        raise MetaError("per-topic scores contain NaN or infinite values; choose a missing-topic policy")
    return Z


def paired_t(Z) -> tuple[np.ndarray, np.ndarray]:
    """``(t, p)`` per row of Z: ``scipy.stats.ttest_rel`` (two-sided) for rows whose differences
    vary; rows of equal differences (sigma = 0) get the degenerate rule above."""
    from scipy.stats import ttest_rel

    Z = _check(Z)
    t, _, const = t_statistic(Z)
    p = np.where(t == 0, 1.0, 0.0)
    ok = ~const
    if ok.any():
        # t is scale-free: each row is divided by a power of two first (exact), so that the squares
        # of tiny differences do not underflow (scipy alone gives NaN for differences of 1e-313)
        Zs = Z[ok] / row_scale(Z[ok])[:, None]
        res = ttest_rel(Zs, np.zeros_like(Zs), axis=1)
        t[ok], p[ok] = res.statistic, res.pvalue
    return t, np.minimum(p, 1.0)


@cache
def _signed_rank_cdf(n: int) -> np.ndarray:
    """P(R+ <= k), k = 0..n(n+1)/2, under H0 with n non-zero untied differences."""
    top = n * (n + 1) // 2
    c = np.zeros(top + 1)
    c[0] = 1.0
    for r in range(1, n + 1):  # subset-sum counts: a loop over ranks 1..n (n <= 50)
        c[r:] = c[r:] + c[:-r].copy()
    return np.cumsum(c / 2.0**n)


def _exact_p(r_plus: np.ndarray, n: np.ndarray) -> np.ndarray:
    p = np.ones_like(r_plus)
    for m in np.unique(n):  # one cumulative table per distinct n_r (<= 50 of them)
        if m == 0:
            continue
        sel = n == m
        cdf = _signed_rank_cdf(int(m))
        r = np.rint(r_plus[sel]).astype(np.int64)
        lower = cdf[r]  # P(R+ <= r)
        upper = cdf[m * (m + 1) // 2 - r]  # P(R+ >= r) = P(R+ <= top - r) (symmetry)
        p[sel] = np.minimum(1.0, 2.0 * np.minimum(lower, upper))
    return p


def wilcoxon(Z) -> tuple[np.ndarray, np.ndarray]:
    """``(T, p)`` per row of Z, T = min(R+, R-)."""
    from scipy.stats import norm

    Z = _check(Z)
    P, n = Z.shape
    absd = np.where(Z != 0, np.abs(Z), np.nan)
    nr = np.count_nonzero(Z != 0, axis=1)
    # average ranks of the non-zero |d| within each row (NaN = dropped zero, sorted last)
    order = np.argsort(absd, axis=1, kind="stable")
    s = np.take_along_axis(absd, order, axis=1)
    valid = ~np.isnan(s)
    new = np.ones(s.shape, dtype=bool)
    new[:, 1:] = ~(s[:, 1:] == s[:, :-1])
    idx = np.broadcast_to(np.arange(n), s.shape)
    start = np.maximum.accumulate(np.where(new, idx, 0), axis=1)
    # end of each tie group: reverse running minimum of the next group's start
    nxt = np.where(new, idx, n)
    nxt = np.concatenate([nxt[:, 1:], np.full((P, 1), n)], axis=1)
    end = np.minimum.accumulate(nxt[:, ::-1], axis=1)[:, ::-1]
    ranks_sorted = np.where(valid, (start + end + 1) / 2.0, 0.0)
    ranks = np.empty_like(ranks_sorted)
    np.put_along_axis(ranks, order, ranks_sorted, axis=1)
    r_plus = np.where(Z > 0, ranks, 0.0).sum(axis=1)
    r_minus = np.where(Z < 0, ranks, 0.0).sum(axis=1)
    # tie groups among the non-zero |d|: sum over groups of t^3 - t = sum over members of 3j(j-1)
    j = (idx - start + 1).astype(np.float64)
    tie_term = np.where(valid, 3.0 * j * (j - 1.0), 0.0).sum(axis=1)
    has_ties = tie_term > 0
    exact = (~has_ties) & (nr <= EXACT_MAX_N)
    p = np.ones(P)
    if exact.any():
        p[exact] = _exact_p(r_plus[exact], nr[exact])
    approx = ~exact & (nr > 0)
    if approx.any():
        m = nr[approx].astype(np.float64)
        mean = m * (m + 1) / 4
        var = m * (m + 1) * (2 * m + 1) / 24 - tie_term[approx] / 48
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(var > 0, (r_plus[approx] - mean) / np.sqrt(var), 0.0)
        p[approx] = np.minimum(1.0, 2 * norm.sf(np.abs(z)))
    return np.minimum(r_plus, r_minus), p


def randomisation(
    Z, B: int = 10000, seed: int = 0, *, signs: np.ndarray | None = None, progress=None, memory: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(mean difference, p)`` per row of Z (two-sided sign-flip randomisation test). ``signs``:
    the ``(B, n)`` sign patterns (default: drawn from ``seed`` block by block); ``memory``: the
    memory limit in bytes the work is sized from (:mod:`evalstore.stats.budget`)."""
    Z = _check(Z)
    P, n = Z.shape
    B = check_trials(B, "random permutations")
    if signs is not None and signs.shape != (B, n):
        raise MetaError(f"sign patterns must have shape ({B}, {n}), not {signs.shape}")
    obs = Z.mean(axis=1)
    tol = np.finfo(np.float64).eps * np.abs(Z).sum(axis=1) / n
    hits = np.zeros(P, dtype=np.int64)
    # per trial: the drawn integers, the signs and a temporary (24 n bytes); per pair and trial: T,
    # |T| and the comparison (measured: tests/evalstore/stats/test_budget.py)
    cut = budget.plan(B, P, per_trial=24 * n, per_row_trial=32, memory=memory, what="the randomisation test")
    once = None if cut.trials < B else _draws("signs", n, B, seed, signs)  # all trials fit: draw them once
    for s in range(0, P, cut.rows):
        Zb = Z[s : s + cut.rows]
        bound = (np.abs(obs[s : s + cut.rows]) - tol[s : s + cut.rows])[None, :]
        blocks = [(0, once)] if once is not None else _blocks("signs", n, B, seed, signs, cut.trials)
        for _, S in blocks:
            T = np.abs(S @ Zb.T) / n
            hits[s : s + cut.rows] += np.count_nonzero(T >= bound, axis=0)
        if progress is not None:
            progress.advance(Zb.shape[0])
    return obs, monte_carlo_p(hits, B)


def _draws(kind: str, n: int, B: int, seed: int, given: np.ndarray | None) -> np.ndarray:
    """All B trials' draws (the caller's, or drawn from ``seed``)."""
    return given if given is not None else np.concatenate([b for _, b in sampling.blocks(kind, n, B, seed, B)])


def _blocks(kind: str, n: int, B: int, seed: int, given: np.ndarray | None, rows: int):
    """The draws ``rows`` trials at a time (the caller's, or drawn from ``seed``)."""
    return sampling.given_blocks(given, rows) if given is not None else sampling.blocks(kind, n, B, seed, rows)


def _tukey_exact(X: np.ndarray, obs: np.ndarray, tol: float, total: int, memory: int | None) -> np.ndarray:
    """P of the randomised Tukey HSD from all ``total`` = (m!)^n arrangements, in blocks: the k-th
    arrangement permutes topic j's column by the permutation of k's j-th digit in base m!, the first
    topic the most significant (``itertools.product``'s order)."""
    m, n = X.shape
    perms = np.array(list(itertools.permutations(range(m))))  # (m!, m)
    q = len(perms)
    weights = q ** np.arange(n - 1, -1, -1, dtype=np.int64)
    counts = np.zeros((m, m), dtype=np.int64)
    block = budget.rows_per_block(40 * n * m + 16 * n, budget.working(memory), total)
    for start in range(0, total, block):
        k = np.arange(start, min(total, start + block), dtype=np.int64)
        order = perms[(k[:, None] // weights[None, :]) % q]  # (b, topic, run position) -> run
        cols = np.ascontiguousarray(X[order, np.arange(n)[None, :, None]].transpose(0, 2, 1))  # b, runs, topics
        mu = cols.mean(axis=2)
        R = mu.max(axis=1) - mu.min(axis=1)
        counts += (R[None, None, :] >= obs[:, :, None] - tol).sum(axis=2)
    P = counts / float(total)
    np.fill_diagonal(P, 1.0)
    return P


def monte_carlo_p(count, B: int) -> np.ndarray:
    """The p-value of a Monte-Carlo test from the number of resamples at least as extreme as the
    observed statistic: ``(count + 1) / (B + 1)`` (never 0; exact level under H0)."""
    return (np.asarray(count, dtype=np.float64) + 1.0) / (B + 1.0)


def min_trials(alpha: float, m: int, method: str) -> int:
    """The smallest B for which the smallest possible Monte-Carlo p-value, 1 / (B + 1), is
    significant (adjusted p < alpha) when it is the best of ``m`` comparisons (Bonferroni, Holm and
    BH: 1 / (B + 1) * m < alpha; BY: 1 / (B + 1) * m * H_m < alpha; none: 1 / (B + 1) < alpha).

    The estimate ``floor(1 / threshold)`` is off by one when the threshold is not exact in binary
    (0.01 / 35), so the candidates around it are decided by :func:`adjust` itself."""
    m = max(1, int(m))
    family = method if m > 1 else "none"
    if family == "by":
        threshold = alpha / (m * float(np.sum(1.0 / np.arange(1, m + 1))))
    elif family == "none":
        threshold = alpha
    else:
        threshold = alpha / m

    def passes(b: int) -> bool:
        p = np.ones(m)
        p[0] = 1.0 / (b + 1.0)
        return bool(adjust(p, family)[0] < alpha)

    b = max(1, int(np.floor(1.0 / threshold)) - 2)
    while not passes(b):
        b += 1
    while b > 1 and passes(b - 1):
        b -= 1
    return b


def adjust(p, method: str = "none") -> np.ndarray:
    """Adjusted p-values over the family ``p``: ``bonferroni`` (p * m), ``holm`` (step-down), both
    capped at 1 (family-wise error); ``bh`` / ``by`` (false discovery rate, by
    ``scipy.stats.false_discovery_control``)."""
    p = np.asarray(p, dtype=np.float64)
    if method not in ADJUSTMENTS:
        raise MetaError(f"unknown p-value adjustment {method!r}; use one of {', '.join(ADJUSTMENTS)}")
    m = p.size
    if method == "none" or m == 0:
        return p.copy()
    if method == "bonferroni":
        return np.minimum(1.0, p * m)
    if method in ("bh", "by"):
        from scipy.stats import false_discovery_control

        return np.asarray(false_discovery_control(p, method=method), dtype=np.float64)
    order = np.argsort(p, kind="stable")
    stepped = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(1.0, stepped)
    return out


def tukey_hsd(X, B: int = 10000, seed: int = 0, *, memory: int | None = None) -> tuple[np.ndarray, np.ndarray, int]:
    """Randomised Tukey HSD over all runs (rows of X, runs x topics): ``(D, P, trials)`` with
    ``D[i, j] = mean_i - mean_j`` and ``P[i, j]`` the p-value of that difference (module docstring).

    Under H0 the runs are exchangeable within a topic, so a trial permutes each topic's column of X.
    When the (m!)^n arrangements number at most B, all are enumerated (``trials`` = their number,
    the observed one included) and P is exact; otherwise B random ones are drawn and
    ``P = (count + 1) / (B + 1)``. ``memory``: the memory limit in bytes the blocks of trials are
    sized from (:mod:`evalstore.stats.budget`)."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] < 2:
        raise MetaError("Tukey HSD needs a (runs x topics) matrix of at least 2 runs")
    _check(X)
    m, n = X.shape
    B = check_trials(B, "random permutations")
    means = X.mean(axis=1)
    D = means[:, None] - means[None, :]
    obs = np.abs(D)
    tol = np.finfo(np.float64).eps * np.abs(X).sum(axis=1).max() / n * 4
    total = math.factorial(m) ** n if m <= 12 and n <= 40 else None
    if total is not None and total <= B:
        return D, _tukey_exact(X, obs, tol, total, memory), total
    rng = np.random.default_rng(seed)
    counts = np.zeros((m, m), dtype=np.int64)
    # per trial: the random keys, their order, the permuted scores (n x m each) and the means
    block = budget.rows_per_block(32 * n * m + 16 * m, budget.working(memory), B)
    done = 0
    while done < B:
        b = min(block, B - done)
        # an independent permutation of the runs for every (trial, topic)
        order = np.argsort(rng.random((b, n, m)), axis=2)
        permuted = np.take_along_axis(np.broadcast_to(X.T, (b, n, m)), order, axis=2)  # trial, topic, run
        mu = permuted.mean(axis=1)  # trial, run
        R = mu.max(axis=1) - mu.min(axis=1)
        counts += (R[None, None, :] >= obs[:, :, None] - tol).sum(axis=2)
        done += b
    P = monte_carlo_p(counts, B)
    np.fill_diagonal(P, 1.0)
    return D, P, B
