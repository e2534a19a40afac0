"""Honest output files: the format is --format or the file's extension, a mismatch is refused before
any work, and every -o writes the format it says."""

from __future__ import annotations

import csv
import json

import pyarrow.parquet as pq
from support import run_cli


def test_export_leaderboard_by_extension(sample_db, tmp_path):
    base = ["export", "leaderboard", "--db", sample_db, "-q", "sample", "-m", "AP", "-m", "nDCG@10"]
    assert run_cli(*base, "-o", tmp_path / "l.csv").exit_code == 0
    rows = list(csv.DictReader((tmp_path / "l.csv").open()))
    assert run_cli(*base, "-o", tmp_path / "l.parquet").exit_code == 0
    pt = pq.read_table(tmp_path / "l.parquet").to_pylist()
    assert [r["run"] for r in pt] == [r["run"] for r in rows]
    assert [r["AP"] for r in pt] == [float(r["AP"]) for r in rows]  # full precision both ways
    assert run_cli(*base, "-o", tmp_path / "l.json").exit_code == 0
    assert json.loads((tmp_path / "l.json").read_text())[0]["AP"] == pt[0]["AP"]
    assert run_cli(*base, "-o", tmp_path / "l.md").exit_code == 0
    md = (tmp_path / "l.md").read_text().splitlines()
    assert md[0] == "| " + " | ".join(rows[0].keys()) + " |" and len(md) == len(rows) + 2
    assert run_cli(*base, "-o", tmp_path / "l.tex").exit_code == 0
    tex = (tmp_path / "l.tex").read_text()
    assert tex.startswith("\\begin{tabular}") and "\\toprule" in tex and tex.count("\\\\") == len(rows) + 1
    r = run_cli(*base, "-o", "-", "-f", "tsv")
    assert r.exit_code == 0 and r.stdout.splitlines()[0].split("\t")[0] == "run"


def test_mismatch_is_refused_before_any_work(sample_db, tmp_path):
    before = sample_db.read_bytes()
    r = run_cli(
        "export", "leaderboard", "--db", sample_db, "-q", "sample", "-m", "P@7", "-f", "csv", "-o", tmp_path / "l.json"
    )
    assert r.exit_code == 2 and "does not match" in r.output
    r = run_cli(
        "meta",
        "kendall",
        "--db",
        sample_db,
        "-q",
        "sample",
        "-m",
        "AP",
        "-m",
        "P@7",
        "-f",
        "latex",
        "-o",
        tmp_path / "k.md",
    )
    assert r.exit_code == 2 and "does not match" in r.output
    r = run_cli(
        "meta", "kendall", "--db", sample_db, "-q", "sample", "-m", "AP", "-m", "P@7", "-o", tmp_path / "no" / "k.csv"
    )
    assert r.exit_code == 2 and "does not exist" in r.output
    assert sample_db.read_bytes() == before  # nothing evaluated, nothing stored
    assert not list(tmp_path.glob("l.*")) and not list(tmp_path.glob("k.*"))


def test_meta_output_respects_format(sample_db, tmp_path):
    kendall = ["meta", "kendall", "--db", sample_db, "-q", "sample", "-m", "AP", "-m", "nDCG@10"]
    r = run_cli(*kendall, "-f", "json", "-o", tmp_path / "k.json")
    assert r.exit_code == 0, r.output
    data = json.loads((tmp_path / "k.json").read_text())
    assert isinstance(data, list) and data and isinstance(data[0], dict)
    r = run_cli(*kendall, "-o", tmp_path / "k.parquet")
    assert r.exit_code == 0, r.output
    assert pq.read_table(tmp_path / "k.parquet").num_rows == len(data)


def test_markdown_shows_every_name_as_written():
    """Issue 39.10: only `|` was escaped, so `<script>` in a run name came out live where the table
    is rendered, and a name with `\\|` lost its backslash. Every character Markdown reads as markup
    is escaped (checked with a CommonMark renderer with GitHub's tables: each cell renders as the
    text itself)."""
    from evalstore.output.table import Table
    from evalstore.output.writers import markdown_text

    names = [
        "<script>alert(1)</script>",
        "a\\|b",
        "run_a_b",
        "_x_",
        "*x*",
        "[l](http://e)",
        "&lt;",
        "`c`",
        "ok-1.5 [95% CI]",
    ]
    text = markdown_text(Table(["run", "AP"], [(n, 0.5) for n in names]))
    cells = [line.split(" | ")[0][2:] for line in text.splitlines()[2:]]
    assert cells == [
        "\\<script\\>alert(1)\\</script\\>",
        "a\\\\\\|b",
        "run_a_b",
        "\\_x\\_",
        "\\*x\\*",
        "[l\\](http://e)",
        "\\&lt;",
        "\\`c\\`",
        "ok-1.5 [95% CI]",
    ]
    assert "<script>" not in text


def test_csv_for_spreadsheets_shows_formulas_as_text(sample_db, tmp_path, cli):
    """Issue 39.10: CSV/TSV wrote `=cmd|...` unchanged (a spreadsheet runs it). csv and tsv stay exact
    (data for programs); `--format spreadsheet-csv` writes what a spreadsheet shows as text."""
    q = "SELECT '=cmd|'' /C calc''!A0' AS run, '+1' AS a, '-x' AS b, '@SUM(A1)' AS c, 'bm25' AS d, -0.5 AS v"
    code, out, err = cli("sql", q, "-f", "csv", "--db", sample_db)
    assert code == 0 and out.splitlines()[1].startswith("=cmd|")
    target = tmp_path / "lb.csv"
    code, out, err = cli("sql", q, "-f", "spreadsheet-csv", "-o", target, "--db", sample_db)
    assert code == 0, err
    assert target.read_text().splitlines()[1] == "'=cmd|' /C calc'!A0,'+1,'-x,'@SUM(A1),bm25,-0.5"
