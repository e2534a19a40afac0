"""Issue 32.1: `compare --effects` puts Δ with its interval (and d_z with --dz) in the paper table
itself, in the terminal, Markdown and LaTeX (one table, ready to paste, as ranx's
Output.to_latex()); the full dump (both intervals, d_z, SMD, tests) stays in csv/json; LaTeX escapes
every character it would not print as itself, through one function."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess

import pytest
from support import SAMPLE

import evalstore
from evalstore.output.text import tex_escape

BASE = ["compare", "-b", "bm25", "-m", "AP", "-m", "nDCG@10", "--no-save"]


def _data(cli, db, *extra):
    code, out, err = cli(*BASE, *extra, "-f", "csv", "--db", db)
    assert code == 0, err
    return {(r["metric"], r["run"]): r for r in csv.DictReader(io.StringIO(out))}


def _signed(v: float, d: int = 4) -> str:
    s = f"{v:.{d}f}"
    return s if s.startswith("-") or float(s) == 0 else "+" + s


def test_markdown_table_has_delta_and_interval_beside_each_mean(cli, sample_db):
    data = _data(cli, sample_db, "--effects")
    code, out, err = cli(*BASE, "--effects", "-f", "markdown", "--db", sample_db)
    assert code == 0, err
    table = [line for line in out.splitlines() if line.startswith("|")]
    assert table[0] == "| run | AP | Δ AP [95% CI] | nDCG@10 | Δ nDCG@10 [95% CI] |"
    assert len(table) == 2 + 6  # head, rule, six runs: one table, no dump below it
    for name in ("ci_boot_lo", "ci_t_lo", "| True", "direction", "p_adjusted", "smd", "comparisons"):
        assert name not in out
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]] for line in table[2:]}
    assert rows["bm25 (baseline)"][1] == "" and rows["bm25 (baseline)"][3] == ""
    for run in ("bm25_rm3", "dense", "hybrid", "random", "rerank"):
        for k, metric in enumerate(("AP", "nDCG@10")):
            d = data[(metric, run)]
            want = f"{_signed(float(d['diff']))} [{_signed(float(d['ci_t_lo']))}, {_signed(float(d['ci_t_hi']))}]"
            assert rows[run][2 * k + 1] == want, (run, metric)
    assert "Δ: the run's mean minus the baseline's (bm25) over 8 topics, with its 95% paired t interval" in out


def test_dz_when_asked_and_the_bootstrap_interval_with_the_bootstrap_test(cli, sample_db):
    extra = ("--dz", "-t", "bootstrap", "-B", "500")
    data = _data(cli, sample_db, *extra)
    code, out, err = cli(*BASE, *extra, "-f", "markdown", "--db", sample_db)
    assert code == 0, err
    head, _, *body = [line for line in out.splitlines() if line.startswith("|")]
    assert head == "| run | AP | Δ AP [95% CI] | d_z AP | nDCG@10 | Δ nDCG@10 [95% CI] | d_z nDCG@10 |"
    rerank = next([c.strip() for c in line.split("|")[2:-1]] for line in body if "| rerank |" in line)
    d = data[("AP", "rerank")]
    assert (
        rerank[1]
        == f"{_signed(float(d['diff']))} [{_signed(float(d['ci_boot_lo']))}, {_signed(float(d['ci_boot_hi']))}]"
    )
    assert rerank[2] == _signed(float(d["d_z"]), 2)
    assert "95% bootstrap percentile interval (B = 500, seed 0)" in out
    assert "d_z: Δ divided by the standard deviation of the per-topic differences" in out


def test_latex_is_one_table_with_spanning_heads_and_math_minus_signs(cli, sample_db):
    code, out, err = cli(*BASE, "--dz", "--adjust", "holm", "-f", "latex", "--db", sample_db)
    assert code == 0, err
    assert out.count("\\begin{tabular}") == 1 and out.count("\\begin{table}") == 1
    assert "\\multicolumn{3}{c}{AP} & \\multicolumn{3}{c}{nDCG@10}" in out
    assert "\\cmidrule(lr){2-4} \\cmidrule(lr){5-7}" in out
    assert "run & mean & $\\Delta$ {[}95\\% CI{]} & d\\_z & mean" in out
    random = next(line for line in out.splitlines() if line.startswith("random &"))
    assert re.search(r"\$-0\.\d{4}\$ \{\\footnotesize \$\[-0\.\d{4}, -0\.\d{4}\]\$\} & \$-\d\.\d\d\$", random)
    assert "Δ" not in out and "▲" not in out  # every symbol as LaTeX writes it
    assert "(not adjusted for multiple comparisons, as the p-values are)" in out
    assert "ci_boot" not in out and "True" not in out


def test_csv_and_json_keep_every_column(cli, sample_db):
    cols = ["qrels", "metric", "run", "other", "mean_run", "mean_other", "diff", "test", "statistic", "p_value"]
    cols += ["p_adjusted", "significant", "direction", "ci_t_lo", "ci_t_hi", "ci_boot_lo", "ci_boot_hi", "d_z", "smd"]
    code, out, _ = cli(*BASE, "--effects", "-f", "csv", "--db", sample_db)
    assert code == 0 and next(csv.reader(io.StringIO(out))) == cols
    code, out, _ = cli(*BASE, "--dz", "-f", "json", "--db", sample_db)
    rows = json.loads(out)
    assert len(rows) == 10 and list(rows[0]) == cols


def test_the_api_draws_the_same_table(sample_store):
    cmp = sample_store.compare("sample", "bm25", None, ["AP"], effects=True, save=False)
    md = cmp.to_markdown(dz=True)
    assert "| run | AP | Δ AP [95% CI] | d_z AP |" in md
    assert "d_z AP" not in cmp.to_markdown()
    assert "\\multicolumn{3}{c}{AP}" in cmp.to_latex(dz=True)
    plain = sample_store.compare("sample", "bm25", None, ["AP"], save=False)
    assert "Δ" not in plain.to_markdown() and "multicolumn" not in plain.to_latex()  # no effects: as before


def test_tex_escape_writes_every_character_as_itself():
    assert tex_escape("<0.001") == "\\textless{}0.001"
    assert tex_escape("a>b|c") == "a\\textgreater{}b\\textbar{}c"
    assert tex_escape("run--x") == "run-{}-x" and tex_escape("a---b") == "a-{}-{}-b"
    assert tex_escape("[x]") == "{[}x{]}"  # never the optional argument of the row's \\ above
    assert tex_escape("Δ ▲ ▼ ± ≤ ≥ τ") == "$\\Delta$ $\\uparrow$ $\\downarrow$ $\\pm$ $\\leq$ $\\geq$ $\\tau$"
    assert tex_escape('"q"') == "\\texttt{\\char34}q\\texttt{\\char34}"
    assert tex_escape("50% & $5 #1 a_b {c} ~ ^ \\") == (
        "50\\% \\& \\$5 \\#1 a\\_b \\{c\\} \\textasciitilde{} \\textasciicircum{} \\textbackslash{}"
    )
    assert tex_escape("line\nbreak") == "line\\textbackslash{}x0abreak"  # printable first: no new row


HOSTILE = ["a<b>c", "x|y", "run--2", 'q"uote', "[bracketed]", "p_bm25 & 50% $#1 ~^\\"]


@pytest.mark.skipif(shutil.which("pdflatex") is None or shutil.which("pdftotext") is None,
                    reason="needs pdflatex and pdftotext (apt-get install texlive-latex-base texlive-latex-recommended "
                    "poppler-utils)")  # fmt: skip
def test_latex_compiles_and_prints_hostile_names_exactly(tmp_path):
    """Every name, as pdflatex typesets it and pdftotext reads it back: no ¡ for <, no – for --."""
    with evalstore.open(tmp_path / "s.duckdb") as s:
        s.ingest_qrels(SAMPLE / "qrels.txt", name="it''s<1>", progress=False)
        for name, path in zip(HOSTILE, sorted((SAMPLE / "runs").glob("*.txt"))):
            s.ingest_run(path, name=name, progress=False)
        cmp = s.compare("it''s<1>", HOSTILE[0], HOSTILE[1:], ["AP", "P(rel=2)@10"], effects=True, save=False)
        table = cmp.to_latex(dz=True)
    doc = tmp_path / "t.tex"
    doc.write_text(
        "\\documentclass{article}\\usepackage{booktabs}\\usepackage[landscape,margin=1cm]{geometry}"
        f"\\begin{{document}}\n{table}\\end{{document}}\n"
    )
    r = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", doc.name], cwd=tmp_path,
                       capture_output=True, text=True)  # fmt: skip
    assert r.returncode == 0, r.stdout[-2000:]
    text = subprocess.run(["pdftotext", "-layout", "t.pdf", "-"], cwd=tmp_path, capture_output=True, text=True).stdout
    # LaTeX sets an apostrophe as one, ~ ^ as accents and \_ as a rule (no glyph): the same text
    text = text.replace("’", "'").replace("˜", "~").replace("ˆ", "^")
    for name in HOSTILE:
        assert name.replace("_", " ") in text, (name, text)
    assert "¡" not in text and "¿" not in text and "–" not in text
    assert "it''s<1>" in text and "∆: the run's mean minus the baseline's (a<b>c)" in text
