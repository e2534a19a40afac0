"""Meta-evaluation building blocks on arrays: correlations, swap method, bootstrap, paired tests.

Worked examples from Sakai (IPSJ TOD 2007, "Sakai IPSJ 2007"): Eq. 9's claims, the Fig. 5 resampling
example, the bin edges of Sec. 4.2; the vectorised code is checked against literal
implementations of Figs. 4, 6 and 7 on the same random draws."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st_h

from evalstore.errors import MetaError
from evalstore.meta import (
    adjust,
    correlate,
    difference_bins,
    kendall_p,
    kendall_z,
    paired_bootstrap,
    paired_t,
    randomisation,
    round_sig,
    swap_method,
    wilcoxon,
)
from evalstore.meta.robustness import knee
from evalstore.stats.sampling import bootstrap_indices, counts, resample, sign_flips, swap_indices


# --------------------------------------------------------------------------- Kendall / Spearman
@pytest.mark.parametrize("seed", range(6))
def test_kendall_and_spearman_match_scipy(seed):
    import scipy.stats as st

    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 40))
    a = rng.random(n)
    b = a + rng.normal(0, 0.3, n)
    if seed % 2:  # introduce ties in both rankings
        a = np.round(a, 1)
        b = np.round(b, 1)
    c = correlate(a, b)
    assert c.tau_b == pytest.approx(st.kendalltau(a, b).statistic, abs=1e-12)
    assert c.spearman == pytest.approx(st.spearmanr(a, b).statistic, abs=1e-12)
    # tau_a is Sakai IPSJ 2007 Eq. 8 over all n(n-1)/2 pairs, ties counting as neither
    assert c.tau_a == pytest.approx(2 * (c.concordant - c.discordant) / (n * (n - 1)), abs=1e-15)
    assert c.concordant + c.discordant + c.ties_a + c.ties_b + c.ties_both == n * (n - 1) // 2
    assert c.tau == (c.tau_b if c.has_ties else c.tau_a)


def test_kendall_without_ties_is_eq8_and_hand_example():
    # ranks a = 1..4, b swaps the last two: 5 concordant, 1 discordant pair -> tau = 2(5-1)/(4*3)
    c = correlate([4, 3, 2, 1], [4, 3, 1, 2])
    assert (c.concordant, c.discordant) == (5, 1)
    assert c.tau == c.tau_a == c.tau_b == pytest.approx(2 / 3)
    assert c.spearman == pytest.approx(1 - 6 * 2 / (4 * 15))
    assert correlate([1, 2, 3], [3, 2, 1]).tau == -1.0


def test_kendall_z_test_claims_of_000_eq9():
    # "with n_s = 30 runs, the rank correlation is significant at alpha = 0.01 if it is over 0.34"
    assert kendall_p(0.34, 30) < 0.01
    assert kendall_p(0.34, 30) == pytest.approx(0.0083, abs=5e-5)
    assert kendall_p(0.33, 30) > 0.01  # exact 1 % threshold is 0.332
    assert kendall_p(0.21, 30) == pytest.approx(0.10, abs=0.005)
    assert kendall_z(0.34, 30) == pytest.approx(0.34 / math.sqrt(130 / (9 * 30 * 29)))
    assert kendall_p(-0.34, 30) == kendall_p(0.34, 30)


def test_correlation_input_errors():
    with pytest.raises(MetaError):
        correlate([1.0], [2.0])
    with pytest.raises(MetaError):
        correlate([1.0, 2.0], [1.0, 2.0, 3.0])


# --------------------------------------------------------------------------- resampling
def test_fig5_resampling_example():
    # Q = (001, ..., 005), w = (0.2, 0.0, 0.1, 0.4, 0.0); Q*b = (001, 003, 001, 002, 005)
    w = np.array([0.2, 0.0, 0.1, 0.4, 0.0])
    qb = np.array([0, 2, 0, 1, 4])
    assert resample(w, qb).tolist() == [0.2, 0.1, 0.2, 0.0, 0.0]
    c = counts(qb[None, :], 5)
    assert c.tolist() == [[2, 1, 1, 0, 1]]
    assert (c @ w)[0] / 5 == pytest.approx(np.mean([0.2, 0.1, 0.2, 0.0, 0.0]))


def test_draws_depend_only_on_seed():
    assert np.array_equal(bootstrap_indices(10, 50, 7), bootstrap_indices(10, 50, 7))
    assert not np.array_equal(bootstrap_indices(10, 50, 7), bootstrap_indices(10, 50, 8))
    assert swap_indices(10, 50, 7).shape == (50, 2, 10)
    assert set(np.unique(sign_flips(10, 50, 7))) == {-1.0, 1.0}


# --------------------------------------------------------------------------- swap method
def test_bins_float_trap():
    # a difference of 0.03 computed from scores, 0.29 - 0.26 = 0.02999999999999997, divided by
    # 0.01 floors to 2 in binary floating point: it must land in the 4th bin (index 3)
    d = 0.29 - 0.26
    assert math.floor(abs(d) / 0.01) == 2
    assert difference_bins(d) == 3
    assert difference_bins(0.03) == 3
    assert difference_bins(0.29) == 20 and math.floor(0.29 / 0.01) == 28
    assert difference_bins(0.19, n_bins=100) == 19 and difference_bins(0.57, n_bins=100) == 57
    got = difference_bins(np.array([0.0, 0.0099999, 0.01, 0.02, 0.03, 0.07, 0.1, 0.19, 0.199999, 0.2, 0.5, 1.0]))
    assert got.tolist() == [0, 0, 1, 2, 3, 7, 10, 19, 19, 20, 20, 20]
    assert difference_bins(np.array([0.06, 0.15, 0.17, 0.29])).tolist() == [6, 15, 17, 20]


def literal_swap(S, idx, n_bins=21):
    """Sakai IPSJ 2007 Fig. 4, loop by loop."""
    R, n = S.shape
    cnt, swp = np.zeros(n_bins, int), np.zeros(n_bins, int)
    for x in range(R):
        for y in range(x + 1, R):
            for b in range(idx.shape[0]):
                d = S[x, idx[b, 0]].mean() - S[y, idx[b, 0]].mean()
                d2 = S[x, idx[b, 1]].mean() - S[y, idx[b, 1]].mean()
                k = min(int(math.floor(round(abs(d) / 0.01, 9))), n_bins - 1)
                cnt[k] += 1
                if not d * d2 > 0:
                    swp[k] += 1
    return cnt, swp


def test_swap_matches_fig4_literally():
    rng = np.random.default_rng(3)
    S = np.round(rng.random((5, 12)), 2)
    S[4] = S[3]  # an identical pair: D = D' = 0 -> always a swap
    idx = swap_indices(12, 60, 11)
    r = swap_method(S, 60, 11)
    cnt, swp = literal_swap(S, idx)
    assert r.counts.tolist() == cnt.tolist()
    assert r.swaps.tolist() == swp.tolist()
    assert r.counts.sum() == 10 * 60


def test_swap_identical_and_constant_difference():
    S = np.array([[0.5, 0.2, 0.9, 0.1], [0.5, 0.2, 0.9, 0.1]])
    r = swap_method(S, 200, 0)
    assert r.counts[0] == 200 and r.swaps[0] == 200  # D * D' = 0 counts as a swap
    assert np.isnan(r.abs_diff)  # no bin with swap rate <= 5 %
    S = np.array([[0.29, 0.3, 0.31, 0.35], [0.26, 0.27, 0.28, 0.32]])  # every difference is 0.03
    r = swap_method(S, 200, 0)
    assert r.counts[3] == 200 and r.swaps.sum() == 0
    assert r.abs_diff == 0.03 and r.share == 1.0
    assert r.max_diff == pytest.approx(0.03)


def test_swap_summary_rules():
    from evalstore.stats.swap import SwapResult

    cnt = np.zeros(21, int)
    swp = np.zeros(21, int)
    cnt[[0, 1, 2, 3, 5]] = [100, 100, 100, 100, 100]
    swp[[0, 1, 2, 3, 5]] = [50, 4, 10, 3, 1]  # rates .5, .04, .1, .03, (empty 4), .01
    r = SwapResult(counts=cnt, swaps=swp, max_diff=0.5, n_pairs=10, B=50, seed=0)
    assert r.first_bin == 1 and r.abs_diff_first == 0.01
    assert r.guaranteed_bin == 3 and r.abs_diff == 0.03
    assert r.share == pytest.approx(200 / 500)
    assert r.rel_diff == pytest.approx(0.06)
    assert np.isnan(r.rates[4])


# --------------------------------------------------------------------------- bootstrap
def literal_bootstrap(z, idx, alpha):
    """Sakai IPSJ 2007 Figs. 5-7 loop by loop, sigma = 0 resolved as documented (0 if mean 0 else inf)."""
    n = len(z)

    def t(v):
        m = sum(v) / n
        if max(v) == min(v):
            return 0.0 if v[0] == 0 else math.copysign(math.inf, v[0]), v[0]
        sd = math.sqrt(sum((x - m) ** 2 for x in v) / (n - 1))
        return m / (sd / math.sqrt(n)), m

    t_obs, zbar = t(list(z))
    w = [0.0] * n if max(z) == min(z) else [x - zbar for x in z]
    stats = [t([w[i] for i in idx[b]]) for b in range(idx.shape[0])]
    asl = sum(abs(s) >= abs(t_obs) for s, _ in stats) / idx.shape[0]
    k = int(round(idx.shape[0] * alpha))
    order = sorted(range(len(stats)), key=lambda b: -abs(stats[b][0]))  # stable: ties by b
    return asl, abs(stats[order[k - 1]][1])


def test_bootstrap_matches_figs_5_to_7():
    rng = np.random.default_rng(5)
    X = np.round(rng.random((4, 15)), 3)
    Z = np.array([X[i] - X[j] for i in range(4) for j in range(i + 1, 4)])
    Z = np.vstack([Z, np.where(np.arange(15) == 2, 0.3, 0.0)])  # nonzero on one topic: many sigma = 0 samples
    B = 400
    idx = bootstrap_indices(15, B, 1)
    r = paired_bootstrap(Z, B, 1, 0.05)
    for p in range(Z.shape[0]):
        asl, diff = literal_bootstrap(Z[p], idx, 0.05)
        assert r.asl[p] == asl
        assert r.diff_at_alpha[p] == pytest.approx(diff, abs=1e-12)


def test_bootstrap_known_answers():
    x = np.array([0.125, 0.5, 0.25, 0.875, 0.0, 0.75])  # dyadic: x + 0.25 - x is exactly 0.25
    r = paired_bootstrap(np.vstack([x - x, (x + 0.25) - x, x - (x + 0.25)]), 1000, 0)
    assert r.asl[0] == 1.0 and not r.significant()[0]  # identical systems: never significant
    assert r.t_obs[0] == 0
    assert r.asl[1] == 0.0 and r.asl[2] == 0.0  # a constant shift: ASL = 0
    assert r.t_obs[1] == math.inf and r.t_obs[2] == -math.inf
    assert r.n_significant == 2


def test_bootstrap_seed_reproducible_and_shared_samples():
    rng = np.random.default_rng(9)
    Z = rng.normal(0.02, 0.1, (30, 20))
    a = paired_bootstrap(Z, 500, 42)
    b = paired_bootstrap(Z, 500, 42)
    assert np.array_equal(a.asl, b.asl) and np.array_equal(a.diff_at_alpha, b.diff_at_alpha)
    # shared samples: a pair analysed alone gets the ASL it has within all pairs
    assert paired_bootstrap(Z[7:8], 500, 42).asl[0] == a.asl[7]
    c = paired_bootstrap(Z, 500, 43)
    assert not np.array_equal(a.asl, c.asl)


def test_bootstrap_chunking_does_not_change_results(monkeypatch):
    import evalstore.stats.bootstrap as bs

    rng = np.random.default_rng(2)
    Z = rng.normal(0.0, 0.1, (25, 12))
    full = paired_bootstrap(Z, 300, 4)
    # a budget of 20 kB: groups of 2 pairs, blocks of a few samples (drawn block by block)
    monkeypatch.setattr(bs.budget, "working", lambda memory: 20_000)
    cut = bs.budget.plan(300, 25, per_trial=40 * 12, per_row_trial=128, kept_per_row_trial=16, final_per_trial=10)
    assert cut.rows == 2 and cut.trials < 300
    parts = paired_bootstrap(Z, 300, 4)
    # the matrix products may round differently for other block shapes, nothing more
    assert np.array_equal(full.asl, parts.asl)
    assert np.allclose(full.diff_at_alpha, parts.diff_at_alpha, rtol=1e-12, atol=0)


def test_bootstrap_parameters():
    with pytest.raises(MetaError, match="at least 2 topics"):
        paired_bootstrap(np.zeros((1, 1)), 100, 0)
    with pytest.raises(MetaError, match="B \\* alpha"):
        paired_bootstrap(np.zeros((1, 5)), 10, 0, alpha=0.05)
    with pytest.raises(MetaError, match="NaN"):
        paired_bootstrap(np.array([[0.1, np.nan, 0.2]]), 100, 0)


def test_round_sig():
    assert round_sig(0.10449) == 0.1
    assert round_sig(0.0934) == 0.093
    assert round_sig(0.176) == 0.18
    assert round_sig(0.0) == 0.0


# --------------------------------------------------------------------------- other paired tests
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
        ref = st.wilcoxon(Z[i], zero_method="wilcox", method="exact")
        assert T[i] == ref.statistic
        assert p[i] == pytest.approx(ref.pvalue, rel=1e-12)


def test_wilcoxon_ties_use_normal_approximation_with_tie_correction():
    import scipy.stats as st

    rng = np.random.default_rng(6)
    Z = np.round(rng.normal(0.05, 0.2, (20, 30)), 1)  # many tied |d| and zeros
    T, p = wilcoxon(Z)
    for i in range(Z.shape[0]):
        ref = st.wilcoxon(Z[i], zero_method="wilcox", method="asymptotic", correction=False)
        assert T[i] == ref.statistic
        assert p[i] == pytest.approx(ref.pvalue, rel=1e-10)
    # large n without ties: normal approximation too (n_r > 50)
    Z = rng.normal(0.01, 0.2, (3, 60))
    T, p = wilcoxon(Z)
    ref = st.wilcoxon(Z, axis=1, method="asymptotic", correction=False)
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


# --------------------------------------------------------------------------- knee
def test_knee_rule_for_non_monotone_curves():
    f = [0.1, 0.3, 0.5, 0.7, 0.9, 1.0]
    v = [0.5, 0.93, 0.88, 0.95, 0.97, 1.0]  # dips below 0.9 at 0.5
    assert knee(f, v, 0.9) == (0.7, 0.3)
    assert knee(f, [0.95] * 5 + [1.0], 0.9) == (0.1, 0.1)
    assert knee([0.5, 1.0], [0.9, 1.0], 0.9) == (1.0, 1.0)  # "exceeds" is strict
    assert knee([0.5], [0.2], 0.9) == (None, None)


def test_fig7_selection_orders_ties_by_sample():
    from evalstore.stats.bootstrap import _kth_largest_index

    rng = np.random.default_rng(0)
    for _ in range(100):
        B, P = int(rng.integers(1, 60)), int(rng.integers(1, 8))
        k = int(rng.integers(1, B + 1))
        a = rng.integers(0, 5, (B, P)).astype(float)
        a[rng.random((B, P)) < 0.1] = np.inf
        assert np.array_equal(_kth_largest_index(a, k), np.argsort(-a, axis=0, kind="stable")[k - 1])


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
