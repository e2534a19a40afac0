"""evalstore/results/eval_result.py: EvalResult's look-ups."""

from __future__ import annotations

import pytest

from evalstore.results.eval_result import EvalResult


def test_value_finds_each_score_and_names_a_missing_one():
    r = EvalResult("q", ["AP"], {"AP": "AP"}, per_topic=[("a", "t1", "AP", 0.5), ("a", "t2", "AP", 0.25)])
    assert r.value("a", "t1", "AP") == 0.5 and r.value("a", "t2", "AP") == 0.25
    with pytest.raises(KeyError) as e:
        r.value("a", "t3", "AP")
    assert e.value.args == (("a", "t3", "AP"),)


def test_value_reads_the_rows_as_they_are_now():
    """The dictionary behind value() is made again when per_topic grows or is replaced, and the first
    of two rows of one key wins, as a search from the top finds it."""
    r = EvalResult("q", ["AP"], {"AP": "AP"}, per_topic=[("a", "t1", "AP", 0.5)])
    assert r.value("a", "t1", "AP") == 0.5
    r.per_topic.append(("b", "t1", "AP", 0.75))
    assert r.value("b", "t1", "AP") == 0.75
    r.per_topic = [("a", "t1", "AP", 0.125), ("a", "t1", "AP", 0.0)]
    assert r.value("a", "t1", "AP") == 0.125
    assert r == EvalResult("q", ["AP"], {"AP": "AP"}, per_topic=list(r.per_topic))  # not part of equality
