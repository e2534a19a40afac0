"""Links from the route table: the live server's addresses and the static report's files, for a
page named by its route and given its view's arguments (evalstore.web.links)."""

from __future__ import annotations

import pytest

pytest.importorskip("jinja2")

from evalstore.web.links import LiveLinks, ReportLinks  # noqa: E402
from evalstore.web.routes import BY_NAME, ROUTES  # noqa: E402


def test_live_links_put_path_arguments_in_the_path_and_the_rest_in_the_query_in_the_view_s_order():
    links = LiveLinks(BY_NAME)
    assert links.to("run", "a/b <c>", "qrels 1", "nDCG@10") == "/runs/a%2Fb%20%3Cc%3E?qrels=qrels+1&metric=nDCG%4010"
    assert links.to("compare", "bm25", "rerank", "q", "AP") == "/compare?baseline=bm25&run=rerank&qrels=q&metric=AP"
    # a pair of runs joined by commas; left-out and empty arguments are not in the query
    assert links.to("topic", "S01", ["bm25", "rerank"], "q", "AP") == "/topics/S01?runs=bm25%2Crerank&qrels=q&metric=AP"
    assert links.to("topic", "S01") == "/topics/S01"
    # metric* repeats
    assert links.to("leaderboard", "q", ["AP", "RR"]) == "/?qrels=q&metric=AP&metric=RR"
    assert links.to("leaderboard", "q", "AP", "bootstrap") == "/?qrels=q&metric=AP&rank_ci=bootstrap"
    assert links.to("leaderboard", "q", "AP", "") == "/?qrels=q&metric=AP"
    assert links.to("sql", "SELECT 1") == "/sql?q=SELECT+1"
    assert links.to("meta") == "/meta"
    assert links.to("agree", 7) == "/agree?id=7"
    with pytest.raises(TypeError, match="the meta page takes 0 arguments, not 1"):
        links.to("meta", "x")


def _report(here: str = "") -> ReportLinks:
    best = {"AP": "best", "nDCG@10": "best"}
    return ReportLinks(BY_NAME, "q", ["AP", "nDCG@10"], best, {"S01"}, runs=["best", "r<2>"], agreements=[3]).at(here)


def test_report_links_are_relative_files_and_none_for_pages_the_report_does_not_hold():
    links = _report("compare/AP/r_2_-0a1b2c3d.html")
    r2 = links.stem("run", "r<2>")
    assert r2.startswith("r_2_-") and links.to("run", "r<2>", "q", "AP") == f"../../runs/AP/{r2}.html"
    assert links.to("compare", "best", "r<2>", "q", "nDCG@10") == f"../../compare/nDCG@10/{r2}.html"
    assert links.to("contrast", "best", "r<2>", "q", "AP") == f"../../contrast/AP/{r2}.html"
    assert links.to("topic", "S01", ["x", "y"], "q", "AP") == "../../topics/S01.html"
    assert links.to("leaderboard", "q", ["AP", "nDCG@10"]) == "../../index.html"
    assert links.to("leaderboard", "q", "nDCG@10") == "../../leaderboard-nDCG@10.html"
    assert links.to("meta") == "../../meta.html"
    assert links.to("agree", 3) == "../../agree-3.html"
    # not in the report: another qrels set or metric, a run without pages, a comparison with
    # another baseline, the contrast of the second metric, an unknown topic, rank intervals on
    # request, a second page of a run, another judge comparison, the SQL page
    assert links.to("run", "r<2>", "other", "AP") is None
    assert links.to("run", "r<2>", "q", "RR") is None
    assert links.to("run", "unknown", "q", "AP") is None
    assert links.to("compare", "r<2>", "best", "q", "AP") is None
    assert links.to("compare", "best", "best", "q", "AP") is None
    assert links.to("contrast", "best", "r<2>", "q", "nDCG@10") is None
    assert links.to("topic", "S02", ["x", "y"], "q", "AP") is None
    assert links.to("leaderboard", "q", "AP", "bootstrap") is None
    assert links.to("run", "best", "q", "AP", 2) is None
    assert links.to("agree", 4) is None
    assert links.to("sql", "SELECT 1") is None


def test_every_page_of_the_static_site_can_be_linked_to():
    for route in ROUTES:
        assert (route.report is None) == (route.report_path is None), route.name
