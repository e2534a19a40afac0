"""`evalstore fuse` and how `list runs` shows a fused run: the command line over evalstore.fusion."""

from __future__ import annotations

import json

import evalstore


def test_fuse_and_list(sample_db, cli):
    code, out, err = cli("fuse", "-r", "bm25", "-r", "dense", "--method", "rrf", "--name", "bm25+dense",
                         "--db", sample_db)  # fmt: skip
    assert code == 0, err
    assert "run 'bm25+dense' added" in err and "fused from bm25, dense by RRF (k = 60)" in err
    code, out, err = cli("list", "runs", "--db", sample_db)
    assert code == 0
    line = next(x for x in out.splitlines() if x.startswith("bm25+dense"))
    assert line.rstrip().endswith("fused from bm25, dense by RRF (k = 60)")
    assert "ingested" in next(x for x in out.splitlines() if x.startswith("dense "))
    code, out, err = cli("sql", "SELECT fusion->>'$.method' FROM runs WHERE recipe IS NOT NULL", "--db", sample_db)
    assert code == 0 and "rrf" in out


def test_fuse_with_params_weights_and_aliases(sample_db, cli):
    code, _, err = cli("fuse", "-r", "bm25", "-r", "dense", "-r", "hybrid", "--method", "combsum", "--norm", "zmuv",
                       "--name", "s", "--db", sample_db)  # fmt: skip
    assert code == 0, err
    code, _, err = cli("fuse", "-r", "bm25", "-r", "dense", "--method", "wsum", "--weights", "0.7,0.3", "--depth", "20",
                       "--top", "10", "-n", "w", "--db", sample_db)  # fmt: skip
    assert code == 0, err
    assert "weighted sum (weights 0.7, 0.3) of min-max normalised scores (top 20 of each run; 10 documents" in err
    with evalstore.open(sample_db, read_only=True) as s:
        f = json.loads(s.sql("SELECT fusion FROM runs WHERE name = 'w'").rows[0][0])
        assert (f["depth"], f["top"], f["weights"]) == (20, 10, [0.7, 0.3])
        assert s.sql("SELECT max(rank) FROM run_rows WHERE run = 'w'").rows == [(10,)]
        assert json.loads(s.sql("SELECT fusion FROM runs WHERE name = 's'").rows[0][0])["norm"] == "zmuv"


def test_optimize_prints_the_grid_and_the_warning(sample_db, cli):
    code, out, err = cli("fuse", "-r", "bm25", "-r", "dense", "--method", "wsum", "--optimize", "nDCG@10",
                         "-q", "sample", "-n", "opt", "--db", sample_db)  # fmt: skip
    assert code == 0, err
    assert "fusion grid on sample (11 candidates)" in out and "chosen" in out
    assert "chose weights" in err and "overstates the gain" in err and "held-out set" in err
    code, out, err = cli("fuse", "-r", "bm25", "-r", "dense", "--method", "rrf", "--optimize", "AP", "-q", "sample",
                         "--step", "30", "-n", "opt_k", "-f", "csv", "--db", sample_db)  # fmt: skip
    assert code == 0, err
    assert out.splitlines()[0] == "rank,k,AP," and len(out.splitlines()) == 5  # k = 10, 40, 70, 100


def test_refresh(sample_db, cli, tmp_path):
    assert cli("fuse", "-r", "bm25", "-r", "dense", "--method", "sum", "-n", "f", "--db", sample_db)[0] == 0
    changed = tmp_path / "dense.txt"
    changed.write_text("S01 Q0 doc-S01-001 1 9.0 dense\n")
    assert cli("ingest", "run", changed, "--replace", "--db", sample_db)[0] == 0
    code, out, _ = cli("list", "runs", "--db", sample_db)
    assert "(stale: an input run changed since; evalstore fuse --refresh --name f)" in out
    code, _, err = cli("fuse", "--refresh", "--name", "f", "--db", sample_db)
    assert code == 0 and "run 'f' replaced" in err
    assert "stale" not in cli("list", "runs", "--db", sample_db)[1]


def test_runs_of_two_collections_need_allow_disjoint(sample_db, cli, tmp_path):
    other = tmp_path / "other.txt"
    other.write_text("X1 Q0 a 1 3.0 other\nX2 Q0 b 1 2.0 other\n")
    assert cli("ingest", "run", other, "--db", sample_db)[0] == 0
    code, _, err = cli("fuse", "-r", "bm25", "-r", "other", "--method", "rrf", "--name", "mixed", "--db", sample_db)
    assert code == 1 and "share no topic with each other: 'bm25' (8 topic(s)), 'other' (2 topic(s))" in err
    assert "--allow-disjoint" in err
    code, _, err = cli("fuse", "-r", "bm25", "-r", "other", "--method", "rrf", "--name", "mixed", "--allow-disjoint",
                       "--db", sample_db)  # fmt: skip
    assert code == 0 and "run 'mixed' added: " in err and "10 topics" in err


def test_usage_errors(sample_db, cli):
    code, _, err = cli("fuse", "-r", "bm25", "-r", "dense", "--method", "nope", "-n", "x", "--db", sample_db)
    assert code == 2 and "'nope' is not one of sum, mnz, anz" in err
    code, _, err = cli("fuse", "-r", "bm25", "-n", "x", "--db", sample_db)
    assert code == 2 and "--method" in err
    code, _, err = cli(
        "fuse", "-r", "bm25", "-r", "dense", "--method", "rrf", "-n", "x", "-f", "csv", "--db", sample_db
    )
    assert code == 2 and "the grid of --optimize" in err
    code, _, err = cli("fuse", "--refresh", "-r", "bm25", "-n", "x", "--db", sample_db)
    assert code == 2 and "--refresh takes only --name" in err
    code, _, err = cli("fuse", "-r", "bm25", "-r", "dense", "--method", "wsum", "-n", "x", "--db", sample_db)
    assert code == 1 and "wsum needs --weights" in err
    code, _, err = cli(
        "fuse", "-r", "bm25", "-r", "dense", "--method", "rrf", "--norm", "max", "-n", "x", "--db", sample_db
    )
    assert code == 1 and "rrf fuses ranks" in err


def test_help_comes_from_the_registries(cli):
    code, out, _ = cli("fuse", "--help")
    assert code == 0
    for name in ("rrf", "bordafuse", "log_isr", "w_bordafuse", "zmuv", "min-max", "borda"):
        assert name in out
    assert "1 / (k + rank)" in out
