"""The fast evaluator and the in-memory API: the same numbers as a store's evaluation for every
registered metric, every input kind (dicts, pandas, polars, Arrow, namedtuples, files), and the
output shapes (pytrec_eval's dict, DataFrames, Arrow)."""

from __future__ import annotations

import collections
import importlib.util
import random

import numpy as np
import pyarrow as pa
import pytest
from support import SAMPLE

import evalstore
from evalstore.errors import IngestError, MetricError
from evalstore.evaluation import in_memory, numpy_measures
from evalstore.evaluation.in_memory import Evaluator, nested
from evalstore.ingest import blocks
from evalstore.ingest.tables import read_runs
from evalstore.metrics import registry

QRELS = SAMPLE / "qrels.txt"
RUNS = sorted((SAMPLE / "runs").glob("*.txt"))


def _name(spec) -> str:
    """A name that evaluates the metric with its defaults (and a cutoff or level where one is required)."""
    for name in (
        spec.name, spec.name + "@10", spec.name + "@0.5", spec.name + "(mult=0.5)",
        spec.name + "(max_rel=3)", spec.name + "(max_rel=3)@10",
    ):  # fmt: skip
        try:
            registry.parse_metric(name)
            return name
        except evalstore.MetricError:
            continue
    raise AssertionError(f"no default name evaluates {spec.name}")


ALL = [_name(s) for s in registry.all_metrics() if s.kind == "judgments"]  # (answers: test_answers.py)


@pytest.fixture(scope="module")
def stored():
    s = evalstore.open(":memory:")
    s.ingest_qrels(QRELS, name="q", progress=False)
    s.ingest_run(RUNS, progress=False)
    yield s
    s.close()


def _as_dict(store, run: str) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for topic, doc, score in store.sql("SELECT topic, doc, score FROM run_rows WHERE run = ?", [run]).rows:
        out.setdefault(topic, {})[doc] = score
    return out


def _qrels_dict(store) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for topic, doc, grade in store.sql("SELECT topic, doc, grade FROM qrels WHERE qrels = 'q'").rows:
        out.setdefault(topic, {})[doc] = grade
    return out


@pytest.mark.parametrize("complete", [False, True])
def test_every_metric_equals_the_store_evaluation(stored, complete):
    runs = stored.run_names()
    ref = stored.evaluate("q", runs, ALL, save=False, complete=complete)
    with Evaluator(_qrels_dict(stored), ALL, complete=complete) as ev:
        got = ev.evaluate_many({r: _as_dict(stored, r) for r in runs})
    n = 0
    for run, topic, metric, value in ref.per_topic:
        assert got[run][topic][metric] == value, (run, topic, metric)
        n += 1
    assert n == sum(len(m) for t in got.values() for m in t.values()) > len(ALL) * len(runs) * 5


def test_evaluate_returns_the_store_result_for_files_and_dicts(stored):
    ref = stored.evaluate("q", None, ["AP", "nDCG@10", "P-plus", "ADM"], save=False)
    by_file = evalstore.evaluate(QRELS, RUNS, ["AP", "nDCG@10", "P-plus", "ADM"])
    assert by_file.per_topic == ref.per_topic and by_file.means == ref.means
    by_dict = evalstore.evaluate(_qrels_dict(stored), {r: _as_dict(stored, r) for r in stored.run_names()},
                                 ["AP", "nDCG@10", "P-plus", "ADM"])  # fmt: skip
    assert by_dict.means == ref.means


def test_dataframes_arrow_and_namedtuples_give_the_same_scores(stored):
    pd = pytest.importorskip("pandas")
    pl = pytest.importorskip("polars")
    qd = _qrels_dict(stored)
    run = _as_dict(stored, "bm25")
    ref = Evaluator(qd, ["AP", "nDCG@10"]).evaluate(run)
    q_rows = [(t, d, g) for t, ds in qd.items() for d, g in ds.items()]
    r_rows = [(t, d, s) for t, ds in run.items() for d, s in ds.items()]
    Qrel = collections.namedtuple("TrecQrel", "query_id doc_id relevance iteration")
    Doc = collections.namedtuple("GenericScoredDoc", "query_id doc_id score")
    inputs = [
        (pd.DataFrame(q_rows, columns=["query_id", "doc_id", "relevance"]),
         pd.DataFrame(r_rows, columns=["query_id", "doc_id", "score"])),
        (pl.DataFrame(q_rows, schema=["topic", "doc", "grade"], orient="row"),
         pl.DataFrame(r_rows, schema=["topic", "doc", "score"], orient="row")),
        (pa.table({"qid": [r[0] for r in q_rows], "docno": [r[1] for r in q_rows], "rel": [r[2] for r in q_rows]}),
         pa.table({"query_id": [r[0] for r in r_rows], "doc_id": [r[1] for r in r_rows],
                   "score": [r[2] for r in r_rows]})),
        ([Qrel(t, d, g, "0") for t, d, g in q_rows], [Doc(t, d, s) for t, d, s in r_rows]),
    ]  # fmt: skip
    for q, r in inputs:
        assert Evaluator(q, ["AP", "nDCG@10"]).evaluate(r) == ref, type(q)


def test_store_ingests_dataframes_like_files(tmp_path):
    pd = pytest.importorskip("pandas")
    with evalstore.open(":memory:") as s:
        s.ingest_run(RUNS[0], name="file", progress=False)
        rows = s.sql("SELECT topic, doc, score FROM run_rows WHERE run = 'file' ORDER BY rank").rows
        df = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"]).sample(frac=1.0, random_state=1)
        [res] = s.ingest_run(df, name="frame", progress=False)
        assert res.status == "added" and res.n_rows == len(rows)
        got = s.sql(
            "SELECT a.rank = b.rank FROM run_rows a JOIN run_rows b USING (topic, doc) "
            "WHERE a.run = 'file' AND b.run = 'frame'"
        ).rows
        assert len(got) == len(rows) and all(ok for (ok,) in got)  # same trec_eval ranks
        qdf = pd.DataFrame(
            s.sql("SELECT 'x', 'd' || i, i % 3 FROM range(5) t(i)").rows, columns=["topic", "doc", "grade"]
        )
        assert s.ingest_qrels(qdf, name="fq", progress=False)[0].n_rows == 5
        with pytest.raises(IngestError, match="needs a name"):
            s.ingest_run(df, progress=False)


def test_bad_inputs_are_refused_with_a_message(stored):
    pd = pytest.importorskip("pandas")
    qd = _qrels_dict(stored)
    ev = Evaluator(qd, ["AP"])
    dup = pd.DataFrame([("1", "a", 1.0), ("1", "a", 2.0)], columns=["query_id", "doc_id", "score"])
    with pytest.raises(IngestError, match="'a' of topic '1' is retrieved twice"):
        ev.evaluate(dup)
    with pytest.raises(IngestError, match="no column for 'score'"):
        ev.evaluate(pd.DataFrame([("1", "a")], columns=["query_id", "doc_id"]))
    with pytest.raises(IngestError, match="score nan is not finite"):
        ev.evaluate({"1": {"a": float("nan")}})
    with pytest.raises(IngestError, match="grade 1.5 is not an integer"):
        Evaluator({"1": {"a": 1.5}}, ["AP"])
    with pytest.raises(IngestError, match="expected a dict"):
        Evaluator(42, ["AP"])


def test_output_shapes(stored):
    pd = pytest.importorskip("pandas")
    res = evalstore.evaluate(QRELS, RUNS[:2], ["AP", "nDCG@10"])
    assert repr(res).startswith("<EvalResult qrels='qrels': 2 run(s) x ") and len(repr(res)) < 200
    wide = res.to_df()
    assert list(wide.columns) == ["run", "topic", "AP", "nDCG@10"] and len(wide) == len(res.per_topic) // 2
    long = res.to_df(wide=False)
    assert list(long.columns) == ["run", "topic", "metric", "value"] and len(long) == len(res.per_topic)
    means = res.to_df(means=True)
    assert means.set_index("run").loc[res.means[0][0], "AP"] == res.means[0][2]
    assert res.to_arrow().num_rows == len(res.per_topic) and res.to_arrow(means=True).num_rows == 4
    q = stored.sql("SELECT run, count(*) AS n FROM run_rows GROUP BY run ORDER BY run")
    assert isinstance(q.df(), pd.DataFrame) and q.arrow().column_names == ["run", "n"]
    assert "row(s)" in repr(q)
    if importlib.util.find_spec("polars") is not None:  # pandas (now in the test extra) does not bring polars
        assert q.pl().shape == (len(q), 2)


def test_result_leaves_out_runs_sharing_no_topic():
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}}
    runs = {"x": {"q1": {"b": 2.0, "a": 1.0}}, "y": {"z9": {"a": 1.0}}}
    res = evalstore.evaluate(qrels, runs, ["AP"])
    assert res.table() == {"x": {"AP": 0.5}}  # a relevant at rank 2 of q1
    assert res.notes == ["left out 1 run(s) that share no topic with qrels 'qrels': y"]
    with pytest.raises(MetricError, match=r"no run \(y\) shares a topic with qrels qrels"):
        evalstore.evaluate(qrels, {"y": runs["y"]}, ["AP"])


def test_topics_are_the_qrels_topics_in_byte_order_made_on_first_read():
    qrels = {"b": {"d": 1}, "a": {"x": 0}, "\u00c4": {"d": 1}, "Z": {"d": 2}}
    ev = Evaluator(qrels, ["AP"])
    assert "topics" not in vars(ev)  # no Python string per topic until asked
    assert ev.topics == ["Z", "a", "b", "\u00c4"]  # UTF-8 byte order, as the store sorts topics
    assert ev.result({"r": {"a": {"x": 1.0}, "b": {"d": 2.0}}}).means == [("r", "AP", 0.5, 2)]


def test_results_list_runs_in_the_order_asked(sample_db):
    """Per-topic rows and means come run by run in the order the runs were asked for (by name when
    none were named), in the store and in memory alike: one builder (result.result_of_rows)."""
    asked = ["rerank", "bm25", "dense"]
    with evalstore.open(sample_db) as s:
        stored = s.evaluate("sample", asked, ["AP", "P@5"], save=False)
        everything = s.evaluate("sample", None, ["AP"], save=False)
    runs_in = lambda rows: list(dict.fromkeys(r[0] for r in rows))  # noqa: E731
    assert runs_in(stored.per_topic) == runs_in(stored.means) == asked
    assert runs_in(everything.per_topic) == sorted(runs_in(everything.per_topic))
    ev = Evaluator(SAMPLE / "qrels.txt", ["AP", "P@5"])
    memory = ev.result({name: SAMPLE / "runs" / f"{name}.txt" for name in asked}, qrels_name="sample")
    assert runs_in(memory.per_topic) == runs_in(memory.means) == asked
    assert [r[:3] for r in memory.per_topic] == [r[:3] for r in stored.per_topic]
    assert [r[3] for r in memory.per_topic] == pytest.approx([r[3] for r in stored.per_topic], abs=1e-15)


def test_an_empty_run_gives_nothing_as_pytrec_eval():
    """`Evaluator.evaluate({})` raised "run 'run' is empty"; pytrec_eval's evaluate({}) returns {}
    (a training loop's empty batch); with complete=True every topic scores 0 (issue 44.10)."""
    import pytrec_eval

    qrels = {"q1": {"d1": 2, "d2": 0}, "q2": {"d3": 1}}
    ev = evalstore.Evaluator(qrels, ["AP", "nDCG@10"])
    assert ev.evaluate({}) == pytrec_eval.RelevanceEvaluator(qrels, {"map", "ndcg_cut_10"}).evaluate({}) == {}
    assert ev.evaluate_many({"a": {}, "b": {"q1": {"d1": 1.0}}}) == {"a": {}, "b": {"q1": {"AP": 1.0, "nDCG@10": 1.0}}}
    assert evalstore.Evaluator(qrels, ["AP"], complete=True).evaluate({}) == {"q1": {"AP": 0.0}, "q2": {"AP": 0.0}}


def _nested_row_by_row(rows, names, by_key):
    out = {n: {} for n in names}
    for run_id, topic, key, value in zip(*(c.to_pylist() for c in rows.columns)):
        for disp in by_key[key]:
            out[names[run_id - 1]].setdefault(topic, {})[disp] = value
    return out


@pytest.mark.parametrize("uneven", [False, True])
def test_nested_results_equal_the_rows_one_by_one(uneven):
    """Evaluator.evaluate's dicts: every key of a run on the same topics (the dict of each topic at
    once), or some key on fewer topics (a measure of one's own): both as the rows one by one, the
    topics in byte order, a key shown under each of its names."""
    rows = [(2, "q2", "ap", 0.5), (1, "q10", "p", 0.25), (1, "q2", "ap", 1.0), (1, "q10", "ap", 0.125),
            (1, "q2", "p", 0.0), (2, "q2", "p", None), (2, "q1", "ap", 0.75), (2, "q1", "p", 1.0)]  # fmt: skip
    if uneven:
        rows = [r for r in rows if r[1:3] != ("q1", "p")]
    table = pa.table({k: list(v) for k, v in zip(("run_id", "topic", "key", "value"), zip(*rows))})
    table = table.cast(pa.schema([("run_id", pa.int32()), ("topic", pa.string()), ("key", pa.string()),
                                  ("value", pa.float64())]))  # fmt: skip
    by_key = {"ap": ["AP", "map"], "p": ["P@10"]}
    got = nested(table, ["a", "b", "c"], by_key)
    assert got == _nested_row_by_row(table, ["a", "b", "c"], by_key)
    assert list(got["a"]) == ["q10", "q2"] and got["c"] == {}
    assert got["b"]["q2"] == {"AP": 0.5, "map": 0.5, "P@10": None}


# --------------------------------------------------------------------------- run files in batches, numpy path
_FILE_MEASURES = ["AP", "nDCG@10", "P@5", "RR", "R@100", "AP(rel=2)", "nDCG", "P(rel=2)@10", "R@5"]


def _files_qrels(rnd: random.Random, topics: int) -> dict[str, dict[str, int]]:
    return {f"t{t:03d}": {f"d{d}": rnd.choice([-1, 0, 0, 1, 2, 3]) for d in rnd.sample(range(40), 12)}
            for t in range(topics)}  # fmt: skip


def _files_run(rnd: random.Random, topics: int) -> dict[str, dict[str, float]]:
    return {f"t{t:03d}": {f"d{d}": float(rnd.choice([0.5, 1.0, rnd.random()])) for d in rnd.sample(range(40), 20)}
            for t in range(topics)}  # fmt: skip


@pytest.mark.parametrize("order", ["sorted", "shuffled"])
def test_numpy_path_equals_the_sql_path_on_files_in_many_batches(monkeypatch, tmp_path, order):
    """Run files read in batches of a few lines, against qrels of many more topics than a batch has
    (each batch's topics looked up in the qrels' by the batch's own, the judged docnos of its
    topics marked, not hashed), topics in the qrels' order or not, some not judged, one run that
    shares no topic: the same rows as the SQL's."""
    rnd = random.Random(3)
    qrels, run = _files_qrels(rnd, 60), _files_run(rnd, 40)
    run.update({f"u{t}": {"d1": 1.0, "d2": 0.5} for t in range(5)})  # topics the qrels do not judge
    topics = sorted(run) if order == "sorted" else rnd.sample(sorted(run), len(run))
    path, other = tmp_path / "run.txt", tmp_path / "other.txt"
    path.write_text("".join(f"{t} Q0 {d} 0 {s!r} tag\n" for t in topics for d, s in run[t].items()))
    other.write_text("zz Q0 d1 1 1.0 other\n")
    monkeypatch.setattr(blocks, "BLOCK_BYTES", 600)  # parts of a few topics
    monkeypatch.setattr(in_memory, "BATCH_LINES", 50)
    batches = list(read_runs([path, other], "trec", batch_lines=50))
    assert len(batches) > 5 and all(len(b) > 1 for b in batches[:-1])
    fast = Evaluator(qrels, _FILE_MEASURES)
    monkeypatch.setattr(in_memory, "numpy_measures", lambda *a: None)  # the SQL path
    slow = Evaluator(qrels, _FILE_MEASURES)
    assert fast._index is not None and slow._index is None
    a, b = fast.result_files([path, other]), slow.result_files([path, other])
    assert a.scores().equals(b.scores()) and a.means == b.means and a.notes == b.notes
    assert len(a.per_topic) == len(set(run) & set(qrels)) * len(a.metrics)


def test_positions_and_distinct():
    of = pa.array(["a", "c", "e", "g", "i", "k"])
    for values in (["c", "x", "i"], ["e", "g", "z"], ["a"], ["b", "d"], [], ["k", "a", "c", "e", "g", "i", "q"]):
        want = [["a", "c", "e", "g", "i", "k"].index(v) if v in "acegik" else -1 for v in values]
        for ascending in (False, True):
            got = numpy_measures.positions(pa.array(values, pa.string()), of, ascending)
            assert got.tolist() == want, (values, ascending)
    codes = np.array([5, 1, 5, 3, 1, 0])
    assert numpy_measures.distinct(codes, 6).tolist() == [0, 1, 3, 5] == numpy_measures.distinct(codes, 1000).tolist()
    assert numpy_measures.distinct(np.zeros(0, np.int64), 10).tolist() == []


def test_the_numpy_path_opens_no_database_of_its_own(monkeypatch, tmp_path):
    """The numpy measures run no statement: the Evaluator takes DuckDB's logarithms on the
    process-wide database that shapes the results (one database a command, not two)."""
    rnd = random.Random(5)
    qrels, run = _files_qrels(rnd, 10), _files_run(rnd, 10)
    monkeypatch.setattr(in_memory, "_cursor", lambda *a, **k: pytest.fail("a database of its own"))
    ev = Evaluator(qrels, _FILE_MEASURES, threads=2, memory_limit="1GB")
    assert ev._index is not None
    assert ev.evaluate(run) == Evaluator(qrels, _FILE_MEASURES).evaluate(run)
    ev.close()
