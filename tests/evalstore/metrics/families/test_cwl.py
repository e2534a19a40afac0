"""RBP's residual (``RBP_resid``) worked by hand (Moffat & Zobel, TOIS 2008, Sec. 5; trectools'
``get_rbp``), and the leaderboard's interval [RBP, RBP + residual]. One topic, ranking d1..d5
(scores 5..1), qrels d1=2, d3=1, d5=0, d6=3: d2 and d4 are unjudged; rank i weighs (1-p) p^(i-1).
The DL 2019 agreement with trectools is tests/conformance/test_trectools.py."""

from __future__ import annotations

import pytest

import evalstore
from evalstore.results.tables import leaderboard, residual_pairs

QRELS = {"q": {"d1": 2, "d3": 1, "d5": 0, "d6": 3}}
RUN = {"q": {"d1": 5.0, "d2": 4.0, "d3": 3.0, "d4": 2.0, "d5": 1.0}}


def w(i: int, p: float = 0.8) -> float:
    return (1 - p) * p ** (i - 1)


def value(metric: str, qrels=QRELS, run=RUN) -> float:
    return evalstore.evaluate(qrels, run, [metric]).value("run", "q", metric)


def test_the_residual_is_the_weight_of_the_unjudged_ranks_and_of_the_ranks_beyond_the_depth():
    # d2 (rank 2) and d4 (rank 4) unjudged; ranks 6..1000 are empty (the run ends): nothing; beyond 1000: p^1000
    assert value("RBP_resid") == pytest.approx(w(2) + w(4) + 0.8**1000, abs=1e-15)
    assert value("RBP_resid") == pytest.approx(0.16 + 0.1024, abs=1e-12)
    # @3: d2 only, and every rank beyond 3: p^3
    assert value("RBP_resid@3") == pytest.approx(w(2) + 0.8**3, abs=1e-15)
    assert value("RBP_resid(p=0.95)") == pytest.approx(w(2, 0.95) + w(4, 0.95) + 0.95**1000, abs=1e-15)


def test_tied_scores_share_their_group_s_mean_weight():
    # d2 and d3 tie at ranks 2-3: each weighs (w2 + w3) / 2, as trectools' average_ties
    tied = {"q": {"d1": 5.0, "d2": 4.0, "d3": 4.0, "d4": 2.0, "d5": 1.0}}
    assert value("RBP_resid", run=tied) == pytest.approx((w(2) + w(3)) / 2 + w(4) + 0.8**1000, abs=1e-15)


def test_a_negative_grade_is_unjudged():
    pooled = {"q": {**QRELS["q"], "d2": -1}}
    assert value("RBP_resid", qrels=pooled) == pytest.approx(value("RBP_resid"), abs=1e-15)


def test_a_fully_judged_ranking_keeps_only_the_tail():
    judged = {"q": {"d1": 2, "d2": 0, "d3": 1, "d4": 0, "d5": 0}}
    assert value("RBP_resid@5", qrels=judged) == pytest.approx(0.8**5, abs=1e-15)


def test_the_leaderboard_shows_rbp_with_its_residual_as_an_interval():
    res = evalstore.evaluate(QRELS, {"a": RUN}, ["RBP(rel=1)", "RBP_resid", "RBP(rel=1)@3", "RBP_resid@3"])
    assert residual_pairs(res.metrics) == {"RBP_resid": "RBP(rel=1)", "RBP_resid@3": "RBP(rel=1)@3"}
    table = leaderboard(res)
    assert table.columns[3:] == [
        "RBP(rel=1)", "RBP_resid", "RBP(rel=1) + resid", "RBP(rel=1)@3", "RBP_resid@3", "RBP(rel=1)@3 + resid",
    ]  # fmt: skip
    row = table.records()[0]
    assert row["RBP(rel=1) + resid"] == pytest.approx(row["RBP(rel=1)"] + row["RBP_resid"], abs=1e-15)
    # [RBP, RBP + residual] holds every value RBP can take when the unjudged documents are judged
    lo, hi = row["RBP(rel=1)"], row["RBP(rel=1) + resid"]
    for g2 in (0, 1):
        for g4 in (0, 1):
            judged = {"q": {**QRELS["q"], "d2": g2, "d4": g4}}
            assert lo - 1e-12 <= value("RBP(rel=1)", qrels=judged) <= hi + 1e-12
    # a residual of another p or cutoff has no pair
    assert residual_pairs(["RBP(rel=1)", "RBP_resid(p=0.9)", "RBP_resid@5"]) == {}
