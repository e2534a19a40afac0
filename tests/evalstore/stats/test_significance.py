"""Paired tests on arrays (evalstore.stats.significance): t and Wilcoxon against scipy, the
randomisation test against literal sign flips, p-value adjustments by hand, and every test (with the
bootstrap) symmetric in the pair."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st_h

from evalstore.errors import MetaError
from evalstore.stats.bootstrap import paired_bootstrap
from evalstore.stats.sampling import sign_flips
from evalstore.stats.significance import adjust, paired_t, randomisation, wilcoxon

#: SciPy's normal approximation: "approx" in SciPy 1.11 (the declared floor), which later releases
#: call "asymptotic" and still accept as "approx"
ASYMPTOTIC = "approx"


def test_paired_t_matches_scipy():
    import scipy.stats as st

    rng = np.random.default_rng(1)
    X, Y = rng.random((12, 25)), rng.random((12, 25))
    t, p = paired_t(X - Y)
    ref = st.ttest_rel(X, Y, axis=1)
    assert np.allclose(t, ref.statistic, rtol=1e-12) and np.allclose(p, ref.pvalue, rtol=1e-10)
    t, p = paired_t(np.array([[0.0, 0.0, 0.0], [0.1, 0.1, 0.1]]))
    assert t.tolist() == [0.0, math.inf] and p.tolist() == [1.0, 0.0]


def test_wilcoxon_exact_without_ties_matches_scipy():
    import scipy.stats as st

    rng = np.random.default_rng(4)
    Z = rng.normal(0.05, 0.2, (20, 18))
    Z[3, :5] = 0.0  # zeros are dropped (n_r = 13), still exact
    T, p = wilcoxon(Z)
    for i in range(Z.shape[0]):
        # zero_method="wilcox" drops the zeros: SciPy gets the non-zero differences, since SciPy 1.11
        # (the declared floor) leaves the exact distribution for the normal one when zeros are given
        ref = st.wilcoxon(Z[i][Z[i] != 0], zero_method="wilcox", method="exact")
        assert T[i] == ref.statistic
        assert p[i] == pytest.approx(ref.pvalue, rel=1e-12)


def test_wilcoxon_ties_use_normal_approximation_with_tie_correction():
    import scipy.stats as st

    rng = np.random.default_rng(6)
    Z = np.round(rng.normal(0.05, 0.2, (20, 30)), 1)  # many tied |d| and zeros
    T, p = wilcoxon(Z)
    for i in range(Z.shape[0]):
        ref = st.wilcoxon(Z[i], zero_method="wilcox", method=ASYMPTOTIC, correction=False)
        assert T[i] == ref.statistic
        assert p[i] == pytest.approx(ref.pvalue, rel=1e-10)
    # large n without ties: normal approximation too (n_r > 50)
    Z = rng.normal(0.01, 0.2, (3, 60))
    T, p = wilcoxon(Z)
    ref = st.wilcoxon(Z, axis=1, method=ASYMPTOTIC, correction=False)
    assert np.allclose(p, ref.pvalue, rtol=1e-10)
    # nothing but zeros: no evidence at all
    assert wilcoxon(np.zeros((1, 8)))[1][0] == 1.0


def test_randomisation_matches_literal_sign_flips():
    rng = np.random.default_rng(8)
    Z = np.round(rng.normal(0.03, 0.1, (6, 10)), 2)
    Z[5] = 0.0
    B = 300
    signs = sign_flips(10, B, 2)
    d, p = randomisation(Z, B, 2)
    for i in range(6):
        obs = abs(Z[i].sum())
        hits = sum(abs((signs[b] * Z[i]).sum()) >= obs - 1e-12 for b in range(B))
        assert p[i] == (hits + 1) / (B + 1)  # never 0: the observed pattern counts as one
    assert p[5] == 1.0
    assert np.array_equal(randomisation(Z, B, 2)[1], p)


def test_adjustments_hand_example():
    p = np.array([0.01, 0.04, 0.03, 0.005])
    assert adjust(p, "bonferroni").tolist() == pytest.approx([0.04, 0.16, 0.12, 0.02])
    # Holm: sorted .005*4=.02, .01*3=.03, .03*2=.06, .04*1=.04 -> running max .02 .03 .06 .06
    assert adjust(p, "holm").tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert adjust(p, "none").tolist() == p.tolist()
    # Benjamini-Hochberg by hand: sorted .005 .01 .03 .04 -> p*m/rank .02 .02 .04 .04, running min from the top
    assert adjust(p, "bh").tolist() == pytest.approx([0.02, 0.04, 0.04, 0.02])
    # Benjamini-Yekutieli: BH times H_4 = 1 + 1/2 + 1/3 + 1/4 = 25/12
    assert adjust(p, "by").tolist() == pytest.approx([0.02 * 25 / 12, 0.04 * 25 / 12, 0.04 * 25 / 12, 0.02 * 25 / 12])
    with pytest.raises(MetaError):
        adjust(p, "fdr")


@settings(max_examples=40, deadline=None)
@given(st_h.lists(st_h.floats(-1, 1, allow_nan=False), min_size=2, max_size=12), st_h.integers(0, 2**31))
def test_bootstrap_and_tests_are_symmetric_in_the_pair(z, seed):
    # comparing Y with X instead of X with Y flips every sign: ASL and p-values must not change
    Z = np.array([z, [-v for v in z]])
    r = paired_bootstrap(Z, 200, seed)
    assert r.asl[0] == r.asl[1] and 0 <= r.asl[0] <= 1
    assert r.diff_at_alpha[0] == r.diff_at_alpha[1]
    assert paired_t(Z)[1][0] == paired_t(Z)[1][1]
    assert wilcoxon(Z)[1][0] == wilcoxon(Z)[1][1]
    assert randomisation(Z, 200, seed)[1][0] == randomisation(Z, 200, seed)[1][1]
