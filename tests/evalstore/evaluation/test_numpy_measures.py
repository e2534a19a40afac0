"""The numpy path of the Evaluator (evaluation/numpy_measures.py) gives the SQL path's numbers bit
for bit: runs with tied scores, unjudged and negatively graded documents, topics with no relevant
document, topics the qrels lack, cutoffs beyond the lists, several runs, files; and it is taken
only for the measures and options it knows."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

import evalstore
from evalstore.evaluation import in_memory
from evalstore.evaluation.in_memory import Evaluator

MEASURES = ["AP", "nDCG@10", "nDCG", "P@5", "P@200", "R@3", "R@100", "RR", "RR@2", "AP@4", "map", "ndcg_cut_10",
            "P(rel=2)@10", "AP(rel=2)", "recip_rank", "nDCG@1000"]  # fmt: skip


def _qrels(rnd: random.Random, topics: int) -> dict[str, dict[str, int]]:
    out = {}
    for t in range(topics):
        grades = [-1, 0, 0, 1, 2, 3] if t % 7 else [0, 0, -1]  # every 7th topic: nothing relevant
        out[f"t{t}"] = {f"d{d}": rnd.choice(grades) for d in rnd.sample(range(60), rnd.randint(1, 30))}
    return out


def _run(rnd: random.Random, topics: int) -> dict[str, dict[str, float]]:
    out = {}
    for t in range(topics + 3):  # three topics the qrels lack
        if t % 11 == 5:
            continue  # a qrels topic the run lacks
        docs = rnd.sample(range(80), rnd.randint(1, 50))
        # few distinct scores: many ties, ordered by docno (descending, byte-wise: d9 > d10)
        out[f"t{t}"] = {f"d{d}": float(rnd.choice([0.5, 1.0, 1.5, 2.0, rnd.random()])) for d in docs}
    return out


def _sql_path(monkeypatch, qrels, metrics, **kw) -> Evaluator:
    with monkeypatch.context() as m:
        m.setattr(in_memory, "numpy_measures", lambda *a: None)
        ev = Evaluator(qrels, metrics, **kw)
    assert ev._index is None
    return ev


@pytest.mark.parametrize("seed", range(6))
def test_numpy_path_equals_the_sql_path_bit_for_bit(monkeypatch, seed):
    rnd = random.Random(seed)
    qrels, run = _qrels(rnd, 25), _run(rnd, 25)
    fast = Evaluator(qrels, MEASURES)
    assert fast._index is not None
    slow = _sql_path(monkeypatch, qrels, MEASURES)
    got, want = fast.evaluate(run), slow.evaluate(run)
    assert got == want  # the same topics, measures and floats, bit for bit
    assert set(got) == set(run) & set(qrels)
    other = _run(rnd, 25)
    assert fast.evaluate_many({"a": run, "b": other}) == slow.evaluate_many({"a": run, "b": other})
    a, b = fast.result({"a": run, "b": other}), slow.result({"a": run, "b": other})
    assert a.scores().equals(b.scores()) and a.means == b.means


def test_numpy_path_equals_the_sql_path_on_files_and_tables(monkeypatch, tmp_path):
    rnd = random.Random(42)
    qrels, run = _qrels(rnd, 30), _run(rnd, 30)
    path = tmp_path / "run.txt"
    lines = [f"{t} Q0 {d} 0 {s!r} tag" for t, docs in run.items() for d, s in docs.items()]
    path.write_text("\n".join(lines) + "\n")
    fast, slow = Evaluator(qrels, MEASURES), _sql_path(monkeypatch, qrels, MEASURES)
    a, b = fast.result_files([path]), slow.result_files([path])
    assert a.scores().equals(b.scores()) and a.means == b.means and len(a.per_topic) == 27 * len(a.metrics)
    table = pa.table({"query_id": [t for t, ds in run.items() for _ in ds],
                      "doc_id": [d for ds in run.values() for d in ds],
                      "score": [s for ds in run.values() for s in ds.values()]})  # fmt: skip
    assert fast.evaluate(table) == slow.evaluate(table) == fast.evaluate(run)


def test_numpy_path_agrees_with_pytrec_eval():
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rnd = random.Random(7)
    qrels = {t: {d: max(g, 0) for d, g in ds.items()} for t, ds in _qrels(rnd, 40).items()}
    run = _run(rnd, 40)
    got = Evaluator(qrels, ["AP", "nDCG@10", "P@5", "RR", "R@100"]).evaluate(run)
    want = pytrec_eval.RelevanceEvaluator(qrels, {"map", "ndcg_cut", "P", "recip_rank", "recall"}).evaluate(run)
    assert set(got) == set(want)
    for t in want:
        for ours, theirs in (("AP", "map"), ("nDCG@10", "ndcg_cut_10"), ("P@5", "P_5"), ("RR", "recip_rank"),
                             ("R@100", "recall_100")):  # fmt: skip
            assert got[t][ours] == pytest.approx(want[t][theirs], abs=1e-12), (t, ours)


@pytest.mark.parametrize(
    ("metrics", "kw"),
    [
        (["AP", "Bpref"], {}),  # a measure the numpy path does not compute
        (["AP"], {"complete": True}),
        (["AP"], {"depth": 10}),
        (["nDCG@10"], {"gains": "0,1,3,7"}),
        (["AP"], {"convention": "ntcireval"}),
        (["nDCG(dcg=exp-log2)@10"], {}),
        (["AP(judged_only=true)"], {}),
    ],
)
def test_numpy_path_is_taken_only_for_what_it_computes(metrics, kw):
    qrels = {"t1": {"a": 1, "b": 0, "c": 3}}
    ev = Evaluator(qrels, metrics, **kw)
    assert ev._index is None
    assert Evaluator(qrels, ["AP", "nDCG@10"])._index is not None


def test_empty_run_and_run_without_shared_topics():
    ev = Evaluator({"t1": {"a": 1}}, ["AP", "nDCG@10"])
    assert ev.evaluate({}) == {}
    assert ev.evaluate({"x": {"a": 1.0}}) == {}
    assert ev.evaluate({"t1": {"z": 1.0}}) == {"t1": {"AP": 0.0, "nDCG@10": 0.0}}
    with pytest.raises(evalstore.IngestError):
        ev.evaluate(pa.table({"topic": ["t1", "t1"], "doc": ["a", "a"], "score": [1.0, 2.0]}))


@pytest.mark.parametrize(
    "topics",
    [["a", "a", "b", "c", "c"], ["a", "b", "a"], ["x"], [], ["b", "b", "a", "a", "b"]],
)
def test_topic_codes_code_rows_as_a_dictionary_encoding_does(topics):
    """Rows in blocks of one topic each are coded by their blocks; a topic in two blocks makes a
    dictionary encoding: either way each row's code names its topic and the topics are distinct
    (run_scores codes a run's topics with the fast reader's :func:`topic_blocks`)."""
    from evalstore.ingest.fast import topic_blocks

    coded = topic_blocks(pa.array(topics, pa.string()))
    codes, names = coded.indices.to_numpy(), coded.dictionary
    assert [names[int(c)].as_py() for c in codes] == topics
    assert sorted(names.to_pylist()) == sorted(set(topics))


@pytest.mark.parametrize("grades", [[1, 0, 2], [1, True], [1, 2.0], [1, "2"], [2**31], [-(2**31) + 1, 2**31 - 1]])
def test_qrels_grades_read_in_one_conversion_or_one_by_one_alike(grades):
    """Integer grades are read in one conversion; anything else one by one, as before."""
    from evalstore.ingest import sources

    try:
        want = pa.array([int(g) for g in grades], pa.int32())
        assert not any(isinstance(g, bool) for g in grades)
    except (OverflowError, AssertionError, pa.ArrowInvalid):
        with pytest.raises(evalstore.IngestError):
            sources._ints(grades, "qrels")
        return
    assert sources._ints(grades, "qrels").equals(want)


def test_numpy_path_with_topic_and_docno_codes_beyond_32_bits(monkeypatch):
    """(topic code x docnos + docno code) passes 2^31 with 50,000 topics of a docno each: the keys
    are 64-bit (a 32-bit product wrapped around and found other topics' documents)."""
    n = 50_000
    qrels = pa.table({"topic": [f"t{i}" for i in range(n)], "doc": [f"d{i}" for i in range(n)],
                      "grade": [1 + i % 2 for i in range(n)]})  # fmt: skip
    run = {f"t{i}": {f"d{i}": 1.0, f"d{i + 1}": 2.0, "x": 0.5} for i in range(n - 40, n)}
    fast, slow = Evaluator(qrels, MEASURES), _sql_path(monkeypatch, qrels, MEASURES)
    got = fast.evaluate(run)
    assert got == slow.evaluate(run) and got["t49999"]["AP"] == 0.5


def test_numpy_path_on_a_file_read_in_many_parts(monkeypatch, tmp_path):
    """A run file read in parts of a few topics, batches of several parts: each run's parts are
    evaluated together, with the SQL path's numbers."""
    from evalstore.ingest import blocks

    rnd = random.Random(3)
    qrels, run = _qrels(rnd, 60), _run(rnd, 60)
    path = tmp_path / "run.txt"
    path.write_text("".join(f"{t} Q0 {d} 0 {s!r} tag\n" for t, docs in run.items() for d, s in docs.items()))
    fast, slow = Evaluator(qrels, MEASURES), _sql_path(monkeypatch, qrels, MEASURES)
    monkeypatch.setattr(blocks, "BLOCK_BYTES", 2_000)
    a, b = fast.result_files([path]), slow.result_files([path])
    assert a.scores().equals(b.scores()) and a.means == b.means


@pytest.mark.parametrize("qrels_as", ["dict", "table", "int keys"])
@pytest.mark.parametrize("seed", range(3))
def test_dicts_narrowed_from_the_dicts_score_as_tables_and_sql(monkeypatch, seed, qrels_as):
    """result() of runs given as dicts takes their judged rows straight from the dicts
    (ingest/dict_runs.py): the numbers of the same runs as tables and of the SQL path, bit for bit,
    with ties, empty topics, topics only in the qrels or only in the run, negative grades, and ints,
    floats and numpy scalars as scores; the qrels as a dict of str keys (their docnos used as given),
    a table or a dict of other keys (the judged docnos made from the table)."""
    import numpy as np

    from evalstore.ingest import dict_runs

    monkeypatch.setattr(dict_runs, "MIN_ROWS", 0)  # (small runs take the general path by default)
    rnd = random.Random(seed)
    qrels, run, other = _qrels(rnd, 25), _run(rnd, 25), _run(rnd, 25)
    run["t2"] = {}  # a topic with no rows
    other = {t: {d: (np.float32(s) if i % 3 else int(s * 4)) for i, (d, s) in enumerate(ds.items())}
             for t, ds in other.items()}  # fmt: skip
    given: object = qrels
    if qrels_as == "table":
        given = pa.table({"topic": [t for t, ds in qrels.items() for _ in ds],
                          "doc": [d for ds in qrels.values() for d in ds],
                          "grade": [g for ds in qrels.values() for g in ds.values()]})  # fmt: skip
    elif qrels_as == "int keys":
        given = {int(t[1:]): ds for t, ds in qrels.items()}
        run, other = ({t[1:]: ds for t, ds in r.items()} for r in (run, other))
    runs = {"a": run, "b": other}
    real, taken = in_memory.dict_parts, []
    monkeypatch.setattr(in_memory, "dict_parts", lambda *a: taken.append(real(*a)) or taken[-1])
    fast = Evaluator(given, MEASURES).result(runs)
    assert taken and taken[0] is not None
    monkeypatch.setattr(in_memory, "dict_parts", lambda *a: None)
    tables = Evaluator(given, MEASURES).result(runs)
    slow = _sql_path(monkeypatch, given, MEASURES).result(runs)
    assert fast.scores().equals(tables.scores()) and fast.scores().equals(slow.scores())
    assert fast.means == tables.means == slow.means and fast.notes == slow.notes


def test_dicts_the_fast_path_declines_are_read_as_before(monkeypatch):
    """A docno a file could not hold, or a score that is not a number: the same error as before;
    keys that are not strings: converted, as before."""
    from evalstore.ingest import dict_runs

    monkeypatch.setattr(dict_runs, "MIN_ROWS", 0)
    ev = Evaluator({"t1": {"a": 1, "b": 0}}, ["AP", "nDCG@10"])
    with pytest.raises(evalstore.IngestError, match="holds a blank"):
        ev.result({"r": {"t1": {"a b": 1.0}}})
    with pytest.raises(evalstore.IngestError, match="is not a number"):
        ev.result({"r": {"t1": {"a": "1.5"}}})
    with pytest.raises(evalstore.IngestError, match="not finite"):
        ev.result({"r": {"t1": {"a": float("inf")}}})
    got = ev.result({"r": {"t1": {"a": 1.0, 7: 2.0}}})
    assert got.mean("r", "AP") == 0.5
