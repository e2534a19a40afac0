"""Runs and qrels given as Python objects (evalstore/ingest/sources.py): names that a run or qrels
file could not hold as one field are refused at ingest, as the file readers refuse them."""

from __future__ import annotations

import pyarrow as pa
import pytest

import evalstore
from evalstore.errors import IngestError


@pytest.mark.parametrize(
    "run, says",
    [
        ({"q1": {"d 1": 1.0}}, "doc 'd 1' holds a blank"),
        ({"q1": {"d\t1": 1.0}}, "doc 'd\\t1' holds a blank"),
        ({"q1": {"d\n1": 1.0}}, "doc 'd\\n1' holds a blank"),
        ({"q1": {"d\r": 1.0}}, "holds a blank"),
        ({"q1": {"d\x00": 1.0}}, "control character"),
        ({"q 1": {"d1": 1.0}}, "topic 'q 1' holds a blank"),
        ({"": {"d1": 1.0}}, "topic '' is empty"),
        ({"q1": {"": 1.0}}, "doc '' is empty"),
        (pa.table({"query_id": ["q1"], "doc_id": ["a b"], "score": [1.0]}), "doc 'a b' holds a blank"),
    ],
)
def test_names_a_file_could_not_hold_are_refused(run, says):
    # issue 39.6: such a run was stored, and `export run` wrote a file that read back as other documents
    with evalstore.open(":memory:") as s:
        with pytest.raises(IngestError, match=says.replace("\\", "\\\\").replace("(", r"\(")):
            s.ingest_run(run, name="r", progress=False)
        if isinstance(run, dict):
            qrels = {k: {d: 1 for d in v} for k, v in run.items()}
        else:
            qrels = pa.table({"query_id": ["q1"], "doc_id": ["a b"], "relevance": [1]})
        with pytest.raises(IngestError, match="holds a blank|is empty"):
            s.ingest_qrels(qrels, name="q", progress=False)
        assert s.run_names() == [] and s.qrels_names() == []


def test_a_run_from_a_dict_exports_and_reads_back_the_same(tmp_path):
    run = {"q1": {"d1": 2.0, "d-2": 1.5, "d\u00e9": 1.0}, "q2": {"x:1": 0.5}}
    out = tmp_path / "r.txt"
    with evalstore.open(":memory:") as s:
        s.ingest_run(run, name="r", progress=False)
        s.export_run("r", out)
        s.ingest_run(out, name="back", progress=False)
        rows = "SELECT topic, doc, score FROM run_rows WHERE run = ? ORDER BY ALL"
        assert s.sql(rows, ["r"]).rows == s.sql(rows, ["back"]).rows


@pytest.mark.parametrize(
    "values",
    [
        ["d1", "dé", "日本", "x" * 300],
        ["d1", "d 1"],
        ["d1", ""],
        ["a\x7f"],
        ["a\x1fb", "c"],
        ["\u00a0"],  # a no-break space: two bytes above 0x7f, one field for the file readers
    ],
)
def test_the_byte_scan_of_fields_agrees_with_the_expression(values):
    """_surely_one_field (one scan of the bytes) says clean exactly where the expression finds
    nothing; on a slice it may say unsure (the buffer holds other values), never clean wrongly."""
    import pyarrow.compute as pc

    from evalstore.ingest import sources

    arr = pa.array(values, pa.string())
    bad = pc.or_(pc.equal(pc.utf8_length(arr), 0), pc.match_substring_regex(arr, sources._NOT_IN_A_FIELD))
    assert sources._surely_one_field(arr) == (not pc.any(bad).as_py())
    assert sources._surely_one_field(pa.chunked_array([arr, arr])) == (not pc.any(bad).as_py())
    tail = pa.array(["ok", *values], pa.string()).slice(0, 1)  # clean slice of a buffer with the values
    assert sources._surely_one_field(tail) in (True, not pc.any(bad).as_py())


@pytest.mark.parametrize(
    "scores",
    [
        pa.array([1.5, 0.25, 2.0], pa.float64()),
        pa.array([1.5, 0.25, 2.0], pa.float32()),
        pa.array([3, 1, 2], pa.int64()),
        pa.array([3, 1, 2], pa.int8()),
        pa.array([2**53 + 1, 1, 2], pa.int64()),  # not a double exactly: one by one, as before
    ],
)
def test_numeric_score_columns_read_in_arrow_as_one_by_one(scores):
    """A table's numeric score column is cast in Arrow to the doubles the values one by one give."""
    from evalstore.ingest import sources

    table = pa.table({"query_id": ["q", "q", "q"], "doc_id": ["a", "b", "c"], "score": scores})
    got = sources.run_table(table).column("score")
    assert got.to_pylist() == [float(v) for v in scores.to_pylist()]


@pytest.mark.parametrize("scores", [[1.0, None, 2.0], [1.0, float("nan"), 2.0], [float("inf"), 1.0, 2.0]])
def test_score_columns_with_nulls_or_not_finite_are_refused(scores):
    from evalstore.ingest import sources

    table = pa.table({"query_id": ["q", "q", "q"], "doc_id": ["a", "b", "c"], "score": pa.array(scores, pa.float64())})
    with pytest.raises(IngestError, match="score"):
        sources.run_table(table)
