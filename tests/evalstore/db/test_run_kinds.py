"""What a run is (evalstore.db.run_kinds): submitted, fused or scratch; leaderboards, design and
the meta-evaluation take every kind unless asked, and say which kinds they included (issue 44.10)."""

from __future__ import annotations

import pytest
from support import SAMPLE, run_cli, store_at_migration_1

import evalstore
from evalstore.errors import EvalstoreError


@pytest.fixture
def kinds(sample_store):
    """The sample's six submitted runs, a fused run and a scratch run."""
    sample_store.fuse(["bm25", "dense"], "rrf", name="bm25+dense")
    sample_store.ingest_run(SAMPLE / "runs" / "bm25.txt", name="mine", kind="scratch", progress=False)
    return sample_store


def test_each_run_has_a_kind(kinds):
    rows = dict(kinds.sql("SELECT name, kind FROM runs").rows)
    assert rows["bm25+dense"] == "fused" and rows["mine"] == "scratch" and rows["bm25"] == "submitted"
    assert [c for c in kinds.list_runs().columns][:2] == ["name", "kind"]
    # the same content again with another kind: the kind changes, nothing else
    [res] = kinds.ingest_run(SAMPLE / "runs" / "bm25.txt", name="mine", kind="submitted", progress=False)
    assert res.status == "unchanged" and "now a submitted run" in res.summary()
    assert kinds.set_run_kind(["mine"], "scratch") == ["mine"]
    with pytest.raises(EvalstoreError, match="a run is one of submitted, fused, scratch"):
        kinds.set_run_kind("mine", "draft")


def test_a_leaderboard_says_what_it_includes_and_filters(kinds):
    res = kinds.evaluate("sample", None, ["AP"])
    assert "the leaderboard includes 6 submitted, 1 fused and 1 scratch run(s)" in " ".join(res.notes)
    only = kinds.evaluate("sample", None, ["AP"], kinds="submitted")
    assert sorted(r for r, *_ in only.means) == ["bm25", "bm25_rm3", "dense", "hybrid", "random", "rerank"]
    assert not any("includes" in n for n in only.notes)  # all submitted: nothing to say
    both = kinds.evaluate("sample", None, ["AP"], kinds=["submitted", "fused"])
    assert len(both.means) == 7 and "6 submitted and 1 fused run(s)" in " ".join(both.notes)
    with pytest.raises(EvalstoreError, match="not both"):
        kinds.evaluate("sample", ["bm25"], ["AP"], kinds="submitted")


def test_design_and_meta_filter_by_kind(kinds):
    d = kinds.design("sample", "AP", min_diff=0.1, save=False)
    assert d.n_runs == 8 and any("the runs include 6 submitted, 1 fused and 1 scratch" in n for n in d.notes)
    d = kinds.design("sample", "AP", min_diff=0.1, save=False, kinds="submitted")
    assert d.n_runs == 6 and not any("include" in n for n in d.notes)
    an = evalstore.meta.kendall(kinds, "sample", ["AP", "P@10"], kinds=["submitted"], save=False)
    assert len(an.inputs["runs"]) == 6 and an.params["kinds"] == ["submitted"]


def test_the_cli_filters_and_says(kinds, cli):
    db = kinds.location
    kinds.close()
    code, out, err = cli("eval", "-m", "AP", "-f", "csv", "--db", db)
    assert code == 0 and len(out.splitlines()) == 9
    assert "the leaderboard includes 6 submitted, 1 fused and 1 scratch run(s) (--kind submitted keeps" in err
    code, out, err = cli("eval", "-m", "AP", "-f", "csv", "--kind", "submitted", "--db", db)
    assert code == 0 and len(out.splitlines()) == 7 and "includes" not in err
    code, out, err = cli("export", "leaderboard", "-m", "AP", "-o", "-", "--kind", "scratch", "--db", db)
    assert code == 0 and out.splitlines()[1].startswith("mine,") and "includes 1 scratch run(s)" in err
    code, out, err = cli("design", "-m", "AP", "--min-diff", "0.1", "--kind", "submitted", "--no-save", "--db", db)
    assert code == 0 and "runs" in out
    code, _, err = cli("eval", "-m", "AP", "-r", "bm25", "--kind", "submitted", "--db", db)
    assert code == 2 and "not both" in err
    code, _, err = cli("eval", "-m", "AP", "--kind", "draft", "--db", db)
    assert code == 2 and "'draft' is not one of submitted, fused, scratch" in err
    code, _, err = cli("meta", "kendall", "-m", "AP", "-m", "P@10", "--kind", "submitted", "--no-save", "--db", db)
    assert code == 0 and "includes" not in err
    r = run_cli("list", "runs", "-f", "csv", "--db", db)
    assert "mine,scratch," in r.stdout and "bm25+dense,fused," in r.stdout


def test_an_older_store_upgrades_with_kinds(tmp_path):
    path = tmp_path / "old.duckdb"
    store_at_migration_1(path)
    with evalstore.open(path) as s:
        assert s.sql("SELECT name, kind FROM runs").rows == [("old", "submitted")]
