"""The bpref / rpref family (sql/bpref.sql; Sakai SIGIR 2007 Sec. 4, metric_definitions.md Secs. 4.2-4.3).

Checked against: NTCIREVAL `compute -j` values (conformance cases.json and hand-worked cases in
NTCIREVAL's setting), independent Python implementations of the original definitions (Sakai SIGIR 2007 Eq. 1
for bpref, Eqs. 2-8 for rpref, with the judged relevance phi = gain/gain(H)), trec_eval's bpref
(pytrec_eval) and the identities stated in Sakai SIGIR 2007.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from support import FIXTURES

import evalstore
from evalstore.metrics import registry

BINARY = ["bpref_R", "bpref_N", "bpref_relative", "bpref_relative2", "old_bpref"]
GRADED = ["rpref_N", "rpref_relative", "rpref_relative2"]


def ranked(docs):
    """A run in the given order (descending scores, so trec_eval order = file order)."""
    return {d: float(len(docs) - i) for i, d in enumerate(docs)}


def evaluate(qrels, runs, metrics, **opts):
    return evalstore.evaluate(qrels, runs, metrics, **opts)


# --------------------------------------------------------------------------- NTCIREVAL
SAMPLE_QRELS = {
    "dummy01": 3,
    "dummy02": 3,
    "dummy03": 3,
    "dummy04": 2,
    "dummy05": 2,
    "dummy06": 2,
    "dummy07": 1,
    "dummy08": 1,
    "dummy09": 1,
    "dummy10": 1,
    "dummy11": 0,
}


def test_ntcireval_sample_by_hand():
    """NTCIREVAL README sample, -g 1:2:3, condensed list dummy11(L0) dummy01(L3) dummy04(L2): R = 10,
    N = 1, cg_I(R) = 3*3 + 3*2 + 4*1 = 19, gain(H) = 3, N' = 11 - 19/3 = 14/3.
      bpref_R  = ((1 - 1/10) + (1 - 1/10))/10 = 0.18          bpref_N = ((1 - 1) + (1 - 1))/10 = 0
      bpref_relative = (0 [r'=2: 1 - 1/1] + 0.5 [r'=3: 1 - 1/2])/10 = 0.05
      rpref_N  = (3(1 - 1/(14/3)) + 2(1 - 1/(14/3)))/19 = 0.206767
      rpref_relative  = (3(1 - 1/1) + 2(1 - 1/2))/19 = 1/19
      rpref_relative2 = (3(1 - 1/2) + 2(1 - 1/3))/19 = 0.149123"""
    res = evaluate(
        {"T": SAMPLE_QRELS},
        {"s": {"T": ranked(["dummy11", "dummy01", "dummy12", "dummy04"])}},
        BINARY + [f"{m}(gains=1:2:3)" for m in GRADED],
        convention="ntcireval",
    )
    v = lambda m: res.value("s", "T", m)  # noqa: E731
    assert v("bpref_R") == pytest.approx(0.18, abs=1e-12)
    assert v("bpref_N") == 0.0
    assert v("bpref_relative") == pytest.approx(0.05, abs=1e-12)
    assert v("bpref_relative2") == pytest.approx((1 / 2 + 2 / 3) / 10, abs=1e-12)
    assert v("old_bpref") == 0.0  # N_ret = N = 1 here: same as bpref
    assert v("rpref_N(gains=1:2:3)") == pytest.approx(5 * (1 - 3 / 14) / 19, abs=1e-12)
    assert v("rpref_relative(gains=1:2:3)") == pytest.approx(1 / 19, abs=1e-12)
    assert v("rpref_relative2(gains=1:2:3)") == pytest.approx((1.5 + 4 / 3) / 19, abs=1e-12)


def _ntcir_cases():
    path = FIXTURES / "ntcireval" / "cases.json"  # the kit's file, copied
    data = json.loads(path.read_text())
    wanted = {"bpref", "bpref_R", "bpref_N", "bpref_relative", "rpref_N", "rpref_relative", "rpref_relative2"}
    return [pytest.param(c, data["fixtures"], id=c["id"]) for c in data["cases"] if c["metric"] in wanted]


@pytest.mark.parametrize("case,fixtures", _ntcir_cases())
def test_ntcireval_conformance(case, fixtures):
    metric = case["metric"]
    if metric == "bpref":  # NTCIREVAL's bpref is trec_eval's (the trec_eval family's Bpref)
        metric = "Bpref"
    fx = fixtures[case["args"]["$fixture"]]
    gains = case["args"].get("gains", [1, 2, 3])
    name = f"{metric}(gains={':'.join(map(str, gains))})" if metric in GRADED else metric
    for fixture in {case["args"]["$fixture"], "ntcireval_sample_condensed"} & set(fixtures):
        fx = fixtures[fixture]
        res = evaluate({"T": fx["qrels"]}, {"s": {"T": ranked(fx["ranking"])}}, [name], convention="ntcireval")
        assert res.value("s", "T", name) == pytest.approx(case["expected"], abs=case["tolerance"]), fixture


def test_ntcireval_style_hand_case_graded():
    """Hand-worked, NTCIREVAL's setting (-g 1:2:3, condensed list). qrels: a:L3 b:L2 c:L1 d:L1 n1..n3:L0,
    R = 4, N = 3, cg_I(R) = 3+2+1+1 = 7, N' = R + N - 7/3 = 14/3. Ranking (u* unjudged):
        r'   1   2   3   4   5   (u1 between 1 and 2, u2 between 3 and 4)
        doc  c   n1  a   b   n2
    penalties: c (g=1): nothing above -> 0; a (g=3): c (1) and n1 (0) above -> (3-1)/3 + 3/3 = 5/3;
               b (g=2): c, n1 below 2 (a is not) -> (2-1)/2 + 1 = 3/2.
    rpref_N         = (1 + 3(1 - (5/3)/(14/3)) + 2(1 - (3/2)/(14/3)))/7
    rpref_relative  = (0 [r'=1] + 3(1 - (5/3)/2) + 2(1 - (3/2)/3))/7
    rpref_relative2 = (1(1 - 0/1) + 3(1 - (5/3)/3) + 2(1 - (3/2)/4))/7
    binary (isrel = L>=1, np = judged nonrelevant above): c np=0, a np=1, b np=1:
    bpref_R = (1 + (1 - 1/4) * 2)/4, bpref_N = (1 + (1 - 1/3) * 2)/4,
    bpref_relative = (0 + (1 - 1/2) + (1 - 1/3))/4, bpref_relative2 = (1/1 + 2/3 + 3/4)/4 = AP'."""
    qrels = {"T": {"a": 3, "b": 2, "c": 1, "d": 1, "n1": 0, "n2": 0, "n3": 0}}
    run = {"s": {"T": ranked(["c", "u1", "n1", "a", "u2", "b", "n2"])}}
    res = evaluate(qrels, run, BINARY + [f"{m}(gains=1:2:3)" for m in GRADED], convention="ntcireval")
    v = lambda m: res.value("s", "T", m)  # noqa: E731
    np_ = 14 / 3
    assert v("rpref_N(gains=1:2:3)") == pytest.approx((1 + 3 * (1 - (5 / 3) / np_) + 2 * (1 - 1.5 / np_)) / 7)
    assert v("rpref_relative(gains=1:2:3)") == pytest.approx((3 * (1 - (5 / 3) / 2) + 2 * (1 - 1.5 / 3)) / 7)
    assert v("rpref_relative2(gains=1:2:3)") == pytest.approx((1 + 3 * (1 - (5 / 3) / 3) + 2 * (1 - 1.5 / 4)) / 7)
    assert v("bpref_R") == pytest.approx((1 + 0.75 * 2) / 4)
    assert v("bpref_N") == pytest.approx((1 + (2 / 3) * 2) / 4)
    assert v("bpref_relative") == pytest.approx((0.5 + 2 / 3) / 4)
    assert v("bpref_relative2") == pytest.approx((1 + 2 / 3 + 3 / 4) / 4)
    assert v("old_bpref") == pytest.approx((1 + (1 - 1 / 2) * 2) / 4)  # N_ret = 2: min(R, N_ret) = 2


def test_gain_H_is_the_top_declared_gain():
    """rpref's gain(H) is the last declared gain, not the topic's highest level (as ERR's g_max):
    qrels with only L1 docs under gains 1:2 give phi = 1/2 and N' = R + N - cg_I/2."""
    qrels = {"T": {"a": 1, "b": 1, "n": 0}}
    run = {"s": {"T": ranked(["n", "a", "b"])}}
    res = evaluate(qrels, run, ["rpref_N(gains=1:2)", "rpref_N(gains=1)"], convention="ntcireval")
    # penalties: a -> 1 (n above), b -> 1; N' = 3 - 2/2 = 2 with gain(H) = 2, = 3 - 2 = 1 with gain(H) = 1
    assert res.value("s", "T", "rpref_N(gains=1:2)") == pytest.approx((1 - 1 / 2) * 2 / 2)
    assert res.value("s", "T", "rpref_N(gains=1)") == pytest.approx(0.0)


# --------------------------------------------------------------------------- ideal lists (Sakai SIGIR 2007 Sec. 4.2)
@pytest.mark.parametrize("R", [1, 2, 5])
def test_ideal_list_statements(R):
    """Sakai SIGIR 2007 Sec. 4.2: on an ideal list bpref_relative = (R-1)/R, rpref_relative =
    (cg_I(R) - g_I(1))/cg_I(R), rpref_relative2 = 1 (and bpref_R = bpref_N = bpref_relative2 = 1)."""
    grades = [3, 2, 1, 1, 2][:R]
    rel = {f"r{i}": g for i, g in enumerate(grades)}
    qrels = {"T": {**rel, **{f"n{i}": 0 for i in range(4)}}}
    ideal = sorted(rel, key=lambda d: -rel[d]) + [f"n{i}" for i in range(4)]
    res = evaluate(qrels, {"s": {"T": ranked(ideal)}}, BINARY + [f"{m}(gains=1:2:3)" for m in GRADED])
    v = lambda m: res.value("s", "T", m)  # noqa: E731
    cg = sum(grades)
    assert v("bpref_relative") == pytest.approx((R - 1) / R)
    assert v("rpref_relative(gains=1:2:3)") == pytest.approx((cg - max(grades)) / cg)
    assert v("rpref_relative2(gains=1:2:3)") == pytest.approx(1.0)
    for m in ("bpref_R", "bpref_N", "bpref_relative2", "old_bpref", "rpref_N(gains=1:2:3)"):
        assert v(m) == pytest.approx(1.0), m


def test_relative_flaws_rank_1_and_rank_2():
    """Sakai SIGIR 2007 Sec. 4.2: one relevant doc at rank 1 gives bpref_relative 0; at rank 2 (below a judged
    nonrelevant doc) also 0, since penalty and r'-1 cancel. bpref_relative2 gives 1 and 1/2."""
    qrels = {"T": {"a": 1, "n": 0}}
    res = evaluate(
        qrels,
        {"top": {"T": ranked(["a", "n"])}, "second": {"T": ranked(["n", "u", "a"])}},
        ["bpref_relative", "bpref_relative2", "rpref_relative", "rpref_relative2"],
    )
    assert res.value("top", "T", "bpref_relative") == 0.0
    assert res.value("second", "T", "bpref_relative") == 0.0
    assert res.value("top", "T", "rpref_relative") == 0.0
    assert res.value("second", "T", "rpref_relative") == 0.0
    assert res.value("top", "T", "bpref_relative2") == 1.0
    assert res.value("second", "T", "bpref_relative2") == 0.5  # condensed rank 2: u is skipped
    assert res.value("second", "T", "rpref_relative2") == 0.5


def test_no_judged_nonrelevant_docs_and_old_bpref():
    """N = 0: every retrieved relevant doc scores 1 (trec_eval's convention). old_bpref uses
    min(R, N_ret): with N = 3 but one nonrelevant doc retrieved, a relevant doc below it scores 0."""
    res = evaluate(
        {"T": {"a": 1, "b": 1, "c": 1}},
        {"s": {"T": ranked(["a", "u", "b"])}},
        ["bpref_N", "bpref_R", "rpref_N", "old_bpref"],
    )
    for m in ("bpref_N", "bpref_R", "rpref_N", "old_bpref"):
        assert res.value("s", "T", m) == pytest.approx(2 / 3), m
    qrels = {"T": {"a": 1, "b": 1, "n1": 0, "n2": 0, "n3": 0}}
    res = evaluate(qrels, {"s": {"T": ranked(["a", "n1", "b"])}}, ["old_bpref", "bpref_R"])
    assert res.value("s", "T", "old_bpref") == pytest.approx((1 + 0) / 2)  # 1 - 1/min(2, 1)
    assert res.value("s", "T", "bpref_R") == pytest.approx((1 + 0.5) / 2)  # 1 - 1/min(2, 3)


def test_alias_and_no_row_topics():
    res = evaluate(
        {"T": {"a": 1, "n": 0}, "Z": {"n": 0}},
        {"s": {"T": ranked(["n", "a"]), "Z": ranked(["n"])}},
        ["bpref_allnonrel", "bpref_N", "rpref_N"],
    )
    assert res.value("s", "T", "bpref_allnonrel") == res.value("s", "T", "bpref_N") == 0.0
    assert res.stored_names["bpref_allnonrel"] == res.stored_names["bpref_N"]
    assert res.value("s", "Z", "bpref_N") == 0.0 and res.value("s", "Z", "rpref_N") == 0.0  # R = 0


# --------------------------------------------------------------------------- random topics vs references
def _random_collection(seed=7, n_topics=40):
    rng = np.random.default_rng(seed)
    qrels, runs = {}, {f"s{k}": {} for k in range(3)}
    for t in range(n_topics):
        topic = f"t{t:02d}"
        n_judged = int(rng.integers(2, 30))
        grades = rng.choice([0, 0, 0, 1, 1, 2, 3], size=n_judged)
        if t % 7 == 0:
            grades[:] = rng.choice([1, 2, 3], size=n_judged)  # N = 0
        if t % 11 == 3:
            grades[: n_judged // 2] = 0  # many nonrelevant
        q = {f"d{i}": int(g) for i, g in enumerate(grades)}
        q.update({f"p{i}": -1 for i in range(3)})  # pooled, unjudged
        qrels[topic] = q
        pool = list(q) + [f"u{i}" for i in range(15)]
        for k in range(3):
            size = int(rng.integers(1, len(pool)))
            docs = list(rng.permutation(pool)[:size])
            runs[f"s{k}"][topic] = ranked(docs)
    return qrels, runs


def _ref_bpref_eq1(ranking, q, rel=1):
    """Sakai SIGIR 2007 Eq. 1 with D_R = the first R judged nonrelevant docs retrieved."""
    R = sum(g >= rel for g in q.values())
    N = sum(0 <= g < rel for g in q.values())
    if R == 0:
        return 0.0
    nonrel = [d for d in ranking if d in q and 0 <= q[d] < rel][:R]
    total = 0.0
    for i, d in enumerate(ranking):
        if q.get(d, -1) >= rel:
            above = sum(1 for n in nonrel if ranking.index(n) < i)
            total += 1.0 if above == 0 else 1 - above / min(R, N)
    return total / R


def _ref_rpref(ranking, q, gains, which):
    """Sakai SIGIR 2007 Eqs. 2-8 with phi = gain/gain(H): sums over the judged docs ranked by the run."""
    gH = gains[-1]
    phi = {d: (gains[g - 1] if g > 0 else 0) / gH for d, g in q.items() if g >= 0}
    Rp = sum(phi.values())
    Np = sum(1 - p for p in phi.values())
    if Rp == 0:
        return 0.0
    judged = [d for d in ranking if d in phi]
    total = 0.0
    for k, d in enumerate(judged):
        if phi[d] <= 0:
            continue
        pen = sum((phi[d] - phi[x]) / phi[d] for x in judged[:k] if phi[x] < phi[d])
        if which == "rpref_N":
            total += phi[d] * (1 - (pen / Np if pen else 0))
        elif which == "rpref_relative":
            total += phi[d] * (1 - pen / k) if k >= 1 else 0.0  # N_k = k judged docs above
        else:
            total += phi[d] * (1 - pen / (k + 1))
    return total / Rp


def _ref_binary(ranking, q, which, rel=1):
    R = sum(g >= rel for g in q.values())
    N = sum(0 <= g < rel for g in q.values())
    if R == 0:
        return 0.0
    judged = [d for d in ranking if q.get(d, -1) >= 0]
    n_ret = sum(1 for d in judged if q[d] < rel)
    total, count = 0.0, 0
    for i, d in enumerate(judged, 1):
        if q[d] < rel:
            continue
        count += 1
        npen = i - count
        if which == "bpref_R":
            total += 1 - min(R, npen) / R
        elif which == "bpref_N":
            total += 1 - (npen / N if npen else 0)
        elif which == "bpref_relative":
            total += (1 - npen / (i - 1)) if i > 1 else 0
        elif which == "bpref_relative2":
            total += count / i
        elif which == "old_bpref":
            total += 1 - (min(R, npen) / min(R, n_ret) if npen else 0)
    return total / R


@pytest.fixture(scope="module")
def random_results():
    qrels, runs = _random_collection()
    metrics = (
        BINARY
        + [f"{m}(gains=1:2:3)" for m in GRADED]
        + [f"{m}(gains=1:1:1)" for m in GRADED]
        + ["bpref_R(rel=2)", "bpref_N(rel=2)", "AP(judged_only=true)", "Bpref"]
    )
    return qrels, runs, evaluate(qrels, runs, metrics)


def test_random_topics_match_reference_definitions(random_results):
    qrels, runs, res = random_results
    n = 0
    for run, topics in runs.items():
        for topic, docs in topics.items():
            ranking = sorted(docs, key=lambda d: -docs[d])
            q = qrels[topic]
            R, N = sum(g >= 1 for g in q.values()), sum(g == 0 for g in q.values())
            if R <= N:  # Sakai SIGIR 2007 Eq. 1 (first R judged nonrelevant docs) reduces to bpref_R ...
                assert res.value(run, topic, "bpref_R") == pytest.approx(_ref_bpref_eq1(ranking, q), abs=1e-12)
            if R >= N:  # ... and to bpref_N (Eqs. 10-11)
                assert res.value(run, topic, "bpref_N") == pytest.approx(_ref_bpref_eq1(ranking, q), abs=1e-12)
            for m in BINARY:
                assert res.value(run, topic, m) == pytest.approx(_ref_binary(ranking, q, m), abs=1e-12), (m, topic)
            for m in ("bpref_R", "bpref_N"):
                assert res.value(run, topic, f"{m}(rel=2)") == pytest.approx(
                    _ref_binary(ranking, q, m, rel=2), abs=1e-12
                ), (m, topic)
            for m in GRADED:
                assert res.value(run, topic, f"{m}(gains=1:2:3)") == pytest.approx(
                    _ref_rpref(ranking, q, (1, 2, 3), m), abs=1e-12
                ), (m, topic)
                assert res.value(run, topic, f"{m}(gains=1:1:1)") == pytest.approx(
                    _ref_rpref(ranking, q, (1, 1, 1), m), abs=1e-12
                ), (m, topic)
            n += 1
    assert n == 3 * 40


def test_identities_on_random_topics(random_results):
    """bpref_relative2 = AP'; binary gains reduce rpref_N/_relative/_relative2 to bpref_N/_relative/
    _relative2 (Sakai SIGIR 2007 Sec. 4.1); trec_eval's bpref = bpref_R when R <= N and = bpref_N when R >= N
    (Eqs. 10-11)."""
    qrels, runs, res = random_results
    checked = {"R<=N": 0, "R>=N": 0}
    for run, topics in runs.items():
        for topic in topics:
            v = lambda m: res.value(run, topic, m)  # noqa: E731
            assert v("bpref_relative2") == pytest.approx(v("AP(judged_only=true)"), abs=1e-12)
            for b, r in (
                ("bpref_N", "rpref_N"),
                ("bpref_relative", "rpref_relative"),
                ("bpref_relative2", "rpref_relative2"),
            ):
                assert v(f"{r}(gains=1:1:1)") == pytest.approx(v(b), abs=1e-12), (r, topic)
            if "Bpref" in res.metrics:
                R = sum(g >= 1 for g in qrels[topic].values())
                N = sum(g == 0 for g in qrels[topic].values())
                if R <= N:
                    assert v("Bpref") == pytest.approx(v("bpref_R"), abs=1e-12)
                    checked["R<=N"] += 1
                if R >= N:
                    assert v("Bpref") == pytest.approx(v("bpref_N"), abs=1e-12)
                    checked["R>=N"] += 1
    if "Bpref" in res.metrics:
        assert checked["R<=N"] > 10 and checked["R>=N"] > 10


def test_agrees_with_trec_eval_bpref(random_results):
    """trec_eval's bpref (pytrec_eval 0.5, float arithmetic) equals bpref_R (R <= N) / bpref_N (R >= N)."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, runs, res = random_results
    for run, topics in runs.items():
        ref = pytrec_eval.RelevanceEvaluator(qrels, {"bpref"}).evaluate(topics)
        for topic in topics:
            R = sum(g >= 1 for g in qrels[topic].values())
            N = sum(g == 0 for g in qrels[topic].values())
            ours = res.value(run, topic, "bpref_R" if R <= N else "bpref_N")
            assert ours == pytest.approx(ref[topic]["bpref"], abs=1e-6), (run, topic)


def test_condensed_measures_ignore_unjudged_docs_and_judged_only():
    """Unjudged docs and pooled-unjudged (grade -1) docs do not change the family; the values are
    the same on the condensed run; a depth keeps the judged docs of the original top k."""
    qrels = {"T": {"a": 2, "b": 1, "c": 3, "n1": 0, "n2": 0, "p": -1}}
    full = ["u1", "n1", "a", "p", "u2", "b", "n2", "u3", "c"]
    condensed = [d for d in full if qrels["T"].get(d, -1) >= 0]
    metrics = BINARY + GRADED
    res = evaluate(
        qrels,
        {"full": {"T": ranked(full)}, "cond": {"T": ranked(condensed)}, "top2": {"T": ranked(condensed[:2])}},
        metrics,
    )
    for m in metrics:
        assert res.value("full", "T", m) == pytest.approx(res.value("cond", "T", m), abs=1e-15), m
    # depth 5: the original top 5 (u1 n1 a p u2) holds the judged docs n1, a = condensed[:2]
    res5 = evaluate(qrels, {"full": {"T": ranked(full)}}, metrics, depth=5)
    for m in metrics:
        assert res5.value("full", "T", m) == pytest.approx(res.value("top2", "T", m), abs=1e-15), m
    assert res5.value("full", "T", "bpref_R") != res.value("full", "T", "bpref_R")


def test_metrics_are_registered_with_citations():
    for m in BINARY + GRADED:
        spec = registry.get(m)
        assert spec.sql.startswith("bpref.sql#") and "Alternatives to Bpref" in spec.citation
        assert spec.param("judged_only") is None  # condensed by definition
    assert registry.get("bpref_allnonrel").name == "bpref_N"
