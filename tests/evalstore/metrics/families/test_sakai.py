"""Property tests (hypothesis, small random topics) of the graded-relevance metrics, through the
public interface (dicts in, scores out). Each example is a batch of topics evaluated in one call.

* O-measure = RR with binary gains when r_1 <= R, and O > RR when r_1 > R (Sakai IPSJ 2007 Sec. 3.2);
* P+ = P = O whenever r_p = r_1 (Sakai IPSJ 2007 Sec. 3.3);
* Q-measure with beta = 0 is AP (Sakai SIGIR 2007 Eq. 21);
* NWRR <= 1 and WRR <= 1/(1 - 1/beta(M)) for any valid penalties (Sakai IPSJ 2007 Eqs. 4-5);
* MSnDCG@k with gains = grades equals trec_eval's nDCG@k (ndcg_cut);
* the blended-ratio measures lie in [0, 1];
* NDPM / Kendall-tau through the engine equal a brute-force count over D = retrieved + judged docs.
"""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import evalstore

SETTINGS = settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def collections(draw):
    """{topic: (qrels {doc: grade}, ranking [doc, ...])}: grades 0..3, some retrieved docs unjudged."""
    out = {}
    for t in range(draw(st.integers(1, 6))):
        n = draw(st.integers(1, 10))
        docs = [f"d{i}" for i in range(n)]
        grades = draw(st.lists(st.integers(-1, 3), min_size=n, max_size=n))  # -1: not judged
        qrels = {d: g for d, g in zip(docs, grades) if g >= 0}
        qrels.update({f"x{i}": g for i, g in enumerate(draw(st.lists(st.integers(0, 3), max_size=3)))})  # unretrieved
        if not qrels:
            qrels = {"x_only": 1}
        order = draw(st.permutations(docs))
        ranking = list(order[: draw(st.integers(1, n))])
        out[f"q{t}"] = (qrels, ranking)
    return out


def _as_inputs(coll):
    qrels = {t: q for t, (q, _) in coll.items()}
    run = {"sys": {t: {d: float(len(r) - i) for i, d in enumerate(r)} for t, (_, r) in coll.items()}}
    return qrels, run


def _r1_rp_R(qrels, ranking):
    rel = [(i + 1, qrels[d]) for i, d in enumerate(ranking) if qrels.get(d, 0) >= 1]
    R = sum(1 for g in qrels.values() if g >= 1)
    if not rel:
        return None, None, R
    top = max(g for _, g in rel)
    return rel[0][0], min(r for r, g in rel if g == top), R


gains_st = st.lists(st.integers(1, 10), min_size=3, max_size=3).map(sorted).map(lambda g: ":".join(map(str, g)))
penalties_st = st.lists(st.floats(1.01, 10.0), min_size=3, max_size=3).map(lambda p: sorted(p, reverse=True))


@SETTINGS
@given(coll=collections(), gains=gains_st, pen=penalties_st, k=st.integers(1, 10))
def test_blended_ratio_and_rank1_properties(coll, gains, pen, k):
    pen_s = ":".join(repr(p) for p in pen)
    ms = [
        "O-measure(gains=1:1:1)",
        "RR",
        "O-measure",
        "P-measure",
        "P-plus",
        f"O-measure(gains={gains})",
        f"P-measure(gains={gains})",
        f"P-plus(gains={gains})",
        f"Q-measure(beta=0,gains={gains})",
        "Q-measure",
        "AP",
        "NWRR",
        f"NWRR(penalties={pen_s})",
        f"WRR(penalties={pen_s})",
        f"MSnDCG@{k}",
        f"nDCG@{k}",
    ]
    qrels, run = _as_inputs(coll)
    res = evalstore.evaluate(qrels, run, ms)
    for t, (q, ranking) in coll.items():
        v = lambda m: res.value("sys", t, m)
        r1, rp, R = _r1_rp_R(q, ranking)
        # O = RR with binary gains iff r_1 <= R (O > RR otherwise)
        if r1 is None:
            assert v("O-measure(gains=1:1:1)") == v("RR") == 0.0
        elif r1 <= R:
            assert v("O-measure(gains=1:1:1)") == pytest.approx(v("RR"), abs=1e-12)
        else:
            assert v("O-measure(gains=1:1:1)") > v("RR")
        # P+ = P = O when r_p = r_1
        if r1 is not None and rp == r1:
            for g in ("", f"(gains={gains})"):
                assert v(f"P-plus{g}") == pytest.approx(v(f"O-measure{g}"), abs=1e-12)
                assert v(f"P-measure{g}") == pytest.approx(v(f"O-measure{g}"), abs=1e-12)
        # Q-measure with beta = 0 is AP, for any gains
        assert v(f"Q-measure(beta=0,gains={gains})") == pytest.approx(v("AP"), abs=1e-12)
        # NWRR is bounded by 1; WRR by 1/(1 - 1/beta(M)), M = the topic's top level
        assert 0.0 <= v("NWRR") <= 1.0 + 1e-12
        assert 0.0 <= v(f"NWRR(penalties={pen_s})") <= 1.0 + 1e-12
        top = max(q.values())
        if top >= 1:
            assert v(f"WRR(penalties={pen_s})") <= 1 / (1 - 1 / pen[top - 1]) + 1e-12
        # MSnDCG with gains = grades is trec_eval's ndcg_cut
        assert v(f"MSnDCG@{k}") == pytest.approx(v(f"nDCG@{k}"), abs=1e-12)
        for m in ("O-measure", "P-measure", "P-plus", "Q-measure", f"P-plus(gains={gains})"):
            assert -1e-12 <= v(m) <= 1.0 + 1e-12


def _brute_force(q, ranking):
    """Pair counts over D = retrieved + judged docs; system value = -rank (unretrieved: -inf)."""
    import scipy.stats

    docs = list(dict.fromkeys(ranking + list(q)))
    s = {d: -(ranking.index(d) + 1) if d in ranking else -math.inf for d in docs}
    u = {d: max(q.get(d, 0), 0) for d in docs}
    c_minus = c_u = strict = 0
    for a, b in itertools.combinations(docs, 2):
        if u[a] == u[b]:
            continue
        hi, lo = (a, b) if u[a] > u[b] else (b, a)
        strict += 1
        if s[hi] < s[lo]:
            c_minus += 1
        elif s[hi] == s[lo]:
            c_u += 1
    ndpm = None if strict == 0 else (2 * c_minus + c_u) / (2 * strict)
    sv = [s[d] if s[d] != -math.inf else -1e9 for d in docs]
    uv = [u[d] for d in docs]
    tau = scipy.stats.kendalltau(sv, uv).statistic if len(docs) > 1 else math.nan
    return ndpm, (None if math.isnan(tau) else tau)


@SETTINGS
@given(coll=collections())
def test_ndpm_and_kendall_match_brute_force_pair_counts(coll):
    qrels, run = _as_inputs(coll)
    res = evalstore.evaluate(qrels, run, ["NDPM", "Kendall-tau"])
    for t, (q, ranking) in coll.items():
        ndpm, tau = _brute_force(q, ranking)
        got = res.value("sys", t, "NDPM")
        if ndpm is None:
            assert got is None
        else:
            assert got == pytest.approx(ndpm, abs=1e-12) and 0.0 <= got <= 1.0
        got_tau = res.value("sys", t, "Kendall-tau")
        assert (got_tau is None and tau is None) or got_tau == pytest.approx(tau, abs=1e-12)
