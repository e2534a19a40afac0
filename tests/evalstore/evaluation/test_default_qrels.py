"""Issue 32.6: one rule for the --qrels default across commands (evalstore.evaluation.default_qrels), and
did-you-mean wherever a stored name is expected."""

from __future__ import annotations

import csv
import io

import pytest
from support import SAMPLE, SAMPLE_REPRO

import evalstore
from evalstore.errors import StoreError
from evalstore.evaluation.default_qrels import default_qrels

RUNS = sorted((SAMPLE / "runs").glob("*.txt"))


def _subtopic_file(tmp_path):
    """Diversity judgments (topic subtopic doc grade) of the sample's first two topics."""
    path = tmp_path / "div.txt"
    path.write_text(
        "S01 1 doc-S01-010 1\nS01 2 doc-S01-040 1\nS01 2 doc-S01-005 1\nS02 1 doc-S02-001 1\nS02 2 doc-S02-003 1\n"
    )
    return path


@pytest.fixture
def db(tmp_path):
    """The sample (qrels set 'sample', six runs) and a subsample of it."""
    path = tmp_path / "s.duckdb"
    with evalstore.open(path) as s:
        s.ingest_qrels(SAMPLE / "qrels.txt", name="sample", progress=False)
        s.ingest_run(RUNS, progress=False)
    return path


# every command that reads one judged set, with what it needs besides --qrels
COMMANDS = [
    ("eval", "-m", "AP", "-f", "csv"),
    ("compare", "-b", "bm25", "-m", "AP", "--no-save", "-f", "csv"),
    ("explain", "AP", "-r", "bm25", "--topic", "S01", "-f", "csv"),
    ("design", "-m", "AP", "--min-diff", "0.1", "--no-save", "-f", "csv"),
    (*SAMPLE_REPRO, "-m", "AP", "--no-save", "-f", "csv"),
    ("meta", "kendall", "-m", "AP", "-m", "P@10", "--no-save", "-f", "csv"),
    ("meta", "discpower", "-m", "AP", "-B", "200", "--no-save", "-f", "csv"),
    ("export", "leaderboard", "-m", "AP", "-o", "-"),
]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_every_command_defaults_to_the_only_judged_set_and_its_subsamples_do_not_count(cli, db, args):
    code, _, err = cli("subsample", "--fractions", "0.5", "--db", db)  # --qrels: the only set
    assert code == 0, err
    code, out, err = cli(*args, "--db", db)
    assert code == 0, err
    code, named, err = cli(*args[:1], *args[1:], "--qrels", "sample", "--db", db) if args[0] != "meta" else (
        cli(*args, "-q", "sample", "--db", db)
    )  # fmt: skip
    assert code == 0, err
    assert out == named  # the default is the set itself


@pytest.mark.parametrize("args", COMMANDS + [("subsample", "--fractions", "0.5")], ids=lambda a: " ".join(a[:2]))
def test_every_command_names_the_sets_when_there_are_several(cli, db, args):
    with evalstore.open(db) as s:
        s.ingest_qrels(SAMPLE / "qrels.txt", name="second", progress=False)
    code, out, err = cli(*args, "--db", db)
    assert code == 1 and out == ""
    assert "the store holds 2 qrels sets (sample, second), and --qrels was not given: choose one with --qrels" in err


def test_with_a_subtopic_set_each_metric_takes_the_only_set_of_its_kind(cli, db, tmp_path):
    code, _, err = cli("ingest", "qrels", _subtopic_file(tmp_path), "--format", "subtopic", "-n", "div", "--db", db)
    assert code == 0, err
    with evalstore.open(db) as s:
        assert default_qrels(s, ["AP", "nDCG@10"]) == "sample"
        assert default_qrels(s, ["alpha_nDCG@20"]) == "div"
        with pytest.raises(StoreError, match=r"2 qrels sets \(div, sample\) \(the metrics read sets of several kinds"):
            default_qrels(s, ["AP", "alpha_nDCG@20"])
        with pytest.raises(StoreError, match=r"2 qrels sets \(div, sample\), and --qrels"):
            default_qrels(s)  # no metrics (subsample): both count
    # explain refused to pick once a subtopic set existed; now it takes the ad hoc set
    code, out, err = cli("explain", "nDCG@10", "-r", "bm25", "--topic", "S01", "-f", "json", "--db", db)
    assert code == 0, err
    code, out, err = cli("eval", "-m", "alpha_nDCG@20", "-r", "bm25", "-f", "csv", "--db", db)
    assert code == 0 and next(csv.DictReader(io.StringIO(out)))["qrels"] == "div"
    assert "no subtopic judgments" not in err
    code, out, err = cli("eval", "-m", "AP", "-r", "bm25", "-f", "csv", "--db", db)
    assert code == 0 and next(csv.DictReader(io.StringIO(out)))["qrels"] == "sample"
    code, _, err = cli("subsample", "--fractions", "0.5", "--db", db)
    assert code == 1 and "choose one with --qrels NAME" in err


def test_help_of_every_qrels_default_says_the_rule(cli):
    for args in (("eval",), ("compare",), ("explain",), ("design",), ("repro",), ("meta", "kendall"), ("subsample",)):
        code, out, _ = cli(*args, "-h")
        assert code == 0
        assert "subsamples aside" in " ".join(out.replace("│", " ").split()), args


def test_did_you_mean_for_a_baseline_and_a_topic(cli, db):
    code, _, err = cli("compare", "-b", "bm52", "-m", "AP", "--db", db)
    assert code == 1 and "no run named 'bm52' in the store (did you mean 'bm25'?)" in err
    code, _, err = cli("compare", "-b", "p_bret", "-m", "AP", "--db", db)  # nothing close: the runs are listed
    assert code == 1 and "no run named 'p_bret' in the store (runs: bm25, bm25_rm3, dense, hybrid, random" in err
    code, _, err = cli("explain", "AP", "-r", "bm25", "--topic", "S1", "--db", db)
    assert code == 1 and "topic 'S1' is not evaluated" in err and "(did you mean 'S01'?)" in err
    code, _, err = cli("repro", "-b", "bm52", "-a", "dense", "--rep-baseline", "bm25_rm3", "--rep-advanced", "hybrid",
                       "-m", "AP", "--db", db)  # fmt: skip
    assert code == 1 and "did you mean 'bm25'?" in err
