"""Zhou & Yao, "Evaluating IR system performance based on user preference", JIIS 2010 (../shared/papers/003):
Examples 2-6, the AGR and ADM examples of Secs. 5.6 and 6.1, and the ndpm/adm columns of Tables
2 and 4, through the public interfaces.

How the examples are read (../shared/reference/metric_definitions.md Secs. 5 and 7): relevance
values such as 0.3/0.2/0.1 are the gains of levels 3/2/1 (gains=0.1:0.2:0.3; a 7-point scale is
levels 1..6 with gains 0.1..0.6); a system's values for documents d1..d5 are the run's scores; the
table columns ndpm are printed as the performance 1 - NDPM.
"""

from __future__ import annotations

import pytest

import evalstore
from evalstore.errors import MetricError

SEVEN = "gains=0.1:0.2:0.3:0.4:0.5:0.6"


def ranked(docs: list[str]) -> dict[str, float]:
    return {d: float(len(docs) - i) for i, d in enumerate(docs)}


def scores(values: list[float]) -> dict[str, float]:
    """System values for d1, d2, ... (the run's scores; equal scores are ties)."""
    return {f"d{i + 1}": v for i, v in enumerate(values)}


def grades(values: list[float]) -> dict[str, int]:
    """User values 0.1..0.6 as levels 1..6 (0.0 = judged nonrelevant)."""
    return {f"d{i + 1}": round(v * 10) for i, v in enumerate(values)}


def test_example2_spearman_minus_03():
    """Table 1: UR = (0.6, 0.1, 0.3, 0.5, 0.4), IRS = (0.5, 0.6, 0.4, 0.3, 0.2): rho = -0.3."""
    ur, irs = [0.6, 0.1, 0.3, 0.5, 0.4], [0.5, 0.6, 0.4, 0.3, 0.2]
    res = evalstore.evaluate({"q": grades(ur)}, {"irs": {"q": scores(irs)}}, [f"Spearman({SEVEN})", "Spearman"])
    assert res.value("irs", "q", f"Spearman({SEVEN})") == pytest.approx(-0.3, abs=1e-12)
    assert res.value("irs", "q", "Spearman") == pytest.approx(-0.3, abs=1e-12)  # only the order matters


def test_example3_kendall_067():
    """UR = (d1, d3, d2, d4), IRS = (d1, d3, d4, d2): 5 agreeing pairs, 1 contradictory: (5-1)/6."""
    qrels = {"q": {"d1": 4, "d3": 3, "d2": 2, "d4": 1}}
    res = evalstore.evaluate(qrels, {"irs": {"q": ranked(["d1", "d3", "d4", "d2"])}}, ["Kendall-tau", "tau-b"])
    tau = res.value("irs", "q", "Kendall-tau")
    assert tau == pytest.approx(4 / 6, abs=1e-12) and round(tau, 2) == 0.67
    assert res.value("irs", "q", "tau-b") == tau


EX4_QRELS = {"q": {"a": 3, "b": 2, "c": 2, "d": 1, "e": 1, "n": 0}}  # 0.3, 0.2, 0.2, 0.1, 0.1


def test_example4_sliding_ratio_and_modified_sliding_ratio():
    """IRS1 = (0.3, 0.2, 0.1, 0.1, 0.0), IRS2 = (0.1, 0.1, 0.2, 0.3, 0): sr = 7/9 = 0.78 for both;
    msr = 0.90 for IRS1 and 0.57 for IRS2."""
    runs = {"IRS1": {"q": ranked(["a", "b", "d", "e", "n"])}, "IRS2": {"q": ranked(["d", "e", "b", "a", "n"])}}
    g = "gains=0.1:0.2:0.3"
    res = evalstore.evaluate(EX4_QRELS, runs, [f"SR({g})@5", f"SR({g})", f"MSR({g})@5", f"MSR({g})", "SR@5"])
    for run in runs:
        assert res.value(run, "q", f"SR({g})@5") == pytest.approx(7 / 9, abs=1e-12)
        assert res.value(run, "q", f"SR({g})") == res.value(run, "q", f"SR({g})@5")  # n = 5 retrieved
        assert res.value(run, "q", "SR@5") == pytest.approx(7 / 9, abs=1e-12)  # scale-free
    ideal = 0.3 + 0.2 / 2 + 0.2 / 3 + 0.1 / 4 + 0.1 / 5
    msr1 = res.value("IRS1", "q", f"MSR({g})@5")
    msr2 = res.value("IRS2", "q", f"MSR({g})@5")
    assert msr1 == pytest.approx((0.3 + 0.2 / 2 + 0.1 / 3 + 0.1 / 4) / ideal, abs=1e-12) and round(msr1, 2) == 0.90
    assert msr2 == pytest.approx((0.1 + 0.1 / 2 + 0.2 / 3 + 0.3 / 4) / ideal, abs=1e-12) and round(msr2, 2) == 0.57
    assert res.value("IRS1", "q", f"MSR({g})") == msr1


def test_cumulated_gain():
    """cg = sum of the relevance values: IRS1 of Example 4 has 0.3 + 0.2 + 0.1 + 0.1 = 0.7 in its
    top 5 and 0.5 in its top 2."""
    res = evalstore.evaluate(
        EX4_QRELS,
        {"IRS1": {"q": ranked(["a", "b", "d", "e", "n"])}},
        ["CG(gains=0.1:0.2:0.3)@5", "CG(gains=0.1:0.2:0.3)@2", "CG"],
    )
    assert res.value("IRS1", "q", "CG(gains=0.1:0.2:0.3)@5") == pytest.approx(0.7, abs=1e-12)
    assert res.value("IRS1", "q", "CG(gains=0.1:0.2:0.3)@2") == pytest.approx(0.5, abs=1e-12)
    assert res.value("IRS1", "q", "CG") == pytest.approx(3 + 2 + 1 + 1, abs=1e-12)  # gain = grade


EX5_QRELS = {"q": {"h": 3, "m": 2, "l": 1, "x1": 0, "x2": 0, "x3": 0, "x4": 0}}  # ideal 0.3, 0.2, 0.1
EX5_RUNS = {
    "IRS1": {"q": ranked(["x1", "x2", "m", "x3", "x4"])},  # (0, 0, 0.2, 0, 0)
    "IRS2": {"q": ranked(["x1", "x2", "x3", "x4", "m"])},
}  # (0, 0, 0, 0, 0.2)


def test_example5_wap_and_q():
    """wap = (2/6)/3 = 0.11 for both systems (cg_I is constant after rank R = 3); Q separates
    them: 3/(6+3)/3 = 0.11 and 3/(6+5)/3 = 0.09 with the printed arithmetic (gains 3:2:1, i.e.
    Sakai's Q-measure with beta = 1); on the 0.x scale IRS2 gets 1.2/5.6/3 = 0.071 (the paper's 0.09
    only holds for gains x10, see metric_definitions.md Sec. 5)."""
    res = evalstore.evaluate(
        EX5_QRELS, EX5_RUNS, ["WAP(gains=0.1:0.2:0.3)", "WAP", "Q-measure(gains=1:2:3)", "Q-measure(gains=0.1:0.2:0.3)"]
    )
    for run in EX5_RUNS:
        w = res.value(run, "q", "WAP(gains=0.1:0.2:0.3)")
        assert w == pytest.approx((0.2 / 0.6) / 3, abs=1e-12) and round(w, 2) == 0.11
        assert res.value(run, "q", "WAP") == pytest.approx(w, abs=1e-12)  # ratio only
    q1 = res.value("IRS1", "q", "Q-measure(gains=1:2:3)")
    q2 = res.value("IRS2", "q", "Q-measure(gains=1:2:3)")
    assert q1 == pytest.approx(3 / 9 / 3, abs=1e-12) and round(q1, 2) == 0.11
    assert q2 == pytest.approx(3 / 11 / 3, abs=1e-12) and round(q2, 2) == 0.09
    assert res.value("IRS2", "q", "Q-measure(gains=0.1:0.2:0.3)") == pytest.approx(1.2 / 5.6 / 3, abs=1e-12)


def test_agr_adjusted_gain_29():
    """Sec. 5.6: 10 relevant docs, one highly relevant, gains 3/2/1: d'_S = 3 - (1/10)(3 - 2) = 2.9.
    With 4 A and 5 B docs: d'_A = 2 - (4/10)(2 - 1) = 1.6, d'_B = 1 - (5/10)(1 - 0) = 0.5. A run
    with the S doc at rank 2: agr = (1/10) cg'(2)/cg'_I(2) = (1/10) 2.9/(2.9 + 1.6)."""
    qrels = {"q": {"S": 3, **{f"A{i}": 2 for i in range(4)}, **{f"B{i}": 1 for i in range(5)}, "n": 0}}
    runs = {"late": {"q": ranked(["n", "S"])}, "first": {"q": ranked(["S", "n"])}, "ab": {"q": ranked(["A0", "B0"])}}
    res = evalstore.evaluate(qrels, runs, ["AGR", "AGR(gains=1:2:3)", "AGR(gains=0.1:0.2:0.3)"])
    assert res.value("late", "q", "AGR") == pytest.approx(0.1 * 2.9 / 4.5, abs=1e-12)
    assert res.value("first", "q", "AGR") == pytest.approx(0.1, abs=1e-12)
    # an A doc then a B doc: (1/10)(1.6/2.9 + (1.6 + 0.5)/(2.9 + 1.6))
    assert res.value("ab", "q", "AGR") == pytest.approx(0.1 * (1.6 / 2.9 + 2.1 / 4.5), abs=1e-12)
    for run in runs:
        assert res.value(run, "q", "AGR(gains=1:2:3)") == pytest.approx(res.value(run, "q", "AGR"), abs=1e-12)
        assert res.value(run, "q", "AGR(gains=0.1:0.2:0.3)") == pytest.approx(res.value(run, "q", "AGR"), abs=1e-12)


def test_example6_ndpm_3_13():
    """User: d1 ~ d2 > d3 > d4 ~ d5 > d6 (C = 13 strict pairs); system: d1 ~ d3 > d2 ~ d5 > d6 > d4
    (tied scores are ties). C- = 2 (d2-d3, d4-d6), C_u = 2 (d1-d3, d2-d5): NDPM = 6/26 = 3/13 =
    0.23, performance 1 - 3/13 = 0.77."""
    import scipy.stats

    qrels = {"q": {"d1": 4, "d2": 4, "d3": 3, "d4": 2, "d5": 2, "d6": 1}}
    run = {"irs": {"q": {"d1": 4.0, "d3": 4.0, "d2": 3.0, "d5": 3.0, "d6": 2.0, "d4": 1.0}}}
    res = evalstore.evaluate(qrels, run, ["NDPM", "Kendall-tau", "Spearman"])
    v = res.value("irs", "q", "NDPM")
    assert v == pytest.approx(3 / 13, abs=1e-12) and round(v, 2) == 0.23 and round(1 - v, 2) == 0.77
    u = [4, 4, 3, 2, 2, 1]
    s = [4, 3, 4, 1, 3, 2]
    assert res.value("irs", "q", "Kendall-tau") == pytest.approx(scipy.stats.kendalltau(s, u).statistic, abs=1e-12)
    assert res.value("irs", "q", "Spearman") == pytest.approx(scipy.stats.spearmanr(s, u).statistic, abs=1e-12)


def test_adm_example_sec61():
    """User (0.3, 0.2, 0.1); IRS1 (0.6, 0.4, 0.2): adm = 1 - 0.6/3 = 0.8; IRS2 (0.1, 0.2, 0.3):
    1 - 0.4/3 = 0.87 (ADM prefers IRS2 although IRS1 has the right order; NDPM does not)."""
    qrels = {"q": {"d1": 3, "d2": 2, "d3": 1}}
    runs = {"IRS1": {"q": scores([0.6, 0.4, 0.2])}, "IRS2": {"q": scores([0.1, 0.2, 0.3])}}
    res = evalstore.evaluate(qrels, runs, ["ADM(gains=0.1:0.2:0.3)", "NDPM"])
    assert res.value("IRS1", "q", "ADM(gains=0.1:0.2:0.3)") == pytest.approx(0.8, abs=1e-12)
    adm2 = res.value("IRS2", "q", "ADM(gains=0.1:0.2:0.3)")
    assert adm2 == pytest.approx(1 - 0.4 / 3, abs=1e-12) and round(adm2, 2) == 0.87
    assert res.value("IRS1", "q", "NDPM") == 0.0 and res.value("IRS2", "q", "NDPM") == 1.0


TABLE2_UR = [0.6, 0.5, 0.4, 0.3, 0.1]
TABLE2 = {
    "IRS1": ([0.6, 0.5, 0.3, 0.2, 0.1], 1.00, 0.96),
    "IRS2": ([0.5, 0.3, 0.4, 0.2, 0.1], 0.90, 0.92),
    "IRS3": ([0.4, 0.6, 0.2, 0.3, 0.1], 0.80, 0.90),
    "IRS4": ([0.1, 0.2, 0.2, 0.4, 0.5], 0.05, 0.70),
}
TABLE4_UR = [0.3, 0.3, 0.2, 0.1, 0.1]
# IRS3 is printed (0, 0, 0.2, 0.1, 0.1); every column matches (0, 0, 0.2, 0.2, 0.1) instead (typo).
TABLE4 = {
    "IRS1": ([0.2, 0.2, 0.0, 0.0, 0.0], 0.875, 0.88),
    "IRS2": ([0.0, 0.3, 0.2, 0.1, 0.1], 0.63, 0.94),
    "IRS3": ([0.0, 0.0, 0.2, 0.2, 0.1], 0.19, 0.86),
    "IRS4": ([0.0, 0.0, 0.0, 0.1, 0.1], 0.13, 0.84),
}


@pytest.mark.parametrize(
    "ur,table,gains", [(TABLE2_UR, TABLE2, SEVEN), (TABLE4_UR, TABLE4, "gains=0.1:0.2:0.3")], ids=["table2", "table4"]
)
def test_tables_2_and_4_ndpm_and_adm_columns(ur, table, gains):
    """The ndpm columns are 1 - NDPM, the adm columns ADM, with each IRS row read as the run's scores
    for d1..d5. Table 4 IRS1 prints .89; the pair counts give C- = 0, C_u = 2 (d3-d4, d3-d5), C = 8:
    1 - 2/16 = 0.875 (not reproducible, metric_definitions.md Sec. 7)."""
    runs = {name: {"q": scores(vals)} for name, (vals, _, _) in table.items()}
    res = evalstore.evaluate({"q": grades(ur)}, runs, [f"NDPM({gains})", f"ADM({gains})"])
    for name, (_, perf, adm) in table.items():
        perf_got = 1 - res.value(name, "q", f"NDPM({gains})")
        tol = 1e-12 if perf == 0.875 else 0.005 + 1e-9  # printed to 2 decimals (0.625 -> .63)
        assert perf_got == pytest.approx(perf, abs=tol), name
        assert res.value(name, "q", f"ADM({gains})") == pytest.approx(adm, abs=0.005 + 1e-9), name


def test_unretrieved_judged_docs_are_tied_last_and_unjudged_docs_are_nonrelevant():
    """D = retrieved + judged docs. The run retrieves a (grade 2) and an unjudged u, misses b
    (grade 1) and n (grade 0): system a > u > {b, n} (tied last), user a > b > {u, n}. Strict user
    pairs: a-b, a-u, a-n, b-u, b-n (C = 5); b-u is contradicted, b-n is tied by the system:
    NDPM = (2*1 + 1)/10."""
    qrels = {"q": {"a": 2, "b": 1, "n": 0}}
    run = {"r": {"q": ranked(["a", "u"])}}
    res = evalstore.evaluate(qrels, run, ["NDPM", "NDPM(judged_only=true)", "ADM"])
    assert res.value("r", "q", "NDPM") == pytest.approx(3 / 10, abs=1e-12)
    # judged only: D = {a, b, n}; system a > {b, n}; strict pairs a-b, a-n, b-n; b-n tied: 1/6
    assert res.value("r", "q", "NDPM(judged_only=true)") == pytest.approx(1 / 6, abs=1e-12)
    # ADM: scores 2 (a) and 1 (u) against gains 2, 0; b and n unretrieved score 0: |0|+|1|+|0-1|+|0|
    assert res.value("r", "q", "ADM") == pytest.approx(1 - 2 / 4, abs=1e-12)


def test_preference_measures_on_ntcir_res_files(tmp_path):
    """Under the ntcireval convention (and for NTCIR res files, which have no scores) the system
    order is the file order; ADM needs scores and says so."""
    (tmp_path / "q1.rel").write_text("a L2\nb L1\nc L0\n")
    (tmp_path / "q1.res").write_text("b\na\nc\n")
    with evalstore.open(":memory:") as store:
        store.ingest_qrels(tmp_path / "q1.rel", name="q", format="ntcir", progress=False)
        store.ingest_run(tmp_path / "q1.res", name="res", format="ntcir", progress=False)
        res = store.evaluate("q", ["res"], ["NDPM", "Kendall-tau"], convention="ntcireval", save=False)
        # b > a contradicts a > b; the other two strict pairs agree: NDPM = 2/6, tau = (2 - 1)/3
        assert res.value("res", "q1", "NDPM") == pytest.approx(2 / 6, abs=1e-12)
        assert res.value("res", "q1", "Kendall-tau") == pytest.approx(1 / 3, abs=1e-12)
        with pytest.raises(MetricError, match="ADM needs run scores"):
            store.evaluate("q", ["res"], ["ADM"], save=False)


def test_undefined_preference_values_are_null_and_left_out_of_the_mean():
    """A topic whose judged docs are all nonrelevant (and nothing relevant retrieved) has no
    user preference: NDPM, Kendall-tau and Spearman are NULL there and the mean is over the rest."""
    qrels = {"q1": {"a": 1, "n": 0}, "q2": {"x": 0, "y": 0}}
    run = {"r": {"q1": ranked(["a", "n"]), "q2": ranked(["x", "y"])}}
    res = evalstore.evaluate(qrels, run, ["NDPM", "Kendall-tau", "Spearman"])
    for m in ("NDPM", "Kendall-tau", "Spearman"):
        assert res.value("r", "q2", m) is None
    assert res.mean("r", "NDPM") == 0.0
    assert [n for r, m, _, n in res.means if m == "NDPM"] == [1]


def test_udfs_in_ad_hoc_sql_and_without_quadratic_pairs():
    """The UDFs take one topic's lists; a 20 000-document list is counted by sorting, not pair by
    pair (200 million pairs would take minutes in Python)."""
    import time

    with evalstore.open(":memory:") as store:
        row = store.sql(
            "SELECT ndpm([4, 4, 3, 3, 2, 1]::DOUBLE[], [4, 4, 3, 2, 2, 1]::DOUBLE[]), "
            "kendall_tau_b([1, 2, 3]::DOUBLE[], [1, 2, 3]::DOUBLE[]), "
            "spearman_rho([3, 2, 1]::DOUBLE[], [1, 2, 3]::DOUBLE[])"
        ).rows[0]
        assert row == (pytest.approx(1 / 26), 1.0, -1.0)
        t = time.perf_counter()
        big = store.sql(
            "SELECT ndpm(list(-i::DOUBLE ORDER BY i), list((i % 4)::DOUBLE ORDER BY i)) FROM range(20000) t(i)"
        ).rows[0][0]
        elapsed = time.perf_counter() - t
    assert 0.4 < big < 0.6
    assert elapsed < 30
