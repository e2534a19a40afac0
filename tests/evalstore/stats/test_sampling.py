"""The resampling draws (evalstore.stats.sampling): Sakai IPSJ 2007 Fig. 5's example, and draws that
depend on the seed only."""

import numpy as np
import pytest

from evalstore.stats.sampling import bootstrap_indices, counts, resample, sign_flips, swap_indices


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
