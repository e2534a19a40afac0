"""ranx's own fusion and normalisation tests, reproduced on evalstore.

The runs and the expected values are those of ranx's repository (github.com/AmenRa/ranx, commit
2cae52f, tests/unit/ranx/fusion/*_test.py and tests/unit/ranx/normalization/*_test.py): the same
hand-computed expressions, compared exactly (``==``) where ranx compares exactly, rounded where
ranx rounds (RBC). ranx's tests call the fusion functions on the raw scores, which is
``norm='none'`` here. The fixtures are written out below as ranx's tests write them (three small
runs on two queries; four runs for RBC).
"""

from __future__ import annotations

from math import isclose

import numpy as np
import pytest

import evalstore
from evalstore.fusion import normalized_scores

RUN_1 = {"q1": {"d1": 1, "d2": 2, "d3": 3}, "q2": {"d1": 1, "d2": 2}}
RUN_2 = {"q1": {"d1": 3, "d2": 2}, "q2": {"d1": 1, "d3": 3}}
RUN_3 = {"q1": {"d3": 1}, "q2": {"d2": 2, "d3": 3}}
# ranx's rbc_test.py
RBC_RUNS = {
    "r1": {"q1": {"A": 7, "D": 6, "B": 5, "C": 4, "G": 3, "F": 2}},
    "r2": {"q1": {"B": 7, "D": 6, "E": 5, "C": 4}},
    "r3": {"q1": {"A": 7, "B": 6, "D": 5, "C": 4, "G": 3, "F": 2, "E": 1}},
    "r4": {"q1": {"G": 7, "D": 6, "E": 5, "A": 4, "F": 3, "C": 2}},
}


@pytest.fixture
def three():
    s = evalstore.open(":memory:")
    for name, run in (("run_1", RUN_1), ("run_2", RUN_2), ("run_3", RUN_3)):
        s.ingest_run(run, name=name)
    yield s
    s.close()


def fused(store, method, name="f", runs=("run_1", "run_2", "run_3"), **kw):
    kw.setdefault("norm", "none" if method not in RANK_METHODS else None)
    store.fuse(list(runs), method, name=name, **kw)
    rows = store.sql("SELECT topic, doc, score FROM run_rows WHERE run = ?", [name]).rows
    out: dict[str, dict[str, float]] = {}
    for t, d, v in rows:
        out.setdefault(t, {})[d] = v
    return out


RANK_METHODS = {"rrf", "isr", "log_isr", "logn_isr", "bordafuse", "w_bordafuse", "rbc"}
r1, r2, r3 = RUN_1, RUN_2, RUN_3


def shape(run):
    return {q: len(docs) for q, docs in run.items()}


def test_comb_sum(three):
    c = fused(three, "sum")
    assert shape(c) == {"q1": 3, "q2": 3}
    assert c["q1"]["d1"] == r1["q1"]["d1"] + r2["q1"]["d1"]
    assert c["q1"]["d2"] == r1["q1"]["d2"] + r2["q1"]["d2"]
    assert c["q1"]["d3"] == r1["q1"]["d3"] + r3["q1"]["d3"]
    assert c["q2"]["d1"] == r1["q2"]["d1"] + r2["q2"]["d1"]
    assert c["q2"]["d2"] == r1["q2"]["d2"] + r3["q2"]["d2"]
    assert c["q2"]["d3"] == r2["q2"]["d3"] + r3["q2"]["d3"]


def test_comb_mnz(three):
    c = fused(three, "mnz")
    assert c == {
        "q1": {"d1": sum([1, 3]) * 2, "d2": sum([2, 2]) * 2, "d3": sum([3, 1]) * 2},
        "q2": {"d1": sum([1, 1]) * 2, "d2": sum([2, 2]) * 2, "d3": sum([3, 3]) * 2},
    }


def test_comb_anz(three):
    c = fused(three, "anz")
    assert c == {
        "q1": {"d1": np.mean([1, 3]), "d2": np.mean([2, 2]), "d3": np.mean([3, 1])},
        "q2": {"d1": np.mean([1, 1]), "d2": np.mean([2, 2]), "d3": np.mean([3, 3])},
    }


def test_comb_max(three):
    assert fused(three, "max") == {"q1": {"d1": 3, "d2": 2, "d3": 3}, "q2": {"d1": 1, "d2": 2, "d3": 3}}


def test_comb_min(three):
    assert fused(three, "min") == {"q1": {"d1": 1, "d2": 2, "d3": 1}, "q2": {"d1": 1, "d2": 2, "d3": 3}}


def test_comb_med(three):
    c = fused(three, "med")
    assert c == {
        "q1": {"d1": np.median([1, 3]), "d2": np.median([2, 2]), "d3": np.median([3, 1])},
        "q2": {"d1": np.median([1, 1]), "d2": np.median([2, 2]), "d3": np.median([3, 3])},
    }


def test_comb_med_odd_and_even_counts(three):
    """(beyond ranx's fixture, whose documents are in two runs each) three values and four."""
    three.ingest_run({"q1": {"d1": 10, "d2": 0.5}}, name="run_4")
    c = fused(three, "med", runs=("run_1", "run_2", "run_3", "run_4"))
    assert c["q1"]["d1"] == np.median([1, 3, 10])
    assert c["q1"]["d2"] == np.median([2, 2, 0.5])
    assert c["q1"]["d3"] == np.median([3, 1])


def test_comb_gmnz(three):
    assert fused(three, "gmnz", params={"gamma": 1.0}) == fused(three, "mnz", name="g")
    assert fused(three, "gmnz", name="h", params={"gamma": 0.0}) == fused(three, "sum", name="i")


def test_wsum(three):
    w = [0.3, 0.2, 0.5]
    c = fused(three, "wsum", weights=w)
    assert c["q1"]["d1"] == w[0] * r1["q1"]["d1"] + w[1] * r2["q1"]["d1"]
    assert c["q1"]["d2"] == w[0] * r1["q1"]["d2"] + w[1] * r2["q1"]["d2"]
    assert c["q1"]["d3"] == w[0] * r1["q1"]["d3"] + w[2] * r3["q1"]["d3"]
    assert c["q2"]["d1"] == w[0] * r1["q2"]["d1"] + w[1] * r2["q2"]["d1"]
    assert c["q2"]["d2"] == w[0] * r1["q2"]["d2"] + w[2] * r3["q2"]["d2"]
    assert c["q2"]["d3"] == w[1] * r2["q2"]["d3"] + w[2] * r3["q2"]["d3"]


def test_wmnz(three):
    c = fused(three, "wmnz", weights=[1, 1, 1])
    assert c == {
        "q1": {"d1": sum([1, 3]) * 2, "d2": sum([2, 2]) * 2, "d3": sum([3, 1]) * 2},
        "q2": {"d1": sum([1, 1]) * 2, "d2": sum([2, 2]) * 2, "d3": sum([3, 3]) * 2},
    }


def test_mixed(three):
    c = fused(three, "mixed", weights=[1, 1, 1])
    assert c["q1"]["d1"] == (r1["q1"]["d1"] + r2["q1"]["d1"]) * np.sqrt(2)
    assert c["q1"]["d3"] == (r1["q1"]["d3"] + r3["q1"]["d3"]) * np.sqrt(2)
    assert c["q2"]["d3"] == (r2["q2"]["d3"] + r3["q2"]["d3"]) * np.sqrt(2)
    w = [0.3, 0.2, 0.5]
    c = fused(three, "mixed", name="g", weights=w)
    assert c["q1"]["d1"] == (w[0] * r1["q1"]["d1"] + w[1] * r2["q1"]["d1"]) * np.sqrt(2)
    assert c["q1"]["d2"] == (w[0] * r1["q1"]["d2"] + w[1] * r2["q1"]["d2"]) * np.sqrt(2)
    assert c["q1"]["d3"] == (w[0] * r1["q1"]["d3"] + w[2] * r3["q1"]["d3"]) * np.sqrt(2)
    assert c["q2"]["d1"] == (w[0] * r1["q2"]["d1"] + w[1] * r2["q2"]["d1"]) * np.sqrt(2)
    assert c["q2"]["d2"] == (w[0] * r1["q2"]["d2"] + w[2] * r3["q2"]["d2"]) * np.sqrt(2)
    assert c["q2"]["d3"] == (w[1] * r2["q2"]["d3"] + w[2] * r3["q2"]["d3"]) * np.sqrt(2)


def test_rrf(three):
    c = fused(three, "rrf")
    assert c == {
        "q1": {
            "d1": (1 / (60 + 3)) + (1 / (60 + 1)),
            "d2": (1 / (60 + 2)) + (1 / (60 + 2)),
            "d3": (1 / (60 + 1)) + (1 / (60 + 1)),
        },
        "q2": {
            "d1": (1 / (60 + 2)) + (1 / (60 + 2)),
            "d2": (1 / (60 + 1)) + (1 / (60 + 2)),
            "d3": (1 / (60 + 1)) + (1 / (60 + 1)),
        },
    }


def _isr(mult):
    return {
        "q1": {
            "d1": ((1 / (3**2)) + (1 / (1**2))) * mult,
            "d2": ((1 / (2**2)) + (1 / (2**2))) * mult,
            "d3": ((1 / (1**2)) + (1 / (1**2))) * mult,
        },
        "q2": {
            "d1": ((1 / (2**2)) + (1 / (2**2))) * mult,
            "d2": ((1 / (1**2)) + (1 / (2**2))) * mult,
            "d3": ((1 / (1**2)) + (1 / (1**2))) * mult,
        },
    }


def test_isr(three):
    assert fused(three, "isr") == _isr(2)


def test_log_isr(three):
    assert fused(three, "log_isr") == _isr(np.log(2))


def test_logn_isr(three):
    assert fused(three, "logn_isr", params={"sigma": 0.1}) == _isr(np.log(2 + 0.1))


BORDA = {
    "q1": {"d1": 1 + 3 + 1.5, "d2": 2 + 2 + 1.5, "d3": 3 + 1 + 3},
    "q2": {"d1": 2 + 2 + 1, "d2": 3 + 1 + 2, "d3": 1 + 3 + 3},
}


def test_bordafuse(three):
    assert fused(three, "bordafuse") == BORDA


def test_bordafuse_no_result_query():
    """ranx's run_4..run_6: no run has documents for q2, so the fusion has none there."""
    with evalstore.open(":memory:") as s:
        s.ingest_run({"q1": {"d1": 1, "d2": 2, "d3": 3}}, name="run_4")
        s.ingest_run({"q1": {"d1": 3, "d2": 2}}, name="run_5")
        s.ingest_run({"q1": {"d3": 1}}, name="run_6")
        c = fused(s, "bordafuse", runs=("run_4", "run_5", "run_6"))
    assert c == {"q1": BORDA["q1"]}


def test_weighted_bordafuse(three):
    assert fused(three, "w_bordafuse", weights=[1, 1, 1]) == BORDA
    c = fused(three, "w_bordafuse", name="g", weights=[3, 2, 1])
    assert c == {
        "q1": {"d1": 3 * 1 + 2 * 3 + 1.5, "d2": 3 * 2 + 2 * 2 + 1.5, "d3": 3 * 3 + 2 * 1 + 3},
        "q2": {"d1": 3 * 2 + 2 * 2 + 1, "d2": 3 * 3 + 2 * 1 + 2, "d3": 3 * 1 + 2 * 3 + 3},
    }


@pytest.mark.parametrize(
    "phi, expected",
    [
        (0.6, {"A": 0.89, "D": 0.86, "B": 0.78, "G": 0.50, "E": 0.31, "C": 0.29, "F": 0.11}),
        (0.8, {"D": 0.61, "A": 0.50, "B": 0.49, "C": 0.37, "G": 0.36, "E": 0.31, "F": 0.21}),
        (0.9, {"D": 0.35, "C": 0.28, "A": 0.27, "B": 0.27, "G": 0.23, "E": 0.22, "F": 0.18}),
    ],
)
def test_rbc(phi, expected):
    with evalstore.open(":memory:") as s:
        for name, run in RBC_RUNS.items():
            s.ingest_run(run, name=name)
        c = fused(s, "rbc", runs=tuple(RBC_RUNS), params={"phi": phi})
        ranked = [d for (d,) in s.sql("SELECT doc FROM run_rows WHERE run = 'f' ORDER BY rank").rows]
    assert {d: round(v, 2) for d, v in c["q1"].items()} == expected
    assert ranked == list(expected)  # ranx's tests list the documents best first


# ----------------------------------------------------------------------------- normalisations
def normalized(store, norm, runs=("run_1",)):
    out: dict[str, dict[str, dict[str, float]]] = {}
    for run, t, d, v in normalized_scores(store, list(runs), norm).rows:
        out.setdefault(run, {}).setdefault(t, {})[d] = v
    return out


def test_max_norm(three):
    assert normalized(three, "max")["run_1"] == {
        "q1": {"d1": 1 / 3, "d2": 2 / 3, "d3": 3 / 3},
        "q2": {"d1": 1 / 2, "d2": 2 / 2},
    }


def test_min_max_norm(three):
    assert normalized(three, "min-max")["run_1"] == {
        "q1": {"d1": (1 - 1) / (3 - 1), "d2": (2 - 1) / (3 - 1), "d3": (3 - 1) / (3 - 1)},
        "q2": {"d1": (1 - 1) / (2 - 1), "d2": (2 - 1) / (2 - 1)},
    }


@pytest.mark.parametrize("name", ["min_max_inverted", "min-max-inverted"])
def test_min_max_norm_with_invert(three, name):
    assert normalized(three, name)["run_1"] == {
        "q1": {"d1": (3 - 1) / (3 - 1), "d2": (3 - 2) / (3 - 1), "d3": (3 - 3) / (3 - 1)},
        "q2": {"d1": (2 - 1) / (2 - 1), "d2": (2 - 2) / (2 - 1)},
    }


def test_rank_norm(three):
    assert normalized(three, "rank")["run_1"] == {
        "q1": {"d1": 1 - (2 / 3), "d2": 1 - (1 / 3), "d3": 1 - (0 / 3)},
        "q2": {"d1": 1 - (1 / 2), "d2": 1 - (0 / 2)},
    }


def test_sum_norm(three):
    assert normalized(three, "sum")["run_1"] == {
        "q1": {
            "d1": (1 - 1) / (1 + 2 + 3 - 1 * 3),
            "d2": (2 - 1) / (1 + 2 + 3 - 1 * 3),
            "d3": (3 - 1) / (1 + 2 + 3 - 1 * 3),
        },
        "q2": {"d1": (1 - 1) / (1 + 2 - 1 * 2), "d2": (2 - 1) / (1 + 2 - 1 * 2)},
    }


def test_zmuv_norm(three):
    q1 = normalized(three, "zmuv")["run_1"]["q1"]
    assert q1 == {
        "d1": (1 - 2) / 0.816496580927726,
        "d2": (2 - 2) / 0.816496580927726,
        "d3": (3 - 2) / 0.816496580927726,
    }


def test_borda_norm(three):
    """A candidate a run lacks gets 0.5 - (n - 1) / (2 candidates); ranx compares with isclose."""
    n = normalized(three, "borda", runs=("run_1", "run_2", "run_3"))
    expected = {
        "run_1": {"q1": {"d1": 1 / 3, "d2": 2 / 3, "d3": 3 / 3}, "q2": {"d1": 2 / 3, "d2": 3 / 3, "d3": 1 / 3}},
        "run_2": {"q1": {"d1": 3 / 3, "d2": 2 / 3, "d3": 1 / 3}, "q2": {"d1": 2 / 3, "d2": 1 / 3, "d3": 3 / 3}},
        "run_3": {"q1": {"d1": 1.5 / 3, "d2": 1.5 / 3, "d3": 3 / 3}, "q2": {"d1": 1 / 3, "d2": 2 / 3, "d3": 3 / 3}},
    }
    assert {r: {q: set(d) for q, d in v.items()} for r, v in n.items()} == {
        r: {q: set(d) for q, d in v.items()} for r, v in expected.items()
    }
    for r, qs in expected.items():
        for q, docs in qs.items():
            for d, v in docs.items():
                assert isclose(n[r][q][d], v), (r, q, d)


def test_normalised_runs_are_not_changed(three):
    """ranx checks that normalising leaves the run as it was; here the stored rows stay."""
    before = three.sql("SELECT * FROM run_rows ORDER BY run, topic, rank").rows
    for norm in ("max", "min-max", "sum", "zmuv", "rank", "borda"):
        normalized(three, norm, runs=("run_1", "run_2"))
    assert three.sql("SELECT * FROM run_rows ORDER BY run, topic, rank").rows == before


def test_a_single_value_is_defined():
    """(ranx's denominators are at least 1e-9: one document, or equal scores, normalise to 0.)"""
    with evalstore.open(":memory:") as s:
        s.ingest_run({"q1": {"d1": 5.0}, "q2": {"d1": 2.0, "d2": 2.0}}, name="one")
        n = normalized(s, "min-max", runs=("one",))["one"]
        z = normalized(s, "zmuv", runs=("one",))["one"]
    assert n == {"q1": {"d1": 0.0}, "q2": {"d1": 0.0, "d2": 0.0}}
    assert z == {"q1": {"d1": 0.0}, "q2": {"d1": 0.0, "d2": 0.0}}
