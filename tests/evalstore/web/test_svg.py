"""The web's charts: web/figure_charts.py lays out the figure models and web/page_charts.py the web's
own charts (as numbers and plain texts, from web/svg.py's scales and parts); the macros of
templates/figures.html write the SVG. The SVG shows what the model
holds (its labels, a mark per value), and a hostile name reaches every chart as text: the SVG
parses, has only the elements and attributes a chart draws, and gives the name back unchanged."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest
from websupport import XSS

from evalstore.output.figures.model import BarFigure, HeatMap, Intervals, LineFigure, Panels, RankSlopes, Series
from evalstore.web import figure_charts, page_charts, svg
from evalstore.web.render import chart_svg

NS = "{http://www.w3.org/2000/svg}"
HOSTILE = "<script>alert(1)</script> \"q\" & 'a'"
ELEMENTS = {"svg", "title", "rect", "line", "polyline", "circle", "text", "g", "a"}
ATTRIBUTES = {
    "xmlns", "viewBox", "width", "height", "role", "aria-label", "font-family", "font-size", "x", "y", "x1", "x2",
    "y1", "y2", "cx", "cy", "r", "fill", "stroke", "stroke-width", "stroke-dasharray", "transform", "text-anchor",
    "points", "href", "font-weight",
}  # fmt: skip


def parse(text: str) -> ET.Element:
    """The SVG, checked: only a chart's elements and attributes (no script, no event handler)."""
    root = ET.fromstring(text)
    for el in root.iter():
        assert el.tag.removeprefix(NS) in ELEMENTS, el.tag
        assert set(el.attrib) <= ATTRIBUTES, el.attrib
    return root


def texts(root: ET.Element) -> list[str]:
    return [el.text or "" for el in root.iter() if el.tag in (f"{NS}text", f"{NS}title")]


def drawn(chart) -> ET.Element:
    return parse(chart_svg(chart))


def test_line_chart_draws_the_models_series():
    model = LineFigure("Swap rate", "difference", "swap rate (%)",
                       [Series("AP", [0.0, 0.1, 0.2], [50.0, None, 0.0]), Series("RR", [0.0, 0.1], [20.0, 10.0])],
                       hline=5.0, hline_label="5 %")  # fmt: skip
    (chart,) = figure_charts.layout(model)
    root = drawn(chart)
    assert root.get("aria-label") == "Swap rate" and {"difference", "swap rate (%)", "5 %", "AP", "RR"} <= set(
        texts(root)
    )
    lines = root.findall(f"{NS}polyline")
    assert [len(p.get("points").split()) for p in lines] == [2, 2]  # a point per value drawn (None: none)
    assert len(root.findall(f"{NS}circle")) == 4
    assert [c.find(f"{NS}title").text for c in root.findall(f"{NS}circle")][:2] == ["AP: 0, 50.0000", "AP: 0.2, 0.0000"]


def test_bar_chart_a_bar_per_value_and_a_key_per_group():
    model = BarFigure("Power", "% pairs", ["AP", "RR"], ["t", "wilcoxon"], [[40.0, 20.0], [30.0, 50.0]],
                      [["4/10", "2/10"], ["3/10", "5/10"]])  # fmt: skip
    (chart,) = figure_charts.layout(model)
    root = drawn(chart)
    bars = [r for r in root.findall(f"{NS}rect") if r.find(f"{NS}title") is not None]
    assert [r.find(f"{NS}title").text for r in bars] == ["AP (t): 4/10", "RR (t): 2/10", "AP (wilcoxon): 3/10",
                                                         "RR (wilcoxon): 5/10"]  # fmt: skip
    widths = [float(r.get("width")) for r in bars]
    assert widths[3] > widths[0] > widths[2] > widths[1]  # 50 > 40 > 30 > 20
    assert {"t", "wilcoxon", "AP", "RR", "% pairs"} <= set(texts(root))


def test_heat_map_a_cell_per_value():
    values = [[1.0, 0.5, None], [0.5, 1.0, -0.2], [None, -0.2, 1.0]]
    model = HeatMap("Kendall's tau", "tau", ["AP", "RR", "P@5"], values, vmin=-0.2)
    root = drawn(figure_charts.layout(model)[0])
    cells = [g for g in root.findall(f"{NS}g") if g.find(f"{NS}rect") is not None]
    assert len(cells) == 9
    assert [g.find(f"{NS}text").text for g in cells[:3]] == ["1.000", "0.500", "–"]


def test_panels_are_a_chart_each_and_models_the_web_does_not_draw_are_refused():
    lines = LineFigure("a", "x", "y", [Series("AP", [0, 1], [1, 2])])
    assert [c.kind for c in figure_charts.layout(Panels("", [lines, lines]))] == ["lines", "lines"]
    from evalstore.output.figures.model import Boxes

    with pytest.raises(TypeError):
        figure_charts.layout(Boxes("b", "y", ["a"], [[1.0]]))


def test_ticks_and_tick_labels():
    assert svg.ticks(0.0, 1.0) == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert svg.ticks(-0.3, 0.3, 6) == [-0.3, -0.2, -0.1, 0.0, 0.1, 0.2, 0.3]
    assert [svg.tick_label(t, [0, 20, 40]) for t in (0, 20)] == ["0", "20"]
    assert svg.tick_label(-1e-12, [-0.1, 0.0, 0.1]) == "0.00"  # no "-0.00"
    assert svg.tick_label(-0.1, [-0.1, 0.0, 0.1]) == "−0.10"


def _every_chart(name: str) -> list:
    """Every kind of chart the web draws, with ``name`` as run, metric, topic, label and link."""
    return [
        page_charts.appendix_chart(
            [name, "t2"], [0.5, None], [0.4, 0.1], [0.9, 0.2], [0.1, 0.0], run=name, metric=name, links=[name, None]
        ),  # fmt: skip
        page_charts.difference_bars([name, "t2", "t3"], [0.2, 0.0, -0.1], label=name, links=[name, None, name]),
        figure_charts.interval_chart(
            Intervals(name, name, [name, "b"], [0.5, 0.4], [0.4, None], [0.6, None]), [name, None]
        ),
        *figure_charts.layout(HeatMap(name, name, [name, "b"], [[1.0, 0.3], [0.3, 1.0]], vmin=0.0)),
        *figure_charts.layout(
            LineFigure(name, name, name, [Series(name, [0, 1], [0.1, 0.2])], hline=0.1, hline_label=name)
        ),
        *figure_charts.layout(BarFigure(name, name, [name], [name, "t"], [[10.0], [20.0]], [[name], ["x"]])),
        page_charts.confusion_chart([{"ref_grade": 0, "cand_grade": 1, "n": 3}], name, name),
        figure_charts.slope_chart(RankSlopes(name, name, name, [name], [1], [2], [True], name)),
    ]


@pytest.mark.parametrize("name", [XSS, HOSTILE, '"><g onload="alert(1)', "&amp; &lt;"])
def test_a_hostile_name_reaches_every_chart_as_text(name):
    charts = _every_chart(name)
    assert len({c.kind for c in charts}) == 8
    for chart in charts:
        text = chart_svg(chart)
        assert "<script" not in text and "onload=" not in text.replace("onload=&#34;", ""), chart.kind
        root = parse(text)
        shown = " ".join(texts(root)) + " " + " ".join(v for el in root.iter() for v in el.attrib.values())
        assert name[:13] in shown, chart.kind  # given back unchanged (long names are cut at 14 characters)
        for a in root.iter(f"{NS}a"):
            assert a.get("href") == name


def _svgs(page: str) -> list[str]:
    return re.findall(r"<svg .*?</svg>", page, flags=re.S)


def test_every_chart_of_every_page_is_safe_with_a_hostile_run_name(client):
    """The sample store holds a run named <script>alert(1)</script>: on the leaderboard (with rank
    intervals), its run page, a comparison, the meta page and a topic page every chart parses, has
    no element or attribute beyond a chart's, and shows the name as text."""
    from urllib.parse import quote

    run = quote(XSS, safe="")
    pages = {
        "/?rank_ci=t": 2,
        f"/runs/{run}?metric=AP": 1,
        f"/compare?baseline=bm25&run={run}&metric=AP": 1,
        "/meta": 6,
    }
    for path, at_least in pages.items():
        page = client.get(path)
        assert page.status_code == 200, path
        charts = _svgs(page.text)
        assert len(charts) >= at_least, path
        for chart in charts:
            parse(chart)
        assert any(XSS in " ".join(texts(ET.fromstring(c))) for c in charts) or path == "/meta", path
    assert "<script>alert" not in "".join(_svgs(client.get("/meta").text))
