"""Route tests of `evalstore serve` (Starlette's test client): every page, 404s, escaping, path
traversal, the sandboxed SQL page, downloads, and the store's bytes after a sequence of requests."""

from __future__ import annotations

import csv
import hashlib
import io
import math
import re
from html import unescape
from pathlib import Path
from urllib.parse import quote

import pytest
from websupport import ODD, XSS

import evalstore
from evalstore.web.app import Source, create_app

ESCAPED_XSS = "&lt;script&gt;alert(1)&lt;/script&gt;"


def _scores(db: Path, run: str, metric: str = "AP") -> dict[str, float]:
    with evalstore.open(db, read_only=True) as s:
        rows = s.sql(
            "SELECT topic, value FROM scores WHERE run = ? AND metric = ? AND qrels = 'sample'", [run, metric]
        ).rows
    return dict(rows)


def _cells(html: str, table_id: str) -> list[list[str]]:
    """The text of each cell of a table's body, by row."""
    body = html.split(f'id="{table_id}"', 1)[1].split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)
    return [
        [unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", r, re.S)] for r in rows
    ]


# --------------------------------------------------------------------------- pages
def test_leaderboard_sorted_by_mean_with_t_intervals(client, web_store):
    from scipy import stats

    r = client.get("/?qrels=sample&metric=AP")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/html")
    rows = _cells(r.text, "leaderboard")
    names = [row[1] for row in rows]
    assert set(names) == {"bm25", "bm25_rm3", "dense", "hybrid", "random", "rerank", XSS, ODD}
    means = [float(row[2]) for row in rows]
    assert means == sorted(means, reverse=True) and names[0] == "rerank"
    # the interval of one run, computed here from its per-topic scores
    vals = list(_scores(web_store, "hybrid").values())
    n, mean, sd = len(vals), sum(vals) / len(vals), stats.tstd(vals)
    half = stats.t.ppf(0.975, n - 1) * sd / math.sqrt(n)
    row = rows[names.index("hybrid")]
    assert float(row[3]) == pytest.approx(mean - half, abs=1e-4)
    assert float(row[4]) == pytest.approx(mean + half, abs=1e-4)
    assert int(row[7]) == n == 8
    assert "t(0.975, n−1)" in r.text  # the method is labelled
    assert "<svg" in r.text and 'href="/download/leaderboard.csv?qrels=sample&amp;metric=AP"' in r.text


def test_leaderboard_defaults_and_metric_spellings(client):
    r = client.get("/")
    assert r.status_code == 200 and "<h1>AP on sample</h1>" in r.text  # AP: evaluated for the most runs, first by name
    r = client.get("/?metric=ndcg_cut_10")  # trec_eval's name finds the stored nDCG@10
    assert r.status_code == 200 and "<h1>nDCG@10 on sample</h1>" in r.text


def test_run_page_against_median_best_worst(client, web_store):
    r = client.get("/runs/bm25?metric=AP")
    assert r.status_code == 200
    rows = _cells(r.text, "topics")
    mine = _scores(web_store, "bm25")
    assert [row[0] for row in rows] == sorted(mine)
    with evalstore.open(web_store, read_only=True) as s:
        med = dict(
            s.sql(
                "SELECT topic, median(value) FROM scores WHERE metric = 'AP' AND qrels = 'sample' GROUP BY topic"
            ).rows
        )
    for row in rows:
        assert float(row[1].split()[0]) == pytest.approx(mine[row[0]], abs=1e-4)
        assert float(row[2]) == pytest.approx(med[row[0]], abs=1e-4)
    assert r.text.count("<svg") == 1 and "worst to best of all runs" in r.text
    # topic links go to the topic page with this run beside the best run
    assert 'href="/topics/S01?runs=bm25%2Crerank&amp;qrels=sample&amp;metric=AP"' in r.text


def test_compare_page_statistics(client, web_store):
    from scipy import stats

    r = client.get("/compare?baseline=bm25&run=rerank&metric=AP")
    assert r.status_code == 200
    a, b = _scores(web_store, "bm25"), _scores(web_store, "rerank")
    diffs = {t: b[t] - a[t] for t in a}
    rows = _cells(r.text, "differences")
    assert [row[0] for row in rows] == sorted(diffs, key=lambda t: -diffs[t])  # sorted, largest first
    wins = sum(d > 0 for d in diffs.values())
    losses = sum(d < 0 for d in diffs.values())
    assert f"{wins} / {len(diffs) - wins - losses} / {losses}" in r.text
    t, p = stats.ttest_rel([b[t] for t in sorted(a)], [a[t] for t in sorted(a)])
    assert f"t(7) = {t:.3f}" in r.text and f"p = {p:.4f}" in r.text
    assert "/topics/S01?runs=bm25%2Crerank" in r.text  # each topic links to its topic page


def test_topic_page_side_by_side(client, web_store):
    r = client.get("/topics/S01?runs=bm25,rerank&depth=10")
    assert r.status_code == 200
    left, right = _cells(r.text, "list-1"), _cells(r.text, "list-2")
    assert len(left) == len(right) == 10
    with evalstore.open(web_store, read_only=True) as s:
        top = s.sql("SELECT doc FROM run_rows WHERE run = 'bm25' AND topic = 'S01' ORDER BY rank LIMIT 10").rows
        judged = dict(s.sql("SELECT doc, grade FROM qrels WHERE topic = 'S01'").rows)
        other = {d for (d,) in s.sql("SELECT doc FROM run_rows WHERE run='rerank' AND topic='S01' AND rank<=10").rows}
    assert [row[1].split()[0] for row in left] == [d for (d,) in top]
    for row, (doc,) in zip(left, top):
        assert row[2] == (str(judged[doc]) if doc in judged else "unj.")
    # the documents only in bm25's first 10 are highlighted
    body = r.text.split('id="list-1"', 1)[1].split("</table>", 1)[0]
    highlighted = {
        re.sub(r"<[^>]+>", "", m).split()[0]
        for m in re.findall(r'<tr class="only"><td class="num">\d+</td><td class="doc">(.*?)</td>', body)
    }
    assert highlighted == {d for (d,) in top} - other
    assert "Scores on this topic" in r.text and "nDCG@10" in r.text


def test_topic_default_runs_are_the_best_two(client):
    r = client.get("/topics/S02")
    assert r.status_code == 200
    assert re.search(r'<h3><a href="/runs/rerank[^"]*">rerank</a></h3>', r.text)
    assert re.search(r'<h3><a href="/runs/hybrid[^"]*">hybrid</a></h3>', r.text)


def test_meta_page_shows_each_kind_with_figures(client):
    r = client.get("/meta")
    assert r.status_code == 200
    for title in ("Rank correlation", "Swap method", "Discriminative power", "Comparison with a baseline"):
        assert title in r.text
    assert r.text.count("<svg") >= 5  # heat map, swap curves, ASL curves + bars, compare intervals


def test_sql_page_runs_a_query(client):
    r = client.get(
        "/sql",
        params={
            "q": "SELECT run, round(mean, 4) AS m FROM leaderboard WHERE metric = 'AP' AND qrels = 'sample' "
            "ORDER BY m DESC"
        },
    )
    assert r.status_code == 200
    rows = _cells(r.text, "result")
    assert rows[0][0] == "rerank" and len(rows) == 8
    assert "/download/sql.csv?q=SELECT" in r.text
    csv_r = client.get("/download/sql.csv", params={"q": "SELECT 1 AS one, 'x,y' AS two"})
    assert csv_r.status_code == 200 and csv_r.text == 'one,two\n1,"x,y"\n'


def test_sql_row_cap_and_time_limit(web_store):
    from starlette.testclient import TestClient

    app = create_app(Source(str(web_store), row_cap=50, time_limit=0.3))
    with TestClient(app, base_url="http://127.0.0.1") as c:
        r = c.get("/sql", params={"q": "SELECT * FROM range(5000)"})
        assert r.status_code == 200 and len(_cells(r.text, "result")) == 50 and "the result has more" in r.text
        slow = "SELECT sum(a.range * b.range) FROM range(30000) a, range(30000) b"
        r = c.get("/sql", params={"q": slow})
        assert r.status_code == 400 and "stopped after 0.3 s" in r.text


def test_downloads_match_the_leaderboard(client):
    import pyarrow.parquet as pq

    text = client.get("/download/leaderboard.csv?metric=nDCG@10").text
    rows = list(csv.DictReader(io.StringIO(text)))
    assert rows[0]["run"] == "rerank" and rows[0]["metric"] == "nDCG@10" and len(rows) == 8
    r = client.get("/download/leaderboard.parquet?metric=nDCG@10")
    assert r.status_code == 200 and 'filename="leaderboard-sample-nDCG@10.parquet"' in r.headers["content-disposition"]
    table = pq.read_table(io.BytesIO(r.content))
    assert table.column("run").to_pylist() == [row["run"] for row in rows]
    assert table.column("mean").to_pylist()[0] == pytest.approx(float(rows[0]["mean"]))


# --------------------------------------------------------------------------- unknown names
@pytest.mark.parametrize(
    "url",
    [
        "/runs/nope",
        "/runs/bm25?metric=NoSuchMetric",
        "/runs/bm25?qrels=nope",
        "/compare?baseline=nope&run=bm25",
        "/compare?baseline=bm25&run=rerank&metric=P@12345",
        "/topics/NOPE",
        "/topics/S01?runs=bm25,nope",
        "/?qrels=nope",
        "/?metric=xyz(",
        "/nothing/here",
        "/download/leaderboard.exe",
        "/static/nope.js",
    ],
)
def test_unknown_names_are_404_pages(client, url):
    r = client.get(url)
    assert r.status_code == 404
    assert "<h1>Not found</h1>" in r.text and "Traceback" not in r.text


@pytest.mark.parametrize(
    "url",
    ["/compare?baseline=bm25", "/topics/S01?depth=abc", "/topics/S01?depth=0", "/topics/S01?runs=bm25,dense,rerank"],
)
def test_bad_parameters_are_400_pages(client, url):
    r = client.get(url)
    assert r.status_code == 400 and "Traceback" not in r.text


def test_only_get(client):
    r = client.post("/", data={"x": "1"})
    assert r.status_code == 405 and "read-only" in r.text


# --------------------------------------------------------------------------- security
def test_html_names_are_text(client):
    runs = quote(f"{XSS},bm25", safe="")
    pages = [
        "/",
        f"/runs/{quote(XSS, safe='')}",
        f"/compare?baseline=bm25&run={quote(XSS, safe='')}",
        f"/topics/S01?runs={runs}",
        "/sql?q=" + quote(f"SELECT '{XSS}' AS x"),
        f"/runs/{quote(XSS + 'x', safe='')}",  # 404 page names the missing run
        "/meta",
    ]
    for url in pages:
        r = client.get(url)
        assert XSS not in r.text, url
        assert "<script>alert" not in r.text, url
        if url != "/meta":
            assert ESCAPED_XSS in r.text or "&lt;script&gt;alert(1)&lt;/script&gt;" in unescape(
                r.text.replace("&amp;", "&")
            ), url
    # the only script element of a page is the shipped sort script
    r = client.get("/")
    assert re.findall(r"<script[^>]*>", r.text) == ['<script src="/static/sort.js" defer>']
    assert "script-src 'self'" in r.headers["content-security-policy"]


def test_odd_names_round_trip(client):
    r = client.get("/")
    href = f"/runs/{quote(ODD, safe='')}?qrels=sample&amp;metric=AP"
    assert href in r.text
    assert client.get(unescape(href)).status_code == 200
    r = client.get(f"/topics/S03?runs={quote(ODD + ',bm25', safe='')}")  # a comma inside a run name
    assert r.status_code == 200 and f"rank in {ODD}".replace("&", "&amp;") in r.text


@pytest.mark.parametrize(
    "path",
    [
        "/static/../../etc/passwd",
        "/static/..%2F..%2Fetc%2Fpasswd",
        "/static/%2e%2e/%2e%2e/etc/passwd",
        "/static//etc/passwd",
        "/static/evalstore.css/../../../../etc/passwd",
        "/..%2F..%2F..%2Fetc%2Fpasswd",
        "/static/../app.py",
        "/static/../templates/base.html",
    ],
)
def test_no_path_reaches_the_file_system(client, path):
    r = client.get(path)
    assert r.status_code == 404
    assert "root:" not in r.text and "{% block" not in r.text and "import" not in r.text


def test_static_files_by_name_only(client):
    r = client.get("/static/sort.js")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/javascript")
    assert client.get("/static/evalstore.css").status_code == 200


@pytest.mark.parametrize(
    "query",
    [
        "SELECT * FROM read_text('/etc/passwd')",
        "SELECT content FROM read_text('/etc/passwd')",
        "SELECT * FROM read_csv('/etc/passwd')",
        "SELECT * FROM '/etc/passwd'",
        "SELECT * FROM read_blob('/etc/passwd')",
        "SELECT * FROM glob('/etc/*')",
        "SELECT * FROM read_text('https://example.invalid/x')",
    ],
)
def test_sql_cannot_read_files(client, query):
    r = client.get("/sql", params={"q": query})
    assert r.status_code == 400 and 'class="error"' in r.text
    assert "root:x:" not in r.text and "/etc/shadow" not in r.text


@pytest.mark.parametrize(
    "query",
    [
        "COPY (SELECT 1) TO '{out}'",
        "COPY runs TO '{out}'",
        "EXPORT DATABASE '{dir}'",
        "CREATE TABLE t AS SELECT 1",
        "INSERT INTO run_meta (name, source, format, sha256, n_topics, n_rows) VALUES ('x','x','trec','x',1,1)",
        "DELETE FROM score_data",
        "DROP VIEW leaderboard",
        "UPDATE run_meta SET name = 'x'",
        "ATTACH '{out}' AS other",
        "SET enable_external_access = true",
        "INSTALL httpfs",
        "LOAD httpfs",
        "CHECKPOINT",
        "SELECT 1; DROP TABLE run_meta",
        "WITH x AS (DELETE FROM score_data RETURNING *) SELECT * FROM x",
        "PRAGMA enable_profiling = 'json'",
        "CALL pragma_version()",
    ],
)
def test_sql_cannot_write(client, web_store, tmp_path, query):
    out, folder = tmp_path / "leak.csv", tmp_path / "export"
    before = hashlib.sha256(web_store.read_bytes()).hexdigest()
    r = client.get("/sql", params={"q": query.format(out=out, dir=folder)})
    assert r.status_code == 400 and 'class="error"' in r.text
    assert not out.exists() and not folder.exists()
    assert hashlib.sha256(web_store.read_bytes()).hexdigest() == before
    with evalstore.open(web_store, read_only=True) as s:
        assert len(s.run_names()) == 8 and s.sql("SELECT count(*) FROM scores").rows[0][0] > 0


def test_store_bytes_identical_after_requests(client, web_store):
    before = hashlib.sha256(web_store.read_bytes()).hexdigest()
    files_before = sorted(p.name for p in web_store.parent.iterdir())
    urls = [
        "/", "/?metric=nDCG@10", "/runs/bm25", "/runs/rerank?metric=P@10", "/compare?baseline=bm25&run=dense",
        "/topics/S04?runs=dense,hybrid&depth=50", "/meta", "/sql?q=SELECT+count(*)+FROM+run_rows",
        "/download/leaderboard.csv", "/download/leaderboard.parquet", "/runs/nope", "/static/sort.js",
        "/sql?q=CREATE+TABLE+x+AS+SELECT+1", "/download/sql.csv?q=SELECT+42",
    ]  # fmt: skip
    for _ in range(2):
        for url in urls:
            assert client.get(url).status_code in (200, 400, 404)
    assert hashlib.sha256(web_store.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in web_store.parent.iterdir()) == files_before  # no .wal, no temp files


def test_missing_store_is_an_error_at_start(tmp_path):
    from evalstore.errors import StoreError
    from evalstore.web.server import check_store

    with pytest.raises(StoreError, match="does not exist"):
        check_store(str(tmp_path / "missing.duckdb"))
    assert not (tmp_path / "missing.duckdb").exists()


# --------------------------------------------------------------------------- the route table
def test_a_page_is_a_view_a_template_and_a_route(web_store, tmp_path, monkeypatch):
    """One route added to the table: the live server answers it, every page's navigation links to
    it, and the static site writes its file; no other edit (issue 31, item 4)."""
    from dataclasses import replace

    from starlette.testclient import TestClient

    from evalstore.web import routes
    from evalstore.web.frame import frame_model
    from evalstore.web.links import NavItem
    from evalstore.web.static_site import write_report

    def runs_page(ctx, qrels=None):  # a view: the frame and what the template shows
        model = frame_model(ctx, "runs", "Runs")
        model.update({"message": f"{len(ctx.store.run_names())} runs", "status": 200})
        return model

    page = routes.Route(
        "runs", "/runs", runs_page, "error.html", params=("qrels",),
        report=lambda plan: [("runs.html", (plan.qrels,))], nav="Runs", nav_file="runs.html",
    )  # fmt: skip
    table = (*routes.ROUTES, page)
    monkeypatch.setattr(routes, "ROUTES", table)
    monkeypatch.setattr(routes, "NAV", tuple(NavItem(r.nav, r.name, r.path, r.nav_file) for r in table if r.nav))
    with TestClient(create_app(Source(str(web_store))), base_url="http://127.0.0.1") as c:
        r = c.get("/runs")
        assert r.status_code == 200 and "runs</p>" in r.text
        assert '<a href="/runs" class="current">Runs</a>' in r.text
        assert '<a href="/runs">Runs</a>' in c.get("/meta").text and '<a href="/runs">Runs</a>' in c.get("/sql").text
    with evalstore.open(web_store, read_only=True) as s:
        written = write_report(s, tmp_path / "site", "sample", ["AP"])
    assert "runs.html" in written.files
    assert 'href="runs.html">Runs</a>' in (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert 'href="../../runs.html">Runs</a>' in (tmp_path / "site" / "runs" / "AP" / "bm25.html").read_text("utf-8")
    assert replace(page, nav=None).nav is None


def test_the_route_table_drives_the_server_and_the_static_site(web_store, tmp_path):
    """Each route's template exists; the server answers each route's path; the static site writes
    the files the routes with ``report`` name, and the navigation has the entries of the table."""
    from evalstore.web import render, routes
    from evalstore.web.static_site import write_report

    templates = render.HERE / "templates"
    assert all((templates / r.template).is_file() for r in routes.ROUTES)
    assert [n.label for n in routes.NAV] == ["Leaderboard", "Analyses", "SQL"]
    app = create_app(Source(str(web_store)))
    served = {getattr(r, "path", None) for r in app.routes}
    assert {r.path for r in routes.ROUTES} <= served
    with evalstore.open(web_store, read_only=True) as s:
        written = write_report(s, tmp_path / "site", "sample", ["AP", "nDCG@10"])
    html = [f for f in written.files if f.endswith(".html")]
    assert {f.split("/")[0] for f in html} >= {"index.html", "runs", "compare", "contrast", "topics", "meta.html"}
    index = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert 'href="index.html" class="current">Leaderboard</a>' in index and ">SQL</a>" not in index
