"""The vocabulary of the web's charts: scales (:func:`ticks`, :func:`tick_label`), the palette, and
the parts a chart is laid out of (ticks, axes, labels, legend keys, rules, cells) as plain numbers
and strings. Nothing here, nor in :mod:`.figure_charts` (the figure models' charts) and
:mod:`.page_charts` (the web's own charts), builds markup: the Jinja macros of
``templates/figures.html`` (``draw(chart)``) write the SVG, so autoescaping covers every text that
reaches a chart (run names, topic ids, metric names, titles, links).

A chart is a :class:`Chart`, its ``kind`` naming the macro that draws it. Colours are the
Okabe-Ito palette (readable with colour-blindness); sizes follow the data, so that 200 topics or 40
runs stay legible (the figure scrolls sideways in its frame when wide).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .render import CHART_STYLE

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


def y_axis(values: Sequence[float], scale: Callable[[float], float], x0, x1, label, top, bottom) -> YAxis:
    return YAxis(
        [Tick(px(scale(t)), tick_label(t, values)) for t in values],
        px(x0),
        px(x1),
        px(top),
        px(bottom),
        label,
        px((top + bottom) / 2),
    )


def keys(items: Sequence[tuple[str, str, str]], x: float, y: float) -> list[Key]:
    """Legend entries ``(symbol, colour, text)`` in one row from (x, y)."""
    out = []
    for symbol, colour, text in items:
        out.append(Key(px(x), px(y), symbol, colour, text))
        x += 34 + 7.2 * len(text)
    return out


def x_labels(labels: Sequence[str], xs: Sequence[float], y0: float, every: int) -> list[Label]:
    return [
        Label(px(x), px(y0 + 10), cut(lab, 14), "end", -60, AXIS)
        for i, (lab, x) in enumerate(zip(labels, xs))
        if not i % every
    ]


def value_range(values: Sequence[float | None]) -> tuple[float, float]:
    vals = [v for v in values if v is not None and math.isfinite(v)]
    lo, hi = (min(vals), max(vals)) if vals else (0.0, 1.0)
    if lo >= 0 and hi <= 1:  # most IR metrics: show the whole scale
        return 0.0, 1.0
    lo = min(lo, 0.0)
    return lo, hi if hi > lo else lo + 1.0


def finite(v: float | None) -> bool:
    return v is not None and math.isfinite(v)


def finite_values(values: Sequence[float | None]) -> list[float]:
    return [float(v) for v in values if v is not None and math.isfinite(v)]


@dataclass(frozen=True)
class Cell:
    x: float
    y: float
    size: float
    fill: str
    tip: str
    text: str
    ink: str
