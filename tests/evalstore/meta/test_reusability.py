"""Leave-one-run-out worked by hand on a three-run, two-topic collection (the issue's reference
check), leave-one-group-out on the same runs, and the analysis stored, shown and reused.

Runs (evaluation ranks) and qrels (relevant: grade 1)::

    r1  t1: a b c     t2: f h          t1: a=1 b=0 c=1 d=0 e=1
    r2  t1: b d a     t2: g f          t2: f=1 g=1 h=0 i=0
    r3  t1: e a d     t2: h i

Depth-2 pool: t1 {a (r1, r3), b (r1, r2), d (r2), e (r3)}, t2 {f (r1, r2), h (r1, r3), g (r2),
i (r3)}. Unique documents: r1 none; r2 d (nonrelevant) and g (relevant); r3 e (relevant) and i
(nonrelevant). Leaving a run out removes its unique judged documents from the qrels:

* r1: nothing; AP t1 = (1/1 + 2/3)/3 = 5/9, t2 = (1/1)/2 = 1/2: mean 19/36 both ways;
  P@2 = 1/2 and 1/2: mean 1/2 both ways.
* r2: full AP t1 = (1/3)/3 = 1/9, t2 = (1 + 1)/2 = 1: mean 5/9. Without d and g: t1 unchanged (d was
  nonrelevant) 1/9; t2: g unjudged, R = 1, f at rank 2: 1/2: mean 11/36. P@2: full (0 + 1)/2 = 1/2,
  reduced (0 + 1/2)/2 = 1/4.
* r3: full AP t1 = (1/1 + 2/2)/3 = 2/3, t2 = 0: mean 1/3. Without e and i: t1 R = 2, e unjudged, a at
  rank 2: (1/2)/2 = 1/4; t2 0: mean 1/8. P@2: full (1 + 0)/2 = 1/2, reduced (1/2 + 0)/2 = 1/4.

AP ranks: full r2 (5/9) > r1 (19/36) > r3 (1/3); leave-out r1 (19/36) > r2 (11/36) > r3 (1/8).
Pairs (r1, r2) discordant, (r1, r3) and (r2, r3) concordant: tau = (2 - 1)/3 = 1/3. Largest drop:
r2, 5/9 - 11/36 = 1/4; r2 falls 1 place; two runs change rank. rank_alone (a run's leave-out mean
among the others' full means): r1 2, r2 3 (11/36 < 1/3), r3 3.
P@2: every run ties at 1/2 on the full qrels, so tau-b is undefined (None); leave-out ranks 1, 2, 2.
"""

from __future__ import annotations

import json

import pytest

from evalstore.errors import MetaError, PoolError, SubsampleError

RUNS = {
    "r1": {"t1": "a b c", "t2": "f h"},
    "r2": {"t1": "b d a", "t2": "g f"},
    "r3": {"t1": "e a d", "t2": "h i"},
}
QRELS = {"t1": {"a": 1, "b": 0, "c": 1, "d": 0, "e": 1}, "t2": {"f": 1, "g": 1, "h": 0, "i": 0}}


def ranked(docs: str) -> dict[str, float]:
    names = docs.split()
    return {d: float(len(names) - i) for i, d in enumerate(names)}


@pytest.fixture
def collection(store):
    for name, topics in RUNS.items():
        store.ingest_run({t: ranked(d) for t, d in topics.items()}, name=name)
    store.ingest_qrels(QRELS, name="q")
    return store


def rows(result, metric):
    return {r["run"]: r for r in result.runs if r["metric"] == metric}


def test_leave_one_run_out_by_hand(collection):
    res = collection.reusability("q", ["AP", "P@2"], leave_one_out="runs", pool_depth=2)
    ap = rows(res, "AP")
    assert {r: (x["mean_full"], x["mean_reduced"]) for r, x in ap.items()} == {
        "r1": (pytest.approx(19 / 36), pytest.approx(19 / 36)),
        "r2": (pytest.approx(5 / 9), pytest.approx(11 / 36)),
        "r3": (pytest.approx(1 / 3), pytest.approx(1 / 8)),
    }
    assert {r: (x["rank_full"], x["rank_reduced"], x["rank_alone"]) for r, x in ap.items()} == {
        "r1": (2, 1, 2), "r2": (1, 2, 3), "r3": (3, 3, 3),
    }  # fmt: skip
    assert [r["run"] for r in res.runs if r["metric"] == "AP"] == ["r2", "r1", "r3"]  # best full rank first
    summary = {s["metric"]: s for s in res.summary}
    assert summary["AP"]["tau"] == pytest.approx(1 / 3)
    assert summary["AP"]["max_drop"] == pytest.approx(1 / 4) and summary["AP"]["max_drop_run"] == "r2"
    assert (summary["AP"]["max_rank_drop"], summary["AP"]["max_rank_drop_run"], summary["AP"]["n_rank_changes"]) == (
        1, "r2", 2,
    )  # fmt: skip
    assert summary["AP"]["mean_change"] == pytest.approx(((11 / 36 - 5 / 9) + (1 / 8 - 1 / 3)) / 3)
    p2 = rows(res, "P@2")
    assert {r: (x["mean_full"], x["mean_reduced"], x["rank_full"], x["rank_reduced"]) for r, x in p2.items()} == {
        "r1": (0.5, 0.5, 1, 1), "r2": (0.5, 0.25, 1, 2), "r3": (0.5, 0.25, 1, 2),
    }  # fmt: skip
    assert summary["P@2"]["tau"] is None  # the full leaderboard is one tie
    # the groups: the unique documents, the judged ones removed, the relevant among them
    assert [g.row() for g in res.groups] == [
        {"left_out": "r1", "qrels": "q@loro2:r1", "n_runs": 1, "n_unique": 0, "n_removed": 0, "n_removed_relevant": 0},
        {"left_out": "r2", "qrels": "q@loro2:r2", "n_runs": 1, "n_unique": 2, "n_removed": 2, "n_removed_relevant": 1},
        {"left_out": "r3", "qrels": "q@loro2:r3", "n_runs": 1, "n_unique": 2, "n_removed": 2, "n_removed_relevant": 1},
    ]


def test_the_leave_out_sets_are_subsamples(collection):
    collection.reusability("q", ["AP"], leave_one_out="runs", pool_depth=2)
    judged = collection.sql("SELECT topic, doc FROM qrels WHERE qrels = 'q@loro2:r2' ORDER BY topic, doc").rows
    assert judged == [("t1", "a"), ("t1", "b"), ("t1", "c"), ("t1", "e"), ("t2", "f"), ("t2", "h"), ("t2", "i")]
    subs = collection.sql(
        "SELECT name, method, left_out, pool_depth, fraction FROM subsamples WHERE parent = 'q' ORDER BY name"
    ).rows
    assert subs[1] == ("q@loro2:r2", "leave_one_run_out", "r2", 2, None)
    # eval --subsamples and meta read them as any qrels set
    by_set = collection.evaluate_subsamples("q", None, ["AP"], "loro")
    assert by_set["q@loro2:r3"].value("r3", "t1", "AP") == pytest.approx(1 / 4)
    an = collection.kendall(["q", "q@loro2:r2"], ["AP"])
    assert an.rows("meta_correlations")[0]["n_runs"] == 3
    # a second run with the same runs and depth reuses the sets; another depth makes others
    collection.reusability("q", ["AP"], leave_one_out="runs", pool_depth=2)
    collection.reusability("q", ["AP"], leave_one_out="runs", pool_depth=1)
    assert collection.sql("SELECT count(*) FROM subsamples WHERE method = 'leave_one_run_out'").rows == [(6,)]


def test_leave_one_group_out(collection):
    res = collection.reusability("q", ["AP"], groups={"r1": "H", "r2": "G", "r3": "G"}, pool_depth=2)
    # G (r2, r3) alone brought d, e (t1) and g, i (t2); H (r1) shares all it brought
    assert [(g.group, g.qrels, g.runs, g.n_unique, g.n_removed_relevant) for g in res.groups] == [
        ("H", "q@logo2:H", ["r1"], 0, 0),
        ("G", "q@logo2:G", ["r2", "r3"], 4, 2),
    ]
    ap = rows(res, "AP")
    # r2 without d, e, g, i: t1 R = 2 (a, c), a at rank 3: 1/6; t2 R = 1, f at rank 2: 1/2; mean 1/3
    # (left out alone, r2 kept e and scored 11/36: its group's documents count too)
    assert ap["r2"]["mean_reduced"] == pytest.approx(1 / 3)
    assert ap["r3"]["mean_reduced"] == pytest.approx(1 / 8)  # t1 R = 2, a at rank 2: 1/4; t2 0
    assert ap["r2"]["qrels"] == ap["r3"]["qrels"] == "q@logo2:G"


def test_the_analysis_is_stored_and_its_document(collection):
    res = collection.reusability("q", ["AP"], leave_one_out="runs", pool_depth=2)
    aid = res.analysis_id
    assert collection.sql("SELECT kind FROM meta_runs WHERE analysis_id = ?", [aid]).rows == [("reusability",)]
    stored = collection.sql(
        "SELECT run, rank_full, rank_reduced FROM meta_reusability_runs WHERE analysis_id = ? ORDER BY run", [aid]
    ).rows
    assert stored == [("r1", 2, 1), ("r2", 1, 2), ("r3", 3, 3)]
    doc = json.loads(json.dumps(res.to_dict()))
    first = doc["runs"][0]
    assert {k: first[k] for k in ("run", "group", "rank_full", "rank_reduced", "rank_change")} == {
        "run": "r2", "group": "r2", "rank_full": 1, "rank_reduced": 2, "rank_change": 1,
    }  # fmt: skip
    assert first["mean_full"] == pytest.approx(5 / 9) and first["mean_reduced"] == pytest.approx(11 / 36)
    assert doc["metrics"]["AP"]["tau"] == pytest.approx(1 / 3)
    # dropping a leave-out set drops the analysis that read it
    collection.drop_qrels("q@loro2:r2")
    assert collection.sql("SELECT count(*) FROM meta_runs WHERE analysis_id = ?", [aid]).rows == [(0,)]


def test_refusals(collection):
    with pytest.raises(PoolError, match="say how runs are grouped"):
        collection.reusability("q", ["AP"])
    with pytest.raises(PoolError, match="the depth 4 is beyond the runs' depth"):
        collection.reusability("q", ["AP"], leave_one_out="runs", pool_depth=4)
    with pytest.raises(PoolError, match="at least 2 groups"):
        collection.reusability("q", ["AP"], groups={"r1": "x", "r2": "x", "r3": "x"})
    with pytest.raises(MetaError, match="at least 2 runs"):
        collection.reusability("q", ["AP"], ["r1"], leave_one_out="runs")
    collection.create_subsamples("q", [0.5])
    with pytest.raises(SubsampleError, match="is itself a subsample"):
        collection.reusability("q@bv0.5#0", ["AP"], leave_one_out="runs", pool_depth=2)
    assert collection.sql("SELECT count(*) FROM meta_runs").rows == [(0,)]
    # the same names made from other runs need --replace (or another prefix)
    collection.reusability("q", ["AP"], ["r1", "r2", "r3"], leave_one_out="runs", pool_depth=2)
    with pytest.raises(SubsampleError, match="'q@loro2:r1' already exists and it was made otherwise"):
        collection.reusability("q", ["AP"], ["r1", "r2"], leave_one_out="runs", pool_depth=2)
    collection.reusability("q", ["AP"], ["r1", "r2"], leave_one_out="runs", pool_depth=2, prefix="q2")
    collection.reusability("q", ["AP"], ["r1", "r2"], leave_one_out="runs", pool_depth=2, replace=True)
