"""The matplotlib backend draws every figure model: what is on the axes is the model's series, bars,
cells and labels; the file is PNG or SVG (text kept as text) by its extension."""

from __future__ import annotations

import numpy as np
import pytest

from evalstore.output import matplotlib_backend as backend
from evalstore.output.figures.model import (
    BarFigure,
    Boxes,
    DifferenceLines,
    DifferenceMap,
    HeatMap,
    Intervals,
    LineFigure,
    Panels,
    Point,
    Scatter,
    Series,
)

LINES = LineFigure(
    "Swap rate", "difference", "swap rate (%)", [Series("AP", [0.0, 0.1, 0.2], [50.0, None, 0.0]),
                                                 Series("RR", [0.0, 0.1], [20.0, 10.0])], hline=5.0, hline_label="5 %"
)  # fmt: skip
BARS = BarFigure("Power", "% pairs", ["AP", "RR"], ["t", "wilcoxon"], [[40.0, 20.0], [30.0, 50.0]],
                 [["4/10", "2/10"], ["3/10", "5/10"]])  # fmt: skip
HEAT = HeatMap("tau", "Kendall's tau", ["AP", "RR"], [[1.0, 0.25], [0.25, 1.0]], vmin=0.0)
MODELS = {
    "lines": LINES,
    "bars": BARS,
    "heatmap": HEAT,
    "boxes": Boxes("scores", "AP per topic", ["a", "b"], [[0.1, 0.2, 0.3], [0.5, 0.6]]),
    "difference-lines": DifferenceLines(
        "d", "topics", "AP: run - base", ["t1", "t2"], ["r1", "r2"], ["better", ""], [[0.1, -0.1], [0.0, 0.2]]
    ),  # fmt: skip
    "difference-map": DifferenceMap("d", "topics", "AP: run - base", ["t1", "t2"], ["r1"], ["worse"], [[0.1, -0.3]]),
    "scatter": Scatter("ER/dRI", "ER", "dRI", [Point("AP", 0.9, 0.1), Point("RR", None, None)], vline=1.0, hline=0.0),
    "intervals": Intervals("i", "mean AP", ["a", "b"], [0.5, 0.4], [0.4, None], [0.6, None], reference=0.0),
}


@pytest.fixture
def drawn(monkeypatch):
    """The matplotlib figure a save() draws, kept open instead of written."""
    kept = []

    def keep(fig, path):
        kept.append(fig)
        return str(path)

    monkeypatch.setattr(backend, "save_figure", keep)
    yield kept
    for fig in kept:
        backend.pyplot().close(fig)


def test_lines_are_the_series(drawn):
    backend.save(LINES, "x.png")
    ax = drawn[0].axes[0]
    lines = ax.get_lines()
    assert [line.get_label() for line in lines[:2]] == ["AP", "RR"]
    assert list(lines[0].get_xdata()) == [0.0, 0.2] and list(lines[0].get_ydata()) == [50.0, 0.0]  # None: no point
    assert list(lines[1].get_ydata()) == [20.0, 10.0]
    assert list(lines[2].get_ydata()) == [5.0, 5.0]  # the reference line
    assert (ax.get_title(), ax.get_xlabel(), ax.get_ylabel()) == ("Swap rate", "difference", "swap rate (%)")


def test_bars_a_bar_per_group_and_label_with_its_text(drawn):
    backend.save(BARS, "x.png")
    ax = drawn[0].axes[0]
    widths = [p.get_width() for p in ax.patches]
    assert widths == [40.0, 20.0, 30.0, 50.0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["AP", "RR"]
    assert [t.get_text().strip() for t in ax.texts] == ["4/10", "2/10", "3/10", "5/10"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["t", "wilcoxon"]


def test_heat_map_cells(drawn):
    backend.save(HEAT, "x.png")
    ax = drawn[0].axes[0]
    assert np.array_equal(ax.images[0].get_array(), [[1.0, 0.25], [0.25, 1.0]])
    assert [t.get_text() for t in ax.texts] == ["0.250", "0.250"]  # the diagonal is not written


def test_panels_one_axes_each(drawn):
    backend.save(Panels("both", [LINES, HEAT], columns=2, widths=[3, 2]), "x.png")
    fig = drawn[0]
    assert fig.axes[0].get_title() == "Swap rate" and fig.axes[1].get_title() == "tau"
    assert fig._suptitle.get_text() == "both"


@pytest.mark.parametrize("kind", list(MODELS))
def test_every_model_as_png_and_svg(kind, tmp_path):
    model = MODELS[kind]
    png = backend.save(model, tmp_path / "f.png")
    assert open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    svg = backend.save(model, tmp_path / "f.svg")
    text = open(svg, encoding="utf-8").read()
    assert text.startswith("<?xml") and model.title in text  # text kept as text
    assert backend.save(model, tmp_path / "g.svg") and open(tmp_path / "g.svg").read() == text  # the same file


def test_hostile_names_stay_text_in_svg(tmp_path):
    evil = "<script>alert(1)</script> & \" '"
    text = open(backend.save(LineFigure(evil, evil, evil, [Series(evil, [0, 1], [1, 2])]), tmp_path / "f.svg")).read()
    assert "<script>" not in text and "&lt;script&gt;alert(1)&lt;/script&gt; &amp;" in text
