"""Topic set size design (Sakai, "Topic set size design", Information Retrieval Journal 19(3),
2016, after Nagata's sample size design): how many topics a test collection needs so that a
planned experiment meets a statistical requirement, and, the other way round, what the set's
current number of topics can detect. docs/repro.md has the formulas.

The variance comes from a stored topic x run score matrix: V_E, the residual variance of the
two-way ANOVA without replication (:func:`evalstore.meta.effects.residual_variance`, the
same V_E as Sakai's SMD), Sakai's estimate of the within-system variance sigma^2.

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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import MetaError
from .common import Analysis, check_alpha, finish, inputs_of, need_mean
from .effects import residual_variance
from .matrix import score_matrix

if TYPE_CHECKING:
    from ..store.handle import StoreHandle

TESTS = ("t", "anova", "ci")
MAX_TOPICS = 10_000_000


# --------------------------------------------------------------------------- checks
def check_beta(beta: float, alpha: float) -> float:
    if not (0 < beta < 1):
        raise MetaError(f"beta must be between 0 and 1, not {beta}")
    if 1 - beta <= alpha:
        raise MetaError(f"the power 1 - beta ({1 - beta:g}) must exceed alpha ({alpha:g})")
    return float(beta)


def _positive(x: float, what: str) -> float:
    if not (x > 0 and math.isfinite(x)):
        raise MetaError(f"{what} must be a positive number, not {x}")
    return float(x)


def _systems(m: int) -> int:
    if int(m) < 2:
        raise MetaError(f"one-way ANOVA compares at least 2 systems, not {m}")
    return int(m)


def _z(p: float) -> float:
    from scipy.stats import norm

    return float(norm.isf(p))


def _smallest(power, target: float, start: int) -> int:
    """The smallest n >= 2 with power(n) >= target (power increases with n), searched from start."""
    n = max(2, int(start))
    if power(n) >= target:
        while n > 2 and power(n - 1) >= target:
            n -= 1
        return n
    step = 1
    lo = n
    while power(n) < target:  # gallop up, then bisect
        lo = n
        n += step
        step *= 2
        if n > MAX_TOPICS:
            raise MetaError(f"more than {MAX_TOPICS:,} topics would be needed")
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
    return max(2, math.ceil(((za + zb) / effect) ** 2 + za * za / 2))


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
    return max(2, math.ceil(chi2_lambda(alpha, beta, m) / delta))


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
    return max(2, math.ceil(4 * z * z * sigma2 / width**2))


def ci_topics(alpha: float, width: float, sigma2: float) -> int:
    """Topics whose expected CI width is at most ``width`` (exact)."""
    start = ci_topics_approx(alpha, width, sigma2)
    return _smallest(lambda n: -ci_width(n, alpha, sigma2), -width, start)


# --------------------------------------------------------------------------- the analysis
@dataclass
class Design:
    """The result of :func:`design`: the required topics ``n`` (exact) and ``n_approx`` (Sakai's
    closed form), the variance used, and the reverse for the set's current ``n_topics``."""

    qrels: str
    metric: str
    test: str
    alpha: float
    beta: float | None
    min_diff: float
    systems: int | None
    n_runs: int
    n_topics: int
    variance: float
    sigma2: float
    n: int
    n_approx: int
    achieved: float
    min_diff_current: float | None
    power_current: float | None
    analysis: Analysis | None = None
    notes: list[str] = field(default_factory=list)  # the metric on the set (as eval says it)

    @property
    def analysis_id(self) -> int | None:
        return self.analysis.analysis_id if self.analysis is not None else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "variance": self.variance,
            "sigma2": self.sigma2,
            "n_approx": self.n_approx,
            "achieved": self.achieved,
            "min_diff_current": self.min_diff_current,
            "power_current": self.power_current,
            "test": self.test,
            "alpha": self.alpha,
            "beta": self.beta,
            "min_diff": self.min_diff,
            "systems": self.systems,
            "qrels": self.qrels,
            "metric": self.metric,
            "n_runs": self.n_runs,
            "n_topics": self.n_topics,
        }


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
    alpha = check_alpha(alpha)
    variance = _positive(variance, "the variance V_E")
    min_diff = _positive(min_diff, "the minimum detectable difference" if test != "ci" else "the CI width cap")
    out: dict[str, Any] = {"min_diff_current": None, "power_current": None}
    if test == "t":
        beta = check_beta(beta, alpha)
        s2 = 2 * variance
        n = t_topics(alpha, beta, min_diff, s2)
        out.update(n=n, n_approx=t_topics_approx(alpha, beta, min_diff, s2), sigma2=s2)
        out["achieved"] = t_power(n, min_diff / math.sqrt(s2), alpha)
        if n_topics is not None and n_topics >= 2:
            out["min_diff_current"] = t_min_diff(n_topics, alpha, beta, s2)
            out["power_current"] = t_power(n_topics, min_diff / math.sqrt(s2), alpha)
    elif test == "anova":
        beta = check_beta(beta, alpha)
        if systems is None:
            raise MetaError("one-way ANOVA design needs the number of systems m (systems=)")
        m = _systems(systems)
        s2 = variance
        n = anova_topics(alpha, beta, min_diff, s2, m)
        out.update(n=n, n_approx=anova_topics_approx(alpha, beta, min_diff, s2, m), sigma2=s2)
        delta = min_diff**2 / (2 * s2)
        out["achieved"] = anova_power(n, m, delta, alpha)
        if n_topics is not None and n_topics >= 2:
            out["min_diff_current"] = anova_min_diff(n_topics, m, alpha, beta, s2)
            out["power_current"] = anova_power(n_topics, m, delta, alpha)
    else:
        s2 = 2 * variance
        n = ci_topics(alpha, min_diff, s2)
        out.update(n=n, n_approx=ci_topics_approx(alpha, min_diff, s2), sigma2=s2)
        out["achieved"] = ci_width(n, alpha, s2)
        if n_topics is not None and n_topics >= 2:
            out["min_diff_current"] = ci_width(n_topics, alpha, s2)
    return out


def design(
    store: StoreHandle,
    qrels: str,
    metric: str,
    *,
    test: str = "t",
    alpha: float = 0.05,
    beta: float = 0.20,
    min_diff: float,
    systems: int | None = None,
    runs: list[str] | None = None,
    missing: str = "error",
    convention: str = "trec_eval",
    complete: bool = False,
    depth: int | None = None,
    save: bool = True,
    progress: bool | None = None,
) -> Design:
    """Topic set size design (Sakai 2016) from the stored scores of ``runs`` (default: all runs
    sharing topics with ``qrels``) on ``qrels`` and ``metric``: V_E of the runs x topics matrix,
    then the topics needed for ``test`` (``'t'``, ``'anova'``, ``'ci'``) at ``alpha``, ``beta``
    (power 1 - beta; unused by ``'ci'``) and ``min_diff`` (minD; the range for ANOVA; the width
    cap for CI), and what the set's current topics detect. ``systems``: m for ANOVA (default:
    the number of runs of the matrix). ``missing``, ``convention``, ``complete``, ``depth``: as
    the meta analyses. ``save``: store it (``meta_runs`` kind ``'design'``, a ``meta_design`` row).
    """
    if test not in TESTS:
        raise MetaError(f"unknown design test {test!r}; use one of {', '.join(TESTS)}")
    check_alpha(alpha)
    if test != "ci":
        check_beta(beta, alpha)
    _positive(min_diff, "the minimum detectable difference" if test != "ci" else "the CI width cap")
    if systems is not None:
        _systems(systems)
    m = score_matrix(
        store, qrels, metric, runs, missing=missing, convention=convention, complete=complete, depth=depth,
        progress=progress,
    )  # fmt: skip
    need_mean([m], "topic set size design")
    if len(m.runs) < 2 or len(m.topics) < 2:
        raise MetaError(
            f"V_E needs at least 2 runs and 2 topics; {metric} on {qrels} has {len(m.runs)} run(s) and "
            f"{len(m.topics)} topic(s)"
        )
    ve = residual_variance(m.values)
    if not ve > 0:
        raise MetaError(f"the residual variance V_E of {metric} on {qrels} is 0: every run scores alike")
    k = systems if systems is not None else (len(m.runs) if test == "anova" else None)
    res = plan(test, ve, alpha=alpha, beta=beta, min_diff=min_diff, systems=k, n_topics=len(m.topics))
    d = Design(
        qrels, m.metric, test, float(alpha), None if test == "ci" else float(beta), float(min_diff), k,
        len(m.runs), len(m.topics), ve, res["sigma2"], res["n"], res["n_approx"], res["achieved"],
        res["min_diff_current"], res["power_current"], notes=list(m.notes),
    )  # fmt: skip
    params = {
        "test": test,
        "alpha": alpha,
        "beta": d.beta,
        "min_diff": min_diff,
        "systems": k,
        "missing": missing,
        "convention": convention,
        "complete": complete,
        "depth": depth,
        "variance": "V_E, residual variance of the two-way ANOVA without replication (runs x topics)",
        "solver": "exact noncentral t / F (scipy), expected CI width with c(n); n_approx: Sakai's closed form",
    }
    an = Analysis("design", params, None, inputs_of([m]), {"meta_design": [d.to_dict()]}, {"design": d})
    finish(store, an, save)
    d.analysis = an
    return d
