"""Fused runs in the store: the recipe kept with them (runs.recipe/fusion/stale, list runs, the
ir_metadata header), identity by content, stale inputs and --refresh, the options (depth, top,
ranks), the errors, and Pyserini's RRF on its two-run example."""

from __future__ import annotations

import json

import pytest
import yaml
from support import SAMPLE

import evalstore
from evalstore.errors import FusionError, NotFoundError
from evalstore.fusion import METHODS, NORMALIZATIONS, provenance


@pytest.fixture
def runs(store):
    store.ingest_run({"q1": {"a": 3.0, "b": 2.0, "c": 1.0}, "q2": {"a": 1.0, "d": 0.5}}, name="A")
    store.ingest_run({"q1": {"b": 9.0, "c": 8.0, "e": 7.0}, "q2": {"d": 4.0}}, name="B")
    store.ingest_run({"q1": {"c": 0.3, "a": 0.2}, "q3": {"x": 1.0}}, name="C")
    return store


def rows(store, run):
    return store.sql("SELECT topic, doc, rank, score FROM run_rows WHERE run = ? ORDER BY topic, rank", [run]).rows


def test_the_recipe_is_kept(runs):
    res = runs.fuse(["A", "B", "C"], "rrf", name="F", params={"k": 60})
    assert res.status == "added" and res.summary().startswith("run 'F' added")
    name, recipe, fusion, stale, metadata = runs.sql(
        "SELECT name, recipe, fusion, stale, metadata FROM runs WHERE name = 'F'"
    ).rows[0]
    assert recipe == "fused from A, B, C by RRF (k = 60)"
    assert stale is False
    f = json.loads(fusion)
    assert (f["method"], f["norm"], f["params"], f["depth"], f["ranks"]) == (
        "rrf",
        "none",
        {"k": 60},
        None,
        "evaluation",
    )
    shas = dict(runs.sql("SELECT name, sha256 FROM runs").rows)
    assert [(i["run"], i["sha256"]) for i in f["inputs"]] == [(r, shas[r]) for r in "ABC"]
    # the ir_metadata header describes the recipe; the JSON is the header's YAML
    header = runs.con.execute("SELECT metadata_header FROM run_meta WHERE name = 'F'").fetchall()[0][0]
    body = "\n".join(line[2:] for line in header.splitlines()[1:-1])
    assert yaml.safe_load(body) == json.loads(metadata)
    step = json.loads(metadata)["method"]["retrieval"][-1]
    assert step["fuses"] == ["A", "B", "C"] and step["k"] == 60 and step["name"] == "rrf"
    assert runs.sql("SELECT recipe, stale FROM runs WHERE name = 'A'").rows == [(None, None)]
    listed = runs.list_runs()
    made = dict((r[0], r[-1]) for r in listed.rows)
    assert listed.columns[-1] == "made" and made == {"A": "ingested", "B": "ingested", "C": "ingested", "F": recipe}


def test_union_of_topics_and_missing_documents(runs):
    res = runs.fuse(["A", "B", "C"], "sum", name="F", norm="none")
    assert res.n_topics == 3
    assert rows(runs, "F") == [
        ("q1", "b", 1, 11.0), ("q1", "c", 2, 9.3), ("q1", "e", 3, 7.0), ("q1", "a", 4, 3.2),
        ("q2", "d", 1, 4.5), ("q2", "a", 2, 1.0),
        ("q3", "x", 1, 1.0),
    ]  # fmt: skip
    assert any("'A' lacks 1 topic" in n for n in res.notes) and any("'C' lacks 1 topic" in n for n in res.notes)


def test_runs_of_another_collection_are_refused_unless_allowed(runs):
    """An input run that shares no topic with the other inputs (a DL 2019 run beside a DL 2020 run)
    is refused, as compare refuses runs that share no topic with its qrels; --allow-disjoint fuses
    them anyway (issue 44.5). Runs that share some topics are fused as before (test above)."""
    runs.ingest_run({"z1": {"a": 1.0}, "z2": {"b": 1.0}}, name="Z")
    with pytest.raises(FusionError, match=r"the input runs share no topic with each other: 'A' \(2 topic\(s\)\), 'Z'"):
        runs.fuse(["A", "Z"], "rrf", name="F")
    with pytest.raises(FusionError, match=r"the input run\(s\) 'Z' \(2 topic\(s\)\) share no topic with the other in"):
        runs.fuse(["A", "B", "Z"], "rrf", name="F")
    assert "F" not in runs.run_names()
    res = runs.fuse(["A", "Z"], "rrf", name="F", allow_disjoint=True)
    assert res.n_topics == 4 and any("'Z' lacks 2 topic" in n for n in res.notes)
    runs.ingest_run({"z1": {"b": 2.0}}, name="Z", replace=True)
    assert runs.refresh_fusion("F").n_topics == 3  # its recipe is made again as it was allowed


def test_ties_in_the_fused_run_follow_evalstores_order(store):
    """Equal fused scores: docno descending, as the evaluation ranks them."""
    store.ingest_run({"q": {"a": 2.0, "b": 1.0}}, name="X")
    store.ingest_run({"q": {"b": 2.0, "a": 1.0}}, name="Y")
    store.fuse(["X", "Y"], "rrf", name="F")
    assert [d for _, d, _, _ in rows(store, "F")] == ["b", "a"]


def test_ties_in_an_input_run_follow_evalstores_order(store):
    """Tied scores in an input: the tied documents' positions are docno descending (ranx: the
    order of NumPy's argsort)."""
    store.ingest_run({"q": {"a": 1.0, "b": 1.0, "c": 1.0}}, name="X")
    store.ingest_run({"q": {"z": 1.0}}, name="Y")
    store.fuse(["X", "Y"], "rrf", name="F")
    got = {d: s for _, d, _, s in rows(store, "F")}
    assert got == {"c": 1 / 61, "b": 1 / 62, "a": 1 / 63, "z": 1 / 61}


def test_the_same_fusion_again_is_unchanged_and_other_content_needs_replace(runs):
    runs.fuse(["A", "B"], "rrf", name="F")
    assert runs.fuse(["A", "B"], "rrf", name="F").status == "unchanged"
    with pytest.raises(evalstore.errors.IngestError, match="already exists"):
        runs.fuse(["A", "B"], "rrf", name="F", params={"k": 10})
    res = runs.fuse(["A", "B"], "rrf", name="F", params={"k": 10}, replace=True)
    assert res.status == "replaced"
    assert runs.sql("SELECT recipe FROM runs WHERE name = 'F'").rows == [("fused from A, B by RRF (k = 10)",)]
    assert runs.con.execute("SELECT count(*) FROM fusion_meta").fetchall() == [(1,)]
    assert runs.con.execute("SELECT count(*) FROM fusion_inputs").fetchall() == [(2,)]


def test_the_content_hash_is_that_of_the_exported_file(runs, tmp_path):
    runs.fuse(["A", "B"], "wsum", name="F", weights=[0.7, 0.3])
    exported = runs.export_run("F", tmp_path / "F.run")
    assert runs.sql("SELECT sha256 FROM runs WHERE name = 'F'").rows == [(exported.sha256,)]
    with evalstore.open(":memory:") as other:
        [res] = other.ingest_run(tmp_path / "F.run", progress=False)
        assert (res.name, res.status) == ("F", "added")
        assert (
            other.sql("SELECT sha256, metadata FROM runs").rows
            == runs.sql("SELECT sha256, metadata FROM runs WHERE name = 'F'").rows
        )
        assert rows(other, "F") == rows(runs, "F")


def test_a_replaced_input_makes_the_fused_run_stale_and_refresh_makes_it_again(runs):
    runs.fuse(["A", "B"], "mnz", name="F")
    before = rows(runs, "F")
    [res] = runs.ingest_run({"q1": {"b": 9.0, "c": 8.0, "e": 10.0}, "q2": {"d": 4.0}}, name="B", replace=True)
    assert any("the fused run(s) F were made from its old content and are stale now" in m for m in res.messages)
    assert runs.sql("SELECT stale FROM runs WHERE name = 'F'").rows == [(True,)]
    made = runs.provenance("F")
    assert made.stale and made.changed == (("B", "replaced"),)
    assert made.text().endswith("; stale: B replaced since")
    assert "(stale: an input run changed since; evalstore fuse --refresh --name F)" in runs.list_runs().rows[-1][-1]
    res = runs.refresh_fusion("F")
    assert res.status == "replaced"
    assert runs.sql("SELECT stale FROM runs WHERE name = 'F'").rows == [(False,)]
    assert rows(runs, "F") != before


def test_a_dropped_input_makes_the_fused_run_stale(runs):
    runs.fuse(["A", "B"], "sum", name="F")
    runs.drop_runs("A")
    assert runs.provenance("F").changed == (("A", "dropped"),)
    with pytest.raises(FusionError, match="was dropped"):
        runs.refresh_fusion("F")
    runs.drop_runs("F")  # the recipe goes with the run
    assert runs.con.execute("SELECT count(*) FROM fusion_meta").fetchall() == [(0,)]
    assert runs.con.execute("SELECT count(*) FROM fusion_inputs").fetchall() == [(0,)]


def test_a_fused_run_replaced_by_a_file_loses_its_recipe(runs, tmp_path):
    runs.fuse(["A", "B"], "sum", name="F")
    f = tmp_path / "f.run"
    f.write_text("q1 Q0 z 1 1.0 F\n")
    runs.ingest_run(f, replace=True, progress=False)
    assert runs.sql("SELECT recipe, fusion, stale, metadata FROM runs WHERE name = 'F'").rows == [
        (None, None, None, None)
    ]
    assert runs.provenance("F") is None
    with pytest.raises(FusionError, match="not made by `evalstore fuse`"):
        runs.refresh_fusion("F")


def test_depth_and_top(runs):
    runs.fuse(["A", "B"], "sum", name="F", norm="none", depth=1)
    assert rows(runs, "F") == [("q1", "b", 1, 9.0), ("q1", "a", 2, 3.0), ("q2", "d", 1, 4.0), ("q2", "a", 2, 1.0)]
    runs.fuse(["A", "B"], "sum", name="G", norm="none", top=2)
    assert rows(runs, "G") == [("q1", "b", 1, 11.0), ("q1", "c", 2, 9.0), ("q2", "d", 1, 4.5), ("q2", "a", 2, 1.0)]
    assert runs.sql("SELECT recipe FROM runs WHERE name = 'F'").rows == [
        ("fused from A, B by CombSUM (top 1 of each run)",)
    ]


def test_pyserini_rrf_on_its_two_run_example(store, tmp_path):
    """Pyserini's test resources simple_trec_run_fusion_1.txt / _2.txt and its expected
    simple_trec_run_rrf_verify.txt (github.com/castorini/pyserini, tests/resources): RRF with
    k = 60 reads the rank column as written (2054tkb7 is written at rank 3 in the second run though
    it is second by score); --ranks submitted reproduces it exactly. By evalstore's ranks (score
    order) 2054tkb7 is second in both runs: 1/62 + 1/62."""
    run1 = "1 Q0 pyeb86on 1 24 reciprocal_rank_fusion_k=60\n1 Q0 2054tkb7 2 13 reciprocal_rank_fusion_k=60\n"
    run1 += "2 Q0 hanxiao2 1 99 reciprocal_rank_fusion_k=60\n"
    run2 = "1 Q0 pyeb86on 1 2.4 reciprocal_rank_fusion_k=60\n1 Q0 2054tkb7 3 1.3 reciprocal_rank_fusion_k=60\n"
    run2 += "3 Q0 hanxiao2 1 3.3 reciprocal_rank_fusion_k=60\n"
    verify = [
        ("1", "pyeb86on", 1, 0.03278688524590164),
        ("1", "2054tkb7", 2, 0.03200204813108039),
        ("2", "hanxiao2", 1, 0.01639344262295082),
        ("3", "hanxiao2", 1, 0.01639344262295082),
    ]
    (tmp_path / "r1.txt").write_text(run1)
    (tmp_path / "r2.txt").write_text(run2)
    store.ingest_run(tmp_path / "r1.txt", name="one", progress=False)
    store.ingest_run(tmp_path / "r2.txt", name="two", progress=False)
    store.fuse(["one", "two"], "rrf", name="pyserini", params={"k": 60}, ranks="submitted")
    assert [(t, d, r, s) for t, d, r, s in rows(store, "pyserini")] == verify
    store.fuse(["one", "two"], "rrf", name="evalstore", params={"k": 60})
    assert rows(store, "evalstore")[1] == ("1", "2054tkb7", 2, 1 / 62 + 1 / 62)
    assert [r for r in rows(store, "evalstore") if r[1] != "2054tkb7"] == [r for r in verify if r[1] != "2054tkb7"]


@pytest.mark.parametrize(
    "kwargs, says",
    [
        ({"runs": ["A"], "method": "rrf"}, "at least two runs"),
        ({"runs": ["A", "A"], "method": "rrf"}, "given twice"),
        ({"method": "condorcet"}, "unknown fusion method"),
        ({"method": "rrf", "norm": "min-max"}, "fuses ranks"),
        ({"method": "sum", "norm": "l2"}, "unknown normalisation"),
        ({"method": "rrf", "params": ["k=-1"]}, "out of range"),
        ({"method": "rrf", "params": ["phi=0.5"]}, "no parameter 'phi'"),
        ({"method": "rrf", "params": ["k"]}, "NAME=VALUE"),
        ({"method": "rbc"}, "needs --param phi"),
        ({"method": "rbc", "params": {"phi": 1}}, "0 < phi < 1"),
        ({"method": "wsum"}, "needs --weights"),
        ({"method": "wsum", "weights": "0.5"}, "1 weights for 2 runs"),
        ({"method": "wsum", "weights": "0,0"}, "not all 0"),
        ({"method": "sum", "weights": [1, 1]}, "takes no weights"),
        ({"method": "sum", "depth": 0}, "number of documents"),
        ({"method": "sum", "ranks": "file"}, "ranks is one of"),
        ({"method": "sum", "name": "A"}, "name of its input"),
        ({"method": "sum", "qrels": "x"}, "go with --optimize"),
        ({"method": "wsum", "optimize": "AP"}, "give it with --qrels"),
    ],
)
def test_errors_before_any_work(runs, kwargs, says):
    kw = {"runs": ["A", "B"], "name": "F", **kwargs}
    with pytest.raises(FusionError, match=says):
        runs.fuse(kw.pop("runs"), kw.pop("method"), **kw)
    assert runs.run_names() == ["A", "B", "C"]


def test_unknown_input_run(runs):
    with pytest.raises(NotFoundError, match="no run named 'Bee'"):
        runs.fuse(["A", "Bee"], "rrf", name="F")


def test_runs_without_scores_fuse_by_rank(store, tmp_path):
    (tmp_path / "q1.res").write_text("a\nb\n")
    store.ingest_run(tmp_path / "q1.res", name="nt", format="ntcir", progress=False)
    store.ingest_run({"q1": {"b": 2.0, "c": 1.0}}, name="T")
    with pytest.raises(FusionError, match="has rows without a finite score"):
        store.fuse(["nt", "T"], "sum", name="F")
    with pytest.raises(FusionError, match="no rank column as written"):
        store.fuse(["nt", "T"], "rrf", name="F", ranks="submitted")
    store.fuse(["nt", "T"], "rrf", name="F")
    store.fuse(["nt", "T"], "sum", name="G", norm="rank")
    assert [d for _, d, _, _ in rows(store, "F")] == ["b", "a", "c"]


def test_aliases_and_case(runs):
    runs.fuse(["A", "B"], "CombSUM", name="F", norm="min_max")
    assert json.loads(runs.sql("SELECT fusion FROM runs WHERE name = 'F'").rows[0][0])["method"] == "sum"


def test_every_method_and_normalisation_fuses(runs):
    """Every registry entry renders and runs (the reference values: test_ranx_fixtures.py, test_ranx_dl19.py)."""
    params = {"rbc": {"phi": 0.5}, "gmnz": {"gamma": 0.5}}
    for m in METHODS.values():
        norms = ["none"] if m.reads == "ranks" else list(NORMALIZATIONS)
        for n in norms:
            name = f"{m.name}-{n}"
            weights = [0.6, 0.4] if m.weighted else None
            res = runs.fuse(["A", "B"], m.name, name=name, norm=n, params=params.get(m.name), weights=weights)
            assert res.n_rows == 6, name


def test_a_fused_run_is_evaluated_like_any_run(tmp_path):
    with evalstore.open(":memory:") as s:
        s.ingest_qrels(SAMPLE / "qrels.txt", name="sample", progress=False)
        s.ingest_run(sorted((SAMPLE / "runs").glob("*.txt")), progress=False)
        s.fuse(["bm25", "dense"], "rrf", name="rrf")
        res = s.evaluate("sample", ["bm25", "dense", "rrf"], ["nDCG@10", "AP"])
        assert set(res.table()) == {"bm25", "dense", "rrf"}
        assert 0 < res.mean("rrf", "nDCG@10") <= 1
        assert provenance(s, "rrf").text() == "fused from bm25, dense by RRF (k = 60)"


def test_the_docs_name_every_method_and_normalisation():
    from support import ROOT

    text = (ROOT / "docs" / "fusion.md").read_text(encoding="utf-8")
    for m in METHODS.values():
        assert f"| `{m.name}` |" in text, m.name
    for n in NORMALIZATIONS:
        assert f"`{n}`" in text, n
