"""Hand-computed examples for every trec_eval measure (sql/trec_eval.sql), through evalstore.evaluate.

The worked example (topic q1; scores give the ranking, relevant = grade >= rel):

    rank  doc  grade        rel=1   notes
    1     d3   0            -       judged nonrelevant
    2     d1   2            rel     count 1, prec 1/2
    3     u1   (no qrels)   -       not in the pool
    4     d6   -1           -       "in the pool but unjudged" (trec_eval's negative grade)
    5     d2   1            rel     count 2, prec 2/5
    6     d5   0            -       judged nonrelevant
    7     d4   1            rel     count 3, prec 3/7
    (d7, grade 3, is not retrieved)

So at rel=1: R = 4 (d1, d2, d4, d7), N = 2 judged nonrelevant (d3, d5), n = 7 retrieved, 3 relevant
retrieved. At rel=2: R = 2 (d1, d7), N = 4. Other topics: q2 has no relevant document (R = 0),
q3 has one that the run misses, q4 is judged but absent from the run.
"""

from __future__ import annotations

import math

import pytest

import evalstore
from evalstore.errors import MetricError
from evalstore.metrics import registry

QRELS = {
    "q1": {"d1": 2, "d2": 1, "d3": 0, "d4": 1, "d5": 0, "d6": -1, "d7": 3},
    "q2": {"e1": 0, "e2": 0},
    "q3": {"f1": 1},
    "q4": {"h1": 1, "h2": 0},
}
RUN = {
    "sys": {
        "q1": {"d3": 0.9, "d1": 0.8, "u1": 0.7, "d6": 0.6, "d2": 0.5, "d5": 0.4, "d4": 0.3},
        "q2": {"e1": 2.0, "e3": 1.0},
        "q3": {"f2": 1.0},
    }
}
EPS = 1e-5  # trec_eval's INFAP_EPSILON
L2 = math.log2


def ev(metrics, qrels=QRELS, run=RUN, **opts):
    return evalstore.evaluate(qrels, run, metrics, **opts)


def q1(metric, **opts):
    return ev([metric], **opts).value("sys", "q1", metric)


def close(a, b):
    return abs(a - b) < 1e-12


# --------------------------------------------------------------------------- binary measures
BINARY = [
    ("AP", (1 / 2 + 2 / 5 + 3 / 7) / 4),
    ("AP@5", (1 / 2 + 2 / 5) / 4),  # map_cut: still divided by R
    ("AP(rel=2)", (1 / 2) / 2),
    ("P@5", 2 / 5),
    ("P@10", 3 / 10),  # run shorter than k: denominator stays k
    ("P(rel=2)@5", 1 / 5),
    ("R@5", 2 / 4),
    ("R@1000", 3 / 4),
    ("RR", 1 / 2),
    ("RR(rel=2)", 1 / 2),
    ("RR@1", 0.0),
    ("Rprec", 1 / 4),  # top R = 4 holds only d1
    ("Rprec(rel=2)", 1 / 2),
    ("Success@1", 0.0),
    ("Success@2", 1.0),
    ("RelP@2", 1 / 2),  # count(2)/min(2, R)
    ("RelP@10", 3 / 4),  # count(10)/min(10, R)
    ("RprecMult(mult=0.5)", 1 / 2),  # c = (long)(0.5*4 + 0.9) = 2
    ("RprecMult(mult=2)", 3 / 8),  # c = 8 > n: count(n)/c
    ("NumRet", 7),
    ("NumRet@3", 3),
    ("NumRel", 4),
    ("NumRel(rel=2)", 2),
    ("NumRelRet", 3),
    ("NumRelRet@5", 2),
    ("NumNonrelJudgedRet", 2),
    ("NumNonrelJudgedRet(rel=2)", 4),
    ("SetP", 3 / 7),
    ("SetR", 3 / 4),
    ("SetAP", 9 / 28),
    ("SetRelP", 3 / 4),
    ("SetF", 2 * (3 / 7) * (3 / 4) / (3 / 7 + 3 / 4)),
    ("SetF(beta=0.5)", 1.5 * (3 / 7) * (3 / 4) / (0.5 * 3 / 7 + 3 / 4)),  # beta is not squared
    ("Utility", 3 - 4),  # a*3 + b*4 with a = 1, b = -1
    ("Utility(a=2,b=-1,c=-0.5,d=0.1,num_docs=100)", 2 * 3 - 4 - 0.5 * 1 + 0.1 * (100 + 3 - 7 - 4)),
    ("Unj@5", 2 / 5),  # u1 and d6 (grade -1) in the top 5
    ("Unj@10", 2 / 10),
]


@pytest.fixture(scope="module")
def binary_q1():
    """All of BINARY in one evaluation (one ranked list per context)."""
    return ev([m for m, _ in BINARY]).topics()["sys"]["q1"]


@pytest.mark.parametrize("metric, expected", BINARY, ids=[m for m, _ in BINARY])
def test_binary_measures_q1(binary_q1, metric, expected):
    assert close(binary_q1[metric], expected), (metric, binary_q1[metric], expected)


def test_bpref_skips_unjudged_and_uses_min_n_r():
    # rel=1: d1 and d2 each have m = 1 judged nonrelevant above (d3): 1 - min(1,4)/min(2,4) = 1/2;
    # d4 has m = 2: 1 - 2/2 = 0. u1 and d6 are skipped. (1/2 + 1/2 + 0)/R = 1/4
    assert close(q1("Bpref"), (0.5 + 0.5 + 0.0) / 4)
    # rel=2: only d1 (m = 1): 1 - min(1,2)/min(4,2) = 1/2, divided by R = 2
    assert close(q1("Bpref(rel=2)"), 0.5 / 2)
    # judged_only changes nothing: bpref ignores unjudged documents anyway
    assert close(q1("Bpref(judged_only=true)"), q1("Bpref"))


def test_infap_by_hand():
    # j (0-based, every retrieved doc counts); nr = judged nonrel above; u = pooled-unjudged above
    d1 = 1 / 2 + (1 / 2) * ((0 + 1 + 0) / 1) * ((0 + EPS) / (0 + 1 + 2 * EPS))  # j=1, rs=1, nr=1, u=0
    d2 = 1 / 5 + (4 / 5) * ((1 + 1 + 1) / 4) * ((1 + EPS) / (1 + 1 + 2 * EPS))  # j=4, rs=2, nr=1, u=1
    d4 = 1 / 7 + (6 / 7) * ((2 + 2 + 1) / 6) * ((2 + EPS) / (2 + 2 + 2 * EPS))  # j=6, rs=3, nr=2, u=1
    assert close(q1("infAP"), (d1 + d2 + d4) / 4)
    # -J: u1 and d6 removed, ranks renumbered
    d2j = 1 / 3 + (2 / 3) * ((1 + 1 + 0) / 2) * ((1 + EPS) / (1 + 1 + 2 * EPS))  # j=2
    d4j = 1 / 5 + (4 / 5) * ((2 + 2 + 0) / 4) * ((2 + EPS) / (2 + 2 + 2 * EPS))  # j=4
    assert close(q1("infAP(judged_only=true)"), (d1 + d2j + d4j) / 4)


def test_infap_equals_ap_when_everything_is_judged():
    qrels = {"t": {"a": 1, "b": 0, "c": 1, "d": 0}}
    run = {"s": {"t": {"a": 4, "b": 3, "c": 2, "d": 1}}}
    res = ev(["infAP", "AP"], qrels, run)
    assert abs(res.value("s", "t", "infAP") - res.value("s", "t", "AP")) < 1e-5


def test_iprec_and_11pt_v10_and_v9_rounding():
    # interpolated precision at the c-th relevant doc: c=1 -> max(1/2, 2/5, 3/7) = 1/2; c=2,3 -> 3/7
    # v10: c = lround(p*4); v9: c = (long)(p*4 + 0.9)
    v10 = {
        0.0: 1 / 2,
        0.1: 1 / 2,
        0.2: 1 / 2,
        0.3: 1 / 2,
        0.4: 3 / 7,
        0.5: 3 / 7,
        0.6: 3 / 7,
        0.7: 3 / 7,
        0.8: 3 / 7,
        0.9: 0.0,
        1.0: 0.0,
    }  # 0.9*4 = 3.6 -> 4 > 3 relevant retrieved
    v9 = {
        0.0: 1 / 2,
        0.1: 1 / 2,
        0.2: 1 / 2,
        0.3: 3 / 7,
        0.4: 3 / 7,
        0.5: 3 / 7,
        0.6: 3 / 7,
        0.7: 3 / 7,
        0.8: 0.0,
        0.9: 0.0,
        1.0: 0.0,
    }  # 0.3*4 + 0.9 = 2.1 -> 2; 0.8*4 + 0.9 -> 4
    names = (
        [f"IPrec@{p}" for p in v10]
        + [f"IPrec(rounding=v9)@{p}" for p in v9]
        + ["11pt_avg", "11pt_avg(rounding=v9)", "11pt_avg(levels=0.2:0.5:0.8)"]
    )
    res = ev(names)
    for p, want in v10.items():
        assert close(res.value("sys", "q1", f"IPrec@{p}"), want), p
    for p, want in v9.items():
        assert close(res.value("sys", "q1", f"IPrec(rounding=v9)@{p}"), want), p
    assert close(res.value("sys", "q1", "11pt_avg"), (4 * 0.5 + 5 * 3 / 7) / 11)
    assert close(res.value("sys", "q1", "11pt_avg(rounding=v9)"), (3 * 0.5 + 5 * 3 / 7) / 11)
    assert close(res.value("sys", "q1", "11pt_avg(levels=0.2:0.5:0.8)"), (0.5 + 3 / 7 + 3 / 7) / 3)


# --------------------------------------------------------------------------- nDCG
DCG = 2 / L2(3) + 1 / L2(6) + 1 / L2(8)  # gains 2, 1, 1 at ranks 2, 5, 7
IDCG = 3 / L2(2) + 2 / L2(3) + 1 / L2(4) + 1 / L2(5)  # every judged doc with gain > 0: 3, 2, 1, 1


def test_ndcg_linear_gain_full_ideal():
    assert close(q1("nDCG"), DCG / IDCG)
    assert close(q1("nDCG@5"), (2 / L2(3) + 1 / L2(6)) / IDCG)
    assert close(q1("nDCG@2"), (2 / L2(3)) / (3 + 2 / L2(3)))  # ideal truncated at k too
    # gains of levels 1..n
    g = {1: 1.0, 2: 10.0, 3: 100.0}
    dcg = g[2] / L2(3) + g[1] / L2(6) + g[1] / L2(8)
    idcg = g[3] + g[2] / L2(3) + g[1] / L2(4) + g[1] / L2(5)
    assert close(q1("nDCG(gains=1:10:100)"), dcg / idcg)
    # trec_eval's ndcg.2=9,3=3: listed levels get the gain, level 1 keeps gain 1
    assert close(q1("ndcg.2=9,3=3"), (9 / L2(3) + 1 / L2(6) + 1 / L2(8)) / (9 + 3 / L2(3) + 1 / L2(4) + 1 / L2(5)))
    # levels above the highest one listed cannot be expressed as gains of levels 1..n: evalstore asks for them
    with pytest.raises(MetricError, match="give one gain per level 1..3"):
        q1("ndcg.1=3,2=9")


def test_ndcg_ignores_rel_and_condenses_with_judged_only():
    with pytest.raises(MetricError, match="no parameter 'rel'"):
        q1("nDCG(rel=2)")
    # judged_only: u1 and d6 removed -> d1 at 2, d2 at 3, d4 at 5
    assert close(q1("nDCG(judged_only=true)"), (2 / L2(3) + 1 / L2(4) + 1 / L2(6)) / IDCG)


def test_judged_only_renumbers_ranks():
    # condensed ranking: d3, d1, d2, d5, d4
    res = ev(
        [
            "AP(judged_only=true)",
            "P(judged_only=true)@5",
            "NumRet(judged_only=true)",
            "Unj(judged_only=true)@5",
            "Rprec(judged_only=true)",
            "RR(judged_only=true)",
        ]
    )
    v = res.topics()["sys"]["q1"]
    assert close(v["AP(judged_only=true)"], (1 / 2 + 2 / 3 + 3 / 5) / 4)
    assert close(v["P(judged_only=true)@5"], 3 / 5)
    assert v["NumRet(judged_only=true)"] == 5
    assert v["Unj(judged_only=true)@5"] == 0.0
    assert close(v["Rprec(judged_only=true)"], 2 / 4)
    assert close(v["RR(judged_only=true)"], 1 / 2)


# --------------------------------------------------------------------------- edge cases
ALL = [
    "AP",
    "AP@5",
    "P@5",
    "R@5",
    "RR",
    "Rprec",
    "nDCG",
    "nDCG@5",
    "Bpref",
    "infAP",
    "Success@5",
    "RelP@5",
    "RprecMult(mult=1)",
    "IPrec@0",
    "IPrec@0.5",
    "11pt_avg",
    "SetP",
    "SetR",
    "SetF",
    "SetAP",
    "SetRelP",
    "NumRelRet",
]


def test_topic_without_relevant_documents_scores_zero():
    v = ev(ALL + ["NumRel", "NumRet"]).topics()["sys"]["q2"]
    assert {m: v[m] for m in ALL} == {m: 0.0 for m in ALL}
    assert v["NumRel"] == 0 and v["NumRet"] == 2


def test_no_relevant_document_retrieved_scores_zero():
    v = ev(ALL + ["NumRel", "Utility"]).topics()["sys"]["q3"]
    assert {m: v[m] for m in ALL} == {m: 0.0 for m in ALL}
    assert v["NumRel"] == 1 and v["Utility"] == -1.0  # one nonrelevant retrieved


def test_summaries_sum_mean_and_geometric_mean():
    res = ev(["AP", "GM_AP", "NumRet", "NumRel", "Bpref", "GM_Bpref"])
    ap1 = (1 / 2 + 2 / 5 + 3 / 7) / 4
    assert res.topics()["sys"]["q1"]["GM_AP"] == res.topics()["sys"]["q1"]["AP"]  # per topic: AP
    assert close(res.mean("sys", "AP"), ap1 / 3)  # q1..q3 (q4 not in run)
    assert close(res.mean("sys", "GM_AP"), math.exp((math.log(ap1) + 2 * math.log(1e-5)) / 3))
    assert close(res.mean("sys", "GM_Bpref"), math.exp((math.log(0.25) + 2 * math.log(1e-5)) / 3))
    assert res.mean("sys", "NumRet") == 7 + 2 + 1 and res.mean("sys", "NumRel") == 4 + 0 + 1


def test_complete_adds_missing_topics_as_zero():
    res = ev(["AP", "NumRel", "NumRet", "Utility(c=-1)"], complete=True)
    v = res.topics()["sys"]["q4"]
    assert v == {"AP": 0.0, "NumRel": 1, "NumRet": 0, "Utility(c=-1)": 0.0}  # trec_eval -c resets utility
    assert close(res.mean("sys", "AP"), ((1 / 2 + 2 / 5 + 3 / 7) / 4) / 4)  # mean over the 4 qrels topics
    assert res.mean("sys", "NumRel") == 6
    assert ev(["Utility(c=-1)"]).value("sys", "q3", "Utility(c=-1)") == -1.0 - 1.0  # a topic in the run: c*R counts


def test_depth_truncates_like_trec_eval_M():
    res = ev(["AP", "NumRet", "NumRelRet"], depth=3)
    v = res.topics()["sys"]["q1"]
    assert close(v["AP"], (1 / 2) / 4) and v["NumRet"] == 3 and v["NumRelRet"] == 1


def test_ties_are_broken_by_docno_descending():
    qrels = {"t": {"D10": 1, "d1": 0, "d3": 0, "d9": 0, "x": 1}}
    # all four tie: byte order descending gives d9, d3, d1, D10 (uppercase sorts before lowercase)
    run = {"s": {"t": {"d1": 1.0, "D10": 1.0, "d3": 1.0, "d9": 1.0, "x": 0.5}}}
    res = ev(["RR", "AP"], qrels, run)
    assert close(res.value("s", "t", "RR"), 1 / 4)
    assert close(res.value("s", "t", "AP"), (1 / 4 + 2 / 5) / 2)


def test_gains_parameter_validation():
    with pytest.raises(MetricError, match="gains"):
        q1("nDCG(gains=1:2)")  # q1 has grade 3: one gain per level 1..3 is needed
    with pytest.raises(MetricError, match="level 0"):
        registry.parse_metric("ndcg.0=1")
    with pytest.raises(MetricError, match="recall level"):
        registry.parse_metric("IPrec")
    with pytest.raises(MetricError, match="4 coefficients"):
        registry.parse_metric("utility.1,2")


# --------------------------------------------------------------------------- names
@pytest.mark.parametrize(
    "name, canonical",
    [
        ("map", "AP"),
        ("P_10", "P@10"),
        ("P.10", "P@10"),
        ("ndcg_cut_10", "nDCG@10"),
        ("ndcg_cut.10", "nDCG@10"),
        ("recip_rank", "RR"),
        ("recall_100", "R@100"),
        ("success_10", "Success@10"),
        ("num_rel_ret", "NumRelRet"),
        ("num_ret", "NumRet"),
        ("num_rel", "NumRel"),
        ("gm_map", "GM_AP"),
        ("iprec_at_recall_0.10", "IPrec(recall=0.1)"),
        ("IPrec@0.1", "IPrec(recall=0.1)"),
        ("map_cut_10", "AP@10"),
        ("Rprec", "Rprec"),
        ("bpref", "Bpref"),
        ("infAP", "infAP"),
        ("set_F", "SetF"),
        ("set_P", "SetP"),
        ("set_recall", "SetR"),
        ("set_map", "SetAP"),
        ("set_relative_P", "SetRelP"),
        ("relative_P_5", "RelP@5"),
        ("Rprec_mult_0.20", "RprecMult(mult=0.2)"),
        ("11pt_avg", "11pt_avg"),
        ("gm_bpref", "GM_Bpref"),
        ("num_nonrel_judged_ret", "NumNonrelJudgedRet"),
        ("utility", "Utility"),
        ("unj_10", "Unj@10"),
        ("ndcg", "nDCG"),
        ("ndcg.1=3,2=9,4=4.5", "nDCG(gains=3:9:3:4.5)"),
        ("set_F.0.5", "SetF(beta=0.5)"),
        ("map(rel=2)", "AP(rel=2)"),
        ("P_10(rel=2,judged_only=true)", "P(judged_only=true,rel=2)@10"),
    ],
)
def test_trec_eval_names_are_echoed_and_mean_the_same(name, canonical):
    (inst,) = registry.parse_metric(name)
    assert inst.display == name
    (ref,) = registry.parse_metric(canonical)
    assert inst.canonical() == ref.canonical()


def test_trec_eval_lists_and_nicknames_expand():
    assert [i.display for i in registry.parse_metric("P.5,10")] == ["P_5", "P_10"]
    assert [i.display for i in registry.parse_metric("success")] == ["success_1", "success_5", "success_10"]
    assert len(registry.parse_metric("iprec_at_recall")) == 11
    official = [i.display for i in registry.parse_metric("official")]
    assert official[:8] == ["num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank"]
    # nickname parameters go only to measures that take them (ndcg ignores rel)
    insts = registry.parse_metric("all_trec(rel=2)")
    assert {i.p.get("rel") for i in insts if "rel" in i.p} == {2}
    assert [i.display for i in insts if i.spec.name == "nDCG"][0] == "ndcg"
    res = ev(["P.5,10", "map"])
    assert close(res.value("sys", "q1", "P_5"), 2 / 5) and close(res.value("sys", "q1", "P_10"), 3 / 10)
