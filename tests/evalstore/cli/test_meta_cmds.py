"""`evalstore meta ...` on the bundled sample collection."""

import csv
import io
import json

import pytest
from support import SAMPLE, run_cli

import evalstore


def run(sample_db, *args):
    r = run_cli("meta", *args, "--db", sample_db)
    assert r.exit_code == 0, r.output
    return r


def _csv(text):
    return list(csv.DictReader(io.StringIO(text)))


def test_kendall_table_csv_and_plot(sample_db, tmp_path):
    r = run(sample_db, "kendall", "-q", "sample", "-m", "AP", "-m", "nDCG@10", "-m", "P@10")
    assert "(a) AP" in r.stdout and "(b) nDCG@10" in r.stdout and ".8667" in r.stdout
    r = run(sample_db, "kendall", "-q", "sample", "-m", "AP", "-m", "nDCG@10", "--long", "-f", "csv")
    rows = _csv(r.stdout)
    assert rows[0]["column_a"] == "AP" and float(rows[0]["tau"]) == pytest.approx(13 / 15)
    png = tmp_path / "k.png"
    run(sample_db, "kendall", "-q", "sample", "-m", "AP", "-m", "RR", "--plot", str(png), "--no-save")
    assert png.stat().st_size > 10_000 and png.read_bytes()[:4] == b"\x89PNG"
    with evalstore.open(sample_db) as s:
        assert s.sql("SELECT count(*) FROM meta_runs WHERE kind = 'kendall'").rows[0][0] == 2


def test_swap_table_bins_and_output_file(sample_db, tmp_path):
    r = run(sample_db, "swap", "-q", "sample", "-m", "AP", "-m", "nDCG@10", "-B", "200", "--seed", "3")
    assert "abs. diff." in r.stdout and "%pairs satisfying (ii)" in r.stdout
    out = tmp_path / "bins.csv"
    run(sample_db, "swap", "-q", "sample", "-m", "AP", "-B", "200", "--seed", "3", "--bins", "-o", str(out))
    rows = _csv(out.read_text())
    assert len(rows) == 21 and rows[3]["bin"] == "[0.03, 0.04)" and rows[20]["bin"] == ">= 0.20"
    assert sum(int(r["AP n"]) for r in rows) == 15 * 200
    png = tmp_path / "swap.png"
    run(sample_db, "swap", "-q", "sample", "-m", "AP", "-B", "200", "--plot", str(png))
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_discpower_table_matches_store(sample_db, tmp_path):
    r = run(sample_db, "discpower", "-q", "sample", "-m", "AP", "-m", "P@10", "-B", "300", "--seed", "7", "-f", "csv")
    rows = {row["metric"]: row for row in _csv(r.stdout)}
    with evalstore.open(sample_db) as s:
        n = s.sql(
            "SELECT metric, n_significant, est_diff FROM meta_discpower d JOIN meta_runs USING (analysis_id) "
            "WHERE kind = 'discpower' AND seed = 7"
        ).rows
    got = {m: (k, e) for m, k, e in n}  # stored under the names as written
    assert int(rows["AP"]["n_significant"]) == got["AP"][0]
    assert float(rows["P@10"]["est_diff"]) == got["P@10"][1]
    r = run(sample_db, "discpower", "-q", "sample", "-m", "AP", "-B", "300", "--seed", "7", "--no-save")
    assert f"{got['AP'][0]}/15 = " in r.stdout
    r = run(sample_db, "discpower", "-q", "sample", "-m", "AP", "-B", "300", "--pairs", "-f", "csv", "--no-save")
    assert len(_csv(r.stdout)) == 15
    png = tmp_path / "dp.png"
    run(sample_db, "discpower", "-q", "sample", "-m", "AP", "-m", "nDCG@10", "-B", "200", "--plot", str(png))
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_tests_summary_and_pairs(sample_db, tmp_path):
    r = run(sample_db, "tests", "-q", "sample", "-m", "AP", "-B", "200", "--adjust", "holm")
    assert "wilcoxon (p < 0.05)" in r.stdout and "/15 = " in r.stdout
    r = run(sample_db, "tests", "-q", "sample", "-m", "AP", "-t", "t", "-t", "wilcoxon", "--pairs", "-f", "csv")
    rows = _csv(r.stdout)
    assert len(rows) == 15 and set(rows[0]) >= {"p_t", "p_wilcoxon", "run_a", "run_b"}
    png = tmp_path / "t.png"
    run(sample_db, "tests", "-q", "sample", "-m", "AP", "-m", "P@10", "-B", "200", "--plot", str(png))
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_robustness_creates_subsamples(sample_db, tmp_path):
    png = tmp_path / "rob.png"
    r = run(
        sample_db,
        "robustness",
        "-q",
        "sample",
        "-m",
        "AP",
        "-m",
        "nDCG@10",
        "--fractions",
        "0.7,0.3",
        "--subsample-trials",
        "2",
        "-B",
        "200",
        "--plot",
        str(png),
    )
    for title in ("Sakai SIGIR 2007 Fig. 2", "Sakai SIGIR 2007 Fig. 3", "Bompada et al. 2007 Table 2", "Knees"):
        assert title in r.stdout
    assert png.read_bytes()[:4] == b"\x89PNG"
    r = run(sample_db, "robustness", "-q", "sample", "-m", "AP", "--test", "wilcoxon", "-f", "csv", "--no-save")
    rows = _csv(r.stdout)
    assert [float(x["fraction"]) for x in rows] == [1.0, 0.7, 0.3] and rows[1]["n_trials"] == "2"
    with evalstore.open(sample_db) as s:
        assert s.sql("SELECT count(*) FROM subsamples WHERE parent = 'sample'").rows[0][0] == 4
        assert s.sql("SELECT count(*) FROM meta_knees").rows[0][0] == 4


def test_errors_are_for_people(sample_db):
    r = run_cli("meta", "discpower", "-q", "sample", "-m", "AP", "--missing", "sometimes", "--db", sample_db)
    assert r.exit_code == 2 and "'sometimes' is not one of" in r.output and "drop-topics" in r.output
    r = run_cli("meta", "tests", "-q", "sample", "-m", "AP", "-t", "sign", "--db", sample_db)
    assert r.exit_code == 2 and "'sign' is not one of" in r.output


def test_runs_of_another_collection_are_noted_once_per_parent_set(sample_db, tmp_path):
    """The runs left out of a robustness analysis (they share no topic with the qrels) are the same
    for the set and every subsample: one note, not one per subsample (issue 44.3)."""
    other = tmp_path / "other.txt"
    other.write_text("X1 Q0 a 1 3.0 other\nX1 Q0 b 2 2.0 other\n")
    assert run_cli("ingest", "run", str(other), "--db", sample_db).exit_code == 0
    r = run_cli("subsample", "-q", "sample", "--fractions", "0.7,0.5", "--subsample-trials", "2", "--db", sample_db)
    assert r.exit_code == 0, r.output
    r = run(sample_db, "robustness", "-q", "sample", "-m", "AP", "-B", "100", "--no-save")
    notes = [line for line in r.stderr.splitlines() if "share no topic" in line]
    assert notes == ["left out 1 run(s) that share no topic with qrels 'sample' and its 4 subsample(s): other"]
    run_cli("ingest", "qrels", SAMPLE / "qrels.judge.txt", "--name", "judge", "--db", sample_db)
    r = run(sample_db, "kendall", "-q", "sample", "-q", "judge", "-m", "AP", "--no-save")
    notes = [line for line in r.stderr.splitlines() if "share no topic" in line]
    assert notes == ["left out 1 run(s) that share no topic with qrels 'sample', 'judge': other"]


def test_reusability_json_plot_and_groups(sample_db, tmp_path):
    # the interface scripts rely on: per run run, mean_full, mean_reduced, rank_full, rank_reduced; per metric tau
    png = tmp_path / "reuse.png"
    r = run(sample_db, "reusability", "--qrels", "sample", "--leave-one-out", "runs", "--depth", "5", "-m", "nDCG@10",
            "-m", "AP", "--format", "json", "--plot", str(png))  # fmt: skip
    doc = json.loads(r.stdout)
    assert {"run", "mean_full", "mean_reduced", "rank_full", "rank_reduced"} <= set(doc["runs"][0])
    assert len(doc["runs"]) == 12 and set(doc["metrics"]) == {"nDCG@10", "AP"} and "tau" in doc["metrics"]["AP"]
    assert png.read_bytes()[:4] == b"\x89PNG"
    with evalstore.open(sample_db) as s:
        subs = s.sql("SELECT name FROM subsamples WHERE method = 'leave_one_run_out' ORDER BY name").rows
        assert subs[0] == ("sample@loro5:bm25",) and len(subs) == 6
        assert s.sql("SELECT count(*) FROM meta_reusability_runs").rows == [(12,)]
    groups = tmp_path / "groups.tsv"
    groups.write_text("run\tteam\n" + "".join(f"{r}\t{'lex' if r.startswith('bm25') else 'other'}\n" for r in
                      ("bm25", "bm25_rm3", "dense", "hybrid", "random", "rerank")))  # fmt: skip
    r = run(sample_db, "reusability", "-q", "sample", "--groups", groups, "--group-by", "team", "-m", "AP")
    assert "the groups left out" in r.stdout and "sample@logo10:lex" in r.stdout
    data = tmp_path / "reuse.csv"
    run(sample_db, "reusability", "-q", "sample", "--groups", groups, "-m", "AP", "--plot", str(png),
        "--plot-data", str(data), "--no-save")  # fmt: skip
    assert _csv(data.read_text())[0].keys() == {"metric", "run", "rank_full", "rank_reduced", "marked"}


def test_reusability_refusals(sample_db):
    r = run_cli("meta", "reusability", "-q", "sample", "-m", "AP", "--db", sample_db)
    assert r.exit_code == 2 and "--group-by FIELD" in r.output
    r = run_cli("meta", "reusability", "-q", "sample", "-m", "AP", "--leave-one-out", "runs", "--group-by", "x",
               "--db", sample_db)  # fmt: skip
    assert r.exit_code == 2 and "takes no grouping" in r.output
    r = run_cli("meta", "reusability", "-q", "sample", "-m", "AP", "--group-by", "actor.team", "--db", sample_db)
    assert r.exit_code == 1 and "6 run(s) have no group in the runs' metadata field 'actor.team'" in r.stderr
    r = run_cli("meta", "reusability", "-q", "sample", "-m", "AP", "--leave-one-out", "runs", "--depth", "0",
               "--db", sample_db)  # fmt: skip
    assert r.exit_code == 2
    with evalstore.open(sample_db) as s:
        assert s.sql("SELECT count(*) FROM meta_runs WHERE kind = 'reusability'").rows == [(0,)]
        assert s.sql("SELECT count(*) FROM subsamples").rows == [(0,)]
