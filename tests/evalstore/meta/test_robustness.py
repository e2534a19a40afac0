"""The knee of a robustness curve (evalstore.meta.robustness.knee): the smallest fraction from
which the curve stays above the threshold."""

from evalstore.meta.robustness import knee


def test_knee_rule_for_non_monotone_curves():
    f = [0.1, 0.3, 0.5, 0.7, 0.9, 1.0]
    v = [0.5, 0.93, 0.88, 0.95, 0.97, 1.0]  # dips below 0.9 at 0.5
    assert knee(f, v, 0.9) == (0.7, 0.3)
    assert knee(f, [0.95] * 5 + [1.0], 0.9) == (0.1, 0.1)
    assert knee([0.5, 1.0], [0.9, 1.0], 0.9) == (1.0, 1.0)  # "exceeds" is strict
    assert knee([0.5], [0.2], 0.9) == (None, None)
