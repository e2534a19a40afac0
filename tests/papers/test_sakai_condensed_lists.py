"""Condensed lists (judged_only=true; Sakai SIGIR 2007 Sec. 4, metric_definitions.md Sec. 4.1).

Every metric of the registry that takes ``judged_only`` must give, with judged_only=true, exactly
its value on the run with the unjudged documents (absent from the qrels, or pooled-but-unjudged
grade < 0) physically removed and the ranks renumbered; the ideal list does not change. The test
walks the registry, so metrics added later are covered too. Hand-computed cases follow.
"""

from __future__ import annotations

import numpy as np
import pytest

import evalstore
from evalstore.errors import MetricError
from evalstore.ingest import qrels_from_dict, run_from_dict
from evalstore.metrics import registry


def ranked(docs):
    return {d: float(len(docs) - i) for i, d in enumerate(docs)}


def _collection(seed=3):
    rng = np.random.default_rng(seed)
    qrels, runs = {}, {}
    for t in range(8):
        topic = f"q{t}"
        n = int(rng.integers(4, 14))
        q = {f"j{i}": int(g) for i, g in enumerate(rng.choice([0, 0, 1, 1, 2, 3], size=n))}
        q[f"j{n}"] = 2 + t % 2  # every topic has a relevant doc
        q.update({f"p{i}": -1 for i in range(2)})
        qrels[topic] = q
        pool = list(q) + [f"u{i}" for i in range(10)]
        for k in range(3):
            docs = list(rng.permutation(pool)[: int(rng.integers(3, len(pool)))])
            if k == 0:
                docs = [d for d in docs if d not in q] + [d for d in docs if d in q]  # unjudged docs first
            runs.setdefault(f"r{k}", {})[topic] = docs
    return qrels, runs


def _variants(spec):
    """Metric names to test for a spec: with no cutoff / @5 as the spec allows, required parameters
    without a default filled in."""
    extra = []
    for p in spec.params:
        if p.default is None and p.kind in ("float", "int") and p.name not in registry.CONTEXT_PARAMS:
            extra.append(f"{p.name}={0.5 if p.kind == 'float' else 2}")
    cutoffs = {"none": [""], "optional": ["", "@5"], "required": ["@5"]}[spec.cutoff]
    out = []
    for c in cutoffs:
        inner = ",".join(extra)
        plain = f"{spec.name}({inner}){c}" if inner else f"{spec.name}{c}"
        cond = f"{spec.name}({','.join(extra + ['judged_only=true'])}){c}"
        out.append((plain, cond))
    return out


CASES = [
    pytest.param(plain, cond, id=cond)
    for spec in registry.all_metrics()
    if spec.param("judged_only")
    for plain, cond in _variants(spec)
]


@pytest.fixture(scope="module")
def condensed_store():
    qrels, runs = _collection()
    store = evalstore.open(":memory:")
    qrels_from_dict(store, "q", qrels)
    for name, topics in runs.items():
        run_from_dict(store, name, {t: ranked(d) for t, d in topics.items()})
        # the condensed run: the same docs with the same scores, minus the unjudged ones
        run_from_dict(
            store,
            name + "_c",
            {t: {d: s for d, s in ranked(docs).items() if qrels[t].get(d, -1) >= 0} for t, docs in topics.items()},
        )
    cache: dict = {}
    yield store, list(runs), cache
    store.close()


def _evaluate(store, cache, names, convention):
    """All cases of a convention in one evaluation (fast); one metric at a time if that fails, so a
    broken metric fails only its own cases."""
    if convention not in cache:
        everything = [n for case in CASES for n in case.values]
        try:
            cache[convention] = _index(store.evaluate("q", None, everything, convention=convention, save=False))
        except MetricError:
            cache[convention] = None
    if cache[convention] is not None:
        return cache[convention]
    return _index(store.evaluate("q", None, names, convention=convention, save=False))


def _index(res):
    return {(r, t, m): v for r, t, m, v in res.per_topic}


@pytest.mark.parametrize("convention", ["trec_eval", "ntcireval"])
@pytest.mark.parametrize("plain,cond", CASES)
def test_judged_only_equals_metric_on_condensed_run(condensed_store, plain, cond, convention):
    store, runs, cache = condensed_store
    try:
        values = _evaluate(store, cache, [plain, cond], convention)
    except MetricError as e:
        pytest.fail(f"{cond}: {e}")
    keys = [(r, t) for r, t, m in values if m == cond and not r.endswith("_c")]
    assert len(keys) == len(runs) * 8
    for run, topic in keys:
        want = values[(run + "_c", topic, plain)]
        got = values[(run, topic, cond)]
        if want is None or got is None:
            assert want is got, (run, topic)
            continue
        assert got == pytest.approx(want, abs=1e-12, nan_ok=True), (run, topic)


def test_registry_has_condensed_metrics():
    names = {spec.name for spec in registry.all_metrics() if spec.param("judged_only")}
    assert {"AP", "P", "nDCG", "RR"} <= names
    assert len(CASES) >= 8


# --------------------------------------------------------------------------- hand-computed cases
QRELS = {"T": {"a": 1, "b": 2, "c": 2, "n1": 0, "n2": 0, "p": -1}}
RUN = ["u1", "a", "p", "n1", "u2", "b", "u3", "n2"]  # condensed: a n1 b n2 (c not retrieved)


def test_hand_computed_condensed_values():
    res = evalstore.evaluate(
        QRELS,
        {"s": {"T": ranked(RUN)}},
        [
            "AP",
            "AP(judged_only=true)",
            "P(judged_only=true)@2",
            "P@2",
            "RR(judged_only=true)",
            "nDCG(judged_only=true)",
            "nDCG",
            "NumRet(judged_only=true)",
        ],
    )
    v = lambda m: res.value("s", "T", m)  # noqa: E731
    # full list: a at 2, b at 6 -> AP = (1/2 + 2/6)/3 ; condensed: a at 1, b at 3 -> AP' = (1 + 2/3)/3
    assert v("AP") == pytest.approx((1 / 2 + 2 / 6) / 3)
    assert v("AP(judged_only=true)") == pytest.approx((1 + 2 / 3) / 3)
    assert v("P@2") == 0.5 and v("P(judged_only=true)@2") == 0.5  # condensed top 2 = a, n1
    assert v("RR(judged_only=true)") == 1.0
    assert v("NumRet(judged_only=true)") == 4
    # the ideal list is unchanged (c, b at gain 2, then a): nDCG' = (1 + 2/log2 4) / (2 + 2/log2 3 + 1/log2 4)
    idcg = 2 + 2 / np.log2(3) + 1 / 2
    assert v("nDCG(judged_only=true)") == pytest.approx((1 + 2 / 2) / idcg)
    assert v("nDCG") == pytest.approx((1 / np.log2(3) + 2 / np.log2(7)) / idcg)


def test_condensed_ap_is_ap_under_complete_judgments():
    """AP' = AP when every retrieved doc is judged; AP' = bpref_relative2 always."""
    qrels = {"T": {"a": 1, "b": 1, "c": 1, "n1": 0, "n2": 0, "n3": 0}, "U": {"x": 2, "y": 0, "z": 1}}
    runs = {
        "s": {"T": ranked(["n1", "a", "n2", "b", "c"]), "U": ranked(["y", "z", "x"])},
        "t": {"T": ranked(["c", "u", "n1", "a"]), "U": ranked(["u", "x"])},
    }
    res = evalstore.evaluate(qrels, runs, ["AP", "AP(judged_only=true)", "bpref_relative2"])
    for topic in ("T", "U"):
        assert res.value("s", topic, "AP(judged_only=true)") == pytest.approx(res.value("s", topic, "AP"))
        for run in runs:
            assert res.value(run, topic, "AP(judged_only=true)") == pytest.approx(
                res.value(run, topic, "bpref_relative2"), abs=1e-15
            )
    assert res.value("t", "T", "AP(judged_only=true)") > res.value("t", "T", "AP")


def test_condense_then_cut_off():
    """@k applies to the condensed ranks: Q'@2 / AP'@2 read the first two judged docs."""
    have_q = True
    try:
        registry.parse_metric("Q-measure")
    except MetricError:
        have_q = False
    metrics = ["AP(judged_only=true)@2", "nDCG(judged_only=true)@2"] + (
        ["Q-measure(judged_only=true)@2"] if have_q else []
    )
    full = evalstore.evaluate(QRELS, {"s": {"T": ranked(RUN)}}, metrics)
    cond = evalstore.evaluate(
        QRELS,
        {"s": {"T": ranked(["a", "n1", "b", "n2"])}},
        [m.replace("judged_only=true", "judged_only=false") for m in metrics],
    )
    for m in metrics:
        assert full.value("s", "T", m) == pytest.approx(
            cond.value("s", "T", m.replace("judged_only=true", "judged_only=false"))
        )
    # AP@2 (trec_eval's map_cut) on the condensed list: a at 1 only -> 1/3
    assert full.value("s", "T", "AP(judged_only=true)@2") == pytest.approx(1 / 3)
