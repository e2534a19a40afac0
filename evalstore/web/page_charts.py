"""The web's own charts: the run page's per-topic chart as in TREC and CLEF appendices
(:func:`appendix_chart`), the compare page's per-topic differences (:func:`difference_bars`), and
the judges' page's confusion matrix (:func:`confusion_chart`; its rank slopes are a figure model,
:func:`evalstore.web.figure_charts.slope_chart`). Geometry only; the macros of
``templates/figures.html`` draw it."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .render import number
from .svg import (
    INK,
    PALETTE,
    Cell,
    Chart,
    Key,
    Label,
    Rule,
    YAxis,
    keys,
    px,
    ticks,
    value_range,
    x_labels,
    y_axis,
)


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
class TopicChart(Chart):
    """A chart with a mark per topic along x (the run page's and the comparison's): the y axis,
    the legend, the plot's top and height, the topics' labels and the x axis' label."""

    axis: YAxis | None = None
    keys: list[Key] = field(default_factory=list)
    top: float = 0.0
    plot_h: float = 0.0
    xlabels: list[Label] = field(default_factory=list)
    xlabel: Label | None = None


@dataclass
class AppendixChart(TopicChart):
    topics: list[AppendixTopic] = field(default_factory=list)
    baseline: Rule | None = None


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
    lo, hi = value_range([*value, *best, *worst])
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
        axis=y_axis(tk, y, left, width - right, metric, top, top + plot_h),
        keys=keys(
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
        xlabels=x_labels(topics, xs, top + plot_h, every),
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
class DifferenceChart(TopicChart):
    zero: float = 0.0
    topics: list[DifferenceTopic] = field(default_factory=list)
    zero_line: Rule | None = None


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
        axis=y_axis(tk, y, left, width - right, label, top, top + plot_h),
        keys=keys(
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
        xlabels=x_labels(topics, xs, top + plot_h, max(1, math.ceil(12 / step))),
        xlabel=Label(px(left + step * n / 2), px(height - 6), "topics, sorted by difference", "middle"),
    )


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
