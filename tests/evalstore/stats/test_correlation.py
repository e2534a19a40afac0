"""Kendall's tau and Spearman's rho between two system rankings (evalstore.stats.correlation):
against scipy, Sakai IPSJ 2007 Eq. 8 by hand, the z test's claims of Eq. 9, input errors."""

import math

import numpy as np
import pytest

from evalstore.errors import MetaError
from evalstore.stats.correlation import correlate, kendall_p, kendall_z


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
