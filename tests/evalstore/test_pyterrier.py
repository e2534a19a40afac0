"""evalstore in PyTerrier (the pyterrier extra; PyTerrier's core, no Java): evalstore's measures in
``pt.Experiment(eval_metrics=...)`` through ir_measures' runtime provider, and the Recorder.

The reference check of issue 45: ``pt.Experiment`` with evalstore's measures equals
``evalstore.experiment`` on the same DataFrames to 1e-12 (per query, means and p-values) for AP,
nDCG@10, Sakai's Q and P+ and Zhou & Yao's WAP, on every TREC DL 2019 passage run."""

from __future__ import annotations

import glob

import pytest
from support import DATA_DIR, need_shared

import evalstore

pt = pytest.importorskip("pyterrier")
pd = pytest.importorskip("pandas")
from evalstore.pyterrier import Recorder, measures  # noqa: E402  (needs pyterrier)

QRELS = pd.DataFrame(
    {"qid": ["q1", "q1", "q1", "q2", "q2"], "docno": ["d1", "d2", "d3", "d4", "d5"], "label": [2, 0, 1, 1, 0]}
)
TOPICS = pd.DataFrame({"qid": ["q1", "q2"], "query": ["black bear", "eclipse"]})
RUN_A = pd.DataFrame({"qid": ["q1", "q1", "q1", "q2", "q2"], "docno": ["d3", "d1", "d9", "d5", "d4"],
                      "score": [3.0, 2.0, 1.0, 2.0, 1.0]})  # fmt: skip
RUN_B = pd.DataFrame({"qid": ["q1", "q1", "q2"], "docno": ["d1", "d3", "d4"], "score": [2.0, 1.0, 5.0]})


class Replay(pt.Transformer):
    """A pipeline stand-in without Java: the rows of a stored result for the topics it is given."""

    def __init__(self, name: str, frame):
        self.name, self.frame = name, frame

    def transform(self, topics):
        return self.frame[self.frame["qid"].isin(topics["qid"])].merge(topics, on="qid")

    def __repr__(self) -> str:
        return f"Replay({self.name!r})"


def test_measures_in_pt_experiment_are_named_as_given_and_computed_by_evalstore():
    ms = measures("AP", "nDCG@10", "Q", "P(rel=2)@2", "NDPM")
    assert [str(m) for m in ms] == ["AP", "nDCG@10", "Q", "P(rel=2)@2", "NDPM"]
    res = pt.Experiment([RUN_A, RUN_B], TOPICS, QRELS, eval_metrics=ms, names=["a", "b"])
    # (PyTerrier orders the columns of runtime measures as ir_measures' set of measures does)
    assert sorted(res.columns) == sorted(["name", "AP", "nDCG@10", "Q", "P(rel=2)@2", "NDPM"])
    ours = evalstore.evaluate(QRELS, {"a": RUN_A, "b": RUN_B}, ["AP", "nDCG@10", "Q", "P(rel=2)@2", "NDPM"])
    for _, row in res.iterrows():
        for m in ["AP", "nDCG@10", "Q", "P(rel=2)@2", "NDPM"]:
            assert row[m] == pytest.approx(ours.mean(row["name"], m), abs=1e-12)
    # AP of a: q1 retrieves d3 (1) then d1 (2): (1/1 + 2/2) / 2 = 1; q2: d4 at rank 2 = 0.5
    assert res.set_index("name").loc["a", "AP"] == 0.75


def test_a_topic_a_run_lacks_scores_zero_as_ir_measures_pads_it():
    run = RUN_A[RUN_A["qid"] == "q1"]
    res = pt.Experiment([run], TOPICS, QRELS, eval_metrics=measures("AP"), names=["a"], perquery=True)
    assert res.set_index("qid")["value"].to_dict() == {"q1": 1.0, "q2": 0.0}


def test_a_measure_of_ones_own_in_pt_experiment():
    evalstore.register_measure(
        "hits2", sql="SELECT qrels, run, topic, count(*) FILTER (WHERE grade >= 2) AS value FROM ranked GROUP BY ALL"
    )
    try:
        res = pt.Experiment([RUN_A, RUN_B], TOPICS, QRELS, eval_metrics=measures("hits2"), names=["a", "b"])
        assert res.set_index("name")["hits2"].to_dict() == {"a": 0.5, "b": 0.5}
    finally:
        evalstore.unregister_measure("hits2")


def test_the_recorder_stores_a_pipeline_once_and_a_changed_one_as_a_new_run():
    with evalstore.open(":memory:") as store:
        first = Recorder(store, "bm25", Replay("bm25", RUN_A))
        for _ in range(2):  # the same experiment twice: one run
            pt.Experiment([first], TOPICS, QRELS, eval_metrics=measures("AP"), names=["bm25"], validate="ignore")
        assert [(r.name, r.status) for r in first.recorded] == [("bm25", "added"), ("bm25", "unchanged")]
        changed = Recorder(store, "bm25", Replay("bm25-k1", RUN_A.assign(score=RUN_A["score"] * [1, 1, 1, 1, 3])))
        pt.Experiment([changed], TOPICS, QRELS, eval_metrics=measures("AP"), names=["bm25"], validate="ignore")
        (new,) = changed.recorded
        assert new.status == "added" and new.name == f"bm25@{new.sha256[:8]}"
        rows = store.sql(
            "SELECT name, n_rows, metadata->>'$.method.retrieval[0].pipeline' FROM runs ORDER BY name"
        ).rows
        assert rows == [("bm25", 5, "Replay('bm25')"), (new.name, 5, "Replay('bm25-k1')")]
        assert "python-terrier" in store.sql("SELECT metadata->>'$.platform.software.libraries' FROM runs").rows[0][0]
        # a recorder at the end of a pipeline records what reaches it, and passes it on unchanged
        tail = Recorder(store, "b")
        out = (Replay("b", RUN_B) >> tail).transform(TOPICS)
        assert len(out) == 3 and tail.recorded[0].name == "b"
        header = store.sql("SELECT metadata_header FROM run_meta WHERE name = 'b'").rows[0][0]
        assert header.startswith("# ir_metadata.start\n# tag: b\n") and header.endswith("# ir_metadata.end\n")


def test_measures_refuse_what_they_cannot_be():
    with pytest.raises(evalstore.MetricError, match="unknown metric"):
        measures("NoSuchThing")
    with pytest.raises(evalstore.EvalstoreError, match="several metrics"):
        measures("P.5,10")
    with pytest.raises(evalstore.EvalstoreError, match="in its name"):
        measures("nDCG")[0] @ 10
    with pytest.raises(evalstore.EvalstoreError, match="records into a store"):
        Recorder("store.duckdb", "x")  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def dl19():
    d = need_shared(DATA_DIR / "trec-dl-2019-passage")
    qrels = pd.read_csv(d / "qrels.txt", sep=r"\s+", names=["qid", "iter", "docno", "label"],
                        dtype={"qid": str, "docno": str})  # fmt: skip
    topics = pd.read_csv(d / "topics.tsv", sep="\t", names=["qid", "query"], dtype=str)
    runs = {}
    for path in sorted(glob.glob(str(d / "runs" / "*.run.gz"))):
        frame = pd.read_csv(path, sep=r"\s+", names=["qid", "Q0", "docno", "rank", "score", "tag"],
                            dtype={"qid": str, "docno": str})  # fmt: skip
        runs[frame["tag"].iloc[0]] = frame[["qid", "docno", "score"]]
    return qrels, topics, runs


MEASURES = ["AP", "nDCG@10", "Q", "P+", "WAP"]


@pytest.mark.shared
@pytest.mark.slow
def test_pt_experiment_equals_evalstore_experiment_on_dl2019(dl19):
    qrels, topics, runs = dl19
    names = list(runs)
    assert len(names) == 37
    ms = measures(*MEASURES)
    perquery = pt.Experiment(list(runs.values()), topics, qrels, eval_metrics=ms, names=names, perquery=True)
    ours = evalstore.experiment(runs, qrels, MEASURES, baseline="bm25base_p").to_df(perquery=True)
    both = perquery.merge(ours, on=["name", "qid", "measure"], suffixes=("_pt", "_es"), validate="one_to_one")
    assert len(both) == len(perquery) == len(ours) == 37 * 43 * len(MEASURES)
    assert (both["value_pt"] - both["value_es"]).abs().max() <= 1e-12
    averages = pt.Experiment(
        list(runs.values()), topics, qrels, eval_metrics=ms, names=names, baseline=names.index("bm25base_p")
    ).set_index("name")
    ex = evalstore.experiment(runs, qrels, MEASURES, baseline="bm25base_p").to_df().set_index("name")
    for m in MEASURES:
        assert (averages[m] - ex[m]).abs().max() <= 1e-12
        assert (averages[f"{m} p-value"] - ex[f"{m} p-value"]).abs().max() <= 1e-12
        assert (averages[f"{m} +"].fillna(-1) == ex[f"{m} +"].fillna(-1)).all()
