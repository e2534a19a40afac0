"""The explorer's run page says how a fused run was made ("fused from A, B by RRF (k = 60)"),
escaped, with "stale" when an input changed since; an ingested run's page says nothing more. In the
route test (Starlette's client) and in headless Chromium on a live `evalstore serve` (skipped
without selenium and Chromium; the screenshot goes to $EVALSTORE_SCREENSHOTS or a temporary
folder, printed)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from webfixtures import client_of

import evalstore

MADE = "fused from bm25, rerank by RRF (k = 60)"


@pytest.fixture
def fused_store(web_store) -> Path:
    with evalstore.open(web_store) as s:
        s.fuse(["bm25", "rerank"], "rrf", name="bm25<rrf>rerank")
        s.evaluate("sample", ["bm25<rrf>rerank"], ["AP"])
    return web_store


def test_the_run_page_says_how_the_run_was_made(fused_store):
    with client_of(fused_store) as c:
        r = c.get("/runs/bm25%3Crrf%3Ererank?metric=AP")
        assert r.status_code == 200
        assert f'<p class="sub" id="made">{MADE}</p>' in r.text
        assert "<h1>Run bm25&lt;rrf&gt;rerank</h1>" in r.text
        assert 'id="made"' not in c.get("/runs/bm25?metric=AP").text
    with evalstore.open(fused_store) as s:
        s.ingest_run({"S01": {"doc-S01-001": 1.0}}, name="rerank", replace=True)
    with client_of(fused_store) as c:
        r = c.get("/runs/bm25%3Crrf%3Ererank?metric=AP")
        assert f"{MADE}; stale: rerank replaced since" in r.text


def test_the_run_page_in_a_browser(fused_store):
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
    chromium, driver_path = "/usr/bin/chromium", "/usr/bin/chromedriver"
    if not (Path(chromium).is_file() and Path(driver_path).is_file()):
        pytest.skip("needs Chromium and chromium-driver")
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from websupport import Server

    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for arg in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1360,1000"):
        opts.add_argument(arg)
    server = Server(fused_store)
    d = webdriver.Chrome(service=Service(driver_path), options=opts)
    try:
        d.get(server.url + "runs/bm25%3Crrf%3Ererank?metric=AP")
        assert d.find_element(By.ID, "made").text == MADE
        folder = Path(os.environ.get("EVALSTORE_SCREENSHOTS") or tempfile.mkdtemp(prefix="evalstore-screenshots-"))
        folder.mkdir(parents=True, exist_ok=True)
        d.save_screenshot(str(folder / "run_fused.png"))
        print(f"\nscreenshot: {folder / 'run_fused.png'}")
    finally:
        d.quit()
        server.stop()


def test_a_paged_run_counts_every_figure_over_the_same_topics(tmp_path, monkeypatch):
    """The cards of a run's page (above / at / below the median, at the best score) count the same
    topics, all of the run's, whether the page shows them all or one page of them."""
    import re

    from evalstore.web import context
    from evalstore.web import queries as q

    n = 30
    qrels = {str(t): {"d1": 1, "d2": 0} for t in range(1, n + 1)}
    a = {str(t): {"d1": 2.0, "d2": 1.0} if t > 10 else {"d2": 2.0, "d1": 1.0} for t in range(1, n + 1)}
    b = {str(t): {"d2": 2.0, "d1": 1.0} for t in range(1, n + 1)}  # a is best on topics 11..30, tied below
    path = tmp_path / "w.duckdb"
    with evalstore.open(path) as s:
        s.ingest_qrels(qrels, name="q", progress=False)
        s.ingest_run(a, name="a", progress=False)
        s.ingest_run(b, name="b", progress=False)
        s.evaluate("q", None, ["AP"])
        above, below, equal, best = q.run_against_topics(s, "a", "q", "AP")
    assert best == n  # tied with b on 1..10, best on 11..30
    card = re.compile(r'topics at the best score</div><div class="v">(\d+)<')
    with client_of(path) as c:
        whole = c.get("/runs/a", params={"metric": "AP"}).text
    monkeypatch.setattr(context, "PAGE_TOPICS", 10)  # three pages: the first shows topics 1..10
    with client_of(path) as c:
        paged = c.get("/runs/a", params={"metric": "AP"}).text
    assert "page=2" in paged
    assert card.search(whole).group(1) == card.search(paged).group(1) == str(best)
    assert f"{above} / {equal} / {below}" in whole and f"{above} / {equal} / {below}" in paged
