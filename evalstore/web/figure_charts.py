"""The charts of the figure models (:mod:`evalstore.output.figures`, which matplotlib draws too):
:func:`layout` lays out a model (each panel a chart): lines, bars, a heat map, intervals (a forest
plot: the leaderboard, its rank intervals, a stored comparison), rank slopes (two leaderboards of
the same runs: the judges' page, a reusability analysis). Geometry only; the macros of
``templates/figures.html`` draw it."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..output.figures.model import BarFigure, HeatMap, Intervals, LineFigure, Panels, RankSlopes
from .render import number
from .svg import (
    AXIS,
    INK,
    PALETTE,
    Cell,
    Chart,
    Key,
    Label,
    Rule,
    Tick,
    YAxis,
    cut,
    finite,
    finite_values,
    keys,
    px,
    tick_label,
    ticks,
    y_axis,
)


@dataclass(frozen=True)
class IntervalRow:
    y: float
    text: str
    tip: str
    href: str | None
    line: tuple[float, float] | None  # x of the interval's ends
    dot: float | None


@dataclass
class IntervalChart(Chart):
    xticks: list[Tick] = field(default_factory=list)
    top: float = 0.0
    bottom: float = 0.0
    left: float = 0.0
    right: float = 0.0
    reference: Rule | None = None
    rows: list[IntervalRow] = field(default_factory=list)
    xlabel: Label | None = None
    line_colour: str = PALETTE[5]
    dot_colour: str = PALETTE[0]


def interval_chart(figure: Intervals, links: Sequence[str | None] | None = None) -> IntervalChart:
    """One row per label: the estimate as a dot and its interval as a line (a forest plot)."""
    labels = figure.labels
    n = len(labels)
    row = 18.0 if n <= 60 else 13.0
    longest = max((min(len(s), 32) for s in labels), default=1)
    left = 20 + 7.4 * longest
    right, top, plot_w = 24.0, 28.0, 520.0
    width, height = left + plot_w + right, top + row * n + 44
    vals = finite_values([*figure.estimates, *figure.lows, *figure.highs])
    lo, hi = (min(vals), max(vals)) if vals else (0.0, 1.0)
    if figure.reference is not None:
        lo, hi = min(lo, figure.reference), max(hi, figure.reference)
    pad = (hi - lo) * 0.05 or 0.05
    # a scale of [0, 1] (most IR metrics) is not padded past its ends
    low = 0.0 if lo >= 0 > lo - pad else lo - pad
    high = 1.0 if hi <= 1 < hi + pad else hi + pad
    tk = ticks(low, high)
    lo, hi = tk[0], tk[-1]

    def x(v: float) -> float:
        return px(left + plot_w * (v - lo) / (hi - lo))

    bottom = top + row * n
    rows = []
    for i, lab in enumerate(labels):
        m, a, b = figure.estimates[i], figure.lows[i], figure.highs[i]
        rows.append(
            IntervalRow(
                y=px(top + row * (i + 0.5)),
                text=cut(lab, 32),
                tip=f"{lab}: {number(m)} [{number(a)}, {number(b)}]",
                href=links[i] if links else None,
                line=(x(a), x(b)) if finite(a) and finite(b) else None,  # type: ignore[arg-type]
                dot=x(m) if finite(m) else None,  # type: ignore[arg-type]
            )
        )
    ref = figure.reference
    return IntervalChart(
        "intervals",
        px(width),
        px(height),
        figure.xlabel,
        xticks=[Tick(x(t), tick_label(t, tk)) for t in tk],
        top=top,
        bottom=px(bottom),
        left=px(left),
        right=px(left + plot_w),
        reference=Rule(x(ref), top - 6, x(ref), px(bottom), dash="4 3") if ref is not None else None,
        rows=rows,
        xlabel=Label(px(left + plot_w / 2), px(height - 6), figure.xlabel, "middle"),
    )


# --------------------------------------------------------------------------- heat map
@dataclass
class HeatmapChart(Chart):
    labels: list[Label] = field(default_factory=list)
    cells: list[Cell] = field(default_factory=list)
    scale: list[tuple[float, float, str]] = field(default_factory=list)  # x, y, fill of each step
    scale_labels: list[Label] = field(default_factory=list)


def _shade(v: float) -> str:
    """White (0) to blue (1), orange for negative values."""
    a = max(-1.0, min(1.0, v))
    base = (0, 114, 178) if a >= 0 else (230, 159, 0)
    r, g, b = (round(255 + (c - 255) * abs(a)) for c in base)
    return f"rgb({r},{g},{b})"


def heatmap(figure: HeatMap) -> HeatmapChart:
    """A symmetric matrix of values in [-1, 1] (rank correlations), each cell labelled."""
    labels, matrix = figure.labels, figure.values
    k = len(labels)
    cell = 56.0
    longest = max((min(len(s), 24) for s in labels), default=1)
    left = 20 + 7.4 * longest
    top = 20 + 6.0 * longest
    width, height = left + cell * k + 110, top + cell * k + 20
    texts = []
    for i, lab in enumerate(labels):
        texts.append(Label(px(left - 8), px(top + cell * (i + 0.5) + 4), cut(lab, 24), "end"))
        texts.append(Label(px(left + cell * (i + 0.5)), px(top - 8), cut(lab, 24), "start", -45))
    cells = []
    for i in range(k):
        for j in range(k):
            v = matrix[i][j]
            ok = v is not None and math.isfinite(v)
            cells.append(
                Cell(
                    px(left + cell * j),
                    px(top + cell * i),
                    cell,
                    _shade(v) if ok else "#f4f4f4",  # type: ignore[arg-type]
                    f"{labels[i]} / {labels[j]}: {number(v, 3)}",
                    number(v, 3),
                    "#fff" if ok and abs(v) > 0.6 else INK,  # type: ignore[arg-type]
                )
            )
    sx = left + cell * k + 24
    return HeatmapChart(
        "heatmap",
        px(width),
        px(height),
        figure.title,
        figure.title,
        labels=texts,
        cells=cells,
        scale=[(px(sx), px(top + s * 12), _shade(1 - s / 10 * 2)) for s in range(11)],
        scale_labels=[
            Label(px(sx + 20), px(top + dy), text, fill=AXIS) for dy, text in ((10, "1"), (70, "0"), (130, "−1"))
        ],
    )


# --------------------------------------------------------------------------- lines
@dataclass(frozen=True)
class Dot:
    x: float
    y: float
    tip: str


@dataclass(frozen=True)
class Line:
    name: str
    colour: str
    points: str  # "x,y x,y ..." of the polyline; empty: fewer than two points
    dots: list[Dot]
    key: Key


@dataclass
class LineChart(Chart):
    axis: YAxis | None = None
    xticks: list[Tick] = field(default_factory=list)
    tick_y: float = 0.0
    baseline: Rule | None = None
    xlabel: Label | None = None
    hline: Rule | None = None
    hline_label: Label | None = None
    lines: list[Line] = field(default_factory=list)


def line_chart(figure: LineFigure) -> LineChart:
    """Lines of (x, y) points, one per series, with a legend and an optional reference line."""
    series = figure.series
    left, right, plot_w, plot_h = 64.0, 16.0, 560.0, 260.0
    top = 30.0 + 18 * math.ceil(len(series) / 4)
    width, height = left + plot_w + right, top + plot_h + 50
    xs_all = [x for s in series for x in s.x]
    ys_all = finite_values([y for s in series for y in s.y])
    if figure.hline is not None:
        ys_all.append(figure.hline)
    x_lo, x_hi = (min(xs_all), max(xs_all)) if xs_all else (0.0, 1.0)
    y_lo, y_hi = (min(ys_all + [0.0]), max(ys_all)) if ys_all else (0.0, 1.0)
    xt, yt = ticks(x_lo, x_hi), ticks(y_lo, y_hi)
    x_lo, x_hi = min(x_lo, xt[0]), max(x_hi, xt[-1])
    y_lo, y_hi = min(y_lo, yt[0]), max(y_hi, yt[-1])

    def X(v: float) -> float:
        f = (v - x_lo) / ((x_hi - x_lo) or 1.0)
        return px(left + plot_w * ((1 - f) if figure.reverse_x else f))

    def Y(v: float) -> float:
        return px(top + plot_h * (1 - (v - y_lo) / ((y_hi - y_lo) or 1.0)))

    lines = []
    for k, s in enumerate(series):
        colour = PALETTE[k % len(PALETTE)]
        pts = [(X(a), Y(b), a, b) for a, b in zip(s.x, s.y) if finite(b)]  # type: ignore[arg-type]
        dots = [Dot(x, y, f"{s.label}: {a:g}, {number(b)}") for x, y, a, b in pts] if figure.markers else []
        lx, ly = left + (k % 4) * 150, 14.0 + 18 * (k // 4)
        lines.append(
            Line(
                s.label,
                colour,
                " ".join(f"{x:.1f},{y:.1f}" for x, y, _, _ in pts) if len(pts) > 1 else "",
                dots,
                Key(px(lx), px(ly), "line", colour, cut(s.label, 18)),
            )
        )
    h = figure.hline
    return LineChart(
        "lines",
        px(width),
        px(height),
        figure.title,
        figure.title,
        axis=y_axis(yt, Y, left, left + plot_w, figure.ylabel, top, top + plot_h),
        xticks=[Tick(X(t), tick_label(t, xt)) for t in xt],
        tick_y=px(top + plot_h + 16),
        baseline=Rule(left, px(top + plot_h), left + plot_w, px(top + plot_h)),
        xlabel=Label(px(left + plot_w / 2), px(height - 8), figure.xlabel, "middle"),
        hline=Rule(left, Y(h), left + plot_w, Y(h), dash="5 4") if h is not None else None,
        hline_label=Label(px(left + plot_w - 4), px(Y(h) - 4), figure.hline_label, "end", fill=AXIS)
        if h is not None and figure.hline_label
        else None,
        lines=lines,
    )


# --------------------------------------------------------------------------- bars
@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    colour: str
    tip: str
    text: str
    text_x: float
    text_y: float


@dataclass
class BarChart(Chart):
    xticks: list[Tick] = field(default_factory=list)
    top: float = 0.0
    bottom: float = 0.0
    labels: list[Label] = field(default_factory=list)
    bars: list[Bar] = field(default_factory=list)
    keys: list[Key] = field(default_factory=list)
    xlabel: Label | None = None


def bar_chart(figure: BarFigure) -> BarChart:
    """Horizontal bars, a row per label and a bar per group in it, a text after each bar."""
    labels, groups = figure.labels, figure.groups
    several = len(groups) > 1
    bar_h = 16.0
    row = bar_h * len(groups) + 6
    longest = max((min(len(s), 32) for s in labels), default=1)
    left, plot_w = 20 + 7.4 * longest, 380.0
    top = 34.0 if several else 16.0
    width, height = left + plot_w + 200, top + row * len(labels) + 44
    vmax = max([v for vs in figure.values for v in vs if finite(v)] + [1e-9])
    tk = ticks(0.0, vmax)
    top_v = tk[-1]
    bars = []
    for g, (name, values, texts) in enumerate(zip(groups, figure.values, figure.texts)):
        colour = PALETTE[g % len(PALETTE)] if several else PALETTE[2]
        for i, (lab, v, txt) in enumerate(zip(labels, values, texts)):
            y = top + row * i + 3 + bar_h * g
            w = plot_w * v / top_v if finite(v) else 0.0
            tip = f"{lab}{' (' + name + ')' if several else ''}: {txt}"
            bars.append(Bar(px(left), px(y), px(w), bar_h, colour, tip, txt, px(left + w + 6), px(y + bar_h / 2 + 4)))
    return BarChart(
        "bars",
        px(width),
        px(height),
        figure.title,
        figure.title,
        xticks=[Tick(px(left + plot_w * t / top_v), tick_label(t, tk)) for t in tk],
        top=top,
        bottom=px(top + row * len(labels)),
        labels=[
            Label(px(left - 8), px(top + row * (i + 0.5) + 4), cut(lab, 32), "end") for i, lab in enumerate(labels)
        ],
        bars=bars,
        keys=keys([("square", PALETTE[g % len(PALETTE)], name) for g, name in enumerate(groups)], left, 14)
        if several
        else [],
        xlabel=Label(px(left + plot_w / 2), px(height - 6), figure.xlabel, "middle"),
    )


# --------------------------------------------------------------------------- rank slopes
@dataclass(frozen=True)
class Slope:
    tip: str
    colour: str
    width: float
    x1: float
    y1: float
    x2: float
    y2: float
    left: str  # "3. name" at the left end
    right: str


@dataclass
class SlopeChart(Chart):
    heads: list[Label] = field(default_factory=list)
    slopes: list[Slope] = field(default_factory=list)


def slope_chart(figure: RankSlopes) -> SlopeChart:
    """Each item's rank on the left and on the right leaderboard, joined by a line: marked items in
    orange and thicker, items whose rank stays in blue, the others grey."""
    labels = figure.labels
    n = max(len(labels), 1)
    items = range(len(labels))
    # one row per item on each side (tied items, which share a rank, one below the other by name)
    left_row = {i: k for k, i in enumerate(sorted(items, key=lambda i: (figure.left_ranks[i], labels[i])))}
    right_row = {i: k for k, i in enumerate(sorted(items, key=lambda i: (figure.right_ranks[i], labels[i])))}
    row, top, col = 17.0, 40.0, 300.0
    longest = max((min(len(s), 30) for s in labels), default=4) + len(str(n)) + 2  # "12. name"
    left = 20 + 7.2 * longest
    slopes = []
    for i in items:
        marked, a, b = figure.marks[i], figure.left_ranks[i], figure.right_ranks[i]
        name = cut(labels[i], 30)
        slopes.append(
            Slope(
                f"{labels[i]}: rank {a} -> {b}" + (f" ({figure.mark_label})" if marked and figure.mark_label else ""),
                PALETTE[3] if marked else (PALETTE[0] if a == b else "#7a8591"),
                2.2 if marked else 1.2,
                px(left + 6),
                px(top + row * (left_row[i] + 0.5)),
                px(left + col - 6),
                px(top + row * (right_row[i] + 0.5)),
                f"{a}. {name}",
                f"{b}. {name}",
            )
        )
    return SlopeChart(
        "slopes",
        px(2 * left + col),
        px(top + row * n + 16),
        figure.title,
        figure.title,
        heads=[
            Label(px(left), 18, cut(figure.left, 40), "middle"),
            Label(px(left + col), 18, cut(figure.right, 40), "middle"),
        ],
        slopes=slopes,
    )


# --------------------------------------------------------------------------- the figure models
def layout(figure: Any, links: Sequence[str | None] | None = None) -> list[Chart]:
    """The charts of a figure model of :mod:`evalstore.output.figures` (a chart per panel)."""
    if isinstance(figure, Panels):
        return [c for p in figure.panels for c in layout(p)]
    if isinstance(figure, LineFigure):
        return [line_chart(figure)]
    if isinstance(figure, BarFigure):
        return [bar_chart(figure)]
    if isinstance(figure, HeatMap):
        return [heatmap(figure)]
    if isinstance(figure, Intervals):
        return [interval_chart(figure, links)]
    if isinstance(figure, RankSlopes):
        return [slope_chart(figure)]
    raise TypeError(f"the web draws no {type(figure).__name__}")
