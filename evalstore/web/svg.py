"""The geometry of the web's charts: scales, ticks, tick labels, the palette and where each mark
goes, as plain numbers, strings and lists. The SVG markup is in the Jinja macros of
``templates/figures.html`` (``draw(chart)``), so autoescaping covers every text that reaches a
chart (run names, topic ids, metric names, titles, links); nothing here builds markup.

A chart is one of the dataclasses below, its ``kind`` naming the macro that draws it. The figure
models of :mod:`evalstore.report.figures` (which matplotlib draws too) are laid out by
:func:`layout`; the web's own charts (the run page's appendix chart, the compare page's
difference bars, the judges' confusion matrix and rank slopes) by their functions. Colours are the
Okabe-Ito palette (readable with colour-blindness); sizes follow the data, so that 200 topics or 40
runs stay legible (the figure scrolls sideways in its frame when wide).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..report.figures.model import BarFigure, HeatMap, Intervals, LineFigure, Panels
from .render import CHART_STYLE, number

PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
AXIS = CHART_STYLE["axis"]
INK = CHART_STYLE["ink"]


def px(v: float) -> float:
    """A coordinate as drawn (a tenth of a pixel)."""
    return round(float(v), 1)


def ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """About n round tick values from at or below ``lo`` to at or above ``hi`` (the axis' range)."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        lo, hi = 0.0, 1.0
    if hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = min((m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw * (1 - 1e-9)), default=10 * mag)
    first = math.floor(lo / step + 1e-9)
    last = math.ceil(hi / step - 1e-9)
    return [round(k * step, 10) for k in range(first, last + 1)]


def tick_label(v: float, ticks: Sequence[float]) -> str:
    """A tick's text: as many decimals as the step needs, a true minus sign, no "-0"."""
    step = abs(ticks[1] - ticks[0]) if len(ticks) > 1 else 1.0
    digits = max(0, min(4, -math.floor(math.log10(step)) + (0 if step >= 1 else 1))) if step > 0 else 2
    if step >= 1 and float(step).is_integer():
        digits = 0
    if abs(v) < step * 1e-6:
        v = 0.0  # no "-0.00"
    return f"{v:.{digits}f}".replace("-", "−")


def cut(text: str, n: int) -> str:
    """``text`` shortened to ``n`` characters with an ellipsis."""
    return text if len(text) <= n else text[: n - 1] + "…"


# --------------------------------------------------------------------------- parts of charts
@dataclass(frozen=True)
class Tick:
    at: float  # the position along the axis, in pixels
    text: str


@dataclass(frozen=True)
class YAxis:
    """Grid lines and tick labels left of ``x0``; the axis line; the label rotated at ``mid``."""

    ticks: list[Tick]
    x0: float
    x1: float
    top: float
    bottom: float
    label: str
    mid: float


@dataclass(frozen=True)
class Label:
    """A text at (x, y); ``rotate``: degrees (about its anchor)."""

    x: float
    y: float
    text: str
    anchor: str = "start"
    rotate: int = 0
    fill: str = INK


@dataclass(frozen=True)
class Key:
    """A legend entry: its symbol (``range``, ``median``, ``dot``, ``square``, ``tie``, ``line``) at (x, y)."""

    x: float
    y: float
    symbol: str
    colour: str
    text: str


@dataclass(frozen=True)
class Rule:
    """A straight line."""

    x1: float
    y1: float
    x2: float
    y2: float
    stroke: str = AXIS
    width: float = 1.0
    dash: str = ""


@dataclass
class Chart:
    """What every chart has: its size and its label (the SVG's title and aria-label)."""

    kind: str
    width: float
    height: float
    label: str
    title: str = ""  # a caption shown above the chart (the figure model's title)


def _y_axis(values: Sequence[float], scale: Callable[[float], float], x0, x1, label, top, bottom) -> YAxis:
    return YAxis(
        [Tick(px(scale(t)), tick_label(t, values)) for t in values],
        px(x0),
        px(x1),
        px(top),
        px(bottom),
        label,
        px((top + bottom) / 2),
    )


def _keys(items: Sequence[tuple[str, str, str]], x: float, y: float) -> list[Key]:
    """Legend entries ``(symbol, colour, text)`` in one row from (x, y)."""
    out = []
    for symbol, colour, text in items:
        out.append(Key(px(x), px(y), symbol, colour, text))
        x += 34 + 7.2 * len(text)
    return out


def _x_labels(labels: Sequence[str], xs: Sequence[float], y0: float, every: int) -> list[Label]:
    return [
        Label(px(x), px(y0 + 10), cut(lab, 14), "end", -60, AXIS)
        for i, (lab, x) in enumerate(zip(labels, xs))
        if not i % every
    ]


def _value_range(values: Sequence[float | None]) -> tuple[float, float]:
    vals = [v for v in values if v is not None and math.isfinite(v)]
    lo, hi = (min(vals), max(vals)) if vals else (0.0, 1.0)
    if lo >= 0 and hi <= 1:  # most IR metrics: show the whole scale
        return 0.0, 1.0
    lo = min(lo, 0.0)
    return lo, hi if hi > lo else lo + 1.0


def _finite(v: float | None) -> bool:
    return v is not None and math.isfinite(v)


def _finite_values(values: Sequence[float | None]) -> list[float]:
    return [float(v) for v in values if v is not None and math.isfinite(v)]


# --------------------------------------------------------------------------- the run page
@dataclass(frozen=True)
class AppendixTopic:
    x: float
    left: float
    step: float
    tip: str
    href: str | None
    range: tuple[float, float] | None  # y of worst, y of best
    range_width: float
    median: float | None
    half: float
    dot: float | None
    dot_r: float
    colour: str


@dataclass
class AppendixChart(Chart):
    axis: YAxis | None = None
    keys: list[Key] = field(default_factory=list)
    top: float = 0.0
    plot_h: float = 0.0
    topics: list[AppendixTopic] = field(default_factory=list)
    baseline: Rule | None = None
    xlabels: list[Label] = field(default_factory=list)
    xlabel: Label | None = None


def appendix_chart(
    topics: Sequence[str],
    value: Sequence[float | None],
    median: Sequence[float | None],
    best: Sequence[float | None],
    worst: Sequence[float | None],
    *,
    run: str,
    metric: str,
    links: Sequence[str | None] | None = None,
) -> AppendixChart:
    """Per topic: the range of all runs (worst to best), their median and the run's score, the
    chart of TREC and CLEF appendices."""
    n = len(topics)
    step = max(6.0, 900.0 / max(n, 1)) if n > 15 else 640.0 / max(n, 1)  # at least 640 px wide, >= 6 px a topic
    left, right, top, plot_h = 64.0, 16.0, 40.0, 300.0
    longest = max((min(len(t), 14) for t in topics), default=1)
    width = left + right + step * n
    height = top + plot_h + 28 + 6.2 * longest * 0.87 + 30
    lo, hi = _value_range([*value, *best, *worst])
    tk = ticks(lo, hi)
    lo, hi = min(lo, tk[0]), max(hi, tk[-1])

    def y(v: float) -> float:
        return px(top + plot_h * (1 - (v - lo) / (hi - lo)))

    xs = [left + step * (i + 0.5) for i in range(n)]
    half = min(7.0, step * 0.3)
    marks = []
    for i, (t, x) in enumerate(zip(topics, xs)):
        v, md, b, w = value[i], median[i], best[i], worst[i]
        marks.append(
            AppendixTopic(
                x=px(x),
                left=px(x - step / 2),
                step=px(step),
                tip=f"topic {t}: {run} {number(v)}, median {number(md)}, best {number(b)}, worst {number(w)}",
                href=links[i] if links else None,
                range=(y(w), y(b)) if b is not None and w is not None else None,
                range_width=px(max(1.5, min(4.0, step * 0.25))),
                median=y(md) if md is not None else None,
                half=px(half),
                dot=y(v) if v is not None else None,
                dot_r=px(max(2.5, min(4.5, step * 0.3))),
                colour=PALETTE[0] if v is None or md is None or v >= md else PALETTE[3],
            )
        )
    every = max(1, math.ceil(n / 100)) if step >= 9 else max(1, math.ceil(12 / step))
    return AppendixChart(
        "appendix",
        px(width),
        px(height),
        f"{metric} per topic: {run} against the median, best and worst of all runs",
        axis=_y_axis(tk, y, left, width - right, metric, top, top + plot_h),
        keys=_keys(
            [
                ("range", "#9a9a9a", "worst to best of all runs"),
                ("median", INK, "median"),
                ("dot", PALETTE[0], f"{run} (at or above median)"),
                ("dot", PALETTE[3], "below median"),
            ],
            left,
            16,
        ),
        top=top,
        plot_h=plot_h,
        topics=marks,
        baseline=Rule(left, top + plot_h, px(width - right), top + plot_h),
        xlabels=_x_labels(topics, xs, top + plot_h, every),
        xlabel=Label(px(left + step * n / 2), px(height - 6), "topic", "middle"),
    )


# --------------------------------------------------------------------------- the compare page
@dataclass(frozen=True)
class DifferenceTopic:
    x: float
    left: float
    step: float
    tip: str
    href: str | None
    bar: tuple[float, float, float, float] | None  # x, y, width, height; None: a tie (a dot on zero)
    colour: str


@dataclass
class DifferenceChart(Chart):
    axis: YAxis | None = None
    keys: list[Key] = field(default_factory=list)
    top: float = 0.0
    plot_h: float = 0.0
    zero: float = 0.0
    topics: list[DifferenceTopic] = field(default_factory=list)
    zero_line: Rule | None = None
    xlabels: list[Label] = field(default_factory=list)
    xlabel: Label | None = None


def difference_bars(
    topics: Sequence[str],
    diffs: Sequence[float],
    *,
    label: str,
    links: Sequence[str | None] | None = None,
) -> DifferenceChart:
    """Per-topic differences as bars, in the order given (largest first), zero line in the middle."""
    n = len(topics)
    step = max(5.0, 900.0 / max(n, 1)) if n > 15 else 640.0 / max(n, 1)
    left, right, top, plot_h = 64.0, 16.0, 36.0, 280.0
    longest = max((min(len(t), 14) for t in topics), default=1)
    width = left + right + step * n
    height = top + plot_h + 28 + 6.2 * longest * 0.87 + 30
    m = max([abs(d) for d in diffs if math.isfinite(d)] + [1e-9])
    tk = ticks(-m, m, 6)
    lo, hi = min(-m, tk[0]), max(m, tk[-1])

    def y(v: float) -> float:
        return top + plot_h * (1 - (v - lo) / (hi - lo))

    zero = y(0.0)
    xs = [left + step * (i + 0.5) for i in range(n)]
    bw = min(step * 0.8, 28.0)
    marks = []
    for i, (t, d, x) in enumerate(zip(topics, diffs, xs)):
        y0, y1 = sorted((zero, y(d)))
        marks.append(
            DifferenceTopic(
                x=px(x),
                left=px(x - step / 2),
                step=px(step),
                tip=f"topic {t}: {d:+.4f}",
                href=links[i] if links else None,
                bar=None if d == 0 else (px(x - bw / 2), px(y0), px(bw), px(max(y1 - y0, 0.8))),
                colour="#888" if d == 0 else PALETTE[2] if d > 0 else PALETTE[3],
            )
        )
    return DifferenceChart(
        "differences",
        px(width),
        px(height),
        f"per-topic differences: {label}",
        axis=_y_axis(tk, y, left, width - right, label, top, top + plot_h),
        keys=_keys(
            [
                ("square", PALETTE[2], "run better (win)"),
                ("square", PALETTE[3], "run worse (loss)"),
                ("tie", "#888", "tie"),
            ],
            left,
            14,
        ),
        top=top,
        plot_h=plot_h,
        zero=px(zero),
        topics=marks,
        zero_line=Rule(left, px(zero), px(width - right), px(zero)),
        xlabels=_x_labels(topics, xs, top + plot_h, max(1, math.ceil(12 / step))),
        xlabel=Label(px(left + step * n / 2), px(height - 6), "topics, sorted by difference", "middle"),
    )


# --------------------------------------------------------------------------- intervals (forest plot)
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
    vals = _finite_values([*figure.estimates, *figure.lows, *figure.highs])
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
                line=(x(a), x(b)) if _finite(a) and _finite(b) else None,  # type: ignore[arg-type]
                dot=x(m) if _finite(m) else None,  # type: ignore[arg-type]
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
@dataclass(frozen=True)
class Cell:
    x: float
    y: float
    size: float
    fill: str
    tip: str
    text: str
    ink: str


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
    ys_all = _finite_values([y for s in series for y in s.y])
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
        pts = [(X(a), Y(b), a, b) for a, b in zip(s.x, s.y) if _finite(b)]  # type: ignore[arg-type]
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
        axis=_y_axis(yt, Y, left, left + plot_w, figure.ylabel, top, top + plot_h),
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
    vmax = max([v for vs in figure.values for v in vs if _finite(v)] + [1e-9])
    tk = ticks(0.0, vmax)
    top_v = tk[-1]
    bars = []
    for g, (name, values, texts) in enumerate(zip(groups, figure.values, figure.texts)):
        colour = PALETTE[g % len(PALETTE)] if several else PALETTE[2]
        for i, (lab, v, txt) in enumerate(zip(labels, values, texts)):
            y = top + row * i + 3 + bar_h * g
            w = plot_w * v / top_v if _finite(v) else 0.0
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
        keys=_keys([("square", PALETTE[g % len(PALETTE)], name) for g, name in enumerate(groups)], left, 14)
        if several
        else [],
        xlabel=Label(px(left + plot_w / 2), px(height - 6), figure.xlabel, "middle"),
    )


# --------------------------------------------------------------------------- the figure models
def layout(figure: Any, links: Sequence[str | None] | None = None) -> list[Chart]:
    """The charts of a figure model of :mod:`evalstore.report.figures` (a chart per panel)."""
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
    raise TypeError(f"the web draws no {type(figure).__name__}")


# --------------------------------------------------------------------------- the judges' page
@dataclass
class ConfusionChart(Chart):
    labels: list[Label] = field(default_factory=list)
    cells: list[Cell] = field(default_factory=list)


def confusion_chart(cells: Sequence[dict[str, Any]], ref: str, cand: str) -> ConfusionChart:
    """The confusion matrix as a grid: a cell's shade is its share of its row (reference grade)."""
    grades = sorted({c["ref_grade"] for c in cells} | {c["cand_grade"] for c in cells})
    n = {(c["ref_grade"], c["cand_grade"]): int(c["n"]) for c in cells}
    rows = {g: sum(v for (a, _), v in n.items() if a == g) for g in grades}
    size, left, top = 56.0, 120.0, 54.0
    k = len(grades)
    texts = [
        Label(px(left + size * k / 2), 16, cand, "middle"),
        Label(16, px(top + size * k / 2), ref, "middle", -90),
    ]
    for j, g in enumerate(grades):
        texts.append(Label(px(left + size * (j + 0.5)), px(top - 8), str(g), "middle"))
        texts.append(Label(px(left - 10), px(top + size * (j + 0.5) + 4), str(g), "end"))
    out = []
    for i, a in enumerate(grades):
        for j, b in enumerate(grades):
            v = n.get((a, b), 0)
            share = v / rows[a] if rows[a] else 0.0
            out.append(
                Cell(
                    px(left + size * j),
                    px(top + size * i),
                    size,
                    f"rgb({int(255 - 244 * share)},{int(255 - 160 * share)},{int(255 - 90 * share)})",
                    f"{ref} {a}, {cand} {b}: {v} pairs ({share:.0%} of row)",
                    str(v),
                    "#fff" if share > 0.55 else INK,
                )
            )
    label = f"grades: {ref} (rows) against {cand} (columns)"
    return ConfusionChart(
        "confusion", px(left + size * k + 20), px(top + size * k + 20), label, labels=texts, cells=out
    )


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


def slope_chart(runs: Sequence[dict[str, Any]], ref: str, cand: str, metric: str) -> SlopeChart:
    """Each run's rank under the reference (left) and the candidate (right), joined by a line;
    a run whose significance against the best run flips is drawn in orange."""
    n = max(len(runs), 1)
    # one row per run on each side (tied runs, which share a rank, one below the other by name)
    left_row = {r["run"]: i for i, r in enumerate(sorted(runs, key=lambda r: (r["rank_ref"], r["run"])))}
    right_row = {r["run"]: i for i, r in enumerate(sorted(runs, key=lambda r: (r["rank_cand"], r["run"])))}
    row, top, col = 17.0, 40.0, 300.0
    longest = max((min(len(r["run"]), 30) for r in runs), default=4) + len(str(n)) + 2  # "12. name"
    left = 20 + 7.2 * longest
    slopes = []
    for r in runs:
        flip = bool(r["flip"])
        name = cut(r["run"], 30)
        slopes.append(
            Slope(
                f"{r['run']}: rank {r['rank_ref']} -> {r['rank_cand']}" + (" (significance flips)" if flip else ""),
                PALETTE[3] if flip else (PALETTE[0] if r["rank_ref"] == r["rank_cand"] else "#7a8591"),
                2.2 if flip else 1.2,
                px(left + 6),
                px(top + row * (left_row[r["run"]] + 0.5)),
                px(left + col - 6),
                px(top + row * (right_row[r["run"]] + 0.5)),
                f"{r['rank_ref']}. {name}",
                f"{r['rank_cand']}. {name}",
            )
        )
    return SlopeChart(
        "slopes",
        px(2 * left + col),
        px(top + row * n + 16),
        f"{metric}: rank under {ref} (left) and under {cand} (right)",
        heads=[Label(px(left), 18, ref, "middle"), Label(px(left + col), 18, cand, "middle")],
        slopes=slopes,
    )
