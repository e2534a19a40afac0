"""EvalOptions: the one value of an evaluation's options, with its defaults and checks in one place."""

from __future__ import annotations

import pytest

from evalstore.errors import MetricError
from evalstore.metrics.options import DEFAULTS, KEYWORDS, EvalOptions, options_from, options_of


def test_defaults_and_checks_live_in_the_value():
    assert DEFAULTS == EvalOptions("trec_eval", False, None, True)
    assert KEYWORDS == ("convention", "complete", "depth", "pool")
    with pytest.raises(MetricError, match="unknown convention"):
        EvalOptions("trec-eval")
    with pytest.raises(MetricError, match="depth"):
        EvalOptions(depth=0)


def test_ir_measures_implies_complete_but_parts_of_a_run_are_unpadded():
    o = EvalOptions("ir_measures")
    assert o.complete and o.as_dict() == {"convention": "ir_measures", "complete": True, "depth": None}
    assert not o.unpadded().complete and o.unpadded().convention == "ir_measures"


def test_keywords_or_a_value_not_both():
    assert options_from(convention="ntcireval", depth=10) == EvalOptions("ntcireval", depth=10)
    given = EvalOptions(complete=True)
    assert options_from(given) is given
    assert options_from(given, convention="trec_eval") is given  # a keyword at its default is no conflict
    with pytest.raises(MetricError, match="not both"):
        options_from(given, depth=5)
    with pytest.raises(MetricError, match="unknown evaluation option 'judged'"):
        options_from(judged=True)
    kwargs = {"depth": 3, "save": False}
    assert options_of(kwargs) == EvalOptions(depth=3) and kwargs == {"save": False}
