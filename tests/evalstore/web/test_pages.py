"""The explorer of issue 32 through its routes (Starlette's test client): several metrics side by
side with their intervals (the stored one, else evalstore.intervals.means'), the default metric (first
evaluated, or serve --metric), the compare page's numbers from the library's compare, the contrast
view, topic texts and document snippets, and a run page under a qrels set of another collection."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from support import ROOT
from websupport import XSS

import evalstore
from evalstore.comparison import compare, contrast
from evalstore.intervals import means as mean_intervals
from evalstore.web.app import Source, create_app
from evalstore.web.render import pvalue

#: the address the server answers for (it refuses other host names)
LOCAL = "http://127.0.0.1"

SAMPLE_TOPICS = "\n".join(f"S0{i}\tsample query number {i}" for i in range(1, 9)) + "\n"


def _cells(html: str, table_id: str) -> list[list[str]]:
    body = html.split(f'id="{table_id}"', 1)[1].split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)
    return [
        [unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", r, re.S)] for r in rows
    ]


def _headers(html: str, table_id: str) -> list[str]:
    head = html.split(f'id="{table_id}"', 1)[1].split("</thead>", 1)[0]
    return [unescape(re.sub(r"<[^>]+>", "", h)).strip() for h in re.findall(r"<th[^>]*>(.*?)</th>", head, re.S)]


@pytest.fixture
def ordered_db(sample_db: Path) -> Path:
    """The sample evaluated with nDCG@10 first (stored order), then AP(rel=2) and GM_AP, with a
    bootstrap interval stored for AP(rel=2), and topic and document texts."""
    with evalstore.open(sample_db) as s:
        s.evaluate("sample", None, ["nDCG@10", "GM_AP"])
        s.evaluate("sample", None, ["AP(rel=2)"], ci="bootstrap", trials=200, seed=3)
    return sample_db


def test_several_metrics_side_by_side_with_their_intervals(ordered_db):
    with TestClient(create_app(Source(str(ordered_db))), base_url=LOCAL) as c:
        r = c.get("/", params=[("metric", "nDCG@10"), ("metric", "AP(rel=2)"), ("metric", "GM_AP")])
    assert r.status_code == 200
    assert "<h1>nDCG@10, AP(rel=2), GM_AP on sample</h1>" in r.text
    heads = _headers(r.text, "leaderboard")
    assert heads[2:8] == ["nDCG@10", "nDCG@10 95 % CI", "AP(rel=2)", "AP(rel=2) 95 % CI", "GM_AP", "GM_AP 95 % CI"]
    rows = _cells(r.text, "leaderboard")
    with evalstore.open(ordered_db, read_only=True) as s:
        board = {
            (run, m): (mean, lo, hi)
            for run, m, mean, lo, hi in s.sql("SELECT run, metric, mean, ci_lo, ci_hi FROM leaderboard").rows
        }
        gm = dict(s.sql("SELECT run, list(value) FROM scores WHERE metric = 'GM_AP' GROUP BY run").rows)
    means = [float(row[2]) for row in rows]
    assert means == sorted(means, reverse=True)  # by the first metric
    computed = mean_intervals.of_scores(gm, {k: "gmean" for k in gm}, mean_intervals.spec("t"))
    for row in rows:
        run = row[1]
        assert float(row[2]) == pytest.approx(board[(run, "nDCG@10")][0], abs=5e-5)
        # AP(rel=2): the bootstrap interval stored by eval --ci (not a t interval recomputed in SQL)
        lo, hi = board[(run, "AP(rel=2)")][1:]
        assert row[5] == f"{lo:.3f} – {hi:.3f}"
        # GM_AP: the log-scale t interval of evalstore.intervals.means (the SQL recomputation had none)
        glo, ghi = computed[run]
        assert row[7] == f"{glo:.3f} – {ghi:.3f}"
    assert 'title="stored bootstrap 95 % interval"' in r.text and "geometric mean on the log scale" in r.text
    # sortable: every column header of the table sorts (sort.js sorts each th of the first header row)
    assert 'class="data sortable" id="leaderboard"' in r.text


def test_default_metric_is_the_first_evaluated_or_serve_metric(ordered_db):
    with TestClient(create_app(Source(str(ordered_db))), base_url=LOCAL) as c:
        assert "<h1>nDCG@10 on sample</h1>" in c.get("/").text  # not AP (alphabetically first, evaluated later)
    with TestClient(create_app(Source(str(ordered_db), metric="GM_AP")), base_url=LOCAL) as c:
        assert "<h1>GM_AP on sample</h1>" in c.get("/").text
        assert "<h1>nDCG@10 on sample</h1>" in c.get("/?metric=nDCG@10").text  # asked for: shown


def test_compare_page_uses_the_library_compare(web_store, client):
    r = client.get("/compare?baseline=random&run=rerank&metric=AP")
    assert r.status_code == 200
    with evalstore.open(web_store, read_only=True) as s:
        cmp = compare(s, "sample", "random", ["rerank"], ["AP"], effects=True, save=False)
    pair, fx = cmp.pairs[0], cmp.effects[0]
    delta = unescape(re.sub(r"<[^>]+>", "", r.text.split('id="delta"', 1)[1].split("</div></div>", 1)[0]))
    want = f"{pair['diff']:+.4f} [{fx['ci_t_lo']:+.4f}, {fx['ci_t_hi']:+.4f}] · {fx['d_z']:.2f}".replace("-", "−")
    assert want in delta
    assert f"t(7) = {pair['statistic']:.3f}, {pvalue(pair['p_value'])}" in unescape(r.text)
    assert "compare&#39;s default rule" in r.text or "compare's default rule" in r.text
    assert 'href="/contrast?baseline=random&amp;run=rerank&amp;qrels=sample&amp;metric=AP"' in r.text


def test_p_below_a_ten_thousandth_reads_p_less_than(ordered_db, tmp_path):
    assert pvalue(3e-9) == "p < 0.0001" and pvalue(0.01234) == "p = 0.0123"
    # a big effect over many topics: the page says "p < 0.0001", never "p = < 0.0001"
    qrels = {f"T{i:02d}": {f"d{j}": 1 for j in range(5)} for i in range(60)}
    good = {t: {f"d{j}": 10.0 - j for j in range(5)} for t in qrels}
    bad = {t: {f"x{j}": 10.0 - j for j in range(4)} | {"d0": 1.0} for t in qrels}
    db = tmp_path / "big.duckdb"
    with evalstore.open(db) as s:
        s.ingest_qrels(qrels, name="q")
        s.ingest_run(good, name="good")
        s.ingest_run(bad, name="bad")
        s.evaluate("q", None, ["RR"])
    with TestClient(create_app(Source(str(db))), base_url=LOCAL) as c:
        text = c.get("/compare?baseline=bad&run=good").text
    assert "p &lt; 0.0001" in text and "p = &lt;" not in text


def test_compare_page_missing_topic_rule(tmp_path):
    qrels = {"T1": {"a": 1}, "T2": {"b": 1}, "T3": {"c": 1}}
    db = tmp_path / "m.duckdb"
    with evalstore.open(db) as s:
        s.ingest_qrels(qrels, name="q")
        s.ingest_run({"T1": {"a": 2.0, "z": 1.0}, "T2": {"b": 1.0}, "T3": {"c": 1.0}}, name="full")
        s.ingest_run({"T1": {"z": 2.0, "a": 1.0}, "T2": {"y": 1.0, "b": 0.5}}, name="part")  # no T3
        s.evaluate("q", None, ["RR"])
    with TestClient(create_app(Source(str(db))), base_url=LOCAL) as c:
        r = c.get("/compare?baseline=full&run=part")
        assert r.status_code == 200 and "No statistics under compare" in r.text and "missing=zero" in r.text
        r = c.get("/compare?baseline=full&run=part&missing=zero")
        assert "Over 3 topics" in r.text and "(1 scores set to 0)" in r.text and "t(2) =" in r.text
        r = c.get("/compare?baseline=full&run=part&missing=drop-topics")
        assert "Over 2 topics" in r.text and "left out: T3" in r.text
        assert c.get("/compare?baseline=full&run=part&missing=maybe").status_code == 400


def test_contrast_view_matches_the_library(web_store, client):
    r = client.get("/contrast?baseline=bm25&run=rerank&metric=AP")
    assert r.status_code == 200 and "<h1>Where rerank and bm25 differ</h1>" in r.text
    with evalstore.open(web_store, read_only=True) as s:
        found = contrast(s, "sample", "bm25", "rerank", metric="AP")
    rows = _cells(r.text, "contrast")
    assert [row[0] for row in rows] == [x["topic"] for x in found.rows]  # lowest RBO first
    assert [float(row[1]) for row in rows] == pytest.approx([x["rbo"] for x in found.rows], abs=5e-4)
    assert "p = 0.9" in r.text and "Webber" in r.text
    assert "/topics/" in r.text and "runs=bm25%2Crerank" in r.text


def test_topic_page_shows_query_and_snippets(web_store, tmp_path):
    (tmp_path / "topics.tsv").write_text(SAMPLE_TOPICS)
    with evalstore.open(web_store, read_only=True) as s:
        docs = [d for (d,) in s.sql("SELECT DISTINCT doc FROM run_rows WHERE topic = 'S01' ORDER BY doc").rows]
    (tmp_path / "docs.tsv").write_text(
        "".join(f"{d}\tThe text of {d}, <b>as given</b> " + "x" * 400 + "\n" for d in docs)
    )
    with evalstore.open(web_store) as s:
        s.ingest_topics(tmp_path / "topics.tsv")
        s.ingest_docs(tmp_path / "docs.tsv")
    with TestClient(create_app(Source(str(web_store))), base_url=LOCAL) as c:
        r = c.get("/topics/S01?runs=bm25,rerank&depth=5")
        assert r.status_code == 200
        assert '<p class="q">sample query number 1</p>' in r.text
        assert "<title>Topic S01: sample query number 1" in r.text
        snippets = re.findall(r'<div class="snippet">(.*?)</div>', r.text)
        assert len(snippets) >= 10 and all(s.endswith(" …") for s in snippets)
        assert "&lt;b&gt;as given&lt;/b&gt;" in snippets[0]  # escaped text, not markup


def test_run_page_under_a_qrels_set_of_another_collection(web_store):
    with evalstore.open(web_store) as s:
        s.ingest_qrels({"Z1": {"zz": 1}}, name="other")
        s.ingest_run({"Z1": {"zz": 1.0}}, name="zrun")
        s.evaluate("other", ["zrun"], ["AP"])
    with TestClient(create_app(Source(str(web_store))), base_url=LOCAL) as c:
        r = c.get("/runs/bm25?qrels=other&metric=AP")
        assert r.status_code == 404
        assert "shares no topic with the qrels set &#39;other&#39;" in r.text and "evalstore eval" not in r.text
        assert "it has scores on sample" in r.text
        r = c.get("/runs/zrun?qrels=sample&metric=AP")
        assert r.status_code == 404 and "evalstore eval" not in r.text


def test_report_leaderboard_of_several_metrics_and_contrast(web_store, tmp_path):
    from evalstore.web.static_site import write_report

    with evalstore.open(web_store, read_only=True) as s:
        write_report(s, tmp_path / "r", "sample", ["nDCG@10", "AP"])
    index = (tmp_path / "r" / "index.html").read_text(encoding="utf-8")
    assert _headers(index, "leaderboard")[2:6] == ["nDCG@10", "nDCG@10 95 % CI", "AP", "AP 95 % CI"]
    assert 'href="leaderboard-AP.html"' in index and 'href="leaderboard-nDCG@10.html"' in index
    compare_page = (tmp_path / "r" / "compare" / "nDCG@10" / "bm25.html").read_text(encoding="utf-8")
    assert 'href="../../contrast/nDCG@10/bm25.html"' in compare_page


def test_web_queries_read_only_documented_views():
    """web/queries.py reads the documented views (docs/architecture.md) and the meta_* tables, never
    an internal table; the catalogue of what was evaluated comes from the library."""
    import inspect

    from evalstore.web import queries

    source = inspect.getsource(queries)
    read = set(re.findall(r"\b(?:FROM|JOIN)\s+([a-z_]+)\b", source))
    read |= set(re.findall(r'"([a-z_]+)"', source.split("table = {", 1)[1].split("}", 1)[0]))
    arch = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    documented = {
        v for row in re.findall(r"^\|[^|]*\|[^|]*\|([^|]*)\|$", arch, re.M) for v in re.findall(r"`(\w+)`", row)
    }
    internal = {t for row in re.findall(r"^\| (`[^|]*)\|", arch, re.M) for t in re.findall(r"`(\w+)`", row)}
    read -= set(re.findall(r"\b(\w+) AS \(", source)) | {"table"}  # common table expressions; meta tables by name
    meta = {t for t in read if t.startswith("meta_")}  # documented: "meta_robustness and the tables themselves"
    assert read - meta and meta, read
    assert not (read - meta) & internal
    assert read - meta <= documented, read - documented


def test_levels_said_are_the_levels_computed(ordered_db):
    """The pages name the level of the interval they show: the stored one's, else evalstore's default."""
    from evalstore.stats import effects
    from evalstore.web import queries
    from evalstore.web.pages import compare as compare_view

    assert queries.CI_LEVEL == mean_intervals.DEFAULT_LEVEL
    assert compare_view.EFFECT_LEVEL == inspect_default(effects.t_interval, "level")
    with evalstore.open(ordered_db) as s:
        s.evaluate("sample", None, ["P@10"], ci="t", level=0.9)
    with TestClient(create_app(Source(str(ordered_db))), base_url=LOCAL) as c:
        board = c.get("/?metric=P@10").text
        run = c.get("/runs/bm25?metric=P@10").text
        ap = c.get("/runs/bm25?metric=nDCG@10").text
    assert _headers(board, "leaderboard")[3:5] == ["90 % CI low", "90 % CI high"]
    assert "with its 90 % interval" in board
    assert '<div class="k">90 % interval</div>' in run
    assert '<div class="k">95 % interval</div>' in ap


def inspect_default(function, name):
    import inspect

    return inspect.signature(function).parameters[name].default


def test_swap_figure_is_one_model_in_both_backends(web_store, client, monkeypatch):
    """The swap figure of the meta page (SVG) and of meta swap --plot (matplotlib) are drawn from
    one figure model (evalstore.output.figures.analyses.swap_rates): the same labels and the same series."""
    from evalstore import meta
    from evalstore.output import matplotlib_backend, plots
    from evalstore.output.figures import analyses as figures

    model = figures.swap_rates([("AP", [(0.0, 3, 0.5), (0.01, 0, None), (0.02, 2, 0.0)])], 0.05)
    assert model.series[0].x == [0.0, 0.02] and model.series[0].y == [50.0, 0.0] and model.hline == 5.0
    page = unescape(client.get("/meta").text)
    assert model.xlabel in page and model.ylabel in page
    assert "Swap rate per difference bin (sample; B = 100; Sakai IPSJ 2007 Fig. 4)" in page
    drawn = {}

    def keep(fig, path):
        ax = fig.axes[0]
        drawn.update(x=ax.get_xlabel(), y=ax.get_ylabel(), lines=[line.get_label() for line in ax.get_lines()])
        matplotlib_backend.pyplot().close(fig)
        return str(path)

    monkeypatch.setattr(matplotlib_backend, "save_figure", keep)
    with evalstore.open(web_store, read_only=True) as s:
        analysis = meta.swap(s, "sample", ["AP", "nDCG@10"], trials=20, save=False)
    plots.plot_swap(analysis, "swap.png")
    assert drawn["x"] == model.xlabel and drawn["y"] == model.ylabel
    assert {"AP", "nDCG@10"} <= set(drawn["lines"])


def test_the_leaderboard_says_which_kinds_of_runs_it_holds(web_store):
    """A fused or scratch run no longer joins the board silently: the page counts the kinds and
    shows each run's (issue 44.10); a board of submitted runs alone shows no kind column."""
    from webfixtures import client_of

    with client_of(web_store) as c:
        page = c.get(LOCAL + "/?metric=AP").text
    assert "kind" not in _headers(page, "leaderboard")
    with evalstore.open(web_store) as s:
        s.fuse(["bm25", "dense"], "rrf", name="bm25+dense")
        s.ingest_run(ROOT / "evalstore" / "data" / "sample" / "runs" / "bm25.txt", name="mine", kind="scratch")
        s.evaluate("sample", ["bm25+dense", "mine"], ["AP"])
    with client_of(web_store) as c:
        page = c.get(LOCAL + "/?metric=AP").text
    assert "(8 submitted, 1 fused, 1 scratch)" in page
    heads = _headers(page, "leaderboard")
    kinds = {row[heads.index("run")]: row[heads.index("kind")] for row in _cells(page, "leaderboard")}
    assert kinds["bm25+dense"] == "fused" and kinds["mine"] == "scratch" and kinds["bm25"] == "submitted"


def test_the_reusability_analysis_on_the_meta_page(web_store, client):
    """The stored reusability analysis (tests/websupport.py: the runs in two groups, depth 5) is on
    the meta page with its tables and a slope chart per metric, drawn from the figure model that
    meta reusability --plot draws; each run's line says its two ranks (the hostile name as text)."""
    from evalstore.output.figures import analyses as figures
    from evalstore.web.queries import analyses

    with evalstore.open(web_store, read_only=True) as s:
        stored = next(a for a in analyses(s, 50) if a.kind == "reusability")
    model = figures.reusability(stored)
    assert [p.title for p in model.panels] == [
        "AP: rank on sample (left) and without each run's group (right)",
        "nDCG@10: rank on sample (left) and without each run's group (right)",
    ]
    html = client.get("/meta").text
    page = unescape(html)
    assert "Reusability of the judgments (leave-out pools)" in page
    for panel in model.panels:
        assert panel.title in page
        for label, a, b in zip(panel.labels, panel.left_ranks, panel.right_ranks):
            assert f"<title>{label}: rank {a} -> {b}" in page
    assert "sample@logo5:lexical" in page and "n_removed_relevant" in page and "rank_reduced" in page
    assert XSS not in html and html.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 4
