"""The pages in a real browser: headless Chromium driven by selenium, on a live `evalstore serve`
and on the static report opened from disk (file://). For each: the leaderboard and one page of each
kind load, a click on a column header sorts the table, a topic link is followed, and the browser's
console shows no error (a JavaScript error, a refused resource, a request that failed). The
screenshots go to $EVALSTORE_SCREENSHOTS (default: a temporary folder, printed) for review.

Needs selenium (the web-test extra) and Debian's chromium and chromium-driver (.ci/run installs
them when it runs as root); skips with the reason otherwise."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from websupport import XSS, Server

import evalstore
from evalstore.base.resources import sample_dir
from evalstore.web.static_site import write_report

SAMPLE_RUNS = sample_dir() / "runs"

CHROMIUM = os.environ.get("EVALSTORE_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("EVALSTORE_CHROMEDRIVER", "/usr/bin/chromedriver")

webdriver = pytest.importorskip(
    "selenium.webdriver", reason='selenium is not installed (pip install "evalstore[web-test]")'
)
if not (Path(CHROMIUM).is_file() and Path(CHROMEDRIVER).is_file()):
    pytest.skip(
        f"needs Chromium and its driver ({CHROMIUM}, {CHROMEDRIVER}); on Debian: apt-get install -y chromium "
        "chromium-driver",
        allow_module_level=True,
    )

from selenium.common.exceptions import NoAlertPresentException  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402


@pytest.fixture(scope="module")
def shots() -> Path:
    folder = Path(os.environ.get("EVALSTORE_SCREENSHOTS") or tempfile.mkdtemp(prefix="evalstore-screenshots-"))
    folder.mkdir(parents=True, exist_ok=True)
    print(f"\nscreenshots: {folder}")
    return folder


@pytest.fixture(scope="module")
def driver():
    profile = tempfile.mkdtemp(prefix="evalstore-chromium-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-dev-shm-usage",
        f"--user-data-dir={profile}",
        "--window-size=1360,1000",
    ):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    d = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    d.set_page_load_timeout(30)
    yield d
    d.quit()
    shutil.rmtree(profile, ignore_errors=True)


def _no_console_errors(d, where: str, status_of: str | None = None) -> None:
    """No error or warning in the console; ``status_of``: a page expected to answer 404 (the
    browser logs the status of the page itself, and nothing else may appear)."""
    entries = d.get_log("browser")
    bad = [e for e in entries if e.get("level") in ("SEVERE", "WARNING")]
    if status_of:
        bad = [
            e
            for e in bad
            if not e["message"].startswith(
                f"{status_of} - Failed to load resource: the server responded with a status of 404"
            )
        ]
    assert not bad, f"{where}: browser console: {bad}"
    try:
        alert = d.switch_to.alert
        raise AssertionError(f"{where}: a script ran and opened an alert: {alert.text!r}")
    except NoAlertPresentException:
        pass


def _shot(d, folder: Path, name: str) -> None:
    height = d.execute_script("return Math.min(document.body.scrollHeight + 40, 4000)")
    d.set_window_size(1360, max(700, int(height)))
    d.save_screenshot(str(folder / f"{name}.png"))
    d.set_window_size(1360, 1000)


def _click(d, xpath: str) -> None:
    """Click an element as a person would: scrolled to the middle of the window first."""
    el = d.find_element(By.XPATH, xpath)
    d.execute_script("arguments[0].scrollIntoView({block: 'center'});", el)
    el.click()


def _column(d, table_id: str, index: int) -> list[str]:
    return [c.text for c in d.find_elements(By.CSS_SELECTOR, f"#{table_id} tbody tr td:nth-child({index})")]


def _visit(d, url: str, folder: Path, name: str) -> None:
    d.get(url)
    assert d.find_element(By.TAG_NAME, "h1").text, url
    _shot(d, folder, name)
    _no_console_errors(d, url, status_of=url if name.endswith("not-found") else None)


def _walk(d, start: str, folder: Path, prefix: str, extra: list[tuple[str, str]]) -> None:
    """The leaderboard of AP: sort by a column, follow a run link, then a topic link; then the other pages."""
    d.get(start)
    assert d.find_element(By.TAG_NAME, "h1").text == "AP on sample"
    assert XSS in _column(d, "leaderboard", 2)  # shown as text
    _shot(d, folder, f"{prefix}-leaderboard")
    _no_console_errors(d, start)
    before = _column(d, "leaderboard", 2)
    _click(d, "//table[@id='leaderboard']//th[normalize-space()='mean']")
    after = _column(d, "leaderboard", 2)
    assert after != before and sorted(after) == sorted(before)
    assert after[0] == "random" and after[-1] == "rerank"  # ascending mean after the first click
    assert (
        d.find_element(By.XPATH, "//table[@id='leaderboard']//th[normalize-space()='mean']").get_attribute("aria-sort")
        == "ascending"
    )
    _shot(d, folder, f"{prefix}-leaderboard-sorted")
    _no_console_errors(d, "after sorting")
    _click(d, "//table[@id='leaderboard']//a[normalize-space()='bm25']")
    assert d.find_element(By.TAG_NAME, "h1").text == "Run bm25"
    _shot(d, folder, f"{prefix}-run")
    _no_console_errors(d, "run page")
    topics_before = _column(d, "topics", 1)
    _click(d, "//table[@id='topics']//th[normalize-space()='AP']")
    assert _column(d, "topics", 1) != topics_before
    _click(d, "(//table[@id='topics']//tbody//td//a)[1]")
    assert d.find_element(By.TAG_NAME, "h1").text.startswith("Topic S")
    assert d.find_elements(By.CSS_SELECTOR, "#list-1 tbody tr") and d.find_elements(By.CSS_SELECTOR, "#list-2 tbody tr")
    _shot(d, folder, f"{prefix}-topic")
    _no_console_errors(d, "topic page")
    for url, name in extra:
        _visit(d, url, folder, f"{prefix}-{name}")


def test_live_server_in_chromium(driver, web_store, shots):
    with Server(web_store) as srv:
        base = srv.url.rstrip("/")
        _walk(
            driver,
            base + "/",
            shots,
            "serve",
            [
                (base + "/compare?baseline=bm25&run=rerank&metric=AP", "compare"),
                (base + "/meta", "meta"),
                (
                    base + "/sql?q=SELECT+run%2C+round(mean%2C+4)+AS+mean+FROM+leaderboard+WHERE+metric%3D%27AP%27",
                    "sql",
                ),
                (base + "/runs/no-such-run", "not-found"),
            ],
        )
        # the 404 page is a page, not a traceback
        assert driver.find_element(By.TAG_NAME, "h1").text == "Not found"


def test_static_report_from_disk_in_chromium(driver, web_store, shots, tmp_path):
    out = tmp_path / "report"
    with evalstore.open(web_store, read_only=True) as s:
        write_report(s, out, "sample", ["AP", "nDCG@10"])
    index = out.resolve().as_uri()
    _walk(
        driver,
        index + "/leaderboard-AP.html",
        shots,
        "report",
        [
            (index + "/compare/AP/bm25.html", "compare"),
            (index + "/contrast/AP/bm25.html", "contrast"),
            (index + "/meta.html", "meta"),
            (index + "/index.html", "leaderboard-both"),
            (index + "/leaderboard-nDCG@10.html", "leaderboard-ndcg"),
        ],
    )


def test_explorer_of_issue_32_in_chromium(driver, web_store, shots, tmp_path):
    """Several metrics side by side (a metric's interval column sorts), the contrast view from the
    compare page, and a topic page with its query and document snippets."""
    (tmp_path / "topics.tsv").write_text("".join(f"S0{i}\tsample query number {i}\n" for i in range(1, 9)))
    with evalstore.open(web_store) as s:
        docs = [d for (d,) in s.sql("SELECT DISTINCT doc FROM run_rows WHERE topic = 'S03' ORDER BY doc").rows]
        (tmp_path / "docs.tsv").write_text("".join(f"{d}\tthe text of {d}, shown beside its rank\n" for d in docs))
        s.ingest_topics(tmp_path / "topics.tsv")
        s.ingest_docs(tmp_path / "docs.tsv")
    with Server(web_store) as srv:
        base = srv.url.rstrip("/")
        driver.get(base + "/?metric=nDCG@10&metric=AP&metric=RR")
        assert driver.find_element(By.TAG_NAME, "h1").text == "nDCG@10, AP, RR on sample"
        _no_console_errors(driver, "leaderboard of three metrics")
        before = _column(driver, "leaderboard", 2)
        _click(driver, "//table[@id='leaderboard']//th[normalize-space()='AP 95 % CI']")
        after = _column(driver, "leaderboard", 2)
        assert sorted(after) == sorted(before) and after != before
        _shot(driver, shots, "explorer-leaderboard-metrics")
        # a column added from the chips
        _click(driver, "//div[@id='columns']//a[normalize-space()='+ P@10']")
        assert driver.find_element(By.TAG_NAME, "h1").text == "nDCG@10, AP, RR, P@10 on sample"
        driver.get(base + "/compare?baseline=bm25&run=rerank&metric=AP")
        assert "Δ" in driver.find_element(By.ID, "delta").text
        _click(driver, "//a[starts-with(normalize-space(), 'Where the runs differ')]")
        assert driver.find_element(By.TAG_NAME, "h1").text == "Where rerank and bm25 differ"
        _no_console_errors(driver, "contrast")
        _shot(driver, shots, "explorer-contrast")
        _click(driver, "(//table[@id='contrast']//tbody//td//a)[1]")
        assert driver.find_element(By.TAG_NAME, "h1").text.startswith("Topic S0")
        driver.get(base + "/topics/S03?runs=bm25,rerank&depth=10")
        assert driver.find_element(By.CSS_SELECTOR, "#query .q").text == "sample query number 3"
        snippets = driver.find_elements(By.CSS_SELECTOR, "#list-1 .snippet")
        assert len(snippets) == 10 and snippets[0].text.startswith("the text of ")
        _no_console_errors(driver, "topic with texts")
        _shot(driver, shots, "explorer-topic-texts")


def test_a_board_of_several_kinds_of_runs_in_chromium(driver, web_store, shots):
    """A fused and a scratch run on the board: the page counts the kinds and shows each run's,
    while a writer works beside the server without --wait (issue 44.2, 44.10)."""
    with evalstore.open(web_store) as s:
        s.fuse(["bm25", "dense"], "rrf", name="bm25+dense")
        s.evaluate("sample", ["bm25+dense"], ["AP"])
    with Server(web_store) as srv:
        base = srv.url.rstrip("/")
        _visit(driver, base + "/?metric=AP", shots, "serve-kinds-before")
        with evalstore.open(web_store) as s:  # written while the server runs: no --wait needed
            s.ingest_run(SAMPLE_RUNS / "bm25.txt", name="mine", kind="scratch", progress=False)
            s.evaluate("sample", ["mine"], ["AP"])
        _visit(driver, base + "/?metric=AP", shots, "serve-kinds")
        sub = driver.find_element(By.CSS_SELECTOR, "p.sub").text
        assert "(8 submitted, 1 fused, 1 scratch)" in sub
        heads = [h.text for h in driver.find_elements(By.CSS_SELECTOR, "#leaderboard thead th")]
        assert "kind" in heads
        kinds = {
            row.find_elements(By.TAG_NAME, "td")[heads.index("run")].text: row.find_elements(By.TAG_NAME, "td")[
                heads.index("kind")
            ].text
            for row in driver.find_elements(By.CSS_SELECTOR, "#leaderboard tbody tr")
        }
        assert kinds["mine"] == "scratch" and kinds["bm25+dense"] == "fused" and kinds["rerank"] == "submitted"


def test_generated_answers_in_chromium(driver, rag_db, shots):
    """The RAG sample evaluated by its nuggets and its citations' support: the leaderboard of a
    nugget metric, the comparison against a baseline run, and the topic page with the query, the
    nuggets with their importance and assignments, and two answers with their citations marked by
    their support labels and their references."""
    with evalstore.open(rag_db) as s:
        s.evaluate("manual", None, ["strict_vital", "vital", "all"], ci="t")
        s.evaluate("support.manual", None, ["support_precision", "support_recall"])
    with Server(rag_db) as srv:
        base = srv.url.rstrip("/")
        _visit(driver, base + "/?qrels=manual&metric=vital", shots, "answers-leaderboard")
        assert driver.find_element(By.TAG_NAME, "h1").text == "vital on manual"
        assert len(_column(driver, "leaderboard", 2)) == 6
        _visit(driver, base + "/compare?baseline=rag01&run=rag05&qrels=manual&metric=vital", shots, "answers-compare")
        driver.get(base + "/topics/R002?qrels=manual&metric=vital&runs=rag05,rag01")
        assert driver.find_element(By.CSS_SELECTOR, "#query .q").text.startswith("what does sleep do to")
        nuggets = driver.find_elements(By.CSS_SELECTOR, "#nuggets tbody tr")
        assert nuggets and driver.find_elements(By.CSS_SELECTOR, "#nuggets span.importance.vital")
        assert {e.text for e in driver.find_elements(By.CSS_SELECTOR, "#nuggets span.assign")} <= {
            "supported", "partial", "not", "not assigned"}  # fmt: skip
        assert driver.find_elements(By.CSS_SELECTOR, "#answer-1 p.sentence")
        assert driver.find_elements(By.CSS_SELECTOR, "#answer-1 span.cite.s-full, #answer-2 span.cite.s-full")
        assert driver.find_elements(By.CSS_SELECTOR, "#references-1 tbody tr")
        _no_console_errors(driver, "topic page of answers")
        _shot(driver, shots, "answers-topic")
        # the same answers under the support labels the page shows (a set of kind support)
        _click(driver, "//p[contains(@class, 'legend')]//a[starts-with(normalize-space(), 'support.')]")
        assert "qrels=support." in driver.current_url
        assert driver.find_elements(By.CSS_SELECTOR, "#nuggets tbody tr")  # the nuggets shown there too
        _no_console_errors(driver, "topic page under the support labels")


def test_the_reusability_analysis_in_chromium(driver, web_store, shots, tmp_path):
    """The meta page's reusability analysis, live and in the static report: its slope charts are
    drawn (a line per run with its ranks as a tooltip), the hostile run name stays text."""
    with evalstore.open(web_store, read_only=True) as s:
        aid = s.sql("SELECT analysis_id FROM meta_runs WHERE kind = 'reusability'").rows[0][0]
        write_report(s, tmp_path / "report", "sample", ["AP"])
    with Server(web_store) as srv:
        pages = [(srv.url.rstrip("/") + f"/meta#analysis-{aid}", "serve"),
                 ((tmp_path / "report").resolve().as_uri() + f"/meta.html#analysis-{aid}", "report")]  # fmt: skip
        for url, where in pages:
            driver.get(url)
            section = driver.find_element(By.ID, f"analysis-{aid}")
            assert "Reusability of the judgments" in section.text
            tips = [t.get_attribute("textContent") for t in section.find_elements(By.CSS_SELECTOR, "svg g > title")]
            assert sum("-> " in t for t in tips) == 2 * 8 and any(t.startswith(XSS + ": rank") for t in tips)
            _no_console_errors(driver, f"reusability ({where})")
            driver.execute_script("arguments[0].scrollIntoView();", section)
            section.screenshot(str(shots / f"{where}-meta-reusability.png"))
