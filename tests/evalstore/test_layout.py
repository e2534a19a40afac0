"""The Parquet layout of a store: export, import into a new store, every relation equal."""

from __future__ import annotations

import json
import re
import shutil

import pyarrow.parquet as pq
import pytest
from support import SAMPLE

import evalstore
from evalstore.cli.demo import ingest_rag_sample
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
        added = import_store(b, tmp_path / "layout")
        assert added == {"runs": len(before["runs"]), "qrels": 3, "topics": 0, "docs": 0, "analyses": 0}
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
    # such a tool writes a layout of version 1 (no list of files with their hashes)
    manifest = json.loads((tmp_path / "layout" / "manifest.json").read_text())
    manifest["layout_version"] = 1
    del manifest["files"]
    (tmp_path / "layout" / "manifest.json").write_text(json.dumps(manifest))
    with evalstore.open(tmp_path / "b.duckdb") as b:
        import_store(b, tmp_path / "layout")
        assert b.evaluate("q", ["r"], ["AP"], save=False).mean("r", "AP") == ref


# --------------------------------------------------------------------------- everything a store holds
def _rich_store(path, tmp_path):
    """A store with something in every table: runs, a fused run, graded and diversity qrels with
    declared gains and intent probabilities, subsamples, topics, docs, scores, intervals, rank
    intervals and analyses (Kendall, judges' agreement, a comparison)."""
    from evalstore.meta import kendall

    (tmp_path / "topics.tsv").write_text("S01\tfirst query\nS02\tsecond query\n")
    (tmp_path / "docs.tsv").write_text("doc-S01-001\tsome text\ndoc-S01-002\tmore text\n")
    (tmp_path / "div.txt").write_text("S01 1 doc-S01-001 1\nS01 2 doc-S01-002 1\nS02 1 doc-S02-001 2\n")
    (tmp_path / "probs.txt").write_text("S01 1 0.7\nS01 2 0.3\n")
    s = evalstore.open(path)
    s.ingest_qrels(SAMPLE / "qrels.txt", name="q", gains="1:3:7", progress=False)
    s.ingest_qrels(SAMPLE / "qrels.judge.txt", name="judge", progress=False)
    s.ingest_qrels(tmp_path / "div.txt", name="div", format="subtopic", intent_probs=tmp_path / "probs.txt",
                   progress=False)  # fmt: skip
    s.ingest_run(sorted((SAMPLE / "runs").glob("*.txt")), progress=False)
    s.fuse(["bm25", "rerank"], "rrf", name="fused")
    s.ingest_topics(tmp_path / "topics.tsv")
    s.ingest_docs(tmp_path / "docs.tsv")
    create_subsamples(s, "q", "0.5", trials=1, seed=3)
    s.evaluate("q", None, ["AP", "nDCG@10"], ci="bootstrap", rank_ci="bootstrap", trials=200)
    s.evaluate("div", None, ["alpha_nDCG@10"])
    kendall(s, "q", ["AP", "nDCG@10"])
    s.agree("q", "judge", ["AP"], rel=1)
    s.compare("q", "bm25", None, ["AP"])
    # lines of two shapes: the store keeps the file's text (run_text_data) to give it back
    (tmp_path / "mixed.txt").write_text("S01 Q0 doc-S01-001 1 2.5 mixed\nS01\tQ0\tdoc-S01-002\t2\t1.25\tmixed\n")
    s.ingest_run(tmp_path / "mixed.txt", name="mixed", progress=False)
    ingest_rag_sample(s)  # answers, nugget sets, assignment and support sets
    s.pool("p5", ["bm25", "rerank"], depth=5)  # a pool: its documents and which run brought them
    s.add_measure("judged_at_3", "SELECT qrels, run, topic, avg((grade IS NOT NULL)::INT) AS value "
                  "FROM ranked WHERE rank <= 3 GROUP BY ALL")  # fmt: skip
    s.evaluate("q", ["bm25"], ["judged_at_3"])
    # (ingest dataset needs ir_datasets and its registry: its row is written as it would write it)
    s.con.execute("INSERT INTO dataset_meta (qrels_id, dataset, official_measures, measures_source) "
                  "SELECT qrels_id, 'local/test', ['AP'], 'test' FROM qrels_meta WHERE name = 'q'")  # fmt: skip
    return s


def _contents(s) -> dict[str, list]:
    """Every carried table as the layout holds it (ids as names; analysis ids left out)."""
    from evalstore.layout.tables import ANALYSIS_ID, carried_tables, export_query, layout_columns

    out = {}
    for table, columns in carried_tables(s.con).items():
        cols = [n for n, c in layout_columns(table, columns) if c != ANALYSIS_ID]
        q = f"SELECT {', '.join(f'x.{c}' for c in cols)} FROM ({export_query(table, columns)}) x ORDER BY ALL"
        out[table] = s.con.execute(q).fetchall()
    return out


def test_a_round_trip_carries_every_table(tmp_path):
    """Issue 39.9: the round trip lost fusion recipes, topics, docs and analyses."""
    with _rich_store(tmp_path / "a.duckdb", tmp_path) as a:
        manifest = export_store(a, tmp_path / "layout")
        before = _contents(a)
    # every table but the other analyses' (meta_*: carried by the same analysis_id rule) holds rows
    empty = [t for t, rows in before.items() if not rows and not t.startswith("meta_")]
    assert empty == [], f"the rich store leaves {empty} empty: the test would not see them carried"
    assert sum(bool(rows) for t, rows in before.items() if t.startswith("meta_")) >= 6
    with evalstore.open(tmp_path / "b.duckdb") as b:
        added = import_store(b, tmp_path / "layout")
        after = _contents(b)
        assert b.provenance("fused") is not None
    assert (
        added["analyses"] == manifest["analyses"] == 3 and added["topics"] == added["docs"] == 2
    )  # (+ the RAG sample's)
    for table in before:
        assert after[table] == before[table], table


def _layout(tmp_path):
    with evalstore.open(tmp_path / "a.duckdb") as a:
        a.ingest_qrels(SAMPLE / "qrels.txt", name="q", progress=False)
        a.ingest_run(sorted((SAMPLE / "runs").glob("*.txt"))[:2], progress=False)
        a.evaluate("q", None, ["AP"])
        export_store(a, tmp_path / "layout")
    return tmp_path / "layout"


@pytest.mark.parametrize(
    "manifest, says",
    [
        ("{not json", "is not valid JSON"),
        ("[1, 2]", "holds a JSON list, not an object"),
        ('{"layout_version": 7, "runs": [], "qrels": []}', "layout version 7"),
        ('{"layout_version": 1, "runs": {}, "qrels": []}', "'runs' is a list of objects"),
        ('{"layout_version": 1, "runs": [1], "qrels": []}', "runs[0] is not an object with a name"),
        ('{"layout_version": 1, "runs": [{"name": "r"}], "qrels": []}', "has no count 'n_rows'"),
        ('{"layout_version": 1, "runs": [], "qrels": [{"name": "q", "n_judged": -1, "n_topics": 1}]}', "n_judged"),
        ('{"layout_version": 2, "runs": [], "qrels": []}', "lists its files"),
        ('{"layout_version": 2, "runs": [], "qrels": [], "files": {"../x.parquet": {"sha256": "", "rows": 0}}}',
         "not a Parquet file inside the layout"),
    ],
)  # fmt: skip
def test_a_malformed_manifest_is_refused_with_what_is_wrong(tmp_path, manifest, says):
    # issue 39.9: exit 70 (JSONDecodeError, AttributeError, KeyError)
    layout = _layout(tmp_path)
    (layout / "manifest.json").write_text(manifest)
    with evalstore.open(tmp_path / "b.duckdb") as b:
        with pytest.raises(evalstore.StoreError, match=re.escape(says)):
            import_store(b, layout)
        assert b.run_names() == [] and b.qrels_names() == []


def _first_run(layout):
    return next(layout.glob("runs/run=*"))


@pytest.mark.parametrize(
    "damage, says",
    [
        (lambda layout: shutil.rmtree(layout / "qrels"), "missing: qrels/"),
        (lambda layout: shutil.rmtree(_first_run(layout)), "missing: runs/run="),
        (lambda layout: shutil.copy(layout / "scores.parquet", layout / "runs" / "extra.parquet"),
         "not listed: runs/extra.parquet"),
        (lambda layout: _flip_a_byte(layout / "scores.parquet"), "its sha256 differs"),
    ],
)  # fmt: skip
def test_a_layout_that_does_not_hold_what_its_manifest_says_is_refused(tmp_path, damage, says):
    # issue 39.9: a layout missing qrels/ or a run's partition imported with exit 0
    layout = _layout(tmp_path)
    damage(layout)
    with evalstore.open(tmp_path / "b.duckdb") as b:
        with pytest.raises(evalstore.StoreError, match=re.escape(says)):
            import_store(b, layout)
        assert b.run_names() == [] and b.qrels_names() == []


def _flip_a_byte(path):
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def test_a_version_1_layout_is_held_to_its_counts(tmp_path):
    """A layout without a list of files (version 1: earlier evalstores, other tools) is checked
    against the counts of its manifest once read."""
    layout = _layout(tmp_path)
    manifest = json.loads((layout / "manifest.json").read_text())
    manifest["layout_version"] = 1
    del manifest["files"]
    (layout / "manifest.json").write_text(json.dumps(manifest))
    shutil.rmtree(layout / "qrels")
    with evalstore.open(tmp_path / "b.duckdb") as b:
        with pytest.raises(
            evalstore.StoreError,
            match="qrels set 'q' should hold n_judged 480, n_topics 8 .* make n_judged 0, n_topics 0",
        ):
            import_store(b, layout)
        assert b.run_names() == [] and b.qrels_names() == []


def test_a_killed_export_leaves_nothing_in_the_way(tmp_path, monkeypatch):
    """Issue 39.10: a killed `export store` left a folder the retry refused ("not empty")."""
    from evalstore.layout import manifest as manifests

    def killed(*args, **kwargs):
        raise KeyboardInterrupt

    with evalstore.open(tmp_path / "a.duckdb") as a:
        a.ingest_qrels(SAMPLE / "qrels.txt", name="q", progress=False)
        monkeypatch.setattr(manifests, "build", killed)
        with pytest.raises(KeyboardInterrupt):
            export_store(a, tmp_path / "layout")
        assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("a.duckdb")) == []
        monkeypatch.undo()
        export_store(a, tmp_path / "layout")
    assert (tmp_path / "layout" / "manifest.json").exists()


def test_a_store_of_answers_travels_with_its_scores(rag_store, tmp_path):
    """Generated answers: the runs (unit answers, their references), the assignment and support
    sets (their kinds), the nugget sets and every score; no integer id (an assignment set's nugget
    set) leaves: it travels as the nugget set's name."""
    rag_store.evaluate("manual", None, ["strict_vital", "vital"])
    rag_store.evaluate("support.manual", None, ["support_precision"])
    export_store(rag_store, tmp_path / "layout")
    assert "nuggets_id" not in pq.read_schema(tmp_path / "layout" / "qrels_meta.parquet").names
    with evalstore.open(tmp_path / "copy.duckdb") as copy:
        import_store(copy, tmp_path / "layout")
        query = "SELECT run, qrels, metric, topic, value FROM scores ORDER BY ALL"
        assert copy.sql(query).rows == rag_store.sql(query).rows
        assert copy.sql("SELECT name, unit FROM runs ORDER BY ALL").rows == rag_store.sql(
            "SELECT name, unit FROM runs ORDER BY ALL").rows  # fmt: skip
        kinds = dict(copy.sql("SELECT name, kind FROM qrels_sets").rows)
        assert kinds["manual"] == "nuggets" and kinds["support.manual"] == "support"
        for view in ("nugget_assignments", "support_labels", "answer_sentences"):
            query = f"SELECT * FROM {view} ORDER BY ALL"
            assert copy.sql(query).rows == rag_store.sql(query).rows, view
