"""The web pages at scale and with hostile input (issue 30.8), and the report's folder (30.9, 30.11):
bounded parsing of ?runs=, pages of a run with many topics, capped comparisons, a report that
says what it left out, never writes through a link and is not blocked by a killed one."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from html import unescape
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from webfixtures import client_of

import evalstore
from evalstore.web import context as pages
from evalstore.web import static_site as report_mod
from evalstore.web.pages import topic
from evalstore.web.static_site import ReportError, write_report

EVALSTORE = [sys.executable, "-m", "evalstore"]
N_TOPICS = 250


@pytest.fixture(scope="module")
def wide_store(tmp_path_factory) -> Path:
    """250 topics (1, 2, ..., 250: natural order differs from text order), two runs, AP scored."""
    path = tmp_path_factory.mktemp("wide") / "wide.duckdb"
    qrels = {str(t): {"d1": 1, "d2": 0} for t in range(1, N_TOPICS + 1)}
    a = {str(t): {"d1": 2.0, "d2": 1.0} if t % 3 else {"d2": 2.0, "d1": 1.0} for t in range(1, N_TOPICS + 1)}
    b = {str(t): {"d2": 2.0, "d1": 1.0} if t % 2 else {"d1": 2.0, "d2": 1.0} for t in range(1, N_TOPICS + 1)}
    with evalstore.open(path) as s:
        s.ingest_qrels(qrels, name="q", progress=False)
        s.ingest_run(a, name="a", progress=False)
        s.ingest_run(b, name="b", progress=False)
        s.evaluate("q", None, ["AP"])
    return path


@pytest.fixture
def small_pages(monkeypatch):
    monkeypatch.setattr(pages, "PAGE_TOPICS", 100)


# --------------------------------------------------------------------------- 30.8 hostile ?runs=
def test_runs_parameter_is_parsed_in_bounded_time(client):
    t0 = time.monotonic()
    r = client.get("/topics/S01?runs=" + "," * 30_000)  # as typed (httpx refuses longer queries)
    assert r.status_code == 400 and "runs=" in r.text
    assert time.monotonic() - t0 < 2
    t0 = time.monotonic()
    with pytest.raises(pages.BadRequest):
        topic.resolve_runs("a," * 200_000, {"a"})
    assert time.monotonic() - t0 < 0.1


# --------------------------------------------------------------------------- 30.8 a run's pages
def test_a_run_with_many_topics_is_paged(wide_store, small_pages):
    with client_of(wide_store) as c:
        first = c.get("/runs/a", params={"metric": "AP"})
        assert first.status_code == 200
        rows = re.findall(r'<td class="name" data-v="\d+">(?:<a [^>]*>)?([^<]+)<', first.text)
        assert rows == [str(t) for t in range(1, 101)]  # natural order: 1, 2, ..., 100
        assert "topics 1–100 of 250" in first.text and "page=2" in first.text
        third = c.get("/runs/a", params={"metric": "AP", "page": "3"})
        rows3 = re.findall(r'<td class="name" data-v="\d+">(?:<a [^>]*>)?([^<]+)<', third.text)
        assert rows3 == [str(t) for t in range(201, 251)] and "next page" not in third.text
        assert c.get("/runs/a", params={"metric": "AP", "page": "4"}).status_code == 400
        assert c.get("/runs/a", params={"metric": "AP", "page": "x"}).status_code == 400
    # the counts over all topics are those of the whole run, not of the page
    with evalstore.open(wide_store, read_only=True) as s:
        from evalstore.web import queries as q

        scores = q.run_scores(s, "a", "q", "AP")
        stats = q.topic_stats(s, "q", "AP")
        above = sum(scores[t] > stats[t].median for t in scores)
        below = sum(scores[t] < stats[t].median for t in scores)
        assert q.run_against_topics(s, "a", "q", "AP")[:2] == (above, below)
    assert f"{above} / {N_TOPICS - above - below} / {below}" in first.text


def test_compare_page_is_capped_with_a_note(wide_store, small_pages):
    with client_of(wide_store) as c:
        r = c.get("/compare", params={"baseline": "a", "run": "b", "metric": "AP"})
    assert r.status_code == 200
    assert "50 largest wins and the 50 largest losses of 250 topics" in r.text
    assert r.text.count('<td class="name"') <= 100


def test_rank_intervals_are_capped_by_trials_times_topics(wide_store, monkeypatch):
    """Issue 39.4: three parallel ?rank_ci=bootstrap&trials=20000 on a 10,000-topic store reached
    1.9 GB and two 500s; the page caps trials x topics (and the draws are made in blocks)."""
    from evalstore.web import rank_intervals as rank

    monkeypatch.setattr(rank, "MAX_DRAWS", 100 * N_TOPICS)  # as 10,000,000 allows 1,000 trials over 10,000 topics
    with client_of(wide_store) as c:
        r = c.get("/", params={"qrels": "q", "metric": "AP", "rank_ci": "bootstrap", "trials": "101"})
        assert r.status_code == 400 and "at most 100 trials over these 250 topics" in r.text
        r = c.get("/", params={"qrels": "q", "metric": "AP", "rank_ci": "bootstrap", "trials": "100"})
        assert r.status_code == 200 and "rank" in r.text


# --------------------------------------------------------------------------- 30.8 the report at scale
def test_report_says_what_it_left_out(wide_store, tmp_path, monkeypatch):
    monkeypatch.setattr(report_mod, "MAX_TOPIC_PAGES", 40)
    monkeypatch.setattr(report_mod, "MAX_RUN_PAGES", 1)
    out = tmp_path / "site"
    with evalstore.open(wide_store, read_only=True) as s:
        res = write_report(s, out, "q", ["AP"])
    assert len(list((out / "topics").iterdir())) == 40
    assert len(list((out / "runs").rglob("*.html"))) == 1
    assert any("210 of the 250 topics" in w for w in res.left_out) and any("1 of the 2 runs" in w for w in res.left_out)
    assert all(n.startswith("note: left out") for n in res.notes())
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "This report left out the pages of 1 of the 2 runs" in index and "210 of the 250 topics" in index
    # every relative link names a file the report holds (no link to a page left out)
    for page in out.rglob("*.html"):
        for href in re.findall(r'(?:href|src)="([^"]+)"', page.read_text(encoding="utf-8")):
            href = unescape(href)
            if href.startswith(("#", "data:")):
                continue
            assert (page.parent / unquote(urlsplit(href).path)).resolve().is_file(), (page, href)


# --------------------------------------------------------------------------- 30.9 links and kills
def _victim(tmp_path: Path) -> Path:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "important.txt").write_text("precious")
    (victim / "evalstore.css").write_text("mine")
    return victim


def _earlier_report(web_store: Path, out: Path) -> None:
    with evalstore.open(web_store, read_only=True) as s:
        write_report(s, out, "sample", ["AP"])


@pytest.mark.parametrize("plant", ["index.html", "static"])
def test_report_never_writes_through_a_link(web_store, tmp_path, plant):
    victim = _victim(tmp_path)
    out = tmp_path / "site"
    _earlier_report(web_store, out)
    target = out / plant
    if target.is_dir():
        for f in target.iterdir():
            f.unlink()
        target.rmdir()
    else:
        target.unlink()
    os.symlink(victim / "important.txt" if plant == "index.html" else victim, target)
    with evalstore.open(web_store, read_only=True) as s, pytest.raises(ReportError, match="a link"):
        write_report(s, out, "sample", ["AP"])
    assert (victim / "important.txt").read_text() == "precious" and (victim / "evalstore.css").read_text() == "mine"
    assert sorted(p.name for p in victim.iterdir()) == ["evalstore.css", "important.txt"]


def test_report_refuses_a_link_as_its_folder(web_store, tmp_path):
    victim = _victim(tmp_path)
    os.symlink(victim, tmp_path / "site")
    with evalstore.open(web_store, read_only=True) as s, pytest.raises(ReportError, match="symbolic link"):
        write_report(s, tmp_path / "site", "sample", ["AP"])
    assert sorted(p.name for p in victim.iterdir()) == ["evalstore.css", "important.txt"]


def test_a_failed_report_leaves_the_earlier_one(web_store, tmp_path, monkeypatch):
    out = tmp_path / "site"
    _earlier_report(web_store, out)
    before = sorted(str(p.relative_to(out)) for p in out.rglob("*"))

    def broken(*args, **kwargs):
        raise RuntimeError("the disk went away")

    from dataclasses import replace

    from evalstore.web import routes

    topic_broken = tuple(replace(r, view=broken) if r.name == "topic" else r for r in routes.ROUTES)
    monkeypatch.setattr(routes, "ROUTES", topic_broken)
    with evalstore.open(web_store, read_only=True) as s, pytest.raises(RuntimeError):
        write_report(s, out, "sample", ["AP", "nDCG@10"])
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # nothing left aside


def test_a_killed_report_does_not_block_the_next(web_store, tmp_path):
    out = tmp_path / "site"
    cmd = [*EVALSTORE, "report", str(out), "--db", str(web_store), "-m", "AP", "-m", "nDCG@10", "-m", "P@10"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    aside: list[Path] = []
    while not aside and proc.poll() is None and time.monotonic() < deadline:  # kill it while it writes
        aside = [p for p in tmp_path.iterdir() if p.name.startswith(".site.report-") or p.name == "site"]
        time.sleep(0.005)
    if proc.poll() is not None:
        pytest.skip("the report finished before it could be killed")
    time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not out.exists()  # the target is only ever the complete report
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert (out / "index.html").is_file()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".site.report-")] == []  # the stale one went


def test_fewer_metrics_leave_no_empty_folders(web_store, tmp_path):
    out = tmp_path / "site"
    with evalstore.open(web_store, read_only=True) as s:
        write_report(s, out, "sample", ["AP", "nDCG@10"])
        write_report(s, out, "sample", ["AP"])
    assert sorted(p.name for p in (out / "runs").iterdir()) == ["AP"]
    assert sorted(p.name for p in (out / "compare").iterdir()) == ["AP"]
    assert [d for d in out.rglob("*") if d.is_dir() and not any(d.iterdir())] == []


def test_report_folder_with_foreign_files_is_refused(web_store, tmp_path):
    out = tmp_path / "site"
    _earlier_report(web_store, out)
    (out / "runs" / "notes.txt").write_text("my notes")
    with evalstore.open(web_store, read_only=True) as s, pytest.raises(ReportError, match="notes.txt"):
        write_report(s, out, "sample", ["AP"])
    assert (out / "runs" / "notes.txt").read_text() == "my notes"
