"""The everyday shell: one-shot evaluation of files, stdin, defaults, root options, output shapes."""

from __future__ import annotations

import csv
import io
import subprocess
import sys

import pytest
from support import SAMPLE

import evalstore

QRELS = SAMPLE / "qrels.txt"
RUNS = sorted((SAMPLE / "runs").glob("*.txt"))


def test_one_shot_eval_of_files_equals_the_store(cli, tmp_path):
    code, out, _ = cli("eval", QRELS, RUNS[0], RUNS[1], "-m", "AP", "-m", "nDCG@10", "-f", "csv")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    ref = evalstore.evaluate(QRELS, RUNS[:2], ["AP", "nDCG@10"])
    assert {r["run"]: float(r["AP"]) for r in rows} == {run: ref.mean(run, "AP") for run in ref.table()}
    assert not list(tmp_path.iterdir())  # nothing written
    code, out, _ = cli("eval", QRELS, "-", "-m", "AP", "-f", "csv", stdin=RUNS[0].read_text())
    assert code == 0 and float(next(csv.DictReader(io.StringIO(out)))["AP"]) == ref.mean(ref.means[0][0], "AP")
    code, out, _ = cli("eval", QRELS, RUNS[0], "-f", "trec")  # -m defaults to trec_eval's official set
    assert code == 0 and {line.split()[0] for line in out.splitlines()} >= {"num_ret", "map", "Rprec", "bpref", "P_10"}
    code, _, err = cli("eval", QRELS)
    assert code == 2 and "at least one run file" in err


def test_qrels_defaults_to_the_only_set_and_db_before_the_command(cli, tmp_path):
    db = tmp_path / "s.duckdb"
    with evalstore.open(db) as s:
        s.ingest_qrels(QRELS, name="only", progress=False)
        s.ingest_run(RUNS[:2], progress=False)
    code, out, _ = cli("--db", db, "eval", "-m", "AP", "-f", "csv")
    assert code == 0 and len(list(csv.DictReader(io.StringIO(out)))) == 2
    code, out, _ = cli("list", "--db", db, "runs", "-f", "csv")
    assert code == 0 and out.count("\n") == 3
    with evalstore.open(db) as s:
        s.ingest_qrels(QRELS, name="other", progress=False)
    code, out, _ = cli("--db", db, "eval", "-m", "AP")
    assert code == 1


def test_per_topic_keeps_the_means_and_transpose(cli):
    code, out, _ = cli("eval", QRELS, RUNS[0], "-m", "AP", "-m", "P@5", "-p")
    lines = [line.split() for line in out.splitlines()[2:]]
    assert [x[2] for x in lines[-2:]] == ["all", "all"]
    code, out, _ = cli("eval", QRELS, *RUNS, "-m", "AP", "-m", "P@5", "--transpose")
    assert out.splitlines()[1].split()[0] == "run" and len(out.splitlines()[1].split()) == 1 + len(RUNS)
    assert [line.split()[0] for line in out.splitlines()[2:]] == ["qrels", "n_topics", "AP", "P@5"]


def test_version_help_and_python_m(cli):
    code, out, _ = cli("--version")
    assert code == 0 and out.startswith(f"evalstore {evalstore.__version__}")
    code, out, _ = cli("meta", "-h")
    assert code == 0 and "kendall" in out
    r = subprocess.run([sys.executable, "-m", "evalstore", "--version"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.startswith("evalstore ")


def test_metrics_accepts_any_spelling_and_formats(cli):
    code, out, _ = cli("metrics", "ndcg_cut_10", "-f", "json")
    assert code == 0 and '"name": "nDCG"' in out
    code, out, _ = cli("metrics", "-f", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert {"metric", "measures", "aliases", "parameters"} == set(rows[0]) and len(rows) > 40
    code, out, _ = cli("metrics", "nope")
    assert code == 1


@pytest.mark.parametrize("value", ["1.5", "10"])
def test_sql_shows_values_as_computed(cli, tmp_path, value):
    db = tmp_path / "s.duckdb"
    with evalstore.open(db) as s:
        s.ingest_qrels(QRELS, name="q", progress=False)
    code, out, _ = cli("sql", f"SELECT {value} AS v, count(*) AS n FROM qrels", "--db", db)
    assert out.splitlines()[1].split() == [value, str(len(QRELS.read_text().splitlines()))]
