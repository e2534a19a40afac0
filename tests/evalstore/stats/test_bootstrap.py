"""The paired bootstrap test (evalstore.stats.bootstrap): against literal Figs. 5 to 7 of Sakai
IPSJ 2007 on the same draws, known answers, seeds, chunking, parameters, rounding, Fig. 7's selection."""

import math

import numpy as np
import pytest

from evalstore.errors import MetaError
from evalstore.stats.bootstrap import paired_bootstrap, round_sig
from evalstore.stats.sampling import bootstrap_indices


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


def test_fig7_selection_orders_ties_by_sample():
    from evalstore.stats.bootstrap import _kth_largest_index

    rng = np.random.default_rng(0)
    for _ in range(100):
        B, P = int(rng.integers(1, 60)), int(rng.integers(1, 8))
        k = int(rng.integers(1, B + 1))
        a = rng.integers(0, 5, (B, P)).astype(float)
        a[rng.random((B, P)) < 0.1] = np.inf
        assert np.array_equal(_kth_largest_index(a, k), np.argsort(-a, axis=0, kind="stable")[k - 1])
