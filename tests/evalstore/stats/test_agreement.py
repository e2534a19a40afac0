"""The statistics of evalstore.stats against the tools that define them: Cohen's kappa (plain,
linear, quadratic) against scikit-learn's cohen_kappa_score, Krippendorff's alpha (nominal,
ordinal) against the krippendorff package, to 1e-9 on random label pairs; tau_AP on hand-worked
cases and on the values of the reference implementation's own tests; Borda as MTEB defines it."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from evalstore.stats import agreement as ag
from evalstore.stats.ranks import (
    average_ranks,
    borda,
    competition_ranks,
    largest_change,
    mean_of_means,
    tau_ap,
    tau_ap_b,
)

TOL = 1e-9


def sk_kappa(a, b, weights=None) -> float:
    """scikit-learn's kappa, NaN where it is undefined (it warns and returns NaN, or raises)."""
    from sklearn.metrics import cohen_kappa_score  # the reference: imported when a test runs, not at collection

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return float(cohen_kappa_score(a, b, weights=weights))
        except (ValueError, ZeroDivisionError):
            return math.nan


def kr_alpha(a, b, level) -> float:
    """The krippendorff package's alpha of two coders, NaN where it refuses (a single value)."""
    import krippendorff

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return float(
                krippendorff.alpha(reliability_data=np.vstack([a, b]).astype(float), level_of_measurement=level)
            )
        except ValueError:
            return math.nan


def same(x: float, y: float) -> bool:
    return (math.isnan(x) and math.isnan(y)) or abs(x - y) <= TOL


def _pairs(rng, n_cases: int):
    """Random label pairs: 2..200 items, 1..6 labels, some grades skipped (0, 1, 3), agreement from
    none to high, sometimes a single label on one side."""
    for _ in range(n_cases):
        n = int(rng.integers(2, 200))
        G = int(rng.integers(1, 7))
        a = rng.integers(0, G, n)
        b = np.where(rng.random(n) < rng.random(), a, rng.integers(0, G, n))
        if rng.random() < 0.3:  # labels with a gap: 0, 2, 4, ...
            a, b = 2 * a, 2 * b
        if rng.random() < 0.05:
            b = np.zeros(n, dtype=int)
        yield a, b


def test_kappa_and_alpha_equal_the_reference_tools_on_random_label_pairs():
    rng = np.random.default_rng(33)
    checked = 0
    for a, b in _pairs(rng, 400):
        _, C = ag.confusion(a, b)
        for w in ag.KAPPA_WEIGHTS:
            assert same(float(ag.cohen_kappa(C, w)), sk_kappa(a, b, w)), (w, a.tolist(), b.tolist())
            checked += 1
        for level in ag.ALPHA_LEVELS:
            assert same(float(ag.krippendorff_alpha(C, level)), kr_alpha(a, b, level)), (level, a, b)
            checked += 1
    assert checked == 400 * 5


def test_binary_kappa_is_kappa_of_the_binarised_labels():
    rng = np.random.default_rng(7)
    for a, b in _pairs(rng, 200):
        labels, C = ag.confusion(a, b)
        for rel in (1, 2, 3):
            got = float(ag.cohen_kappa(ag.binary(C, labels, rel)))
            assert same(got, sk_kappa((a >= rel).astype(int), (b >= rel).astype(int)))


def test_a_stack_of_matrices_gives_each_matrix_its_own_value():
    """Per-topic values from one call: equal to one call per matrix (labels used differ by topic)."""
    rng = np.random.default_rng(3)
    labels = [0, 1, 2, 3]
    pairs = [(rng.integers(0, 4, 30), rng.integers(0, 3, 30)) for _ in range(6)]
    pairs.append((np.array([0, 0, 3, 3]), np.array([0, 3, 3, 3])))  # grades 1, 2 unused: one step apart
    stack = np.stack([ag.confusion(a, b, labels)[1] for a, b in pairs])
    for w in ag.KAPPA_WEIGHTS:
        got = ag.cohen_kappa(stack, w)
        assert all(same(float(got[i]), sk_kappa(a, b, w)) for i, (a, b) in enumerate(pairs))
    for level in ag.ALPHA_LEVELS:
        got = ag.krippendorff_alpha(stack, level)
        assert all(same(float(got[i]), kr_alpha(a, b, level)) for i, (a, b) in enumerate(pairs))


def test_kappa_by_hand():
    # 2 x 2: p_o = 0.7, p_e = 0.5 * 0.6 + 0.5 * 0.4 = 0.5, kappa = 0.4
    C = np.array([[30.0, 20.0], [10.0, 40.0]])
    assert ag.cohen_kappa(C) == pytest.approx(0.4)
    assert ag.observed_agreement(C) == pytest.approx(0.7)
    assert math.isnan(float(ag.cohen_kappa(np.zeros((2, 2)))))  # no item: undefined


def test_alpha_by_hand_krippendorff_2011_example():
    """Krippendorff, Computing Krippendorff's Alpha-Reliability (2011), example A (binary data, two
    observers, no missing data): observer A 0 1 0 0 0 0 0 0 1 0, observer B 1 1 1 0 0 1 0 0 0 0,
    alpha = 0.095."""
    a = np.array([0, 1, 0, 0, 0, 0, 0, 0, 1, 0])
    b = np.array([1, 1, 1, 0, 0, 1, 0, 0, 0, 0])
    _, C = ag.confusion(a, b)
    assert float(ag.krippendorff_alpha(C)) == pytest.approx(0.095, abs=5e-4)


# --------------------------------------------------------------------------- tau_AP
ONE_TO_TEN = list(range(1, 11))


def test_tau_ap_one_swap_at_the_top_and_at_the_bottom_of_ten():
    """AutoJudge's own test: one swap at the top of 10 items gives 7/9, at the bottom 79/81."""
    top = [10, 20, 30, 40, 50, 60, 70, 80, 100, 90]  # the two best swapped
    bottom = [20, 10, 30, 40, 50, 60, 70, 80, 90, 100]  # the two worst swapped
    assert tau_ap(ONE_TO_TEN, top) == pytest.approx(7 / 9, abs=1e-12)
    assert round(tau_ap(ONE_TO_TEN, top), 4) == 0.7778
    assert tau_ap(ONE_TO_TEN, bottom) == pytest.approx(79 / 81, abs=1e-12)
    assert round(tau_ap(ONE_TO_TEN, bottom), 4) == 0.9753
    for x in (top, bottom):  # one adjacent swap: the same both ways
        assert tau_ap(x, ONE_TO_TEN) == pytest.approx(tau_ap(ONE_TO_TEN, x), abs=1e-12)
        assert tau_ap_b(ONE_TO_TEN, x) == pytest.approx(tau_ap(ONE_TO_TEN, x), abs=1e-12)


def test_tau_ap_identity_reversal_and_a_hand_worked_asymmetric_case():
    assert tau_ap(ONE_TO_TEN, [10 * x for x in ONE_TO_TEN]) == 1.0
    assert tau_ap(ONE_TO_TEN, [-x for x in ONE_TO_TEN]) == pytest.approx(-1.0)
    # reference order A > B > C > D; candidate C > A > B > D. Positions of the candidate:
    # 2: A, above it C (reference: A above C) -> 0/1; 3: B, above C, A -> A correct: 1/2;
    # 4: D, above C, A, B: all correct -> 3/3. tau_AP = 2/3 (0 + 1/2 + 1) - 1 = 0
    ref = [4, 3, 2, 1]
    cand = [3, 2, 4, 1]
    assert tau_ap(ref, cand) == pytest.approx(0.0, abs=1e-12)
    # the other direction: positions of the reference A > B > C > D against the candidate order:
    # 2: B, above A (cand: A above B) -> 1/1; 3: C, above A, B (cand: C above both) -> 0/2;
    # 4: D -> 3/3. tau_AP = 2/3 (1 + 0 + 1) - 1 = 1/3: tau_AP is not symmetric
    assert tau_ap(cand, ref) == pytest.approx(1 / 3, abs=1e-12)
    assert tau_ap_b(ref, cand) == pytest.approx(1 / 6, abs=1e-12)


def test_tau_ap_with_ties_by_hand():
    """Urbano & Marrero's treatment: the candidate's tie groups. ref A > B > C > D; candidate
    A = B > C > D: A and B form the top group (skipped); C: above it A, B, both correct: 2/2;
    D: 3/3. tau_AP = 2/2 (1 + 1) - 1 = 1. A tie in the reference only: ref A = B > C, candidate
    B > A > C: position 2 (A): above B, which the reference ties with A: not concordant, 0/1;
    C: 2/2. tau_AP = 2/2 (0 + 1) - 1 = 0."""
    assert tau_ap([4, 3, 2, 1], [9, 9, 2, 1]) == pytest.approx(1.0)
    assert tau_ap([5, 5, 1], [2, 3, 1]) == pytest.approx(0.0)
    assert math.isnan(tau_ap([1, 2, 3], [7, 7, 7]))  # one tie group: undefined


#: the values of pyircor's own tests (Urbano's tau_AP,b, which TREC AutoJudge's scorer uses)
PYIRCOR = [
    (
        [0.897, 0.372, 0.908, 0.898, 0.661, 0.062, 0.177, 0.384, 0.498, 0.992],
        [0.82, 0.406, 0.817, 0.953, 0.673, 0.073, 0.364, 0.547, 0.589, 0.988],
        0.8333,
    ),
    (
        [0.266, 0.573, 0.202, 0.945, 0.629, 0.206, 0.687, 0.77, 0.718, 0.38],
        [0.263, 0.843, 0.728, 0.928, 0.08, 0.114, 0.467, 0.641, 0.973, 0.644],
        0.2880,
    ),
    (
        [0.185, 0.573, 0.944, 0.129, 0.468, 0.553, 0.761, 0.405, 0.976, 0.445],
        [0.845, 0.272, 0.275, 0.924, 0.605, 0.334, 0.162, 0.872, 0.018, 0.25],
        -0.668,
    ),
    ([0.9, 0.4, 0.9, 0.9, 0.7, 0.1, 0.2, 0.4, 0.5, 1], [0.8, 0.4, 0.8, 1, 0.7, 0.1, 0.4, 0.5, 0.6, 1], 0.7321),
    ([0.3, 0.6, 0.2, 0.9, 0.6, 0.2, 0.7, 0.8, 0.7, 0.4], [0.3, 0.8, 0.7, 0.9, 0.1, 0.1, 0.5, 0.6, 1, 0.6], 0.297),
    ([0.2, 0.6, 0.9, 0.1, 0.5, 0.6, 0.8, 0.4, 1, 0.4], [0.8, 0.3, 0.3, 0.9, 0.6, 0.3, 0.2, 0.9, 0, 0.2], -0.7047),
]


@pytest.mark.parametrize("x, y, expected", PYIRCOR)
def test_symmetric_tau_ap_b_equals_the_reference_implementation_tests(x, y, expected):
    assert tau_ap_b(x, y) == pytest.approx(expected, abs=5e-5)
    assert tau_ap_b(y, x) == pytest.approx(expected, abs=5e-5)


def test_tau_ap_over_blocks_equals_one_block():
    """The pair matrix is compared in blocks; a long list gives the value of a direct count."""
    rng = np.random.default_rng(5)
    ref, cand = rng.random(1500), rng.random(1500)  # 3 blocks of pairs
    cand[::7] = cand[1::7][: len(cand[::7])]  # some ties
    above = competition_ranks(cand) - 1
    direct = []
    for i in range(len(cand)):
        if above[i] > 0:
            js = (cand > cand[i]) & (ref > ref[i])
            direct.append(js.sum() / above[i])
    expected = 2 / len(direct) * sum(direct) - 1
    assert tau_ap(ref, cand) == pytest.approx(expected, abs=1e-12)


# --------------------------------------------------------------------------- ranks and Borda
def test_competition_ranks():
    assert competition_ranks([0.3, 0.5, 0.5, math.nan, 0.1]).tolist() == [3, 1, 1, 5, 4]
    m = competition_ranks(np.array([[1.0, 2.0, 2.0], [3.0, 2.0, 1.0]]))
    assert m.tolist() == [[3, 1, 1], [1, 2, 3]]
    assert largest_change([1, 2, 3, 4], [2, 1, 4, 3]) == (1, [0, 1, 2, 3])
    assert largest_change([1, 2], [1, 2]) == (0, [])


def test_borda_as_mteb_counts_it():
    """MTEB: on each task, a model earns N - rank points (rank among the models with a score there,
    ties averaged; N all models); a missing task earns nothing; each task counted once."""
    S = np.array(
        [
            [0.9, 0.8, 0.8, math.nan],  # set 1: ranks 1, 2.5, 2.5 -> points 3, 1.5, 1.5, 0
            [0.1, 0.4, 0.3, 0.2],  # set 2: ranks 4, 1, 2, 3 -> points 0, 3, 2, 1
        ]
    )
    assert average_ranks(S)[0, :3].tolist() == [1.0, 2.5, 2.5]
    assert borda(S).tolist() == [3.0, 4.5, 3.5, 1.0]
    assert competition_ranks(borda(S)).tolist() == [3, 1, 2, 4]
    means = mean_of_means(S)
    assert means[:3] == pytest.approx([0.5, 0.6, 0.55]) and math.isnan(means[3])
    stack = np.stack([S, S[::-1]])  # a stack of (sets x systems) matrices: one result each
    assert borda(stack).tolist() == [[3.0, 4.5, 3.5, 1.0]] * 2


def test_the_statistics_import_nothing_from_the_store():
    """evalstore/stats/ holds pure functions of arrays: its modules import each other and, below
    them, only evalstore.errors (what they raise) and evalstore.base.memory_limit (the memory limit a
    resampling is sized from); tests/test_structure.py checks the layers of the whole package."""
    import ast

    from support import ROOT

    for path in (ROOT / "evalstore" / "stats").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                below = node.level == 2 and node.module in ("errors", "base.memory_limit")
                assert below or (node.level <= 1 and not (node.module or "").startswith("evalstore")), (
                    path.name,
                    node.module,
                )
            elif isinstance(node, ast.Import):
                assert not any(a.name.startswith("evalstore") for a in node.names), path.name
