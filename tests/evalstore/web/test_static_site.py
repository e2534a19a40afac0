"""`evalstore report` (static pages with relative links, safe file names), the two commands' CLI
(missing extra, missing store, --host warning, imports), and a writer working while `serve` runs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from html import unescape
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from websupport import ODD, XSS, Server

import evalstore
from evalstore.base.resources import sample_dir
from evalstore.web.context import NotFound
from evalstore.web.links import file_name, file_names
from evalstore.web.page_charts import appendix_chart
from evalstore.web.pages.topic import resolve_runs
from evalstore.web.static_site import ReportError, write_report

EVALSTORE = [sys.executable, "-m", "evalstore"]


# --------------------------------------------------------------------------- file names and links
def test_file_names_are_readable_safe_and_distinct():
    # readable where the name is a safe file name (issue 32 item 5)
    for name in ("nDCG@10", "AP(rel=2)", "dl19-bm25", "P_10", "bm25+rm3", "a.b", "RR(rel=2)@10"):
        assert file_name(name) == name
    names = [
        "bm25", "BM25", "Bm25", "a/b", "a_2fb", "a_b", "a-b", "../etc/passwd", "..", ".", "", "con", "CON", "nul",
        "con.txt", "topic 1", "topic\t1", "naïve", "日本", "a%2Fb", "x" * 300, "x" * 299 + "y", XSS, ODD, "a.html",
        "A.HTML", "trailing.", ".hidden", "a?b", "a*b", 'a"b', "a:b", "a|b", "a\\b",
    ]  # fmt: skip
    stems = file_names(names)
    assert len(set(stems.values())) == len(names)
    assert len({s.lower() for s in stems.values()}) == len(names)  # distinct on a case-insensitive file system too
    for s in stems.values():
        assert re.fullmatch(r"[A-Za-z0-9._@+=,()\-]+", s), s
        assert len(s) <= 110 and s.split(".")[0].lower() not in ("con", "nul", "prn", "aux")
        assert not s.startswith(".") and not s.endswith(".") and "/" not in s
    # a short hash only where needed: the unsafe and the names that differ only in case
    assert stems["a-b"] == "a-b" and stems["a_b"] == "a_b" and stems["naïve"].startswith("na_ve-")
    assert stems["bm25"] != "bm25" and stems["BM25"] != "BM25"
    assert file_names(["bm25", "dl19-bm25"]) == {"bm25": "bm25", "dl19-bm25": "dl19-bm25"}


def test_runs_parameter_with_commas_in_names():
    known = {"a", "b", "a,b", "c,d"}
    assert resolve_runs("a,b", known) == ["a,b"]
    assert resolve_runs("c,d,a", known) == ["c,d", "a"]
    assert resolve_runs("b,a", known) == ["b", "a"]
    with pytest.raises(NotFound):
        resolve_runs("b,zzz", known)


def test_svg_text_is_escaped():
    from evalstore.web.render import chart_svg

    chart = chart_svg(
        appendix_chart([XSS, "t&2"], [0.5, None], [0.4, 0.1], [0.9, 0.2], [0.1, 0.0], run=XSS, metric='"AP"')
    )
    assert (
        XSS not in chart and "&lt;script&gt;" in chart and "t&amp;2" in chart and "&#34;AP&#34;" in chart
    )  # Jinja writes " as &#34;


# --------------------------------------------------------------------------- the static report
def _links(page: Path) -> list[str]:
    return [unescape(h) for h in re.findall(r'(?:href|src)="([^"]+)"', page.read_text(encoding="utf-8"))]


def test_report_pages_and_relative_links(web_store, tmp_path):
    out = tmp_path / "report"
    with evalstore.open(web_store, read_only=True) as s:
        res = write_report(s, out, "sample", ["AP", "ndcg_cut_10"])
    assert res.metrics == ["AP", "nDCG@10"]
    assert (out / "index.html").is_file() and (out / "meta.html").is_file()
    # readable names (issue 32 item 5): the names themselves, a hash only for the unsafe ones
    assert (out / "leaderboard-nDCG@10.html").is_file() and (out / "leaderboard-AP.html").is_file()
    assert (out / "leaderboard-nDCG@10.csv").is_file() and (out / "runs" / "nDCG@10" / "bm25.html").is_file()
    stems = file_names(["bm25", "bm25_rm3", "dense", "hybrid", "random", "rerank", XSS, ODD])
    for m in ("AP", "nDCG@10"):
        for run in ("bm25", XSS, ODD):
            assert (out / "runs" / m / f"{stems[run]}.html").is_file()
            assert (out / "compare" / m / f"{stems[run]}.html").is_file()
        assert not (out / "compare" / m / "rerank.html").exists()  # the best run is the baseline
    assert (out / "contrast" / "AP" / "bm25.html").is_file() and not (out / "contrast" / "nDCG@10").exists()
    assert sorted(p.stem for p in (out / "topics").iterdir()) == [f"S0{i}" for i in range(1, 9)]
    # the index shows both metrics side by side; no page shows an inert chip of a metric not in the report
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "<h1>AP, nDCG@10 on sample</h1>" in index and "nDCG@10 95 % CI" in index
    for page in out.rglob("*.html"):
        assert '<span class="chip">' not in page.read_text(encoding="utf-8"), page
    # every link of every page is relative and names a file of the report (anchors and data: aside)
    pages = list(out.rglob("*.html"))
    assert len(pages) == 3 + 8 * 2 + 7 * 2 + 7 + 8 + 1  # leaderboards, runs, compare, contrast, topics, meta
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert XSS not in text
        for href in _links(page):
            if href.startswith(("#", "data:")):
                continue
            parts = urlsplit(href)
            assert not parts.scheme and not parts.netloc and not href.startswith("/"), (page, href)
            target = (page.parent / unquote(parts.path)).resolve()
            assert target.is_file(), (page, href)
            assert target.is_relative_to(out.resolve())
    # a second report into the same folder replaces the first; files of runs no longer shown go
    stale = out / "runs" / "AP" / "stale.html"
    assert not stale.exists()
    with evalstore.open(web_store, read_only=True) as s:
        res2 = write_report(s, out, "sample", ["P@10"])
    assert not (out / "leaderboard-nDCG@10.html").exists()
    assert (out / "runs" / "P@10" / "bm25.html").is_file()
    assert not (out / "runs" / "AP" / "bm25.html").exists()
    assert len(res2.files) == len([p for p in out.rglob("*") if p.is_file()])


def test_report_refuses_a_folder_of_other_files(web_store, tmp_path):
    (tmp_path / "mine.txt").write_text("keep me")
    with evalstore.open(web_store, read_only=True) as s, pytest.raises(ReportError, match="not empty"):
        write_report(s, tmp_path, "sample", ["AP"])
    assert (tmp_path / "mine.txt").read_text() == "keep me" and not (tmp_path / "index.html").exists()


def test_report_metric_without_scores(web_store, tmp_path):
    with evalstore.open(web_store, read_only=True) as s, pytest.raises(ReportError, match="evalstore eval"):
        write_report(s, tmp_path / "r", "sample", ["nDCG@5"])


def test_report_without_qrels_leaves_subsamples_aside(web_store, tmp_path):
    """The qrels set a report takes by default is the only judged set with scores, subsamples aside;
    with several, the error lists those sets, not the subsamples (issue 44.4)."""
    with evalstore.open(web_store) as s:
        s.create_subsamples("sample", [0.5], trials=2)
        s.evaluate_subsamples("sample", None, ["AP"])
    with evalstore.open(web_store, read_only=True) as s:
        assert write_report(s, tmp_path / "r1", None, ["AP"]).qrels == "sample"
    with evalstore.open(web_store) as s:
        s.ingest_qrels(sample_dir() / "qrels.judge.txt", name="judge", progress=False)
        s.evaluate("judge", ["bm25"], ["AP"])
    with evalstore.open(web_store, read_only=True) as s, pytest.raises(ReportError) as e:
        # (the web store also holds the leave-out subsamples of a reusability analysis, with scores)
        scored = "SELECT count(DISTINCT qrels) FROM scores WHERE qrels IN (SELECT name FROM subsamples)"
        n = s.sql(scored).rows[0][0]
        write_report(s, tmp_path / "r2", None, ["AP"])
    assert n >= 2 and str(e.value) == (
        f"the store has scores on 2 qrels sets (judge, sample; and on {n} subsample(s) of them); "
        "choose one with --qrels"
    )


def test_report_cli(web_store, tmp_path):
    out = tmp_path / "site"
    r = subprocess.run(
        [*EVALSTORE, "report", str(out), "--db", str(web_store), "-m", "AP"], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    assert "wrote" in r.stderr and (out / "index.html").is_file()
    r = subprocess.run(
        [*EVALSTORE, "report", str(out), "--db", str(tmp_path / "no.duckdb")], capture_output=True, text=True
    )
    assert r.returncode == 1 and "does not exist" in r.stderr and "Traceback" not in r.stderr


# --------------------------------------------------------------------------- the CLI
def test_help_imports_no_web_library():
    code = (
        "import sys, evalstore, evalstore.cli\n"
        "from typer.testing import CliRunner\n"
        "r = CliRunner().invoke(evalstore.cli.application(), ['--help'])\n"
        "assert r.exit_code == 0 and 'serve' in r.output and 'report' in r.output, r.output\n"
        "bad = [m for m in ('starlette', 'uvicorn', 'jinja2') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("command", ["serve", "report"])
def test_missing_extra_is_one_line(web_store, tmp_path, command):
    code = (
        "import sys\n"
        "for m in ('starlette', 'uvicorn', 'jinja2'): sys.modules[m] = None\n"
        "from evalstore.cli import main\n"
        f"sys.argv = ['evalstore', {command!r}] + sys.argv[1:]\n"
        "main()\n"
    )
    args = ["--db", str(web_store)] + ([str(tmp_path / "r")] if command == "report" else [])
    r = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True)
    assert r.returncode == 1
    assert r.stderr.strip().count("\n") == 0, r.stderr
    assert 'pip install "evalstore[web]"' in r.stderr and "Traceback" not in r.stderr


def test_serve_missing_store(tmp_path):
    r = subprocess.run([*EVALSTORE, "serve", "--db", str(tmp_path / "none.duckdb"), "--port", "0"], capture_output=True,
                       text=True, timeout=60)  # fmt: skip
    assert r.returncode == 1 and "does not exist" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "none.duckdb").exists()


def test_writer_works_while_serving(web_store, tmp_path):
    """DuckDB lets one process write or several read: the server opens the store per request, so
    ingest and eval succeed while it runs (without --wait: a writer waits for the server by
    default), and the next page shows the new run."""
    with Server(web_store) as srv:
        assert srv.startup < 10  # the target is 2 s; CI machines are slow and shared
        status, page = srv.get("/")
        assert status == 200 and "newrun" not in page
        env = {**os.environ, "EVALSTORE_DB": str(web_store)}
        ingest = subprocess.run([*EVALSTORE, "ingest", "run", str(sample_dir() / "runs" / "hybrid.txt"), "--name",
                                 "newrun"], capture_output=True, text=True, env=env)  # fmt: skip
        assert ingest.returncode == 0, ingest.stderr
        ev = subprocess.run([*EVALSTORE, "eval", "-q", "sample", "-m", "AP", "-r", "newrun"],
                            capture_output=True, text=True, env=env)  # fmt: skip
        assert ev.returncode == 0, ev.stderr
        status, page = srv.get("/?metric=AP")
        assert status == 200 and ">newrun</a>" in page
        assert srv.get("/runs/newrun?metric=AP")[0] == 200
        assert srv.get("/runs/nope")[0] == 404


def test_serve_on_all_interfaces_warns(web_store):
    with Server(web_store, "--host", "0.0.0.0") as srv:
        assert srv.get("/")[0] == 200
        err = srv.stop()
    assert "anyone who can reach this machine" in err
