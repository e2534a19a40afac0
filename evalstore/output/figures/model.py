"""The figure models: plain dataclasses of what a figure shows (series, bars, cells, boxes, points,
axis labels, titles), with no colour, size or drawing code. The backends draw them: matplotlib
(:mod:`evalstore.output.matplotlib_backend`: ``--plot FILE.png|.svg``) and the web's SVG
(:mod:`evalstore.web.figure_charts` with the Jinja macros of ``web/templates/figures.html``).

Values are numbers as computed (percentages already scaled); ``None`` is a value not drawn.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Series:
    """One line: ``y[i]`` at ``x[i]`` (None: no point there)."""

    label: str
    x: list[float]
    y: list[float | None]


@dataclass(frozen=True)
class LineFigure:
    """Lines over a shared x axis, with an optional horizontal reference line; ``reverse_x``: the
    x axis runs from high to low (judgments kept: all on the left); ``markers``: a point per value."""

    title: str
    xlabel: str
    ylabel: str
    series: list[Series] = field(default_factory=list)
    hline: float | None = None
    hline_label: str | None = None
    reverse_x: bool = False
    markers: bool = True


@dataclass(frozen=True)
class BarFigure:
    """Horizontal bars: a row per label, a bar per group in it (one group: one bar a row), each
    with its text; ``values[g][i]`` is group g's bar of label i."""

    title: str
    xlabel: str
    labels: list[str]
    groups: list[str]
    values: list[list[float]]
    texts: list[list[str]]


@dataclass(frozen=True)
class HeatMap:
    """A labelled square matrix (rank correlations), each cell's value written in it; the colour
    scale runs from ``vmin`` to ``vmax``."""

    title: str
    scale_label: str
    labels: list[str]
    values: list[list[float | None]]
    vmin: float
    vmax: float = 1.0


@dataclass(frozen=True)
class Boxes:
    """A box plot per label (per-topic scores of a run), its mean marked."""

    title: str
    ylabel: str
    labels: list[str]
    values: list[list[float]]


@dataclass(frozen=True)
class DifferenceLines:
    """Per-topic differences against a baseline, a line per run over the topics in one order
    (``topics``); ``marks[i]``: ``better`` / ``worse`` / empty (significance of run i)."""

    title: str
    xlabel: str
    ylabel: str
    topics: list[str]
    runs: list[str]
    marks: list[str]
    values: list[list[float]]


@dataclass(frozen=True)
class DifferenceMap:
    """The same differences as a heat map: runs (rows, their order given) x topics (columns)."""

    title: str
    xlabel: str
    scale_label: str
    topics: list[str]
    runs: list[str]
    marks: list[str]
    values: list[list[float]]


@dataclass(frozen=True)
class Point:
    label: str
    x: float | None
    y: float | None


@dataclass(frozen=True)
class Scatter:
    """Labelled points, with reference lines at ``vline`` (x) and ``hline`` (y)."""

    title: str
    xlabel: str
    ylabel: str
    points: list[Point]
    vline: float | None = None
    hline: float | None = None


@dataclass(frozen=True)
class Intervals:
    """A forest plot: a row per label, its estimate as a dot and its interval as a line;
    ``reference``: a dashed vertical line (0 for differences)."""

    title: str
    xlabel: str
    labels: list[str]
    estimates: list[float | None]
    lows: list[float | None]
    highs: list[float | None]
    reference: float | None = None


@dataclass(frozen=True)
class RankSlopes:
    """Each item's rank on two leaderboards, the ``left`` one and the ``right`` one, joined by a
    line (a slope chart: the judges' leaderboards, a leaderboard with and without a group's
    judgments); ``marks[i]``: item i drawn highlighted, for the reason ``mark_label`` says."""

    title: str
    left: str
    right: str
    labels: list[str]
    left_ranks: list[int]
    right_ranks: list[int]
    marks: list[bool]
    mark_label: str = ""


#: A figure of one panel.
Figure = LineFigure | BarFigure | HeatMap | Boxes | DifferenceLines | DifferenceMap | Scatter | Intervals | RankSlopes


@dataclass(frozen=True)
class Panels:
    """Several figures side by side (``columns`` a row) under one title; ``widths``: their
    relative widths in a row (matplotlib); the web draws each panel as a figure of its own."""

    title: str
    panels: list[Figure]
    columns: int = 1
    widths: list[float] | None = None
