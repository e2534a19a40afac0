"""Hand-computed cases for the measures added from ir_measures' catalogue: gdeval's ERR, DCG and
exp-log2 nDCG, the C/W/L family (RBP, SDCG, BPM, INST, INSQ, NERR8-11), Judged, NumQ, Accuracy and
Compat, and ir_measures' spellings. One topic, ranking d1..d5 (scores 5..1), qrels d1=2, d3=1,
d5=0, d6=3 (d6 not retrieved; d2, d4 unjudged)."""

from __future__ import annotations

import math

import pytest

import evalstore
from evalstore.errors import MetricError

QRELS = {"q": {"d1": 2, "d3": 1, "d5": 0, "d6": 3}}
RUN = {"r": {"q": {"d1": 5.0, "d2": 4.0, "d3": 3.0, "d4": 2.0, "d5": 1.0}}}


def value(metric: str, **options) -> float:
    res = evalstore.evaluate(QRELS, RUN, [metric], **options)
    return res.value("r", "q", metric)


def test_err_gdeval():
    # R = (2^g - 1)/16: d1 3/16, d3 1/16; ERR = 3/16 + (1 - 3/16) * (1/16)/3
    assert value("ERR") == pytest.approx(3 / 16 + (13 / 16) * (1 / 16) / 3, abs=1e-12)
    assert value("ERR@2") == pytest.approx(3 / 16, abs=1e-12)
    # ir_measures prints gdeval's 5 decimals
    assert value("ERR", convention="ir_measures") == round(3 / 16 + (13 / 16) * (1 / 16) / 3, 5)


def test_dcg_and_exp_ndcg():
    dcg = 2 / math.log2(2) + 1 / math.log2(4)
    assert value("DCG") == pytest.approx(dcg, abs=1e-12)
    exp = 3 / math.log2(2) + 1 / math.log2(4)
    assert value("DCG(dcg='exp-log2')") == pytest.approx(exp, abs=1e-12)
    ideal = 7 / math.log2(2) + 3 / math.log2(3) + 1 / math.log2(4)
    assert value("nDCG(dcg='exp-log2')") == pytest.approx(exp / ideal, abs=1e-12)
    assert value("NDCG@3") == value("nDCG@3")


def test_rbp_binary_and_graded():
    p = 0.8
    assert value("RBP(rel=1)") == pytest.approx((1 - p) * (1 + p**2) / (1 - p**1000), abs=1e-12)
    assert value("RBP(rel=2,p=0.5)") == pytest.approx(0.5 / (1 - 0.5**1000), abs=1e-12)
    # graded (trectools): raw grades, no normalisation
    assert value("RBP") == pytest.approx((1 - p) * (2 + 1 * p**2), abs=1e-12)


def _cwl(cs: list[float], gains: list[float]) -> float:
    """EU over 1000 ranks from continuation probabilities cs (ranks 1..len) and gains."""
    cs = cs + [cs[-1]] * (1000 - len(cs)) if cs else [1.0] * 1000
    g = gains + [0.0] * (1000 - len(gains))
    w, prod = [], 1.0
    for c in cs:
        w.append(prod)
        prod *= c
    return sum(wi * gi for wi, gi in zip(w, g)) / sum(w)


def test_cwl_family_by_definition():
    g = [2 / 3, 0.0, 1 / 3, 0.0, 0.0]  # grades scaled by max_rel=3
    g1000 = g + [0.0] * 995
    # SDCG@3: sum g/log2(i+1) / sum 1/log2(i+1) over i <= 3
    disc = [1 / math.log2(i + 2) for i in range(3)]
    assert value("SDCG(max_rel=3)@3") == pytest.approx(sum(a * b for a, b in zip(g, disc)) / sum(disc), abs=1e-12)
    nerr10 = [0.9 * (1 - x) for x in g1000]
    assert value("NERR10(max_rel=3)") == pytest.approx(_cwl(nerr10, g), abs=1e-12)
    insq = [((i + 2 - 1) / (i + 2)) ** 2 for i in range(1, 1001)]
    assert value("INSQ(max_rel=3)") == pytest.approx(_cwl(insq, g), abs=1e-12)
    cg = [sum(g1000[: i + 1]) for i in range(1000)]
    inst = [((i + 1 + 1 + (1 - cg[i]) - 1) / (i + 1 + 1 + (1 - cg[i]))) ** 2 for i in range(1000)]
    assert value("INST(max_rel=3)") == pytest.approx(_cwl(inst, g), abs=1e-12)
    bpm = [1.0 if cg[i] < 0.5 and i + 1 < 4 else 0.0 for i in range(1000)]
    assert value("BPM(T=0.5,max_rel=3)@4") == pytest.approx(_cwl(bpm, g), abs=1e-12)
    nerr8 = [1 - g1000[i] if i + 1 < 3 else 0.0 for i in range(1000)]
    assert value("NERR8(max_rel=3)@3") == pytest.approx(_cwl(nerr8, g), abs=1e-12)
    with pytest.raises(MetricError, match="max_rel"):
        value("INST")


def test_judged_numq_accuracy_compat():
    assert value("Judged@4") == pytest.approx(2 / 4)
    assert value("Judged") == pytest.approx(3 / 5)
    assert value("NumQ") == 1.0
    # relevant d1 (0 nonrel above), d3 (1 above: d2); NR = 3 (d2, d4, d5)
    assert value("Accuracy") == pytest.approx(1 - (0 + 1) / (3 * 2))
    # ideal: d6 (3), d1 (2), d3 (1); run d1..d5; depth 5; overlaps at d=1..5: 0,1,2,2,2
    p = 0.95
    num = sum(p ** (d - 1) * o / d for d, o in zip(range(1, 6), [0, 1, 2, 2, 2]))
    best = sum(p ** (d - 1) * min(d, 3) / d for d in range(1, 6))
    assert value("Compat(normalize=False)") == pytest.approx(num / sum(p ** (d - 1) for d in range(1, 6)))
    assert value("Compat") == pytest.approx(num / best)


def test_ir_measures_spellings():
    res = evalstore.evaluate(
        QRELS, RUN, ["Precision@2", "NumRet(rel=1)", "SetP(relative=True)", "nDCG@2,3", "nDCG(gains={2:3,3:3})"]
    )
    assert res.value("r", "q", "Precision@2") == 0.5
    assert res.value("r", "q", "NumRet(rel=1)") == 2.0
    assert res.value("r", "q", "SetP(relative=True)") == pytest.approx(2 / 3)
    assert {m for _, _, m, _ in res.per_topic} >= {"nDCG@2", "nDCG@3"}
    assert res.value("r", "q", "nDCG(gains={2:3,3:3})") == value("nDCG(gains=1:3:3)")
    with pytest.raises(MetricError, match="grade 0"):
        value("nDCG(gains={0:1,1:1})")


def test_ir_measures_convention_pads_missing_topics():
    qrels = {**QRELS, "q2": {"x": 1}}
    res = evalstore.evaluate(qrels, RUN, ["NumRel", "NumQ"], convention="ir_measures")
    assert res.value("r", "q2", "NumRel") == 0.0  # ir_measures pads a topic the run lacks with 0
    assert res.value("r", "q2", "NumQ") == 0.0
    assert res.mean("r", "NumQ") == 1.0
