"""`evalstore design` (Sakai, topic set size design, IRJ 2016): the exact n against statsmodels'
power solvers, the reverse, Sakai's closed forms, V_E against statsmodels' two-way ANOVA, storage
and the CLI."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from support import run_cli

from evalstore.errors import MetaError
from evalstore.meta import design as D
from evalstore.meta.matrix import score_matrix
from evalstore.stats import topic_set_size as T
from evalstore.stats.effects import residual_variance

ALPHAS = (0.01, 0.05, 0.10)
BETAS = (0.10, 0.20, 0.30)
MIN_DIFFS = (0.02, 0.05, 0.10, 0.20)
VARIANCES = (0.005, 0.02, 0.05)  # V_E
SYSTEMS = (2, 3, 5, 10, 20)
GRID = list(itertools.product(ALPHAS, BETAS, MIN_DIFFS, VARIANCES))


def _sm():
    return pytest.importorskip("statsmodels.stats.power", reason="statsmodels is the reference (test extra)")


def test_t_topics_equal_statsmodels():
    sm = _sm()
    solver = sm.TTestPower()
    for a, b, md, ve in GRID:
        s2 = 2 * ve
        n = T.t_topics(a, b, md, s2)
        ref = solver.solve_power(effect_size=md / math.sqrt(s2), alpha=a, power=1 - b, alternative="two-sided")
        assert n == math.ceil(ref - 1e-9), (a, b, md, ve, n, ref)
        assert T.t_power(n, md / math.sqrt(s2), a) >= 1 - b > T.t_power(n - 1, md / math.sqrt(s2), a)
        assert T.t_power(n, md / math.sqrt(s2), a) == pytest.approx(
            solver.power(effect_size=md / math.sqrt(s2), nobs=n, alpha=a, alternative="two-sided"), abs=1e-9
        )


def test_anova_topics_equal_statsmodels():
    sm = _sm()
    solver = sm.FTestAnovaPower()
    for (a, b, md, ve), m in itertools.product(GRID, SYSTEMS):
        n = T.anova_topics(a, b, md, ve, m)
        # statsmodels: effect size f with f^2 = lambda / N, N = m n observations in all
        f = math.sqrt(md**2 / (2 * ve) / m)
        ref = solver.solve_power(effect_size=f, alpha=a, power=1 - b, k_groups=m) / m
        assert n == math.ceil(ref - 1e-9), (a, b, md, ve, m, n, ref)
        delta = md**2 / (2 * ve)
        assert T.anova_power(n, m, delta, a) >= 1 - b > T.anova_power(n - 1, m, delta, a)


def test_reverse_equals_statsmodels():
    """The minimum detectable difference with n topics: statsmodels' power at ours is exactly
    1 - beta; its own root finder stops within about 1e-6 of it (ours: 1e-14)."""
    sm = _sm()
    for n, a, b, ve in itertools.product((10, 25, 50, 150), ALPHAS, BETAS, VARIANCES):
        s2 = 2 * ve
        ours = T.t_min_diff(n, a, b, s2) / math.sqrt(s2)
        assert sm.TTestPower().power(effect_size=ours, nobs=n, alpha=a, alternative="two-sided") == pytest.approx(
            1 - b, abs=1e-9
        )
        try:
            ref = sm.TTestPower().solve_power(nobs=n, alpha=a, power=1 - b, alternative="two-sided")
        except ValueError:  # statsmodels' brentq meets a NaN power for some n: the power check stands
            ref = None
        if ref is not None:
            assert ours == pytest.approx(ref, rel=2e-5)
        for m in (3, 10):
            md = T.anova_min_diff(n, m, a, b, ve)
            f = math.sqrt(md**2 / (2 * ve) / m)  # f^2 = Delta / m
            assert sm.FTestAnovaPower().power(effect_size=f, nobs=n * m, alpha=a, k_groups=m) == pytest.approx(
                1 - b, abs=1e-9
            )
            try:
                ref_f = sm.FTestAnovaPower().solve_power(nobs=n * m, alpha=a, power=1 - b, k_groups=m)
            except ValueError:  # its brentq meets a NaN power for some (n, m): the power check above stands
                continue
            assert f == pytest.approx(ref_f, rel=2e-5)


def test_sakai_closed_forms():
    # paired t: n ~ ((z_{a/2} + z_b) / Delta)^2 + z_{a/2}^2 / 2
    za, zb = 1.959963984540054, 0.8416212335729143
    assert T.t_topics_approx(0.05, 0.20, 0.5, 1.0) == math.ceil(((za + zb) / 0.5) ** 2 + za * za / 2)
    # CI: n ~ 4 z^2 sigma^2 / delta^2
    assert T.ci_topics_approx(0.05, 0.1, 0.1) == math.ceil(4 * za * za * 0.1 / 0.01)
    # ANOVA: with m - 1 = 1 df the noncentral chi-square is (Z + sqrt(lambda))^2, whose power is
    # Phi(sqrt(lambda) - z_{a/2}) + Phi(-sqrt(lambda) - z_{a/2}); about (z_{a/2} + z_b)^2
    from scipy.stats import norm

    lam = T.chi2_lambda(0.05, 0.20, 2)
    assert norm.cdf(math.sqrt(lam) - za) + norm.cdf(-math.sqrt(lam) - za) == pytest.approx(0.8, abs=1e-12)
    assert lam == pytest.approx((za + zb) ** 2, rel=1e-5)
    # where they differ from the exact n, they are at most a few topics off
    diffs = {"t": [], "anova": [], "ci": []}
    for a, b, md, ve in GRID:
        diffs["t"].append(T.t_topics(a, b, md, 2 * ve) - T.t_topics_approx(a, b, md, 2 * ve))
        diffs["anova"].append(T.anova_topics(a, b, md, ve, 5) - T.anova_topics_approx(a, b, md, ve, 5))
        diffs["ci"].append(T.ci_topics(a, md, 2 * ve) - T.ci_topics_approx(a, md, 2 * ve))
    assert all(0 <= d <= 1 for d in diffs["t"])  # the +z^2/2 term nearly closes the gap
    assert all(0 <= d <= 3 for d in diffs["anova"])  # finite error df need a little more
    # t quantile > z and E[s] < sigma: 1 to 4 topics more than the closed form on this grid
    assert all(1 <= d <= 4 for d in diffs["ci"])


def test_ci_expected_width():
    # c(2) = sqrt(2) Gamma(1) / Gamma(1/2) = sqrt(2 / pi)
    from scipy.stats import t as t_dist

    assert T.ci_width(2, 0.05, 1.0) == pytest.approx(2 * t_dist.isf(0.025, 1) * math.sqrt(2 / math.pi) / math.sqrt(2))
    # E[s] by simulation (normal scores), n = 10
    rng = np.random.default_rng(0)
    s = rng.standard_normal((200_000, 10)).std(axis=1, ddof=1).mean()
    assert T.ci_width(10, 0.05, 1.0) == pytest.approx(2 * t_dist.isf(0.025, 9) * s / math.sqrt(10), rel=2e-3)
    for a, _, md, ve in GRID:
        n = T.ci_topics(a, md, 2 * ve)
        assert T.ci_width(n, a, 2 * ve) <= md < T.ci_width(n - 1, a, 2 * ve) if n > 2 else True


def test_checks():
    with pytest.raises(MetaError, match="beta"):
        T.plan("t", 0.01, alpha=0.05, beta=0.96, min_diff=0.1)
    with pytest.raises(MetaError, match="systems"):
        T.plan("anova", 0.01, min_diff=0.1)
    with pytest.raises(MetaError, match="unknown design test"):
        T.plan("z", 0.01, min_diff=0.1)
    with pytest.raises(MetaError, match="positive"):
        T.plan("ci", 0.01, min_diff=0)


def test_variance_is_the_two_way_anova_residual_mean_square(sample_store):
    pytest.importorskip("pandas")
    smf = pytest.importorskip("statsmodels.formula.api")
    anova_lm = pytest.importorskip("statsmodels.stats.anova").anova_lm
    import pandas as pd

    m = score_matrix(sample_store, "sample", "AP", missing="zero")
    df = pd.DataFrame(
        [(r, t, m.values[i, j]) for i, r in enumerate(m.runs) for j, t in enumerate(m.topics)],
        columns=["run", "topic", "y"],
    )
    table = anova_lm(smf.ols("y ~ C(run) + C(topic)", data=df).fit())
    ve = table.loc["Residual", "mean_sq"]
    assert residual_variance(m.values) == pytest.approx(ve, rel=1e-10)
    d = D.design(sample_store, "sample", "AP", min_diff=0.1, missing="zero", save=False)
    assert d.variance == pytest.approx(ve, rel=1e-10) and d.sigma2 == pytest.approx(2 * ve, rel=1e-10)
    assert d.n == T.t_topics(0.05, 0.2, 0.1, 2 * ve) and d.n_topics == len(m.topics)


def test_design_stored_and_dropped(sample_store):
    d = sample_store.design("sample", "AP", test="anova", min_diff=0.2, missing="zero")
    row = sample_store.con.execute(
        "SELECT test, systems, n, n_approx, variance FROM meta_design WHERE analysis_id = ?", [d.analysis_id]
    ).fetchone()
    assert row[0] == "anova" and row[1] == d.n_runs and row[2] == d.n and row[3] == d.n_approx
    assert row[4] == pytest.approx(d.variance)
    plan = sample_store.drop_runs([sample_store.run_names()[0]])
    assert d.analysis_id in plan.analyses


# --------------------------------------------------------------------------- CLI
def _run(sample_db, *args):
    return run_cli("design", *args, "--db", str(sample_db))


def test_cli_json(sample_db):
    res = _run(sample_db, "-m", "AP", "--min-diff", "0.1", "--missing", "zero", "--format", "json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert {"n", "variance", "n_approx", "min_diff_current", "power_current"} <= set(doc)
    assert doc["n"] == T.t_topics(0.05, 0.2, 0.1, 2 * doc["variance"])
    res = _run(sample_db, "-m", "AP", "--min-diff", "0.1", "--missing", "zero", "--test", "ci", "-f", "markdown")
    assert res.exit_code == 0 and "topics required (exact)" in res.stdout


@pytest.mark.parametrize(
    "extra",
    [
        ["--alpha", "0"],
        ["--beta", "1"],
        ["--min-diff", "-0.1"],
        ["--test", "z"],
        ["--systems", "5"],  # only ANOVA takes it
        ["--test", "anova", "--systems", "1"],
        ["--format", "yaml"],
    ],
)
def test_cli_bad_options(sample_db, extra):
    before = sample_db.read_bytes()
    args = ["-m", "AP", "--min-diff", "0.1"]
    if "--min-diff" in extra:
        args = ["-m", "AP"]
    res = _run(sample_db, *args, *extra)
    assert res.exit_code == 2, res.output
    assert sample_db.read_bytes() == before
