"""`evalstore pool` (build, list, show, coverage), `export pool` and `drop pool` on the bundled
sample collection (six runs, eight topics, qrels 'sample')."""

from __future__ import annotations

import json

import pytest

import evalstore


def test_build_list_show_cover_export_and_drop(cli, sample_db, tmp_path):
    code, out, err = cli("pool", "--name", "d5", "--depth", "5", "--db", sample_db)
    assert code == 0 and err.startswith("pool 'd5' added: depth-5 pool of 6 runs;")
    code, out, _ = cli("pool", "--db", sample_db, "list", "--format", "csv")
    assert code == 0 and out.splitlines()[1].startswith("d5,depth,5,depth-5 pool of 6 runs,8,")
    code, out, _ = cli("pool", "show", "d5", "--qrels", "sample", "--format", "json", "--db", sample_db)
    sizes = json.loads(out)
    assert code == 0 and len(sizes["topics"]) == 8 and {"n_docs", "n_judged", "n_relevant"} <= set(sizes["topics"][0])
    code, out, _ = cli("pool", "coverage", "d5", "--qrels", "sample", "-k", "10", "--format", "json", "--db", sample_db)
    runs = {r["run"]: r for r in json.loads(out)["runs"]}
    assert code == 0 and set(runs) == {"bm25", "bm25_rm3", "dense", "hybrid", "random", "rerank"}
    assert 0 < runs["random"]["pooled_at_k"] < 1 and runs["random"]["judged_at_k"] is not None
    code, out, _ = cli("pool", "coverage", "d5", "--db", sample_db)
    assert code == 0 and "pooled@5" in out and "judged@5" not in out
    target = tmp_path / "d5.qrels"
    code, _, err = cli("export", "pool", "d5", "-o", target, "--db", sample_db)
    lines = target.read_text().splitlines()
    assert code == 0 and err.startswith(f"wrote pool 'd5' to {target}:") and lines == sorted(lines)
    assert all(line.split()[1:4:2] == ["0", "-1"] for line in lines)
    code, out, _ = cli("export", "pool", "d5", "--pairs", "--db", sample_db)
    assert code == 0 and out.splitlines() == [" ".join(line.split()[0:3:2]) for line in lines]
    code, _, err = cli("drop", "pool", "d5", "--yes", "--db", sample_db)
    assert code == 0 and "dropped 1 pool (d5)" in err


def test_rbp_and_rrf_options(cli, sample_db):
    assert cli("pool", "-n", "r", "--strategy", "rbp", "--p", "0.9", "--rbp-agg", "max", "--db", sample_db)[0] == 0
    assert cli("pool", "-n", "f", "--strategy", "rrf", "--k", "10", "--depth", "20", "--db", sample_db)[0] == 0
    with evalstore.open(sample_db, read_only=True) as s:
        rows = dict(s.sql("SELECT name, description FROM pool_sets").rows)
    assert rows == {
        "r": "top 10 per topic by RBP (p = 0.9, max over runs) of 6 runs",
        "f": "top 20 per topic by RRF (k = 10) of 6 runs",
    }


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--depth", "0"], 2, "is outside the range 1<=x"),
        (["--depth", "-2"], 2, "is outside the range 1<=x"),
        (["--strategy", "topX"], 2, "topX"),
        (["--strategy", "rbp", "--p", "1.5"], 2, "is outside the range 0<x<1"),
        (["--p", "0.5"], 1, "p and the RBP aggregate belong to --strategy rbp"),
        (["--depth", "5000"], 1, "beyond the runs' depth"),
        (["-r", "nope"], 1, "no run named 'nope'"),
        (["--name", "twice"], 1, "a pool named 'twice' exists; choose another --name or pass --replace"),
    ],
)
def test_bad_input_is_refused_and_stores_nothing(cli, sample_db, args, code, message):
    assert cli("pool", "--name", "twice", "--db", sample_db)[0] == 0
    name = [] if "--name" in args else ["--name", "new"]
    got, out, err = cli("pool", *name, *args, "--db", sample_db)
    assert got == code and message in err
    with evalstore.open(sample_db, read_only=True) as s:
        assert s.sql("SELECT name FROM pool_sets").rows == [("twice",)]


def test_build_options_do_not_go_with_a_subcommand(cli, sample_db):
    code, _, err = cli("pool", "--name", "x", "list", "--db", sample_db)
    assert code == 2 and "do not go with `pool list`" in err
    code, out, _ = cli("pool")
    assert code == 0 and "Build a judgment pool" in out
