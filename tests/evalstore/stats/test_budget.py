"""Resampling bounded by the memory limit (issue 30.5): the randomisation and bootstrap tests, the
bootstrap interval, the swap method and Tukey's HSD work in blocks sized from --memory-limit, give
the same results as in one piece, and refuse (exit 4) a B whose kept part cannot fit, naming the B
that fits."""

from __future__ import annotations

import re
import tracemalloc

import numpy as np
import pytest

from evalstore.stats.bootstrap import paired_bootstrap
from evalstore.stats.effects import bootstrap_interval
from evalstore.stats.sampling import blocks, bootstrap_indices, sign_flips, swap_indices
from evalstore.stats.significance import randomisation, tukey_hsd
from evalstore.stats.swap import swap_method

SMALL = 16 << 20  # a 16 MiB limit: 8 MiB for the resampling
BIG = 64 << 30  # so large that everything is one block

rng = np.random.default_rng(11)
Z5 = rng.normal(0.02, 0.1, (5, 43))
S4 = rng.random((4, 43))


def _peak(f) -> tuple[object, int]:
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        out = f()
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


CASES = {
    # name: (call with a memory limit, bytes the same work needs in one piece)
    "randomisation": (lambda m: randomisation(Z5, 200_000, 3, memory=m), 200_000 * 43 * 24),
    "bootstrap": (lambda m: paired_bootstrap(Z5, 100_000, 3, memory=m), 100_000 * 43 * 40),
    "interval": (lambda m: bootstrap_interval(Z5, 100_000, 3, memory=m), 100_000 * 43 * 24),
    "swap": (lambda m: swap_method(S4, 100_000, 3, memory=m), 100_000 * 43 * 64),
    "tukey": (lambda m: tukey_hsd(S4, 50_000, 3, memory=m), 50_000 * 43 * 4 * 32),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_resampling_stays_within_its_share_of_the_limit(name):
    from evalstore.stats import budget

    call, whole = CASES[name]
    share = budget.working(SMALL)
    assert whole > 3 * share  # in one piece it would need several times the budget
    _, peak = _peak(lambda: call(SMALL))
    assert peak <= 1.15 * share, f"{name}: {peak / 2**20:.1f} MiB for a budget of {share / 2**20:.1f} MiB"


def test_blocks_give_the_results_of_one_piece():
    r_small, r_big = randomisation(Z5, 200_000, 3, memory=SMALL), randomisation(Z5, 200_000, 3, memory=BIG)
    assert np.array_equal(r_small[1], r_big[1])
    b_small, b_big = paired_bootstrap(Z5, 100_000, 3, memory=SMALL), paired_bootstrap(Z5, 100_000, 3, memory=BIG)
    assert np.array_equal(b_small.asl, b_big.asl)
    assert np.array_equal(b_small.diff_at_alpha, b_big.diff_at_alpha)
    i_small, i_big = bootstrap_interval(Z5, 100_000, 3, memory=SMALL), bootstrap_interval(Z5, 100_000, 3, memory=BIG)
    assert np.array_equal(i_small[0], i_big[0]) and np.array_equal(i_small[1], i_big[1])
    s_small, s_big = swap_method(S4, 100_000, 3, memory=SMALL), swap_method(S4, 100_000, 3, memory=BIG)
    assert np.array_equal(s_small.counts, s_big.counts) and np.array_equal(s_small.swaps, s_big.swaps)
    assert s_small.max_diff == s_big.max_diff
    t_small, t_big = tukey_hsd(S4, 50_000, 3, memory=SMALL), tukey_hsd(S4, 50_000, 3, memory=BIG)
    assert np.array_equal(t_small[1], t_big[1])


def test_draws_in_blocks_are_the_draws_of_one_call():
    for kind, whole in (("bootstrap", bootstrap_indices), ("swap", swap_indices), ("signs", sign_flips)):
        parts = np.concatenate([b for _, b in blocks(kind, 43, 1001, 7, 97)])
        assert np.array_equal(parts, whole(43, 1001, 7)), kind


def test_exact_tukey_in_blocks():
    X = np.array([[0.1, 0.5, 0.3, 0.9, 0.2], [0.2, 0.4, 0.6, 0.8, 0.1]])
    D, P, trials = tukey_hsd(X, 10_000, 0, memory=SMALL)
    assert trials == 2**5  # every arrangement enumerated
    # the brute force of the definition
    import itertools

    obs = abs(X[0].mean() - X[1].mean())
    hits = 0
    for flips in itertools.product([False, True], repeat=5):
        Y = X.copy()
        for j, f in enumerate(flips):
            if f:
                Y[:, j] = Y[::-1, j]
        hits += abs(Y[0].mean() - Y[1].mean()) >= obs - 1e-15
    assert P[0, 1] == hits / 32


@pytest.mark.parametrize(
    "call",
    [
        lambda B: paired_bootstrap(Z5, B, 0, memory=SMALL),
        lambda B: bootstrap_interval(Z5, B, 0, memory=SMALL),
    ],
    ids=["bootstrap", "interval"],
)
def test_a_b_that_cannot_fit_is_refused_with_one_that_does(call):
    from evalstore.errors import MemoryBudgetError

    with pytest.raises(MemoryBudgetError) as e:
        call(50_000_000)
    fits = int(re.search(r"-B (\d+)", str(e.value)).group(1))
    assert 1000 < fits < 50_000_000 and "raise --memory-limit" in str(e.value)
    call(fits)  # the B the message names fits


def test_the_cli_refuses_with_exit_4_before_any_work(cli, sample_db):
    code, _, err = cli("eval", "--db", sample_db, "-m", "AP", "--ci", "bootstrap", "--trials", "100000000",
                       "--memory-limit", "100MB")  # fmt: skip
    assert code == 4 and re.search(r"B = [\d,]+ fits \(-B \d+\)", err), err
    code, _, err = cli("compare", "--db", sample_db, "-b", "bm25", "-m", "AP", "--effects", "-B", "100000000",
                       "--memory-limit", "100MB")  # fmt: skip
    assert code == 4 and "the bootstrap interval" in err, err
    import evalstore

    with evalstore.open(sample_db, read_only=True) as s:  # nothing was evaluated or stored
        assert s.sql("SELECT count(*) FROM evaluations").rows == [(0,)]
        assert s.sql("SELECT count(*) FROM meta_runs").rows == [(0,)]
    code, _, err = cli("meta", "discpower", "--db", sample_db, "-m", "AP", "-r", "bm25", "-r", "dense",
                       "-B", "100000000", "--memory-limit", "100MB", "--no-save")  # fmt: skip
    assert code == 4 and "fits" in err, err


def test_the_budget_reads_duckdb_spellings():
    from evalstore.base import memory_limit
    from evalstore.stats import budget

    assert memory_limit.limit_bytes("300MB") == 300_000_000
    assert memory_limit.limit_bytes("488.2 MiB") == int(488.2 * 2**20)
    assert memory_limit.limit_bytes("1.5GB") == 1_500_000_000
    assert budget.working(300_000_000) == 150_000_000
