"""Sakai's metrics for finding one highly relevant document (Sakai IPSJ 2007 = IPSJ TOD 2007, Sakai AIRS 2006):
every worked example of Sec. 3 and the Appendix, through the public interfaces (dicts or files in,
scores out), plus hand-computed ERR / nDCG-JK / Hit / @k cases and the gains-as-metric-identity
rules (several gain settings in one command are distinct metrics).

Levels: S = 3, A = 2, B = 1, judged nonrelevant = 0; the papers' default gains 3:2:1 are the
default gain = grade (or gains=1:2:3, NTCIREVAL order).
"""

from __future__ import annotations

import math

import pytest
from support import run_cli

import evalstore
from evalstore.errors import MetricError


def ranked(docs: list[str]) -> dict[str, float]:
    """A run topic whose score order is the list order (rank 1 first)."""
    return {d: float(len(docs) - i) for i, d in enumerate(docs)}


# --------------------------------------------------------------------------- Sakai IPSJ 2007 Sec. 3.2, Fig. 2
def test_fig2_nwrr_one_fifth_and_o_measure_two_thirds_vs_one_third():
    """An S doc at rank 3: NWRR = (1 - 1/2)/(3 - 1/2) = 1/5 for any topic; O-measure = (3+1)/(3+3)
    = 2/3 for Topic 1 (one S doc, nothing else relevant) and (3+1)/(9+3) = 1/3 for a topic with
    three S docs."""
    qrels = {"t1": {"S1": 3, "x": 0, "y": 0}, "t3": {"S1": 3, "S2": 3, "S3": 3, "x": 0, "y": 0}}
    run = {"sys": {"t1": ranked(["x", "y", "S1"]), "t3": ranked(["x", "y", "S1"])}}
    res = evalstore.evaluate(qrels, run, ["NWRR", "O-measure", "WRR"])
    assert res.value("sys", "t1", "NWRR") == pytest.approx(1 / 5, abs=1e-12)
    assert res.value("sys", "t3", "NWRR") == pytest.approx(1 / 5, abs=1e-12)
    assert res.value("sys", "t1", "O-measure") == pytest.approx(2 / 3, abs=1e-12)
    assert res.value("sys", "t3", "O-measure") == pytest.approx(1 / 3, abs=1e-12)
    assert res.value("sys", "t1", "WRR") == pytest.approx(1 / (3 - 1 / 2), abs=1e-12)


# --------------------------------------------------------------------------- Sakai IPSJ 2007 Secs. 3.2-3.3, Fig. 3
FIG3_QRELS = {"t3": {"S": 3, "A": 2, "B": 1, "n1": 0, "n2": 0}}
FIG3_RUNS = {
    "X": {"t3": ranked(["B", "n1", "n2"])},  # B at rank 1
    "Y": {"t3": ranked(["n1", "S", "n2"])},  # S at rank 2
    "Z": {"t3": ranked(["B", "S", "n1"])},  # B at 1, S at 2
    "INV": {"t3": ranked(["B", "A", "S"])},
}  # the perfect inverse of the ideal S, A, B


@pytest.fixture(scope="module")
def fig3():
    return evalstore.evaluate(
        FIG3_QRELS,
        FIG3_RUNS,
        [
            "O-measure",
            "P-measure",
            "P-plus",
            "P+",
            "NWRR",
            "O-measure(gains=1:1.5:2)",
            "ERR-ntcir",
            "nDCG-JK@3",
            "nDCG-JK(b=0)@3",
            "nDCG-JK(b=10)@3",
            "Hit@1",
            "Hit@2",
        ],
    )


def test_fig3_systems_x_y_z(fig3):
    """X = .50, Y = .57 (O = P since r_p = r_1), Z: P = BR(2) = (4+2)/(5+2) = .86 while O = .50."""
    v = lambda run, m: fig3.value(run, "t3", m)
    assert v("X", "O-measure") == pytest.approx(2 / 4, abs=1e-12) and round(v("X", "O-measure"), 2) == 0.50
    assert v("Y", "O-measure") == pytest.approx(4 / 7, abs=1e-12) and round(v("Y", "O-measure"), 2) == 0.57
    assert v("Z", "P-measure") == pytest.approx(6 / 7, abs=1e-12) and round(v("Z", "P-measure"), 2) == 0.86
    for run in ("X", "Y"):  # r_p = r_1: P+ = P = O
        assert v(run, "P-measure") == pytest.approx(v(run, "O-measure"), abs=1e-12)
        assert v(run, "P-plus") == pytest.approx(v(run, "O-measure"), abs=1e-12)
    assert v("Z", "O-measure") == pytest.approx(v("X", "O-measure"), abs=1e-12)  # Z = X under O and NWRR
    assert v("Z", "NWRR") == pytest.approx(v("X", "NWRR"), abs=1e-12)


def test_fig3_nwrr_prefers_b_at_rank1_over_s_at_rank2(fig3):
    """NWRR with beta(S)=2, A=3, B=4: X = (1-1/2)/(1-1/4) = 2/3, Y = (1-1/2)/(2-1/2) = 1/3, whatever
    the penalties X beats Y; O-measure prefers Y with default gains but X with 1:1.5:2."""
    v = lambda run, m: fig3.value(run, "t3", m)
    assert v("X", "NWRR") == pytest.approx(2 / 3, abs=1e-12)
    assert v("Y", "NWRR") == pytest.approx(1 / 3, abs=1e-12)
    assert v("Y", "O-measure") > v("X", "O-measure")
    assert v("X", "O-measure(gains=1:1.5:2)") == pytest.approx(2 / 3, abs=1e-12)  # (1+1)/(2+1)
    assert v("Y", "O-measure(gains=1:1.5:2)") == pytest.approx(3 / 5.5, abs=1e-12)  # (2+1)/(3.5+2)
    res = evalstore.evaluate(FIG3_QRELS, FIG3_RUNS, ["NWRR(penalties=1.5:1.2:1.1)", "NWRR(penalties=100:50:2)"])
    for m in ("NWRR(penalties=1.5:1.2:1.1)", "NWRR(penalties=100:50:2)"):
        assert res.value("X", "t3", m) > res.value("Y", "t3", m)


def test_fig3_perfect_inverse_p_is_1_and_p_plus_is_074(fig3):
    """The perfect inverse B, A, S: r_p = 3, P = BR(3) = (6+3)/(6+3) = 1 ("forgiving");
    P+ = (2/4 + 5/7 + 1)/3 = 0.74."""
    assert fig3.value("INV", "t3", "P-measure") == pytest.approx(1.0, abs=1e-12)
    pplus = fig3.value("INV", "t3", "P-plus")
    assert pplus == pytest.approx((2 / 4 + 5 / 7 + 1) / 3, abs=1e-12) and round(pplus, 2) == 0.74
    assert fig3.value("INV", "t3", "P+") == pplus  # alias
    assert fig3.stored_names["P+"] == fig3.stored_names["P-plus"] == "P-plus"


def test_err_ndcg_jk_and_hit_by_hand(fig3):
    """System Z (B at 1, S at 2), gains = grades, g_max = 3: ERR = 1/4 + (1/2)(3/4)(3/4).
    nDCG-JK@3 (b = 2): (1 + 3)/(3 + 2 + 1/log2 3); b = 0 (NTCIREVAL -logb 0) divides rank 2 by
    ln 2: (1 + 3/ln 2)/(3 + 2/ln 2 + 1/ln 3); b = 10: no discount, 4/6."""
    v = lambda run, m: fig3.value(run, "t3", m)
    assert v("Z", "ERR-ntcir") == pytest.approx(1 / 4 + 0.5 * 0.75 * 0.75, abs=1e-12)
    assert v("Z", "nDCG-JK@3") == pytest.approx(4 / (5 + 1 / math.log2(3)), abs=1e-12)
    assert v("Z", "nDCG-JK(b=0)@3") == pytest.approx(
        (1 + 3 / math.log(2)) / (3 + 2 / math.log(2) + 1 / math.log(3)), abs=1e-12
    )
    assert v("Z", "nDCG-JK(b=10)@3") == pytest.approx(4 / 6, abs=1e-12)
    assert (v("Y", "Hit@1"), v("Y", "Hit@2"), v("X", "Hit@1")) == (0.0, 1.0, 1.0)


# --------------------------------------------------------------------------- Sakai IPSJ 2007 Appendix
def test_appendix_ntcir5j_topic034_p_measure_0440_o_measure_0250():
    """NTCIR-5 Japanese Topic 034: 5 S, 288 A, 61 B; the run has a B doc at r_1 = 2, 137 A and 29 B
    docs at or above r_p = 424 where the first S doc is. cg(424) = 3 + 274 + 29 = 306, count = 167,
    cg_I = 652: P = (306 + 167)/(652 + 424) = 0.440; O = (1 + 1)/(3*2 + 2) = 0.250.
    (P+ = .454 is not reproducible: the ranks of the 166 docs above r_p are not given.)"""
    S = [f"S{i}" for i in range(5)]
    A = [f"A{i}" for i in range(288)]
    B = [f"B{i}" for i in range(61)]
    qrels = {"034": {**{d: 3 for d in S}, **{d: 2 for d in A}, **{d: 1 for d in B}}}
    middle = A[:137] + B[1:29] + [f"u{i}" for i in range(421 - 165)]  # ranks 3..423, unjudged u*
    ranking = ["u_top", B[0]] + middle[::2] + middle[1::2] + [S[0]]
    assert len(ranking) == 424
    res = evalstore.evaluate(qrels, {"run": {"034": ranked(ranking)}}, ["P-measure", "O-measure", "P-plus"])
    p = res.value("run", "034", "P-measure")
    assert p == pytest.approx(473 / 1076, abs=1e-12) and round(p, 3) == 0.440
    o = res.value("run", "034", "O-measure")
    assert o == pytest.approx(0.25, abs=1e-12)


def test_appendix_ntcir3c_topic020_br913():
    """NTCIR-3 Chinese Topic 020: 10 S, 6 A, 36 B, the only relevant doc retrieved is an S doc at
    rank 913, so P+ = P = O = BR(913) = (3 + 1)/(cg_I + 913). The paper writes cg_I = 3*10 + 2*6 +
    1*36 = 48; the sum is 78 (arithmetic slip), giving 4/991 = 0.00404, printed as 0.004."""
    qrels = {
        "020": {**{f"S{i}": 3 for i in range(10)}, **{f"A{i}": 2 for i in range(6)}, **{f"B{i}": 1 for i in range(36)}}
    }
    ranking = [f"u{i}" for i in range(912)] + ["S0"]
    res = evalstore.evaluate(qrels, {"run": {"020": ranked(ranking)}}, ["P-plus", "P-measure", "O-measure"])
    for m in ("P-plus", "P-measure", "O-measure"):
        v = res.value("run", "020", m)
        assert v == pytest.approx(4 / 991, abs=1e-12) and round(v, 3) == 0.004


# --------------------------------------------------------------------------- parameters
def test_gain_scaling_equals_beta():
    """Sakai IPSJ 2007 Sec. 5.5 / metric_definitions Sec. 2: multiplying all gains by c is the same as beta = c."""
    ms = [
        "Q-measure(gains=3:6:9)",
        "Q-measure(beta=3,gains=1:2:3)",
        "P-plus(gains=3:6:9)",
        "P-plus(beta=3,gains=1:2:3)",
        "O-measure(gains=3:6:9)",
        "O-measure(beta=3,gains=1:2:3)",
    ]
    res = evalstore.evaluate(FIG3_QRELS, FIG3_RUNS, ms)
    for run in FIG3_RUNS:
        for a, b in zip(ms[::2], ms[1::2]):
            assert res.value(run, "t3", a) == pytest.approx(res.value(run, "t3", b), abs=1e-12)
    assert res.value("INV", "t3", "Q-measure(gains=3:6:9)") != pytest.approx(
        evalstore.evaluate(FIG3_QRELS, FIG3_RUNS, ["Q-measure"]).value("INV", "t3", "Q-measure")
    )


def test_wrr_bound_and_infinite_penalties_give_rr():
    """WRR of an S doc at rank 1 reaches its bound 1/(1 - 1/beta(S)) = 2; penalties = inf gives RR."""
    qrels = {"t": {"S": 3, "A": 2, "B": 1, "n": 0}}
    runs = {"best": {"t": ranked(["S", "A", "B"])}, "late": {"t": ranked(["n", "n2", "A"])}}
    res = evalstore.evaluate(qrels, runs, ["WRR", "NWRR", "WRR(penalties=inf:inf:inf)", "RR"])
    assert res.value("best", "t", "WRR") == pytest.approx(2.0, abs=1e-12)
    assert res.value("best", "t", "NWRR") == pytest.approx(1.0, abs=1e-12)
    assert res.value("late", "t", "WRR") == pytest.approx(1 / (3 - 1 / 3), abs=1e-12)
    for run in runs:
        assert res.value(run, "t", "WRR(penalties=inf:inf:inf)") == pytest.approx(res.value(run, "t", "RR"), abs=1e-12)


def test_nwrr_m_is_the_topics_own_highest_level():
    """M is the highest level present for the topic (A here, although the qrels set has S docs in
    another topic): an A doc at rank 1 scores (1 - 1/3)/(1 - 1/3) = 1, not (1 - 1/2)/(1 - 1/3)."""
    qrels = {"onlyA": {"A": 2, "B": 1}, "withS": {"S": 3, "B": 1}}
    res = evalstore.evaluate(qrels, {"r": {"onlyA": ranked(["A"]), "withS": ranked(["B", "S"])}}, ["NWRR"])
    assert res.value("r", "onlyA", "NWRR") == pytest.approx(1.0, abs=1e-12)
    assert res.value("r", "withS", "NWRR") == pytest.approx((1 - 1 / 2) / (1 - 1 / 4), abs=1e-12)


def test_default_penalties_follow_the_number_of_levels(tmp_path):
    """Default beta(l) = n + 2 - l: 3:2 for a two-level qrels set (level 1 first at rank 1: WRR =
    1/(1 - 1/3)); with declared gains 1:2:3 the set has three levels, so 4:3:2 (WRR = 1/(1 - 1/4))."""
    (tmp_path / "q.txt").write_text("q1 0 a 1\nq1 0 b 2\n")
    (tmp_path / "r.txt").write_text("q1 Q0 a 1 2.0 sys\nq1 Q0 b 2 1.0 sys\n")
    with evalstore.open(":memory:") as store:
        store.ingest_qrels(tmp_path / "q.txt", name="two", progress=False)
        store.ingest_qrels(tmp_path / "q.txt", name="three", gains="1:2:3", progress=False)
        store.ingest_run(tmp_path / "r.txt", progress=False)
        two = store.evaluate("two", ["sys"], ["WRR", "NWRR", "WRR(penalties=3:2)"], save=False)
        three = store.evaluate("three", ["sys"], ["WRR", "NWRR", "WRR(penalties=4:3:2)"], save=False)
    assert two.value("sys", "q1", "WRR") == pytest.approx(1.5, abs=1e-12)
    assert two.value("sys", "q1", "WRR") == two.value("sys", "q1", "WRR(penalties=3:2)")
    assert two.value("sys", "q1", "NWRR") == pytest.approx((1 - 1 / 2) / (1 - 1 / 3), abs=1e-12)
    assert three.value("sys", "q1", "WRR") == pytest.approx(4 / 3, abs=1e-12)
    assert three.value("sys", "q1", "WRR") == three.value("sys", "q1", "WRR(penalties=4:3:2)")


def test_penalty_errors_are_explained():
    qrels = {"t": {"S": 3, "B": 1}}
    run = {"r": {"t": ranked(["S"])}}
    with pytest.raises(MetricError, match="cover levels 1..2"):
        evalstore.evaluate(qrels, run, ["NWRR(penalties=3:2)"])
    with pytest.raises(MetricError, match="> 1"):
        evalstore.evaluate(qrels, run, ["WRR(penalties=4:3:1)"])
    with pytest.raises(MetricError, match="must not increase"):
        evalstore.evaluate(qrels, run, ["WRR(penalties=2:3:4)"])
    with pytest.raises(MetricError, match="beta must be >= 0"):
        evalstore.evaluate(qrels, run, ["Q-measure(beta=-1)"])
    with pytest.raises(MetricError, match="log base"):
        evalstore.evaluate(qrels, run, ["nDCG-JK(b=1)@10"])


def test_at_k_forms_divide_by_min_k_r():
    """NTCIREVAL's Q@l and AP@l divide by min(l, R) (trec_eval's AP@k divides by R): R = 3, relevant
    docs at ranks 1 and 2, k = 2: AP-ntcir@2 = (1 + 1)/2 = 1, AP@2 = 2/3; Q@2 with gains 1:1:1 =
    (2/2 + 4/4)/2 = 1; plain Q-measure = (2/2 + 4/4 + 0)/3."""
    qrels = {"t": {"a": 1, "b": 1, "c": 1, "n": 0}}
    res = evalstore.evaluate(
        qrels,
        {"r": {"t": ranked(["a", "b", "n"])}},
        ["AP-ntcir@2", "AP@2", "Q-measure(gains=1)@2", "Q-measure(gains=1)", "AP-ntcir", "AP"],
    )
    v = lambda m: res.value("r", "t", m)
    assert v("AP-ntcir@2") == pytest.approx(1.0, abs=1e-12)
    assert v("AP@2") == pytest.approx(2 / 3, abs=1e-12)
    assert v("Q-measure(gains=1)@2") == pytest.approx(1.0, abs=1e-12)
    assert v("Q-measure(gains=1)") == pytest.approx(2 / 3, abs=1e-12)
    assert v("AP-ntcir") == pytest.approx(v("AP"), abs=1e-12)


def test_cutoff_truncates_r1_and_rp():
    """With @k the one-document measures see only the top k: Z (B at 1, S at 2) at k = 1 has
    r_p = r_1 = 1, so P@1 = P+@1 = O = BR(1) = (1+1)/(3+1)."""
    res = evalstore.evaluate(FIG3_QRELS, {"Z": FIG3_RUNS["Z"]}, ["P-measure@1", "P-plus@1", "O-measure@1"])
    for m in ("P-measure@1", "P-plus@1", "O-measure@1"):
        assert res.value("Z", "t3", m) == pytest.approx(0.5, abs=1e-12)


def test_pplus_udf_in_ad_hoc_sql():
    """The P+ UDF is registered on every connection: ad-hoc SQL over plain lists (Fig. 3 inverse)."""
    with evalstore.open(":memory:") as store:
        v = store.sql("SELECT pplus_measure([1, 2, 3], [1, 2, 3], [1.0, 2.0, 3.0], [3.0, 2.0, 1.0], 1.0)").rows[0][0]
        none = store.sql("SELECT pplus_measure([1, 2], [0, 0], [0.0, 0.0], [3.0], 1.0)").rows[0][0]
    assert v == pytest.approx((2 / 4 + 5 / 7 + 1) / 3, abs=1e-12)
    assert none == 0.0


# --------------------------------------------------------------------------- gains as metric identity
GAIN_SETTINGS = ["1:1:1", "1:2:3", "1:5:10", "0.1:0.2:0.3", "10:20:30"]


def test_several_gain_settings_in_one_command_are_distinct_metrics(tmp_path):
    """One `evalstore eval` with five gain settings stores five distinct metrics per measure, with
    their own rows, and the values differ exactly where the gains matter: Q-measure depends on the
    scale and the ratios; MSnDCG only on the ratios (1:2:3 = 0.1:0.2:0.3 = 10:20:30); NDPM only
    on the order of the levels (1:1:1 merges them)."""
    (tmp_path / "q.txt").write_text(
        "".join(f"q{t} 0 {d} {g}\n" for t in (1, 2) for d, g in [("s", 3), ("a", 2), ("b", 1), ("n", 0), ("a2", 2)])
    )
    (tmp_path / "r.txt").write_text(
        "".join(f"q{t} Q0 {d} {i + 1} {10 - i} sys\n" for t in (1, 2) for i, d in enumerate(["b", "n", "a", "s"]))
    )
    db = str(tmp_path / "s.duckdb")
    for args in (
        ["ingest", "qrels", str(tmp_path / "q.txt"), "--name", "q"],
        ["ingest", "run", str(tmp_path / "r.txt")],
    ):
        r = run_cli(*args + ["--db", db])
        assert r.exit_code == 0, r.output
    measures = ["Q-measure", "MSnDCG@10", "NDPM", "P-plus"]
    cmd = ["eval", "-q", "q", "--db", db, "-f", "csv"]
    for m in measures:
        name, _, cut = m.partition("@")
        for g in GAIN_SETTINGS:
            cmd += ["-m", f"{name}(gains={g})" + (f"@{cut}" if cut else "")]
    r = run_cli(*cmd)
    assert r.exit_code == 0, r.output
    with evalstore.open(db) as store:
        rows = store.sql("SELECT metric, topic, value FROM scores WHERE run = 'sys' ORDER BY metric, topic").rows
    by_metric: dict[str, dict[str, float]] = {}
    for metric, topic, value in rows:
        by_metric.setdefault(metric, {})[topic] = value
    assert len(by_metric) == len(measures) * len(GAIN_SETTINGS)  # 20 distinct canonical names
    assert all(set(v) == {"q1", "q2"} for v in by_metric.values())  # each with its own rows
    for m in measures:
        name = m.split("@")[0]
        names = [k for k in by_metric if k.startswith(name + "(")]
        assert sorted(k.split("gains=")[1].split(",")[0].split(")")[0] for k in names) == sorted(GAIN_SETTINGS)

    def val(measure: str, gains: str) -> float:
        [key] = [
            k
            for k in by_metric
            if k.startswith(measure + "(")
            and f"gains={gains}," in k + ","
            or k.startswith(measure + "(")
            and f"gains={gains})" in k
        ]
        return by_metric[key]["q1"]

    q = {g: val("Q-measure", g) for g in GAIN_SETTINGS}
    assert len({round(x, 12) for x in q.values()}) == 5  # every setting gives its own Q
    ms = {g: val("MSnDCG", g) for g in GAIN_SETTINGS}
    assert ms["1:2:3"] == pytest.approx(ms["0.1:0.2:0.3"], abs=1e-12) == pytest.approx(ms["10:20:30"], abs=1e-12)
    assert ms["1:5:10"] != pytest.approx(ms["1:2:3"]) and ms["1:1:1"] != pytest.approx(ms["1:2:3"])
    nd = {g: val("NDPM", g) for g in GAIN_SETTINGS}
    assert len({round(nd[g], 12) for g in GAIN_SETTINGS if g != "1:1:1"}) == 1
    assert nd["1:1:1"] != pytest.approx(nd["1:2:3"])
    pp = {g: val("P-plus", g) for g in GAIN_SETTINGS}
    assert pp["0.1:0.2:0.3"] != pytest.approx(pp["10:20:30"])
