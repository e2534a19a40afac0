"""The resampling draws (evalstore.stats.sampling): Sakai IPSJ 2007 Fig. 5's example, and draws that
depend on the seed only."""

import numpy as np
import pytest

from evalstore.stats.sampling import bootstrap_indices, counts, resample, sign_flips, swap_indices, weighted_sums


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


def test_weighted_sums_add_in_topic_order_whatever_the_block():
    """Each sum is c_0 v_0 + c_1 v_1 + ... in topic order (checked against Python's floats one by
    one), so the rows of a block are bit for bit the rows of the whole (a BLAS product may differ
    in the last bit between a block and the whole: OpenBLAS 0.3.21 in NumPy 1.24 did)."""
    rng = np.random.default_rng(7)
    C = counts(bootstrap_indices(43, 3000, 5), 43)
    V = rng.normal(0.0, 0.3, (6, 43))
    whole = weighted_sums(C, V)
    for b in (0, 1, 1234, 2999):
        for p in range(6):
            s = 0.0
            for t in range(43):
                s += float(C[b, t]) * float(V[p, t])
            assert whole[b, p] == s
    for lo, hi in ((0, 1), (5, 2679), (2674, 3000)):
        assert np.array_equal(weighted_sums(C[lo:hi], V), whole[lo:hi])
    assert np.allclose(whole, C @ V.T, rtol=1e-13, atol=1e-15)  # the product it stands for
    assert weighted_sums(np.zeros((3, 0)), np.zeros((2, 0))).tolist() == [[0.0, 0.0]] * 3
