"""The messages of issue 30.11 (and the runaway parameters of 30.4 on real data): each one an
evalstore message with the right exit code, in bounded time, never a DuckDB conversion error or a
traceback."""

from __future__ import annotations

import time

import pytest
from support import SAMPLE

import evalstore
from evalstore.cli import failures


@pytest.fixture
def twins(sample_db):
    """The sample with a copy of bm25 under another name (two runs that score alike), AP scored."""
    with evalstore.open(sample_db) as s:
        s.ingest_run(SAMPLE / "runs" / "bm25.txt", name="twin", progress=False)
        s.evaluate("sample", None, ["AP"])
    return sample_db


def test_replace_note_keeps_its_own_line_break(cli, twins):
    code, _, err = cli("meta", "kendall", "--db", twins, "-m", "AP", "-m", "P@10")
    assert code == 0
    code, _, err = cli("ingest", "run", SAMPLE / "runs" / "dense.txt", "--name", "twin", "--replace", "--db", twins)
    assert code == 0, err
    assert "\n  note: dropped 1 stored analysis" in err and "\\x0a" not in err


def test_a_name_still_cannot_break_a_line(capsys):
    from evalstore.cli.output import say

    say(["first line", "a name\nwith a line break"])  # evalstore's break stays, the name's is shown
    assert capsys.readouterr().err == "first line\na name\\x0awith a line break\n"


def test_identical_runs_say_v_e_is_0(cli, twins):
    code, _, err = cli("design", "--db", twins, "-m", "AP", "-r", "bm25", "-r", "twin", "--min-diff", "0.05")
    assert code == failures.USER and "V_E is 0" in err and "e+15" not in err


@pytest.mark.parametrize(
    "args",
    [
        ["-t", "anova", "--min-diff", "1e-9"],
        ["--min-diff", "1e-6"],
        ["--min-diff", "1e-12"],
        ["--min-diff", "1e-300"],
        ["-t", "ci", "--min-diff", "1e-5"],
    ],
)
def test_design_beyond_max_topics_answers_in_closed_form(cli, twins, args):
    t0 = time.monotonic()
    code, _, err = cli("design", "--db", twins, "-m", "AP", *args)
    assert code == failures.USER and "topics would be needed (Sakai's closed form)" in err, err
    assert "Conversion Error" not in err and "INT" not in err
    assert time.monotonic() - t0 < 30


@pytest.mark.parametrize(
    "args,option",
    [
        (["--alpha", "1e-300", "--min-diff", "0.05"], "--alpha"),
        (["--beta", "1e-300", "--min-diff", "0.05"], "--beta"),
        (["--alpha", "0", "--min-diff", "0.05"], "--alpha"),
    ],
)
def test_design_error_rates_out_of_range(cli, twins, args, option):
    code, _, err = cli("design", "--db", twins, "-m", "AP", *args)
    assert code == failures.USAGE and option in err


def test_design_within_max_topics_still_solves_exactly(cli, twins):
    code, out, err = cli("design", "--db", twins, "-m", "AP", "--min-diff", "0.001", "--format", "csv", "--no-save")
    assert code == 0, err
    n = dict(line.split(",", 1) for line in out.splitlines()[1:])["topics required (exact)"]
    assert 100_000 < int(n) <= 10_000_000


@pytest.mark.parametrize("cut", ["2147483648", "9223372036854775807"])
def test_repro_cut_beyond_the_data(cli, twins, cut):
    args = ["repro", "--db", twins, "-q", "sample", "-b", "bm25", "-a", "rerank", "--rep-baseline", "twin",
            "--rep-advanced", "hybrid", "-m", "AP", "--format", "csv", "--no-save"]  # fmt: skip
    t0 = time.monotonic()
    code, out, err = cli(*args, "--cut", cut)
    assert code == 0, err
    assert time.monotonic() - t0 < 60
    code, ref, _ = cli(*args, "--cut", "1000")
    rbo = [line for line in out.splitlines() if line.startswith("RBO")]
    ref_rbo = [line for line in ref.splitlines() if line.startswith("RBO")]
    got = [float(x) for x in rbo[0].split(",")[2:4]]
    want = [float(x) for x in ref_rbo[0].split(",")[2:4]]
    assert got == pytest.approx(want, rel=1e-12)  # p = 0.8: the ranks past 1000 add nothing visible


@pytest.mark.parametrize("flag,value", [("--level", "0.9"), ("--trials", "500"), ("--seed", "3")])
def test_interval_options_without_ci_are_errors(cli, sample_db, flag, value):
    code, _, err = cli("eval", "--db", sample_db, "-m", "AP", flag, value)
    assert code == failures.USAGE and flag in err and "goes with --ci" in err


@pytest.mark.parametrize(
    "args,option",
    [
        (["compare", "-b", "bm25", "-m", "AP", "--alpha", "0"], "--alpha"),
        (["compare", "-b", "bm25", "-m", "AP", "-B", "0"], "--trials"),
        (["eval", "-m", "AP", "--ci", "bootstrap", "--seed", "99999999999999999999999"], "--seed"),
        (["meta", "discpower", "-m", "AP", "--seed", "99999999999999999999999"], "--seed"),
    ],
)
def test_usage_errors_exit_2_like_repro_and_design(cli, sample_db, args, option):
    code, _, err = cli(*args, "--db", sample_db)
    assert code == failures.USAGE and option in err and "outside the range" in err
    assert "Conversion Error" not in err


@pytest.mark.parametrize("args", [["demo"], ["sql", "SELECT * FROM range(1000000)"]], ids=["demo", "sql"])
def test_a_closed_pipe_is_not_an_error(tmp_path, sample_db, args):
    """`evalstore demo | head` exited 1 (Click turns EPIPE into exit 1): the reader going away ends
    the command quietly, exit 0, nothing on stderr (issue 44.10)."""
    import subprocess
    import sys

    db = tmp_path / "demo.duckdb" if args == ["demo"] else sample_db
    proc = subprocess.Popen(
        [sys.executable, "-m", "evalstore", *args, "--db", str(db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stdout.readline()
    proc.stdout.close()  # as head does after its lines
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0 and err == b""
