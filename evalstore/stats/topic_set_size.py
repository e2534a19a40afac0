"""Topic set size design (Sakai, "Topic set size design", Information Retrieval Journal 19(3),
2016, after Nagata's sample size design): how many topics a test collection needs so that a
planned experiment meets a statistical requirement, and, the other way round, what the set's
current number of topics can detect. docs/reproducibility.md has the formulas.

The variance is V_E, the residual variance of the two-way ANOVA without replication of a runs x
topics score matrix (:func:`evalstore.stats.effects.residual_variance`, the same V_E as Sakai's
SMD), Sakai's estimate of the within-system variance sigma^2; :func:`plan` starts from it
(:func:`evalstore.meta.design.design` computes it from the stored scores).

* ``test='t'`` (paired t-test, two-sided): detect a difference ``minD`` between two systems with
  probability 1 - beta at level alpha. sigma_t^2 = 2 V_E (the variance of a per-topic difference),
  effect ``Delta_t = minD / sigma_t``. Exact: the smallest n with
  ``P(|T'| >= t_{alpha/2}(n - 1)) >= 1 - beta``, T' noncentral t with n - 1 degrees of freedom
  and noncentrality ``sqrt(n) Delta_t``. Sakai's closed form:
  ``n ~ ((z_{alpha/2} + z_beta) / Delta_t)^2 + z_{alpha/2}^2 / 2``.
* ``test='anova'`` (one-way ANOVA over m systems): detect a range ``minD`` between the best and
  the worst of m systems. Worst case (two systems at +-minD/2, the others at the mean):
  noncentrality ``lambda = n Delta`` with ``Delta = minD^2 / (2 sigma^2)``, sigma^2 = V_E. Exact:
  the smallest n with ``P(F' >= F_alpha(m - 1, m (n - 1))) >= 1 - beta``, F' noncentral F with
  noncentrality lambda. Sakai's closed form: ``n ~ lambda_chi / Delta``, lambda_chi the
  noncentrality of the noncentral chi-square with m - 1 degrees of freedom that has power 1 - beta
  (the limit of infinitely many error degrees of freedom, Nagata's table).
* ``test='ci'`` (cap on the width of the 1 - alpha confidence interval of the mean difference of
  two systems; ``min_diff`` is the cap delta): the smallest n whose expected width
  ``2 t_{alpha/2}(n - 1) sigma_t c(n) / sqrt(n)`` is at most delta, sigma_t^2 = 2 V_E and
  ``c(n) = E[s] / sigma = sqrt(2 / (n - 1)) Gamma(n / 2) / Gamma((n - 1) / 2)``. Sakai's closed form
  (normal quantile, s = sigma): ``n ~ 4 z_{alpha/2}^2 sigma_t^2 / delta^2``.

The reverse (``min_diff_current``): with the set's n topics, the smallest minD the t-test or the
ANOVA detects with power 1 - beta (exact), or the expected CI width.
"""

from __future__ import annotations

import math
from typing import Any

from ..errors import MetaError
from .significance import check_alpha

TESTS = ("t", "anova", "ci")
MAX_TOPICS = 10_000_000
#: the smallest alpha and beta the power computations resolve (scipy's noncentral t and F tails;
#: at 1e-300 the root finding fails and the target power rounds to 1)
SMALLEST_ERROR_RATE = 1e-6


# --------------------------------------------------------------------------- checks
def check_rates(alpha: float, beta: float | None) -> None:
    """alpha (and beta, unless None) in the range the design computes: at least
    :data:`SMALLEST_ERROR_RATE`, alpha at most 0.5, beta below 1, and 1 - beta above alpha."""
    check_alpha(alpha)
    if not SMALLEST_ERROR_RATE <= alpha <= 0.5:
        raise MetaError(f"alpha must be between {SMALLEST_ERROR_RATE:g} and 0.5 for a design, not {alpha}")
    if beta is not None:
        check_beta(beta, alpha)


def check_beta(beta: float, alpha: float) -> float:
    if not (SMALLEST_ERROR_RATE <= beta < 1):
        raise MetaError(f"beta must be at least {SMALLEST_ERROR_RATE:g} and below 1, not {beta}")
    if 1 - beta <= alpha:
        raise MetaError(f"the power 1 - beta ({1 - beta:g}) must exceed alpha ({alpha:g})")
    return float(beta)


def check_positive(x: float, what: str) -> float:
    if not (x > 0 and math.isfinite(x)):
        raise MetaError(f"{what} must be a positive number, not {x}")
    return float(x)


def check_systems(m: int) -> int:
    if int(m) < 2:
        raise MetaError(f"one-way ANOVA compares at least 2 systems, not {m}")
    return int(m)


def _ceil(x: float) -> int:
    """``max(2, ceil(x))``; beyond 2^62 (or infinite: a difference whose square underflows) it is
    2^62, far past :data:`MAX_TOPICS`, so the caller refuses it."""
    return max(2, math.ceil(x)) if x < 2**62 else 2**62


def _z(p: float) -> float:
    from scipy.stats import norm

    return float(norm.isf(p))


def _smallest(power, target: float, start: int) -> int:
    """The smallest n >= 2 with power(n) >= target (power increases with n), searched from start
    (Sakai's closed form, close to it) by galloping down or up, then bisecting; never beyond
    :data:`MAX_TOPICS`."""
    n = min(max(2, int(start)), MAX_TOPICS)
    if power(n) >= target:
        hi, step = n, 1
        lo = hi - step
        while lo > 2 and power(lo) >= target:  # gallop down
            hi = lo
            step *= 2
            lo = max(2, hi - step)
        if lo <= 2 and power(2) >= target:
            return 2
    else:
        step = 1
        lo = n
        while power(n) < target:  # gallop up, then bisect
            lo = n
            if n >= MAX_TOPICS:
                raise MetaError(f"more than {MAX_TOPICS:,} topics would be needed")
            n = min(n + step, MAX_TOPICS)
            step *= 2
        hi = n
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if power(mid) >= target:
            hi = mid
        else:
            lo = mid
    return hi


# --------------------------------------------------------------------------- paired t-test
def t_power(n: int, effect: float, alpha: float) -> float:
    """Power of the two-sided paired t-test with n topics for effect ``Delta_t = minD / sigma_t``."""
    from scipy.stats import nct
    from scipy.stats import t as t_dist

    df = n - 1
    crit = t_dist.isf(alpha / 2, df)
    nc = math.sqrt(n) * effect
    # the lower tail P(T' <= -crit) as P(T'' >= crit) with noncentrality -nc: scipy's nct.cdf gives
    # NaN far in that tail (e.g. df 149, nc 11), its sf a tiny number
    upper, lower = float(nct.sf(crit, df, nc)), float(nct.sf(crit, df, -nc))
    if math.isnan(upper) or math.isnan(lower):
        raise MetaError(f"the noncentral t power is not computable for n = {n}, effect {effect}")
    return upper + lower


def t_topics_approx(alpha: float, beta: float, min_diff: float, sigma2: float) -> int:
    """Sakai's closed form: ``ceil(((z_{alpha/2} + z_beta) / Delta_t)^2 + z_{alpha/2}^2 / 2)``."""
    effect = min_diff / math.sqrt(sigma2)
    za, zb = _z(alpha / 2), _z(beta)
    r = (za + zb) / effect if effect > 0 else math.inf
    return _ceil(r * r + za * za / 2)


def t_topics(alpha: float, beta: float, min_diff: float, sigma2: float) -> int:
    """Topics the paired t-test needs to detect ``min_diff`` with power 1 - beta (exact)."""
    effect = min_diff / math.sqrt(sigma2)
    return _smallest(lambda n: t_power(n, effect, alpha), 1 - beta, t_topics_approx(alpha, beta, min_diff, sigma2))


def _solve_increasing(f, target: float) -> float:
    """x > 0 with f(x) = target for f increasing from f(0) < target."""
    from scipy.optimize import brentq

    hi = 1.0
    while f(hi) < target:
        hi *= 2
        if hi > 1e12:
            raise MetaError("no finite difference reaches the requested power")
    return float(brentq(lambda x: f(x) - target, 0.0, hi, xtol=1e-14, rtol=1e-14, maxiter=500))


def t_min_diff(n: int, alpha: float, beta: float, sigma2: float) -> float:
    """The smallest difference the paired t-test with n topics detects with power 1 - beta."""
    if n < 2:
        raise MetaError("the t-test needs at least 2 topics")
    effect = _solve_increasing(lambda d: t_power(n, d, alpha), 1 - beta)
    return effect * math.sqrt(sigma2)


# --------------------------------------------------------------------------- one-way ANOVA
def anova_power(n: int, m: int, delta: float, alpha: float) -> float:
    """Power of one-way ANOVA over m systems with n topics each, ``lambda = n Delta``."""
    from scipy.stats import f as f_dist
    from scipy.stats import ncf

    d1, d2 = m - 1, m * (n - 1)
    crit = f_dist.isf(alpha, d1, d2)
    return float(ncf.sf(crit, d1, d2, n * delta))


def chi2_lambda(alpha: float, beta: float, m: int) -> float:
    """Noncentrality of the noncentral chi-square (m - 1 degrees of freedom) with power 1 - beta
    at level alpha: the lambda of infinitely many error degrees of freedom."""
    from scipy.stats import chi2, ncx2

    crit = chi2.isf(alpha, m - 1)
    return _solve_increasing(lambda lam: float(ncx2.sf(crit, m - 1, lam)), 1 - beta)


def anova_topics_approx(alpha: float, beta: float, min_diff: float, sigma2: float, m: int) -> int:
    """Sakai's closed form: ``ceil(lambda_chi / Delta)``, ``Delta = minD^2 / (2 sigma^2)``."""
    delta = min_diff**2 / (2 * sigma2)
    return _ceil(chi2_lambda(alpha, beta, m) / delta) if delta > 0 else _ceil(math.inf)


def anova_topics(alpha: float, beta: float, min_diff: float, sigma2: float, m: int) -> int:
    """Topics one-way ANOVA over m systems needs to detect a range ``min_diff`` (exact)."""
    delta = min_diff**2 / (2 * sigma2)
    start = anova_topics_approx(alpha, beta, min_diff, sigma2, m)
    return _smallest(lambda n: anova_power(n, m, delta, alpha), 1 - beta, start)


def anova_min_diff(n: int, m: int, alpha: float, beta: float, sigma2: float) -> float:
    """The smallest range one-way ANOVA with n topics detects with power 1 - beta."""
    from scipy.stats import f as f_dist
    from scipy.stats import ncf

    if n < 2:
        raise MetaError("one-way ANOVA needs at least 2 topics")
    d1, d2 = m - 1, m * (n - 1)
    crit = f_dist.isf(alpha, d1, d2)
    lam = _solve_increasing(lambda x: float(ncf.sf(crit, d1, d2, x)), 1 - beta)
    return math.sqrt(2 * sigma2 * lam / n)


# --------------------------------------------------------------------------- CI width
def ci_width(n: int, alpha: float, sigma2: float) -> float:
    """Expected width of the 1 - alpha t interval of a mean over n topics (variance sigma2)."""
    from scipy.special import gammaln
    from scipy.stats import t as t_dist

    if n < 2:
        raise MetaError("a confidence interval needs at least 2 topics")
    c = math.sqrt(2 / (n - 1)) * math.exp(gammaln(n / 2) - gammaln((n - 1) / 2))
    return 2 * float(t_dist.isf(alpha / 2, n - 1)) * math.sqrt(sigma2) * c / math.sqrt(n)


def ci_topics_approx(alpha: float, width: float, sigma2: float) -> int:
    """Sakai's closed form: ``ceil(4 z_{alpha/2}^2 sigma^2 / delta^2)``."""
    z = _z(alpha / 2)
    w2 = width * width
    return _ceil(4 * z * z * sigma2 / w2) if w2 > 0 else _ceil(math.inf)


def ci_topics(alpha: float, width: float, sigma2: float) -> int:
    """Topics whose expected CI width is at most ``width`` (exact)."""
    start = ci_topics_approx(alpha, width, sigma2)
    return _smallest(lambda n: -ci_width(n, alpha, sigma2), -width, start)


def _feasible(approx: float, min_diff: float, variance: float) -> int:
    """Sakai's closed form ``approx``, if the exact search can follow it (at most :data:`MAX_TOPICS`
    topics); else a MetaError that gives the closed form's answer."""
    if not approx <= MAX_TOPICS:
        about = f"{approx:,.0f}" if approx < 1e15 else f"{approx:.3g}"
        raise MetaError(
            f"about {about} topics would be needed (Sakai's closed form) for a difference of {min_diff:g} with "
            f"V_E = {variance:.4g}: more than {MAX_TOPICS:,}, the most this design searches; a larger --min-diff "
            f"(or --alpha, --beta) needs fewer"
        )
    return int(approx)


# --------------------------------------------------------------------------- the design
def plan(
    test: str,
    variance: float,
    *,
    alpha: float = 0.05,
    beta: float = 0.20,
    min_diff: float,
    systems: int | None = None,
    n_topics: int | None = None,
) -> dict[str, Any]:
    """The design from a known V_E (no store): ``{n, n_approx, sigma2, achieved,
    min_diff_current, power_current}``; the reverse needs ``n_topics``."""
    if test not in TESTS:
        raise MetaError(f"unknown design test {test!r}; use one of {', '.join(TESTS)}")
    check_rates(alpha, None if test == "ci" else beta)
    alpha = float(alpha)
    variance = check_positive(variance, "the variance V_E")
    min_diff = check_positive(min_diff, "the minimum detectable difference" if test != "ci" else "the CI width cap")
    out: dict[str, Any] = {"min_diff_current": None, "power_current": None}
    if test == "t":
        beta = check_beta(beta, alpha)
        s2 = 2 * variance
        approx = _feasible(t_topics_approx(alpha, beta, min_diff, s2), min_diff, variance)
        n = t_topics(alpha, beta, min_diff, s2)
        out.update(n=n, n_approx=approx, sigma2=s2)
        out["achieved"] = t_power(n, min_diff / math.sqrt(s2), alpha)
        if n_topics is not None and n_topics >= 2:
            out["min_diff_current"] = t_min_diff(n_topics, alpha, beta, s2)
            out["power_current"] = t_power(n_topics, min_diff / math.sqrt(s2), alpha)
    elif test == "anova":
        beta = check_beta(beta, alpha)
        if systems is None:
            raise MetaError("one-way ANOVA design needs the number of systems m (systems=)")
        m = check_systems(systems)
        s2 = variance
        approx = _feasible(anova_topics_approx(alpha, beta, min_diff, s2, m), min_diff, variance)
        n = anova_topics(alpha, beta, min_diff, s2, m)
        out.update(n=n, n_approx=approx, sigma2=s2)
        delta = min_diff**2 / (2 * s2)
        out["achieved"] = anova_power(n, m, delta, alpha)
        if n_topics is not None and n_topics >= 2:
            out["min_diff_current"] = anova_min_diff(n_topics, m, alpha, beta, s2)
            out["power_current"] = anova_power(n_topics, m, delta, alpha)
    else:
        s2 = 2 * variance
        approx = _feasible(ci_topics_approx(alpha, min_diff, s2), min_diff, variance)
        n = ci_topics(alpha, min_diff, s2)
        out.update(n=n, n_approx=approx, sigma2=s2)
        out["achieved"] = ci_width(n, alpha, s2)
        if n_topics is not None and n_topics >= 2:
            out["min_diff_current"] = ci_width(n_topics, alpha, s2)
    return out
