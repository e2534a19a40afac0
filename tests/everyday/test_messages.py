"""Issue 32.7: help and messages that say exactly what is wrong, and outputs that keep what belongs
to them (a legend with its table, a cutoff's ranks, the order of the runs asked)."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from support import SAMPLE, SAMPLE_REPRO

import evalstore
from evalstore.cli.help_format import reflow
from evalstore.errors import IngestError

RUNS = sorted((SAMPLE / "runs").glob("*.txt"))


def _flat(text: str) -> str:
    """Help text without the terminal's box and wrapping."""
    return " ".join(text.replace("│", " ").split())


def test_help_has_no_hard_line_breaks_of_the_source(cli):
    """A docstring wrapped at the source's width printed its line breaks (ragged lines in the
    command list and the command's help); every command's help is one line per paragraph."""
    import typer.main

    from evalstore.cli import application

    app = application()

    def walk(cmd, path=()):
        yield path, cmd
        for name, sub in sorted((getattr(cmd, "commands", None) or {}).items()):
            yield from walk(sub, (*path, name))

    root = typer.main.get_command(app)
    for path, _ in walk(root):
        code, out, _ = cli(*path, "-h")
        assert code == 0
    for path, cmd in walk(root):  # looked up through the groups: reflowed
        for paragraph in (cmd.help or "").split("\n\n"):
            assert "\n" not in paragraph, (path, paragraph)
    code, out, _ = cli("-h")
    lines = [line for line in out.splitlines() if "│ eval " in line or "│ demo " in line]
    # "...(the per-topic scores are stored),\n or for files" used to end the first line early
    assert all(len(line.rstrip()) >= 70 for line in lines), lines
    assert reflow("One\n    two\n\n    Three\n    four.") == "One two\n\nThree four."


def test_ci_level_blames_level_only(cli):
    code, _, err = cli("eval", SAMPLE / "qrels.txt", RUNS[0], "-m", "AP", "--ci", "t", "--level", "95")
    assert code == 2
    assert "Invalid value for '--level': 95.0 is outside the range 0.5<=x<1" in err
    assert "the confidence level is a fraction: 0.95, not 95" in err
    assert "--trials" not in err and "--seed" not in err


def test_a_cutoff_out_of_range_gives_an_integer_range(cli):
    code, _, err = cli("eval", SAMPLE / "qrels.txt", RUNS[0], "-m", "nDCG@0")
    assert code == 1
    assert "nDCG@0: the cutoff must be an integer between 1 and 2147483647, not 0" in err
    assert "e+09" not in err


def test_drop_on_a_pipe_says_to_add_yes(cli, sample_db):
    code, _, err = cli("drop", "run", "bm25", "--db", sample_db, stdin="")
    assert code == 2
    assert "Invalid value" not in err
    assert "standard input is not a terminal" in err and "add --yes (-y) to drop it without being asked" in err
    code, _, err = cli("subsample", "--qrels", "sample", "--db", sample_db)
    assert code == 2 and "Invalid value" not in err and "creating subsamples needs --fractions LIST" in err


def test_a_table_of_two_runs_names_its_tag_column():
    import pandas as pd

    df = pd.read_csv(RUNS[0], sep=" ", names=["query_id", "q0", "doc_id", "rank", "score", "run"])
    both = pd.concat([df, df.assign(run="other")])
    with pytest.raises(IngestError) as e:
        evalstore.evaluate(SAMPLE / "qrels.txt", both, ["AP"])
    msg = str(e.value)
    assert "the table holds 2 runs (its column 'run': 'bm25', 'other')" in msg
    assert "df.groupby('run')" in msg and "retrieved twice" not in msg
    with evalstore.open(":memory:") as s, pytest.raises(IngestError, match="its column 'run'"):
        s.ingest_run(both, name="x")
    # one run listing a document twice is still said as such
    with pytest.raises(IngestError, match="is retrieved twice"):
        evalstore.evaluate(SAMPLE / "qrels.txt", pd.concat([df, df]), ["AP"])


def test_meta_kendall_legend_goes_with_the_table(cli, sample_db, tmp_path):
    code, out, err = cli("meta", "kendall", "-m", "AP", "-m", "nDCG@10", "-m", "P@10", "--no-save", "--db", sample_db)
    assert code == 0
    # stdout (a file under `> file`) holds the table and what its letters and threshold mean
    assert "(c) = P@10; with 6 runs |tau| > 0.914 is significant at 0.01" in out
    assert "significant at 0.01" not in err
    code, out, err = cli("meta", "swap", "-m", "AP", "-B", "50", "--no-save", "--db", sample_db)
    assert code == 0 and "abs. diff. (ii): the smallest difference" in out and "abs. diff. (ii)" not in err


def test_design_and_every_analysis_warn_about_a_diversity_metric_on_plain_qrels(cli, sample_db):
    warning = "alpha_nDCG@20 on qrels 'sample': the set has no subtopic judgments"
    code, _, err = cli("eval", "-m", "alpha_nDCG@20", "-r", "bm25", "--db", sample_db)
    assert code == 0 and warning in err
    for args in (
        ("design", "-m", "alpha_nDCG@20", "--min-diff", "0.1"),
        ("compare", "-b", "bm25", "-m", "alpha_nDCG@20"),
        ("meta", "kendall", "-m", "alpha_nDCG@20", "-m", "AP"),
        (*SAMPLE_REPRO, "-m", "alpha_nDCG@20"),
    ):
        code, _, err = cli(*args, "--no-save", "--db", sample_db)
        assert code == 0, (args, err)
        assert warning in err, args


def test_explain_stops_at_the_cutoff(cli, sample_db):
    code, out, err = cli("explain", "nDCG@10", "-r", "bm25", "--topic", "S01", "--db", sample_db)
    assert code == 0
    ranks = [int(m.group(1)) for m in re.finditer(r"^(\d+)\s+doc-", out, re.M)]
    assert ranks == list(range(1, 11))  # not 11-13, past the cutoff
    assert "40 more retrieved document(s) not shown (below the cutoff @10: they do not count)" in err
    code, out, _ = cli("explain", "P@5", "-r", "bm25", "--topic", "S01", "-f", "json", "--db", sample_db)
    assert [r["rank"] for r in json.loads(out)["rows"]] == list(range(1, 51))  # programs get every row
    code, out, _ = cli("explain", "AP", "-r", "bm25", "--topic", "S01", "--db", sample_db)
    assert len(re.findall(r"^\d+\s+doc-", out, re.M)) >= 10  # no cutoff: through the last contribution


def test_to_df_means_keeps_the_order_asked(sample_store):
    r = sample_store.evaluate("sample", ["rerank", "bm25", "dense"], ["AP", "nDCG@10"], save=False)
    assert list(r.to_df(means=True)["run"]) == ["rerank", "bm25", "dense"]
    assert list(dict.fromkeys(r.to_df()["run"])) == ["rerank", "bm25", "dense"]
    assert list(dict.fromkeys(r.to_df(means=True, wide=False)["run"])) == ["rerank", "bm25", "dense"]
    r = sample_store.evaluate("sample", ["dense", "bm25"], ["AP"], ci="t", save=False)
    df = r.to_df(means=True)
    assert list(df["run"]) == ["dense", "bm25"] and list(df.columns) == ["run", "AP", "AP lo", "AP hi"]


def test_eval_csv_of_the_sample_is_unchanged_by_the_reflow(cli, sample_db):
    code, out, _ = cli("eval", "-m", "AP", "-f", "csv", "--db", sample_db)
    assert code == 0 and len(list(csv.DictReader(io.StringIO(out)))) == 6
