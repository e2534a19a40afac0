"""IntervalRequest: the intervals an evaluation asks for, checked when made."""

from __future__ import annotations

import pytest

from evalstore.errors import MemoryBudgetError, MetricError
from evalstore.intervals.request import NO_INTERVALS, IntervalRequest


def test_defaults_and_specs():
    assert not NO_INTERVALS.asked and NO_INTERVALS.means is None and NO_INTERVALS.ranks is None
    r = IntervalRequest("bootstrap", "t", level=0.9, trials=200, seed=3)
    assert r.asked and (r.means.method, r.means.level, r.means.trials, r.means.seed) == ("bootstrap", 0.9, 200, 3)
    assert r.ranks.method == "t"


@pytest.mark.parametrize(
    "args, match",
    [(("z",), "unknown interval"), (("t", None, 1.5), "between 0 and 1"), ((None, "z"), "unknown rank interval"),
     (("bootstrap", None, 0.95, 0), None)],
)  # fmt: skip
def test_a_bad_request_is_refused_when_made(args, match):
    with pytest.raises(MetricError, match=match):
        IntervalRequest(*args)


def test_a_bootstrap_that_cannot_fit_is_refused_before_any_work():
    IntervalRequest("bootstrap", trials=1000).check_memory(1 << 30)
    with pytest.raises(MemoryBudgetError):
        IntervalRequest("bootstrap", trials=10**9).check_memory(100 << 20)
    IntervalRequest("t", trials=10**9).check_memory(100 << 20)  # no resampling: nothing to hold
