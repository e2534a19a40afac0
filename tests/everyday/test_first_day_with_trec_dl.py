"""Everyday use, second round (issue 23): what a new user hit in a day with TREC DL, each through
the CLI or the API as that user ran it."""

from __future__ import annotations

import builtins
import subprocess
import sys
from collections import namedtuple

import pyarrow as pa
import pytest
from support import SAMPLE, sha256_of

import evalstore
from evalstore import meta
from evalstore.cli import failures

QRELS = {"q1": {"d1": 2, "d2": 0, "d3": 1}, "q2": {"d4": 1, "d5": 0}}
RUN = {"q1": {"d1": 1.2, "d3": 0.4, "d9": 0.1}, "q2": {"d5": 2.0, "d4": 1.0}}


# --------------------------------------------------------------------------- 1. one run in a notebook
def _expected() -> list[tuple[str, str, float, int]]:
    return evalstore.evaluate(QRELS, {"run": RUN}, ["AP", "nDCG@10"]).means


def test_one_run_in_any_shape_is_one_run_named_run():
    pd = pytest.importorskip("pandas")
    expected = _expected()
    rows = [(t, d, s) for t, docs in RUN.items() for d, s in docs.items()]
    qrows = [(t, d, g) for t, docs in QRELS.items() for d, g in docs.items()]
    run_df = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    qrels_df = pd.DataFrame(qrows, columns=["query_id", "doc_id", "relevance"])
    Scored = namedtuple("Scored", "query_id doc_id score")
    shapes = [
        RUN,  # {topic: {doc: score}}
        run_df,  # a pandas DataFrame (ir_measures' columns)
        pa.Table.from_pandas(run_df),  # an Arrow table
        [Scored(*r) for r in rows],  # namedtuples (ir_datasets' scoreddocs_iter())
        run_df.rename(columns={"query_id": "q_id"}),  # ranx's column names
    ]
    for run in shapes:
        assert evalstore.evaluate(QRELS, run, ["AP", "nDCG@10"]).means == expected, type(run)
    assert evalstore.evaluate(qrels_df, run_df, ["AP", "nDCG@10"]).means == expected
    ranx_qrels = qrels_df.rename(columns={"query_id": "q_id", "relevance": "score"})  # ranx calls the grade score
    assert evalstore.evaluate(ranx_qrels, run_df, ["AP", "nDCG@10"]).means == expected
    named = evalstore.evaluate(QRELS, RUN, ["AP"], run_name="bm25")
    assert {r for r, *_ in named.means} == {"bm25"}


def test_ir_measures_measures_and_ranx_objects_are_accepted():
    ir_measures = pytest.importorskip("ir_measures")
    res = evalstore.evaluate(QRELS, RUN, [ir_measures.nDCG @ 10, ir_measures.AP])
    assert [m for _, m, _, _ in res.means] == ["nDCG@10", "AP"]
    ranx = pytest.importorskip("ranx")
    res = evalstore.evaluate(ranx.Qrels(QRELS), ranx.Run(RUN, name="bm25"), ["AP", "nDCG@10"])
    assert res.means == [("bm25", m, v, n) for _, m, v, n in _expected()]


# --------------------------------------------------------------------------- 2. pandas
def test_to_df_without_pandas_names_the_install_command(monkeypatch):
    real_import = builtins.__import__

    def no_pandas(name, *args, **kwargs):
        if name == "pandas" or name.startswith("pandas."):
            raise ImportError("No module named 'pandas'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pandas)
    res = evalstore.evaluate(QRELS, RUN, ["AP"])
    with pytest.raises(evalstore.EvalstoreError, match=r'pip install "evalstore\[pandas\]"'):
        res.to_df()
    with pytest.raises(ImportError):  # also an ImportError, for code that catches those
        res.to_df()


# --------------------------------------------------------------------------- 3. diversity on plain qrels
def test_intent_aware_metrics_on_plain_qrels_say_so(cli, sample_db, tmp_path):
    code, _, err = cli("eval", "-m", "alpha_nDCG@20", "-m", "AP(rel=5)", "--db", sample_db)
    assert code == 0
    assert "alpha_nDCG@20 on qrels 'sample': the set has no subtopic judgments" in err
    assert (
        "AP(rel=5) on qrels 'sample': no judgment reaches the relevance threshold rel=5 (the highest grade is 3)" in err
    )
    res = evalstore.evaluate(QRELS, RUN, ["alpha_nDCG@10"])
    assert any("no subtopic judgments" in n for n in res.notes)
    web = tmp_path / "web.txt"
    web.write_text("1 1 d1 1\n1 2 d1 0\n1 1 d2 1\n")  # ndeval's layout: topic subtopic doc grade
    code, _, err = cli("ingest", "qrels", web, "--db", sample_db)
    assert code == failures.USER and "ingest with --format subtopic" in err
    assert cli("ingest", "qrels", web, "--format", "subtopic", "--db", sample_db)[0] == 0


# --------------------------------------------------------------------------- 4. compare
def test_compare_for_a_paper(cli, sample_db, tmp_path):
    base = ["compare", "-b", "bm25", "-m", "AP", "--db", sample_db, "--no-save"]  # --qrels: the only set
    # effects in the paper table itself (issue 32.1): Δ with its interval, d_z with --dz; no dump below
    code, out, _ = cli(*base, "--effects", "--dz", "-B", "200", "-f", "markdown")
    assert code == 0 and "| run | AP | Δ AP [95% CI] | d_z AP |" in out and "ci_t_lo" not in out
    code, _, _ = cli(*base, "--effects", "-B", "200", "-o", tmp_path / "c.tex")
    tex = (tmp_path / "c.tex").read_text()
    assert "$\\Delta$ {[}95\\% CI{]}" in tex and "ci\\_boot\\_lo" not in tex and tex.count("tabular}") == 2
    code, out, _ = cli(*base, "--effects", "-B", "200", "-f", "csv")  # the full dump: csv/json
    assert "ci_boot_lo" in out.splitlines()[0] and "smd" in out.splitlines()[0]
    code, out, _ = cli(*base, "-r", "dense", "-f", "latex")
    assert "1 run against bm25" in out and "1 runs" not in out
    code, out, err = cli(*base, "-r", "random", "--per-topic", "-f", "csv")
    lines = out.splitlines()
    assert lines[0] == "metric,topic,run,baseline,run_value,baseline_value,diff"
    diffs = [float(x.split(",")[-1]) for x in lines[1:]]
    assert len(diffs) == 8 and diffs == sorted(diffs) and "wins" in err and "losses" in err
    with evalstore.open(sample_db) as s:
        cmp = s.compare("sample", "bm25", ["dense", "random"], ["AP", "P@5"], save=False)
    pytest.importorskip("pandas")
    assert list(cmp.to_df().columns[:4]) == ["qrels", "metric", "run", "other"] and len(cmp.to_df()) == 4
    assert len(cmp.to_df(per_topic=True)) == 2 * 2 * 8
    assert cmp.to_latex().startswith("% evalstore") and "\\begin{tabular}" in cmp.to_latex()


def test_compare_plot_over_many_runs_is_a_heat_map(sample_db, tmp_path):
    import matplotlib.pyplot as plt

    from evalstore.output import plots

    with evalstore.open(sample_db) as s:
        for i in range(12):  # 17 runs against the baseline
            s.ingest_run(SAMPLE / "runs" / "dense.txt", name=f"copy{i:02d}", progress=False)
        cmp = s.compare("sample", "bm25", None, ["AP"], save=False)
    drawn = []
    real = plt.Figure.savefig

    def keep(fig, *a, **k):
        drawn.append(fig)
        return real(fig, *a, **k)

    plt.Figure.savefig = keep  # type: ignore[method-assign]
    try:
        plots.plot_compare(cmp, tmp_path / "c.png")
    finally:
        plt.Figure.savefig = real  # type: ignore[method-assign]
    ax = drawn[0].axes[0]
    assert ax.images and len(ax.get_yticklabels()) == 17  # one row per run, a colour bar beside
    assert (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"


# --------------------------------------------------------------------------- 5. one spelling per concept
def test_one_spelling_per_concept(cli, sample_db, tmp_path):
    for cmd in (["compare", "-b", "bm25", "-t", "randomisation"], ["compare", "-b", "bm25", "-t", "randomization"],
                ["meta", "tests", "-t", "randomization"], ["meta", "tests", "-t", "randomisation"]):  # fmt: skip
        code, out, err = cli(*cmd, "-m", "AP", "-B", "50", "--no-save", "--db", sample_db)
        assert code == 0, err
        assert "randomization" not in out + err  # printed one way
    code, _, err = cli("eval", "-m", "AP", "-o", tmp_path / "e.md", "--db", sample_db)
    assert code == 0 and (tmp_path / "e.md").read_text().startswith("| run |")
    code, _, err = cli("meta", "kendall", "-m", "AP", "-m", "P@5", "--db", sample_db)
    assert "stored as analysis" in err and "saved as" not in err
    help_text = subprocess.run(
        [sys.executable, "-m", "evalstore", "eval", "--help"], capture_output=True, text=True, env={"COLUMNS": "200"}
    ).stdout
    lines = [ln for ln in help_text.splitlines() if "--help" not in ln]  # typer draws its own --help so
    assert "--per-topic" in help_text and not any("<bool>" in ln for ln in lines)


def test_subsample_drop_asks_like_drop(cli, sample_db):
    assert cli("subsample", "--qrels", "sample", "--fractions", "0.5", "--db", sample_db)[0] == 0
    before = sha256_of(sample_db)
    code, _, err = cli("subsample", "drop", "--qrels", "sample", "--db", sample_db)
    assert code == failures.USAGE and "--yes" in err and sha256_of(sample_db) == before
    assert cli("subsample", "drop", "--qrels", "sample", "--yes", "--db", sample_db)[0] == 0


# --------------------------------------------------------------------------- 7. subsamples and defaults
def test_a_judged_set_with_subsamples_is_still_the_default(cli, sample_db):
    assert cli("subsample", "--qrels", "sample", "--fractions", "0.9,0.5", "--db", sample_db)[0] == 0
    code, out, err = cli("eval", "-m", "AP", "-f", "csv", "--db", sample_db)
    assert code == 0 and out.splitlines()[1].split(",")[1] == "sample"
    code, _, _ = cli("eval", "-m", "AP", "--subsamples", "all", "--db", sample_db)
    with evalstore.open(sample_db, read_only=True) as s:
        judged = s.sql("SELECT count(DISTINCT qrels) FROM scores WHERE NOT subsample").rows[0][0]
        subs = s.sql("SELECT count(DISTINCT qrels) FROM scores WHERE subsample").rows[0][0]
        assert (judged, subs) == (1, 2)
        assert s.sql("SELECT count(*) FROM leaderboard WHERE subsample").rows[0][0] > 0


# --------------------------------------------------------------------------- 8. honest claims
def test_claims_say_their_conditions(cli, sample_db, tmp_path):
    code, out, _ = cli("metrics", "Judged")
    assert "under --convention ir_measures" in out
    code, out, _ = cli("metrics", "AP")
    assert "under --convention ir_measures" not in out  # trec_eval's order is the default
    code, _, err = cli("export", "leaderboard", "-m", "AP", "-o", tmp_path / "lb.xlsx", "--db", sample_db)
    assert code == failures.USAGE and "cannot tell the format" in err and not (tmp_path / "lb.xlsx").exists()


# --------------------------------------------------------------------------- 9. a notebook and the CLI
def test_a_notebook_that_only_reads_shares_the_store_with_the_cli(sample_db):
    with evalstore.open(sample_db, read_only=True) as s:
        assert len(s.run_names()) == 6
        r = subprocess.run([sys.executable, "-m", "evalstore", "list", "runs", "--db", str(sample_db)],
                           capture_output=True, text=True)  # fmt: skip
        assert r.returncode == 0 and "bm25" in r.stdout
    with evalstore.open(sample_db):  # open for writing: the CLI is told how to share
        r = subprocess.run([sys.executable, "-m", "evalstore", "list", "runs", "--db", str(sample_db)],
                           capture_output=True, text=True)  # fmt: skip
        assert r.returncode == failures.BUSY and "read_only=True" in r.stderr


# --------------------------------------------------------------------------- 10. text
def test_texts_a_reader_meets(cli, sample_db):
    code, out, _ = cli("meta", "swap", "--help")
    assert "(ii)/(iii)" in " ".join(out.split())
    code, out, _ = cli("metrics")
    assert "Not-quite ERR, Eq. 10" in out
    code, out, _ = cli("db", "status", "--db", sample_db)
    assert "DuckDB 1.1" in out and "1.0 does not" in out
    with evalstore.open(sample_db) as s:
        an = meta.swap(s, "sample", ["AP"], trials=20, save=False)
    from evalstore.output import meta_tables

    assert any("(ii)/(iii)" in n for n in meta_tables.swap(an, paper=True).legend)
    # each table's legend explains its own columns: discpower's is not the swap method's
    with evalstore.open(sample_db) as s:
        dp = meta.discpower(s, "sample", ["AP"], trials=50, save=False)
    dp_notes = " ".join(meta_tables.discpower(dp, paper=True).legend)
    assert "sensitivity:" in dp_notes and "estimated diff." in dp_notes and "(ii)" not in dp_notes
