"""Charts as inline SVG, drawn on the server: no script, no font or style sheet from anywhere else.

Every text that reaches a chart (run names, topic ids, metric names, titles) goes through
:func:`esc`, the one escaping helper; links inside a chart are escaped the same way. A chart is an
:class:`Svg` (a ``str`` that Jinja2 inserts as markup, because it was built from escaped parts
only). Colours are the Okabe-Ito palette (readable with colour-blindness); sizes follow the data,
so that 200 topics or 40 runs stay legible (the figure scrolls sideways in its frame when wide).
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

from ..report.figures.model import LineFigure
from .render import number

PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
GRID = "#e3e3e3"
AXIS = "#555"
FONT = 'font-family="system-ui, -apple-system, Segoe UI, Roboto, sans-serif"'


def esc(text: object) -> str:
    """Text or an attribute value escaped for SVG/HTML (``& < > " '``)."""
    return html.escape(str(text), quote=True)


class Svg(str):
    """An SVG fragment built from escaped parts; Jinja2 inserts it as is (``__html__``)."""

    def __html__(self) -> str:
        return str(self)


def _ticks(lo: float, hi: float, n: int = 5) -> list[float]:
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


def _tick_label(v: float, ticks: Sequence[float]) -> str:
    step = abs(ticks[1] - ticks[0]) if len(ticks) > 1 else 1.0
    digits = max(0, min(4, -math.floor(math.log10(step)) + (0 if step >= 1 else 1))) if step > 0 else 2
    if step >= 1 and float(step).is_integer():
        digits = 0
    if abs(v) < step * 1e-6:
        v = 0.0  # no "-0.00"
    return f"{v:.{digits}f}".replace("-", "−")


def _open(width: float, height: float, label: str) -> list[str]:
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width:.0f} {height:.0f}" width="{width:.0f}" '
        f'height="{height:.0f}" role="img" aria-label="{esc(label)}" {FONT} font-size="12">',
        f"<title>{esc(label)}</title>",
        f'<rect x="0" y="0" width="{width:.0f}" height="{height:.0f}" fill="#fff"/>',
    ]


def _y_axis(parts: list[str], ticks: Sequence[float], y, x0: float, x1: float, label: str, top: float, bottom: float):
    for t in ticks:
        yy = y(t)
        parts.append(f'<line x1="{x0:.1f}" x2="{x1:.1f}" y1="{yy:.1f}" y2="{yy:.1f}" stroke="{GRID}"/>')
        parts.append(
            f'<text x="{x0 - 6:.1f}" y="{yy + 4:.1f}" text-anchor="end" fill="{AXIS}">'
            f"{esc(_tick_label(t, ticks))}</text>"
        )
    parts.append(f'<line x1="{x0:.1f}" x2="{x0:.1f}" y1="{top:.1f}" y2="{bottom:.1f}" stroke="{AXIS}"/>')
    mid = (top + bottom) / 2
    parts.append(
        f'<text transform="translate(16,{mid:.1f}) rotate(-90)" text-anchor="middle" fill="#222">{esc(label)}</text>'
    )


def _legend(parts: list[str], items: Sequence[tuple[str, str]], x: float, y: float) -> None:
    """Legend entries ``(svg of the symbol at 0,0, text)`` in one row from (x, y)."""
    for symbol, text in items:
        parts.append(f'<g transform="translate({x:.1f},{y:.1f})">{symbol}</g>')
        parts.append(f'<text x="{x + 14:.1f}" y="{y + 4:.1f}" fill="#222">{esc(text)}</text>')
        x += 34 + 7.2 * len(text)


def _x_labels(parts: list[str], labels: Sequence[str], xs: Sequence[float], y0: float, every: int) -> None:
    for i, (lab, x) in enumerate(zip(labels, xs)):
        if i % every:
            continue
        shown = lab if len(lab) <= 14 else lab[:13] + "…"
        parts.append(
            f'<text transform="translate({x:.1f},{y0 + 10:.1f}) rotate(-60)" text-anchor="end" fill="{AXIS}" '
            f'font-size="11">{esc(shown)}</text>'
        )


def _value_range(values: Sequence[float | None]) -> tuple[float, float]:
    vals = [v for v in values if v is not None and math.isfinite(v)]
    lo, hi = (min(vals), max(vals)) if vals else (0.0, 1.0)
    if lo >= 0 and hi <= 1:  # most IR metrics: show the whole scale
        return 0.0, 1.0
    lo = min(lo, 0.0)
    return lo, hi if hi > lo else lo + 1.0


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
) -> Svg:
    """Per topic: the range of all runs (worst to best), their median and the run's score, the
    chart of TREC and CLEF appendices."""
    n = len(topics)
    step = max(6.0, 900.0 / max(n, 1)) if n > 15 else 640.0 / max(n, 1)  # at least 640 px wide, >= 6 px a topic
    left, right, top, plot_h = 64.0, 16.0, 40.0, 300.0
    longest = max((min(len(t), 14) for t in topics), default=1)
    bottom_pad = 28 + 6.2 * longest * 0.87 + 30
    width = left + right + step * n
    height = top + plot_h + bottom_pad
    lo, hi = _value_range([*value, *best, *worst])
    ticks = _ticks(lo, hi)
    lo, hi = min(lo, ticks[0]), max(hi, ticks[-1])

    def y(v: float) -> float:
        return top + plot_h * (1 - (v - lo) / (hi - lo))

    parts = _open(width, height, f"{metric} per topic: {run} against the median, best and worst of all runs")
    _y_axis(parts, ticks, y, left, width - right, metric, top, top + plot_h)
    _legend(
        parts,
        [
            ('<line x1="0" x2="0" y1="-6" y2="6" stroke="#9a9a9a" stroke-width="3"/>', "worst to best of all runs"),
            ('<line x1="-5" x2="5" y1="0" y2="0" stroke="#222" stroke-width="2"/>', "median"),
            (f'<circle r="4" fill="{PALETTE[0]}"/>', f"{run} (at or above median)"),
            (f'<circle r="4" fill="{PALETTE[3]}"/>', "below median"),
        ],
        left,
        16,
    )
    xs = [left + step * (i + 0.5) for i in range(n)]
    half = min(7.0, step * 0.3)
    for i, (t, x) in enumerate(zip(topics, xs)):
        v, md, b, w = value[i], median[i], best[i], worst[i]
        tip = f"topic {t}: {run} {number(v)}, median {number(md)}, best {number(b)}, worst {number(w)}"
        g = [f"<g><title>{esc(tip)}</title>"]
        g.append(
            f'<rect x="{x - step / 2:.1f}" y="{top:.1f}" width="{step:.1f}" height="{plot_h:.1f}" fill="transparent"/>'
        )
        if b is not None and w is not None:
            g.append(
                f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{y(w):.1f}" y2="{y(b):.1f}" stroke="#9a9a9a" '
                f'stroke-width="{max(1.5, min(4.0, step * 0.25)):.1f}"/>'
            )
        if md is not None:
            g.append(
                f'<line x1="{x - half:.1f}" x2="{x + half:.1f}" y1="{y(md):.1f}" y2="{y(md):.1f}" stroke="#222" '
                f'stroke-width="2"/>'
            )
        if v is not None:
            colour = PALETTE[0] if md is None or v >= md else PALETTE[3]
            g.append(f'<circle cx="{x:.1f}" cy="{y(v):.1f}" r="{max(2.5, min(4.5, step * 0.3)):.1f}" fill="{colour}"/>')
        g.append("</g>")
        href = links[i] if links else None
        parts.append(f'<a href="{esc(href)}">{"".join(g)}</a>' if href else "".join(g))
    parts.append(
        f'<line x1="{left:.1f}" x2="{width - right:.1f}" y1="{top + plot_h:.1f}" '
        f'y2="{top + plot_h:.1f}" stroke="{AXIS}"/>'
    )
    _x_labels(
        parts, topics, xs, top + plot_h, max(1, math.ceil(n / 100)) if step >= 9 else max(1, math.ceil(12 / step))
    )
    parts.append(
        f'<text x="{left + step * n / 2:.1f}" y="{height - 6:.1f}" text-anchor="middle" fill="#222">topic</text>'
    )
    parts.append("</svg>")
    return Svg("".join(parts))


def difference_bars(
    topics: Sequence[str],
    diffs: Sequence[float],
    *,
    label: str,
    links: Sequence[str | None] | None = None,
) -> Svg:
    """Per-topic differences as bars, in the order given (largest first), zero line in the middle."""
    n = len(topics)
    step = max(5.0, 900.0 / max(n, 1)) if n > 15 else 640.0 / max(n, 1)
    left, right, top, plot_h = 64.0, 16.0, 36.0, 280.0
    longest = max((min(len(t), 14) for t in topics), default=1)
    width = left + right + step * n
    height = top + plot_h + 28 + 6.2 * longest * 0.87 + 30
    m = max([abs(d) for d in diffs if math.isfinite(d)] + [1e-9])
    ticks = _ticks(-m, m, 6)
    lo, hi = min(-m, ticks[0]), max(m, ticks[-1])

    def y(v: float) -> float:
        return top + plot_h * (1 - (v - lo) / (hi - lo))

    parts = _open(width, height, f"per-topic differences: {label}")
    _y_axis(parts, ticks, y, left, width - right, label, top, top + plot_h)
    _legend(
        parts,
        [
            (f'<rect x="-5" y="-5" width="10" height="10" fill="{PALETTE[2]}"/>', "run better (win)"),
            (f'<rect x="-5" y="-5" width="10" height="10" fill="{PALETTE[3]}"/>', "run worse (loss)"),
            ('<circle r="3" fill="#888"/>', "tie"),
        ],
        left,
        14,
    )
    zero = y(0.0)
    xs = [left + step * (i + 0.5) for i in range(n)]
    for i, (t, d, x) in enumerate(zip(topics, diffs, xs)):
        tip = f"topic {t}: {d:+.4f}"
        if d == 0:
            shape = f'<circle cx="{x:.1f}" cy="{zero:.1f}" r="2.5" fill="#888"/>'
        else:
            colour = PALETTE[2] if d > 0 else PALETTE[3]
            y0, y1 = sorted((zero, y(d)))
            bw = min(step * 0.8, 28.0)
            shape = (
                f'<rect x="{x - bw / 2:.1f}" y="{y0:.1f}" width="{bw:.1f}" '
                f'height="{max(y1 - y0, 0.8):.1f}" fill="{colour}"/>'
            )
        g = (
            f'<g><title>{esc(tip)}</title><rect x="{x - step / 2:.1f}" y="{top:.1f}" '
            f'width="{step:.1f}" height="{plot_h:.1f}" fill="transparent"/>{shape}</g>'
        )
        href = links[i] if links else None
        parts.append(f'<a href="{esc(href)}">{g}</a>' if href else g)
    parts.append(f'<line x1="{left:.1f}" x2="{width - right:.1f}" y1="{zero:.1f}" y2="{zero:.1f}" stroke="{AXIS}"/>')
    _x_labels(parts, topics, xs, top + plot_h, max(1, math.ceil(12 / step)))
    parts.append(
        f'<text x="{left + step * n / 2:.1f}" y="{height - 6:.1f}" text-anchor="middle" fill="#222">'
        f"topics, sorted by difference</text>"
    )
    parts.append("</svg>")
    return Svg("".join(parts))


def interval_chart(
    labels: Sequence[str],
    means: Sequence[float | None],
    lows: Sequence[float | None],
    highs: Sequence[float | None],
    *,
    xlabel: str,
    links: Sequence[str | None] | None = None,
    reference: float | None = None,
) -> Svg:
    """One row per label: the mean as a dot and its interval as a line (a forest plot)."""
    n = len(labels)
    row = 18.0 if n <= 60 else 13.0
    longest = max((min(len(s), 32) for s in labels), default=1)
    left = 20 + 7.4 * longest
    right, top, plot_w = 24.0, 28.0, 520.0
    width, height = left + plot_w + right, top + row * n + 44
    vals = [v for v in [*means, *lows, *highs] if v is not None and math.isfinite(v)]
    lo, hi = (min(vals), max(vals)) if vals else (0.0, 1.0)
    if reference is not None:
        lo, hi = min(lo, reference), max(hi, reference)
    pad = (hi - lo) * 0.05 or 0.05
    # a scale of [0, 1] (most IR metrics) is not padded past its ends
    low = 0.0 if lo >= 0 > lo - pad else lo - pad
    high = 1.0 if hi <= 1 < hi + pad else hi + pad
    ticks = _ticks(low, high)
    lo, hi = ticks[0], ticks[-1]

    def x(v: float) -> float:
        return left + plot_w * (v - lo) / (hi - lo)

    parts = _open(width, height, xlabel)
    bottom = top + row * n
    for t in ticks:
        parts.append(f'<line x1="{x(t):.1f}" x2="{x(t):.1f}" y1="{top:.1f}" y2="{bottom:.1f}" stroke="{GRID}"/>')
        parts.append(
            f'<text x="{x(t):.1f}" y="{bottom + 16:.1f}" text-anchor="middle" '
            f'fill="{AXIS}">{esc(_tick_label(t, ticks))}</text>'
        )
    if reference is not None:
        parts.append(
            f'<line x1="{x(reference):.1f}" x2="{x(reference):.1f}" y1="{top - 6:.1f}" y2="{bottom:.1f}" '
            f'stroke="{AXIS}" stroke-dasharray="4 3"/>'
        )
    for i, lab in enumerate(labels):
        yy = top + row * (i + 0.5)
        m, a, b = means[i], lows[i], highs[i]
        shown = lab if len(lab) <= 32 else lab[:31] + "…"
        tip = f"{lab}: {number(m)} [{number(a)}, {number(b)}]"
        g = [f"<g><title>{esc(tip)}</title>"]
        g.append(f'<text x="{left - 8:.1f}" y="{yy + 4:.1f}" text-anchor="end" fill="#222">{esc(shown)}</text>')
        if a is not None and b is not None and math.isfinite(a) and math.isfinite(b):
            g.append(
                f'<line x1="{x(a):.1f}" x2="{x(b):.1f}" y1="{yy:.1f}" y2="{yy:.1f}" '
                f'stroke="{PALETTE[5]}" stroke-width="3"/>'
            )
        if m is not None and math.isfinite(m):
            g.append(f'<circle cx="{x(m):.1f}" cy="{yy:.1f}" r="3.5" fill="{PALETTE[0]}"/>')
        g.append("</g>")
        href = links[i] if links else None
        parts.append(f'<a href="{esc(href)}">{"".join(g)}</a>' if href else "".join(g))
    parts.append(
        f'<line x1="{left:.1f}" x2="{left + plot_w:.1f}" y1="{bottom:.1f}" y2="{bottom:.1f}" stroke="{AXIS}"/>'
    )
    parts.append(
        f'<text x="{left + plot_w / 2:.1f}" y="{height - 6:.1f}" text-anchor="middle" fill="#222">{esc(xlabel)}</text>'
    )
    parts.append("</svg>")
    return Svg("".join(parts))


def heatmap(labels: Sequence[str], matrix: Sequence[Sequence[float | None]], *, label: str) -> Svg:
    """A symmetric matrix of values in [-1, 1] (rank correlations), each cell labelled."""
    k = len(labels)
    cell = 56.0
    longest = max((min(len(s), 24) for s in labels), default=1)
    left = 20 + 7.4 * longest
    top = 20 + 6.0 * longest
    width, height = left + cell * k + 110, top + cell * k + 20
    parts = _open(width, height, label)

    def colour(v: float) -> str:  # white (0) to blue (1), orange for negative values
        a = max(-1.0, min(1.0, v))
        base = (0, 114, 178) if a >= 0 else (230, 159, 0)
        f = abs(a)
        r, g, b = (round(255 + (c - 255) * f) for c in base)
        return f"rgb({r},{g},{b})"

    for i, lab in enumerate(labels):
        shown = lab if len(lab) <= 24 else lab[:23] + "…"
        yy = top + cell * (i + 0.5)
        parts.append(f'<text x="{left - 8:.1f}" y="{yy + 4:.1f}" text-anchor="end" fill="#222">{esc(shown)}</text>')
        xx = left + cell * (i + 0.5)
        parts.append(f'<text transform="translate({xx:.1f},{top - 8:.1f}) rotate(-45)" fill="#222">{esc(shown)}</text>')
    for i in range(k):
        for j in range(k):
            v = matrix[i][j]
            xx, yy = left + cell * j, top + cell * i
            fill = colour(v) if v is not None and math.isfinite(v) else "#f4f4f4"
            parts.append(
                f"<g><title>{esc(f'{labels[i]} / {labels[j]}: {number(v, 3)}')}</title>"
                f'<rect x="{xx:.1f}" y="{yy:.1f}" width="{cell:.1f}" height="{cell:.1f}" fill="{fill}" stroke="#fff"/>'
            )
            text_colour = "#fff" if v is not None and math.isfinite(v) and abs(v) > 0.6 else "#222"
            parts.append(
                f'<text x="{xx + cell / 2:.1f}" y="{yy + cell / 2 + 4:.1f}" text-anchor="middle" '
                f'fill="{text_colour}">{esc(number(v, 3))}</text></g>'
            )
    # colour scale
    sx = left + cell * k + 24
    for s in range(11):
        v = 1 - s / 10 * 2
        parts.append(f'<rect x="{sx:.1f}" y="{top + s * 12:.1f}" width="14" height="12" fill="{colour(v)}"/>')
    parts.append(f'<text x="{sx + 20:.1f}" y="{top + 10:.1f}" fill="{AXIS}">1</text>')
    parts.append(f'<text x="{sx + 20:.1f}" y="{top + 70:.1f}" fill="{AXIS}">0</text>')
    parts.append(f'<text x="{sx + 20:.1f}" y="{top + 130:.1f}" fill="{AXIS}">−1</text>')
    parts.append("</svg>")
    return Svg("".join(parts))


def line_figure(figure: LineFigure) -> Svg:
    """A :class:`~evalstore.report.figures.LineFigure` (the model matplotlib draws too) as SVG."""
    return line_chart(
        [(s.label, s.x, s.y) for s in figure.series],
        xlabel=figure.xlabel,
        ylabel=figure.ylabel,
        label=figure.title,
        hline=figure.hline,
        hline_label=figure.hline_label,
    )


def line_chart(
    series: Sequence[tuple[str, Sequence[float], Sequence[float | None]]],
    *,
    xlabel: str,
    ylabel: str,
    label: str,
    hline: float | None = None,
    hline_label: str | None = None,
    reverse_x: bool = False,
    markers: bool = True,
) -> Svg:
    """Lines of (x, y) points, one per series, with a legend and an optional reference line."""
    left, right, top, plot_w, plot_h = 64.0, 16.0, 30.0 + 18 * math.ceil(len(series) / 4), 560.0, 260.0
    width, height = left + plot_w + right, top + plot_h + 50
    xs_all = [x for _, xs, _ in series for x in xs]
    ys_all = [y for _, _, ys in series for y in ys if y is not None and math.isfinite(y)]
    if hline is not None:
        ys_all.append(hline)
    x_lo, x_hi = (min(xs_all), max(xs_all)) if xs_all else (0.0, 1.0)
    y_lo, y_hi = (min(ys_all + [0.0]), max(ys_all)) if ys_all else (0.0, 1.0)
    xt, yt = _ticks(x_lo, x_hi), _ticks(y_lo, y_hi)
    x_lo, x_hi = min(x_lo, xt[0]), max(x_hi, xt[-1])
    y_lo, y_hi = min(y_lo, yt[0]), max(y_hi, yt[-1])

    def X(v: float) -> float:
        f = (v - x_lo) / ((x_hi - x_lo) or 1.0)
        return left + plot_w * ((1 - f) if reverse_x else f)

    def Y(v: float) -> float:
        return top + plot_h * (1 - (v - y_lo) / ((y_hi - y_lo) or 1.0))

    parts = _open(width, height, label)
    _y_axis(parts, yt, Y, left, left + plot_w, ylabel, top, top + plot_h)
    for t in xt:
        parts.append(
            f'<text x="{X(t):.1f}" y="{top + plot_h + 16:.1f}" text-anchor="middle" '
            f'fill="{AXIS}">{esc(_tick_label(t, xt))}</text>'
        )
    parts.append(
        f'<line x1="{left:.1f}" x2="{left + plot_w:.1f}" y1="{top + plot_h:.1f}" '
        f'y2="{top + plot_h:.1f}" stroke="{AXIS}"/>'
    )
    parts.append(
        f'<text x="{left + plot_w / 2:.1f}" y="{height - 8:.1f}" text-anchor="middle" fill="#222">{esc(xlabel)}</text>'
    )
    if hline is not None:
        parts.append(
            f'<line x1="{left:.1f}" x2="{left + plot_w:.1f}" y1="{Y(hline):.1f}" '
            f'y2="{Y(hline):.1f}" stroke="{AXIS}" stroke-dasharray="5 4"/>'
        )
        if hline_label:
            parts.append(
                f'<text x="{left + plot_w - 4:.1f}" y="{Y(hline) - 4:.1f}" text-anchor="end" '
                f'fill="{AXIS}">{esc(hline_label)}</text>'
            )
    legend_y = 14.0
    for k, (name, xs, ys) in enumerate(series):
        colour = PALETTE[k % len(PALETTE)]
        pts = [(X(a), Y(b)) for a, b in zip(xs, ys) if b is not None and math.isfinite(b)]
        if len(pts) > 1:
            d = " ".join(f"{px:.1f},{py:.1f}" for px, py in pts)
            parts.append(
                f'<polyline points="{d}" fill="none" stroke="{colour}" stroke-width="1.8">'
                f"<title>{esc(name)}</title></polyline>"
            )
        if markers:
            for (px, py), a, b in zip(pts, xs, ys):
                parts.append(
                    f'<circle cx="{px:.1f}" cy="{py:.1f}" r="2.6" fill="{colour}">'
                    f"<title>{esc(f'{name}: {a:g}, {number(b)}')}</title></circle>"
                )
        lx = left + (k % 4) * 150
        ly = legend_y + 18 * (k // 4)
        parts.append(
            f'<line x1="{lx:.1f}" x2="{lx + 16:.1f}" y1="{ly:.1f}" y2="{ly:.1f}" stroke="{colour}" stroke-width="3"/>'
        )
        shown = name if len(name) <= 18 else name[:17] + "…"
        parts.append(f'<text x="{lx + 20:.1f}" y="{ly + 4:.1f}" fill="#222">{esc(shown)}</text>')
    parts.append("</svg>")
    return Svg("".join(parts))


def bar_chart(labels: Sequence[str], values: Sequence[float | None], texts: Sequence[str], *, xlabel: str) -> Svg:
    """Horizontal bars, one per label, with a text after each bar."""
    n = len(labels)
    row = 22.0
    longest = max((min(len(s), 32) for s in labels), default=1)
    left, plot_w = 20 + 7.4 * longest, 380.0
    width, height = left + plot_w + 200, 16 + row * n + 44
    vmax = max([v for v in values if v is not None and math.isfinite(v)] + [1e-9])
    ticks = _ticks(0.0, vmax)
    top_v = ticks[-1]
    parts = _open(width, height, xlabel)
    bottom = 16 + row * n
    for t in ticks:
        xx = left + plot_w * t / top_v
        parts.append(f'<line x1="{xx:.1f}" x2="{xx:.1f}" y1="16" y2="{bottom:.1f}" stroke="{GRID}"/>')
        parts.append(
            f'<text x="{xx:.1f}" y="{bottom + 16:.1f}" text-anchor="middle" '
            f'fill="{AXIS}">{esc(_tick_label(t, ticks))}</text>'
        )
    for i, (lab, v, txt) in enumerate(zip(labels, values, texts)):
        yy = 16 + row * i
        shown = lab if len(lab) <= 32 else lab[:31] + "…"
        parts.append(
            f'<text x="{left - 8:.1f}" y="{yy + row / 2 + 4:.1f}" text-anchor="end" fill="#222">{esc(shown)}</text>'
        )
        w = plot_w * (v or 0.0) / top_v if v is not None and math.isfinite(v) else 0.0
        parts.append(
            f'<rect x="{left:.1f}" y="{yy + 3:.1f}" width="{w:.1f}" height="{row - 6:.1f}" '
            f'fill="{PALETTE[2]}"><title>{esc(f"{lab}: {txt}")}</title></rect>'
        )
        parts.append(f'<text x="{left + w + 6:.1f}" y="{yy + row / 2 + 4:.1f}" fill="#222">{esc(txt)}</text>')
    parts.append(
        f'<text x="{left + plot_w / 2:.1f}" y="{height - 6:.1f}" text-anchor="middle" fill="#222">{esc(xlabel)}</text>'
    )
    parts.append("</svg>")
    return Svg("".join(parts))
