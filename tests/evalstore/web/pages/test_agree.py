"""The explorer's rank intervals (``/?rank_ci=bootstrap|t``, the stored ones, the downloads) and the
page of a stored judge comparison (``/agree``, ``agree-N.html`` in the report), through Starlette's
test client and, when Chromium is installed, in a real browser."""

from __future__ import annotations

import csv
import io
import os
import re
import shutil
import tempfile
from html import unescape
from pathlib import Path

import pytest
from webfixtures import client_of
from websupport import XSS, Server

import evalstore
from evalstore.base.resources import sample_dir
from evalstore.web.static_site import write_report


def _cells(html: str, table_id: str) -> list[list[str]]:
    body = html.split(f'id="{table_id}"', 1)[1].split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)
    return [
        [unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", r, re.S)] for r in rows
    ]


@pytest.fixture
def judged_store(web_store) -> Path:
    """The web tests' store with a second judge of the sample, one stored comparison, and stored
    bootstrap rank intervals of AP."""
    with evalstore.open(web_store) as s:
        s.ingest_qrels(sample_dir() / "qrels.judge.txt", name=XSS, progress=False)  # a hostile qrels name too
        s.agree("sample", XSS, ["AP", "nDCG@10"], rel=2)
        s.evaluate("sample", None, ["AP"], rank_ci="bootstrap", trials=300, seed=2)
    return web_store


@pytest.fixture
def judged_client(judged_store):
    with client_of(judged_store) as c:
        yield c


def test_leaderboard_computes_rank_intervals_on_request(client):
    r = client.get("/?qrels=sample&metric=nDCG@10&rank_ci=bootstrap&trials=400&seed=3")
    assert r.status_code == 200
    assert "rank low" in r.text and "400 paired bootstrap resamples" in r.text and 'id="rank-chart"' in r.text
    rows = _cells(r.text, "leaderboard")
    assert all(int(row[1]) <= int(row[0]) <= int(row[2]) for row in rows)
    assert rows[0][3] == "rerank"
    again = client.get("/?qrels=sample&metric=nDCG@10&rank_ci=bootstrap&trials=400&seed=3")
    assert _cells(again.text, "leaderboard") == rows  # the seed fixes them
    t = client.get("/?qrels=sample&metric=nDCG@10&rank_ci=t")
    assert t.status_code == 200 and "Bonferroni" in t.text
    plain = client.get("/?qrels=sample&metric=nDCG@10")
    assert "rank low" not in plain.text  # none stored: no columns
    for bad in ("rank_ci=nope", "rank_ci=bootstrap&trials=0", "rank_ci=bootstrap&seed=x", "rank_ci=t&trials=99999999"):
        assert client.get(f"/?metric=AP&{bad}").status_code == 400, bad


def test_stored_rank_intervals_are_shown_and_downloaded(judged_client, judged_store):
    with evalstore.open(judged_store, read_only=True) as s:
        stored = {r: (lo, hi) for r, lo, hi in s.sql(
            "SELECT run, rank_lo, rank_hi FROM leaderboard WHERE qrels = 'sample' AND metric = 'AP'").rows}  # fmt: skip
    r = judged_client.get("/?qrels=sample&metric=AP")
    assert r.status_code == 200 and "(stored)" in r.text
    rows = _cells(r.text, "leaderboard")
    assert {row[3]: (int(row[1]), int(row[2])) for row in rows} == stored
    text = judged_client.get("/download/leaderboard.csv?qrels=sample&metric=AP").text
    data = list(csv.DictReader(io.StringIO(text)))
    assert list(data[0])[:4] == ["rank", "rank_lo", "rank_hi", "run"]
    assert {d["run"]: (int(d["rank_lo"]), int(d["rank_hi"])) for d in data} == stored


def test_agree_page(judged_client, judged_store):
    with evalstore.open(judged_store, read_only=True) as s:
        aid = s.sql("SELECT analysis_id FROM meta_runs WHERE kind = 'agree'").rows[0][0]
    r = judged_client.get("/agree")
    assert r.status_code == 200
    assert "&lt;script&gt;alert(1)&lt;/script&gt; against sample" in r.text and "<script>alert" not in r.text
    labels = {row[0]: row[1] for row in _cells(r.text, "labels")}
    assert set(labels) >= {"n_common", "kappa", "kappa_linear", "kappa_quadratic", "kappa_binary", "alpha_ordinal"}
    assert labels["n_common"] == "464" and labels["n_cand_only"] == "40"
    assert r.text.count("<svg") == 3  # the confusion matrix and one slope chart per metric
    assert len(_cells(r.text, "topics")) == 8
    assert judged_client.get(f"/agree?id={aid}").text == r.text
    assert judged_client.get(f"/agree?id={aid - 1}").status_code == 404  # another kind of analysis
    assert judged_client.get("/agree?id=999").status_code == 404
    assert judged_client.get("/agree?id=x").status_code == 404
    meta = judged_client.get("/meta")
    assert "Comparison of judges" in meta.text and 'href="/agree?id=' in meta.text


def test_agree_page_without_a_comparison_is_a_404(client):
    r = client.get("/agree")
    assert r.status_code == 404 and "evalstore agree" in r.text


def test_report_writes_the_comparison_page(judged_store, tmp_path):
    out = tmp_path / "report"
    with evalstore.open(judged_store, read_only=True) as s:
        res = write_report(s, out, "sample", ["AP"])
        aid = s.sql("SELECT max(analysis_id) FROM meta_runs WHERE kind = 'agree'").rows[0][0]
    page = out / f"agree-{aid}.html"
    assert f"agree-{aid}.html" in res.files and page.is_file()
    assert "kappa_quadratic" in page.read_text() and f'href="agree-{aid}.html"' in (out / "meta.html").read_text()
    assert "rank low" in (out / "index.html").read_text()  # the stored rank intervals


# --------------------------------------------------------------------------- a real browser
CHROMIUM = os.environ.get("EVALSTORE_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("EVALSTORE_CHROMEDRIVER", "/usr/bin/chromedriver")


def test_in_chromium(judged_store):
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
    if not (Path(CHROMIUM).is_file() and Path(CHROMEDRIVER).is_file()):
        pytest.skip(f"needs Chromium and its driver ({CHROMIUM}, {CHROMEDRIVER})")
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By

    shots = Path(os.environ.get("EVALSTORE_SCREENSHOTS") or tempfile.mkdtemp(prefix="evalstore-screenshots-"))
    shots.mkdir(parents=True, exist_ok=True)
    profile = tempfile.mkdtemp(prefix="evalstore-chromium-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", f"--user-data-dir={profile}",
                "--window-size=1360,1000"):  # fmt: skip
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    d = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    try:
        with Server(judged_store) as srv:
            base = srv.url.rstrip("/")
            for path, name in (("/?qrels=sample&metric=AP&rank_ci=bootstrap", "rank-intervals"), ("/agree", "agree")):
                d.get(base + path)
                assert d.find_element(By.TAG_NAME, "h1").text
                d.set_window_size(1360, int(d.execute_script("return Math.min(document.body.scrollHeight + 40, 5000)")))
                d.save_screenshot(str(shots / f"judges-{name}.png"))
                d.set_window_size(1360, 1000)
                bad = [e for e in d.get_log("browser") if e.get("level") in ("SEVERE", "WARNING")]
                assert not bad, (path, bad)
            # a click on a header sorts the per-topic table
            before = [c.text for c in d.find_elements(By.CSS_SELECTOR, "#topics tbody tr td:nth-child(1)")]
            header = d.find_element(By.XPATH, "//table[@id='topics']//th[normalize-space()='kappa']")
            d.execute_script("arguments[0].scrollIntoView({block: 'center'});", header)
            header.click()
            after = [c.text for c in d.find_elements(By.CSS_SELECTOR, "#topics tbody tr td:nth-child(1)")]
            assert sorted(after) == sorted(before) and after != before
    finally:
        d.quit()
        shutil.rmtree(profile, ignore_errors=True)
