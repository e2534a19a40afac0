"""The swap method (evalstore.stats.swap): the bin edges of Sakai IPSJ 2007 Sec. 4.2 without the
floating-point trap, the vectorised code against a literal Fig. 4 on the same draws, the summary's rules."""

import math

import numpy as np
import pytest

from evalstore.stats.sampling import swap_indices
from evalstore.stats.swap import difference_bins, swap_method


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
