"""The Parquet layout of a store: export, import into a new store, every relation equal."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
from support import SAMPLE

import evalstore
from evalstore.layout import export_store, import_store
from evalstore.subsample import create_subsamples

VIEWS = {
    "runs": "SELECT * FROM runs ORDER BY name",
    "qrels_sets": "SELECT * FROM qrels_sets ORDER BY name",
    "run_rows": "SELECT * FROM run_rows ORDER BY run, topic, rank",
    "qrels": "SELECT * FROM qrels ORDER BY qrels, topic, doc",
    "scores": "SELECT * FROM scores ORDER BY ALL",
    "leaderboard": "SELECT * FROM leaderboard ORDER BY ALL",
    "subsamples": "SELECT * FROM subsamples ORDER BY ALL",
    "evaluations": "SELECT * EXCLUDE (run_id, qrels_id) FROM evaluations ORDER BY ALL",
}


def test_export_import_round_trip(tmp_path):
    with evalstore.open(tmp_path / "a.duckdb") as a:
        a.ingest_qrels(SAMPLE / "qrels.txt", name="q", gains="1:3:7", progress=False)
        a.ingest_run(sorted((SAMPLE / "runs").glob("*.txt")), progress=False)
        a.ingest_run({"S01": {"x": 1.0, "y": 1.0}}, name="from a dict", progress=False)
        create_subsamples(a, "q", "0.5", trials=2, seed=3)
        a.evaluate("q", None, ["AP", "nDCG@10", "P-plus"])
        a.evaluate("q@bv0.5#1", None, ["AP"])
        manifest = export_store(a, tmp_path / "layout")
        before = {k: a.sql(q).rows for k, q in VIEWS.items()}
    assert json.loads((tmp_path / "layout" / "manifest.json").read_text()) == manifest
    assert {r["name"] for r in manifest["runs"]} == {r[0] for r in before["runs"]}
    part = pq.read_table(tmp_path / "layout" / "runs" / "run=bm25")
    assert set(part.column_names) >= {"topic", "doc", "rank", "score", "line_no"}
    with evalstore.open(tmp_path / "b.duckdb") as b:
        assert import_store(b, tmp_path / "layout") == {"runs": len(before["runs"]), "qrels": 3}
        after = {k: b.sql(q).rows for k, q in VIEWS.items()}
        with pytest.raises(evalstore.StoreError, match="already has"):
            import_store(b, tmp_path / "layout")
    for k in VIEWS:
        assert after[k] == before[k], k
    assert len(before["scores"]) > 100 and len(before["subsamples"]) == 2
    with evalstore.open(tmp_path / "a.duckdb") as a, pytest.raises(evalstore.StoreError, match="not empty"):
        export_store(a, tmp_path / "layout")


def test_runs_written_by_another_tool_get_their_rank(tmp_path):
    """A tool may write runs straight into the layout without ranks: import computes trec_eval's order."""
    import pyarrow as pa

    with evalstore.open(tmp_path / "a.duckdb") as a:
        a.ingest_qrels(SAMPLE / "qrels.txt", name="q", progress=False)
        a.ingest_run(sorted((SAMPLE / "runs").glob("*.txt"))[0], name="r", progress=False)
        export_store(a, tmp_path / "layout")
        ref = a.evaluate("q", ["r"], ["AP"], save=False).mean("r", "AP")
    part = next((tmp_path / "layout" / "runs" / "run=r").glob("*.parquet"))
    t = pq.read_table(part)
    pq.write_table(t.set_column(t.column_names.index("rank"), "rank", pa.nulls(t.num_rows, pa.int32())), part)
    with evalstore.open(tmp_path / "b.duckdb") as b:
        import_store(b, tmp_path / "layout")
        assert b.evaluate("q", ["r"], ["AP"], save=False).mean("r", "AP") == ref


def test_a_store_of_answers_travels_with_its_scores(rag_store, tmp_path):
    """Generated answers: the runs (kind answers, their references), the assignment and support
    sets (their kinds) and every score; no integer id (an assignment set's nugget set) leaves."""
    rag_store.evaluate("manual", None, ["strict_vital", "vital"])
    rag_store.evaluate("support.manual", None, ["support_precision"])
    export_store(rag_store, tmp_path / "layout")
    assert "nuggets_id" not in pq.read_schema(tmp_path / "layout" / "qrels_meta.parquet").names
    with evalstore.open(tmp_path / "copy.duckdb") as copy:
        import_store(copy, tmp_path / "layout")
        query = "SELECT run, qrels, metric, topic, value FROM scores ORDER BY ALL"
        assert copy.sql(query).rows == rag_store.sql(query).rows
        assert copy.sql("SELECT name, kind FROM runs ORDER BY ALL").rows == rag_store.sql(
            "SELECT name, kind FROM runs ORDER BY ALL").rows  # fmt: skip
        kinds = dict(copy.sql("SELECT name, kind FROM qrels_sets").rows)
        assert kinds["manual"] == "nuggets" and kinds["support.manual"] == "support"
