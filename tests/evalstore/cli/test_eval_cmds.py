"""Evaluation through the CLI and the library: stored scores, leaderboard, export, output formats."""

import csv
import io
import json
import subprocess
import sys

import pytest
from support import ROOT, SAMPLE, run_cli

import evalstore
from evalstore.errors import MetricError


def _rows(path, sql):
    with evalstore.open(path) as s:
        return s.sql(sql).rows


def test_eval_stores_scores_once(sample_db):
    for _ in range(2):
        r = run_cli("eval", "--qrels", "sample", "-m", "AP", "-m", "P_10", "--db", sample_db)
        assert r.exit_code == 0, r.output
    # 6 runs x 8 topics x 2 metrics, evaluated twice: no duplicates
    assert _rows(sample_db, "SELECT count(*) FROM scores")[0][0] == 6 * 8 * 2
    metrics = {m for (m,) in _rows(sample_db, "SELECT DISTINCT metric FROM scores")}
    assert metrics == {"AP", "P@10"}
    assert _rows(sample_db, "SELECT DISTINCT engine_version FROM scores")[0][0] == evalstore.__version__


def test_leaderboard_view_matches_scores(sample_db):
    run_cli("eval", "--qrels", "sample", "-m", "AP", "-m", "NumRet", "--db", sample_db)
    lb = dict(
        ((r, m), (v, n)) for r, m, v, n in _rows(sample_db, "SELECT run, metric, mean, n_topics FROM leaderboard")
    )
    ap = _rows(sample_db, "SELECT run, avg(value) FROM scores WHERE metric LIKE 'AP%' GROUP BY run")
    for run, mean in ap:
        assert lb[(run, "AP")] == (pytest.approx(mean, abs=1e-12), 8)
    # NumRet is summed over topics, as trec_eval's summary does: 8 topics x 50 docs
    assert lb[("bm25", "NumRet")][0] == 400


def test_eval_output_formats(sample_db):
    r = run_cli("eval", "--qrels", "sample", "-m", "AP", "-m", "nDCG@10", "--format", "csv", "--db", sample_db)
    assert r.exit_code == 0, r.output
    rows = list(csv.reader(io.StringIO(r.stdout)))
    assert rows[0] == ["run", "qrels", "n_topics", "AP", "nDCG@10"]
    aps = [float(x[3]) for x in rows[1:]]
    assert aps == sorted(aps, reverse=True) and len(aps) == 6

    r = run_cli("eval", "--qrels", "sample", "-r", "dense", "-m", "map", "--format", "json", "--db", sample_db)
    recs = json.loads(r.stdout)
    assert recs[0]["run"] == "dense" and "map" in recs[0]

    r = run_cli(
        "eval",
        "--qrels",
        "sample",
        "-r",
        "dense",
        "-m",
        "map",
        "-m",
        "P.5,10",
        "--per-topic",
        "--format",
        "trec",
        "--db",
        sample_db,
    )
    lines = [ln.split("\t") for ln in r.stdout.splitlines()]
    assert all(len(x) == 3 for x in lines)
    names = [x[0].strip() for x in lines]
    assert set(names) == {"map", "P_5", "P_10"}  # an expanded trec_eval list prints as trec_eval does
    assert [x[1] for x in lines[-3:]] == ["all", "all", "all"]
    topics = [x[1] for x in lines if x[0].strip() == "map"]
    assert topics == [f"S{i:02d}" for i in range(1, 9)] + ["all"]
    with evalstore.open(sample_db) as s:
        per_topic = dict(s.sql("SELECT topic, value FROM scores WHERE run = 'dense' AND metric LIKE 'AP%'").rows)
    for name, topic, value in lines:
        if name.strip() == "map" and topic != "all":
            assert float(value) == pytest.approx(per_topic[topic], abs=5e-5)


def test_export_leaderboard(sample_db, tmp_path):
    out = tmp_path / "lb.csv"
    r = run_cli(
        "export", "leaderboard", "--qrels", "sample", "-m", "nDCG@10", "-m", "AP", "-o", str(out), "--db", sample_db
    )
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader(out.open()))
    assert [k for k in rows[0]] == ["run", "qrels", "n_topics", "nDCG@10", "AP"]
    vals = [float(x["nDCG@10"]) for x in rows]
    assert vals == sorted(vals, reverse=True)
    assert rows[0]["run"] == "rerank" and rows[-1]["run"] == "random"

    r = run_cli("export", "leaderboard", "--qrels", "sample", "-m", "RR", "-o", "-", "--per-topic", "--db", sample_db)
    long = list(csv.DictReader(io.StringIO(r.stdout)))
    assert len(long) == 6 * 8 and set(long[0]) == {"run", "qrels", "topic", "metric", "value"}


def test_canonical_names_and_echo():
    qrels = {"q": {"a": 2, "b": 1, "c": 0}}
    run = {"s": {"q": {"a": 1.0, "c": 0.5, "b": 0.2}}}
    res = evalstore.evaluate(qrels, run, ["P(rel=2)@2", "P_2", "ndcg_cut_3"])
    assert res.metrics == ["P(rel=2)@2", "P_2", "ndcg_cut_3"]
    assert res.stored_names["P(rel=2)@2"] == "P(rel=2)@2"
    assert res.stored_names["P_2"] == "P@2"
    assert res.stored_names["ndcg_cut_3"] == "nDCG@3"
    assert res.mean("s", "P(rel=2)@2") == 0.5
    assert res.mean("s", "P_2") == 0.5


def test_unknown_metric_is_a_clear_error(sample_db):
    with pytest.raises(MetricError, match="unknown metric 'nDGC'.*did you mean nDCG"):
        evalstore.evaluate({"q": {"a": 1}}, {"s": {"q": {"a": 1.0}}}, ["nDGC@10"])
    r = subprocess.run(
        [sys.executable, str(ROOT / "cli.py"), "eval", "--qrels", "sample", "-m", "AP(foo=1)", "--db", sample_db],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 1
    assert "has no parameter 'foo'" in r.stderr and "Traceback" not in r.stderr


def test_top_level_cli_py_help():
    r = subprocess.run([sys.executable, str(ROOT / "cli.py"), "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "ingest" in r.stdout and "eval" in r.stdout


# --------------------------------------------------------------------------- runs of another collection
def test_runs_sharing_no_topic_are_left_out_with_a_note(sample_db, tmp_path):
    other = tmp_path / "other.txt"
    other.write_text("X1 Q0 a 1 3.0 other\nX1 Q0 b 2 2.0 other\n")
    assert run_cli("ingest", "run", str(other), "--db", sample_db).exit_code == 0
    with evalstore.open(sample_db) as s:
        res = s.evaluate("sample", None, ["AP"])
        assert sorted(res.table()) == ["bm25", "bm25_rm3", "dense", "hybrid", "random", "rerank"]
        assert res.notes == ["left out 1 run(s) that share no topic with qrels 'sample': other"]
        assert res.mean("rerank", "AP") == pytest.approx(0.7013, abs=5e-5)
        # not evaluated, so nothing stored for it
        assert s.sql("SELECT count(*) FROM scores WHERE run = 'other'").rows == [(0,)]
        with pytest.raises(MetricError, match=r"no run \(other\) shares a topic with qrels sample"):
            s.evaluate("sample", ["other"], ["AP"])
    r = run_cli("eval", "-m", "AP", "-f", "csv", "--db", sample_db)
    assert r.exit_code == 0, r.output
    assert [row["run"] for row in csv.DictReader(io.StringIO(r.stdout))][-1] == "random"
    assert "share no topic with qrels 'sample': other" not in r.stdout
    # a meta-analysis over all runs of the store leaves it out too, and says so
    r = run_cli("meta", "kendall", "-q", "sample", "-m", "AP", "-m", "P@10", "-f", "csv", "--db", sample_db)
    assert r.exit_code == 0, r.output
    assert "left out 1 run(s) that share no topic with qrels 'sample': other" in r.stderr
    with evalstore.open(sample_db) as s:
        inputs = json.loads(s.sql("SELECT inputs FROM meta_runs").rows[0][0])
    assert "other" not in inputs["runs"] and inputs["columns"][0]["unrelated_runs"] == ["other"]


def test_qrels_defaults_to_the_only_set_in_export_and_meta(sample_db):
    r = run_cli("export", "leaderboard", "-m", "AP", "-o", "-", "--db", sample_db)
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert {x["qrels"] for x in rows} == {"sample"} and rows[0]["run"] == "rerank"
    r = run_cli("meta", "kendall", "-m", "AP", "-m", "P@10", "-f", "csv", "--no-save", "--db", sample_db)
    assert r.exit_code == 0, r.output
    with_q = run_cli("meta", "kendall", "-q", "sample", "-m", "AP", "-m", "P@10", "-f", "csv", "--db", sample_db)
    assert r.stdout == with_q.stdout
    assert run_cli("ingest", "qrels", str(SAMPLE / "qrels.txt"), "-n", "b", "--db", sample_db).exit_code == 0
    r = run_cli("meta", "kendall", "-m", "AP", "-m", "P@10", "--db", sample_db)
    assert r.exit_code != 0 and "choose one with --qrels NAME" in r.stderr


def test_eval_files_names_the_qrels_file_and_prints_counts_as_integers(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    files = [str(SAMPLE / "qrels.txt"), str(SAMPLE / "runs" / "bm25.txt")]
    r = run_cli("eval", *files, "-m", "num_ret", "-m", "num_rel_ret", "-m", "map", "-f", "json")
    assert r.exit_code == 0, r.output
    [row] = json.loads(r.stdout)
    # 8 topics x 50 retrieved; pytrec_eval sums num_rel_ret of the sample's bm25 run to 129
    assert (row["qrels"], row["num_ret"], row["num_rel_ret"]) == ("qrels.txt", 400, 129)
    assert isinstance(row["num_ret"], int) and isinstance(row["map"], float)
