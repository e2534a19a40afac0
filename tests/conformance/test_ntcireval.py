"""NTCIREVAL conformance: every case of cases.json (NTCIREVAL 190111's README sample, its shipped
TRECRUN output and values printed by the compiled tool) through the public interfaces.

Each fixture is written as NTCIR files (a per-topic ``.rel`` file and a ``.res`` file in rank
order), ingested with ``format='ntcir'`` and evaluated with ``convention='ntcireval'``. The cases
file is kept in tests/fixtures/ntcireval/ (a copy of ../shared/conformance/ntcireval/cases.json)
so these tests run without ../shared.

The bpref/rpref cases (NTCIREVAL ``-j`` output) run here too: evalstore's bpref family condenses
the list itself, so they are evaluated on the original ranking.
"""

from __future__ import annotations

import json

import pytest
from support import FIXTURES

import evalstore

CASES_FILE = FIXTURES / "ntcireval" / "cases.json"
DATA = json.loads(CASES_FILE.read_text())
FIXTURES = DATA["fixtures"]
CASES = DATA["cases"]
BPREF_FAMILY = {"bpref": "Bpref", "bpref_R": "bpref_R", "bpref_N": "bpref_N", "bpref_relative": "bpref_relative"}
RPREF_FAMILY = {"rpref_N", "rpref_relative", "rpref_relative2"}


def _gains(args) -> str:
    g = args.get("gains")
    return "" if g is None else "gains=" + ":".join(f"{x:g}" for x in g)


def _with(name: str, params: str, cutoff) -> str:
    s = name + (f"({params})" if params else "")
    return s + (f"@{cutoff}" if cutoff is not None else "")


def metric_name(case: dict) -> str:
    """The evalstore metric computing an NTCIREVAL output label."""
    a = case["args"]
    fn = case["function"]
    g = _gains(a)
    cut = a.get("cutoff")
    if fn in BPREF_FAMILY:
        return BPREF_FAMILY[fn]
    if fn in RPREF_FAMILY:
        return _with(fn, g, None)
    if fn == "rr":
        return "RR"
    if fn == "o_measure":
        return _with("O-measure", g, None)
    if fn == "p_measure":
        return _with("P-measure", g, None)
    if fn == "p_plus_measure":
        return _with("P-plus", g, None)
    if fn == "average_precision":
        return "AP" if cut is None else f"AP-ntcir@{cut}"  # NTCIREVAL AP@l divides by min(l, R)
    if fn == "q_measure":
        return _with("Q-measure", g, cut)
    if fn == "err":
        return _with("ERR-ntcir", g, cut)
    if fn == "nerr":
        return _with("nERR-ntcir", g, cut)
    if fn == "ndcg":
        return _with("nDCG-JK", g, cut)
    if fn == "ms_ndcg":
        return _with("MSnDCG", g, cut)
    if fn == "precision_at":
        return f"P@{a['k']}"
    if fn == "hit_at":
        return f"Hit@{a['k']}"
    raise AssertionError(f"case {case['id']}: no evalstore metric for NTCIREVAL function {fn!r}")


def _topic(fixture: str) -> str:
    return fixture.replace("ntcireval_", "")


@pytest.fixture(scope="module")
def ntcir_store(tmp_path_factory):
    """One store holding every fixture as its own qrels set and run (ingested from NTCIR files)."""
    root = tmp_path_factory.mktemp("ntcireval")
    store = evalstore.open(":memory:")
    for name, fx in FIXTURES.items():
        d = root / name
        d.mkdir()
        topic = _topic(name)
        (d / f"{topic}.rel").write_text("".join(f"{doc} L{lvl}\n" for doc, lvl in fx["qrels"].items()))
        (d / f"{topic}.res").write_text("".join(f"{doc}\n" for doc in fx["ranking"]))
        store.ingest_qrels(d / f"{topic}.rel", name=name, format="ntcir", progress=False)
        store.ingest_run(d / f"{topic}.res", name=name, format="ntcir", progress=False)
    yield store
    store.close()


@pytest.fixture(scope="module")
def computed(ntcir_store):
    """{fixture: {metric name: value}}, each fixture evaluated once with all its metrics."""
    out = {}
    for name in FIXTURES:
        names = sorted({metric_name(c) for c in CASES if c["args"]["$fixture"] == name})
        if not names:
            continue
        res = ntcir_store.evaluate(name, [name], names, convention="ntcireval", save=False)
        out[name] = {m: res.value(name, _topic(name), m) for m in names}
    return out


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_ntcireval_case(case, computed):
    fixture = case["args"]["$fixture"]
    name = metric_name(case)
    got = computed[fixture][name]
    assert got == pytest.approx(case["expected"], abs=case["tolerance"]), (
        f"{case['id']}: {name} = {got}, NTCIREVAL printed {case['expected']} ({case['origin']})"
    )


def test_every_case_is_mapped():
    """No case silently falls through: all 112 cases map to an evalstore metric (the parametrised
    test above runs each of them)."""
    assert len(CASES) == 112
    assert all(metric_name(c) for c in CASES)


def test_condensed_cases_equal_judged_only_on_the_original_list(ntcir_store, computed):
    """NTCIREVAL's `label -j` list (fixture *_condensed) gives the same values as judged_only=true
    on the original list (the unjudged dummy12 removed by the ranked list, ranks renumbered)."""
    cond = [c for c in CASES if c["args"]["$fixture"] == "ntcireval_sample_condensed"]
    assert cond
    names = sorted({metric_name(c) for c in cond})
    jo = [
        n.replace("(", "(judged_only=true,")
        if "(" in n
        else n.split("@")[0] + "(judged_only=true)" + ("@" + n.split("@")[1] if "@" in n else "")
        for n in names
    ]
    res = ntcir_store.evaluate("ntcireval_sample", ["ntcireval_sample"], jo, convention="ntcireval", save=False)
    for c in cond:
        i = names.index(metric_name(c))
        assert res.value("ntcireval_sample", "sample", jo[i]) == pytest.approx(c["expected"], abs=c["tolerance"]), jo[i]


def test_declared_gains_give_the_same_values(tmp_path):
    """Gains declared at ingest (NTCIREVAL's -g, `ingest qrels --gains`) are used when a metric gets
    no gains=; ERR's g_max is then the declared top gain (2 for -g 1:2 although the TRECRUN qrels
    only hold L1), as in NTCIREVAL's shipped output."""
    name = "ntcireval_trecrun_0001"
    fx = FIXTURES[name]
    (tmp_path / "0001.rel").write_text("".join(f"{d} L{lvl}\n" for d, lvl in fx["qrels"].items()))
    (tmp_path / "0001.res").write_text("".join(f"{d}\n" for d in fx["ranking"]))
    with evalstore.open(":memory:") as store:
        store.ingest_qrels(tmp_path / "0001.rel", name="q", format="ntcir", gains="1:2", progress=False)
        store.ingest_run(tmp_path / "0001.res", name="r", format="ntcir", progress=False)
        res = store.evaluate(
            "q",
            ["r"],
            ["ERR-ntcir", "nERR@10", "Q-measure", "ERR-ntcir(gains=1:1)"],
            convention="ntcireval",
            save=False,
        )
    expected = {c["metric"]: c["expected"] for c in CASES if c["args"]["$fixture"] == name}
    assert res.value("r", "0001", "ERR-ntcir") == pytest.approx(expected["ERR"], abs=5e-5)
    assert res.value("r", "0001", "nERR@10") == pytest.approx(expected["nERR@0010"], abs=5e-5)
    assert res.value("r", "0001", "Q-measure") == pytest.approx(expected["Q-measure"], abs=5e-5)
    # with -g 1:1 the stop probability of an L1 doc is 1/2 instead of 1/3: a different value
    assert abs(res.value("r", "0001", "ERR-ntcir(gains=1:1)") - expected["ERR"]) > 0.01
    # the declared gains are the default of this qrels set: the stored name omits them
    assert res.stored_names["ERR-ntcir"] == "ERR-ntcir(convention=ntcireval)"
    assert res.stored_names["ERR-ntcir(gains=1:1)"] == "ERR-ntcir(convention=ntcireval,gains=1:1)"
